"""Relevance and answers through the real tool: Hermes' own dispatch, a real state.db and
projects.db, the plugin loaded by Hermes' loader and the real local e5 model.

- ``limit`` is a maximum: a question about something the project never discussed gets nothing
  back, while a related one still finds its conversation, with a relevance level.
- When the best match is a question, its row shows the reply that answered it.
- Semantic search crosses languages: a Chinese question finds the English conversation.
"""

from __future__ import annotations

import pytest

from hermes_side.embedding import build_index, load_settings
from hermes_side.embedding.vectors import drop_indexes
from tests.hermes.world import call_tool, shared_world

BOT_Q = "群机器人半夜掉线了怎么办？"
BOT_A = "查了日志，是 OneBot 反向 WebSocket 的心跳超时；把 heartbeat 间隔调到 30 秒以后就没再掉线。"
TOKEN_Q = "token 轮换的流程是什么？"
TOKEN_A = "每 90 天在管理后台生成新的 access token，旧 token 保留一天再作废，机器人重启后读取新值。"
DB_Q = "Which database should we use for the orders service, Postgres or MySQL?"
DB_A = "We went with Postgres because we need JSONB columns and partial indexes for the order history."
OTHER = ("The CI cache key now includes the lockfile hash, so builds stopped restoring stale "
         "dependencies after upgrades.")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with shared_world(tmp_path_factory.mktemp("relevance")) as w:
        bot, orders = w.folder("bot"), w.folder("orders")
        w.project("bot-ops", bot)
        w.project("orders", orders)
        sessions = {
            "bot": w.session(BOT_Q, BOT_A, cwd=bot, title="掉线排查"),
            "token": w.session(TOKEN_Q, TOKEN_A, cwd=bot, title="token 轮换"),
            "db": w.session(DB_Q, DB_A, cwd=orders, title="orders database"),
            "ci": w.session("Why did the build restore old packages?", OTHER, cwd=orders, title="CI cache"),
            # the conversations asking: empty, one in each project
            "ask-bot": w.session(cwd=bot),
            "ask-orders": w.session(cwd=orders),
        }
        drop_indexes()
        stats = build_index(w.home, load_settings(w.home))
        assert stats.status == "done"
        yield w, sessions
        drop_indexes()


def search(world, query: str, where: str, mode: str = "hybrid", limit: int = 5) -> dict:
    _, sessions = world
    out = call_tool("project_history_search", {"query": query, "mode": mode, "limit": limit}, sessions[where])
    assert out["success"] is True, out
    assert out.get("semantic_status") in (None, "ready")
    return out


@pytest.mark.parametrize(("query", "where"), [("how do I bake sourdough bread at home", "ask-orders"),
                                              ("周末去哪里爬山看日出", "ask-bot")])
def test_a_question_about_something_never_discussed_gets_nothing(world, query, where):
    out = search(world, query, where)
    assert out["results"] == [], [(r["title"], r["relevance"]) for r in out["results"]]
    assert out["message"] == "No matching messages in this project"


def test_an_unrelated_question_in_another_language_is_at_most_a_weak_match(world):
    # e5-small cannot tell "unrelated" from "related" across scripts as surely as within one
    # (benchmarks/README.md, Relevance): such hits stay, clearly marked low.
    out = search(world, "how do I bake sourdough bread at home", "ask-bot")
    assert all(r["relevance"]["level"] == "low" for r in out["results"])


def test_a_related_question_finds_its_conversation_first_with_a_level(world):
    _, sessions = world
    out = search(world, "bot disconnected at night", "ask-bot")
    assert out["results"], out
    first = out["results"][0]
    assert first["session_id"] == sessions["bot"]
    assert first["relevance"]["level"] in ("high", "medium")
    assert 0 < first["relevance"]["score"] <= 1
    assert all(r["relevance"]["score"] <= first["relevance"]["score"] for r in out["results"][1:])


def test_only_the_answering_conversation_is_more_than_a_weak_match(world):
    _, sessions = world
    out = search(world, "which database did we choose for the orders service", "ask-orders", limit=5)
    first, *rest = out["results"]
    assert first["session_id"] == sessions["db"] and first["relevance"]["level"] in ("high", "medium")
    assert all(r["relevance"]["level"] == "low" for r in rest)  # the CI thread, if shown at all


def test_a_question_hit_shows_the_reply_that_answered_it(world):
    _, sessions = world
    out = search(world, "群机器人半夜掉线", "ask-bot", mode="keyword")
    first = out["results"][0]
    assert first["session_id"] == sessions["bot"]
    assert first["role"] == "past_user" and "掉线" in first["snippet"]
    assert first["answer"]["role"] == "past_assistant"
    assert "heartbeat" in first["answer"]["snippet"]
    assert " → " in first["snippet"] and "heartbeat" in first["snippet"].split(" → ", 1)[1]


def test_an_answer_hit_has_no_answer_of_its_own(world):
    out = search(world, "JSONB partial indexes", "ask-orders", mode="keyword")
    first = out["results"][0]
    assert first["role"] == "past_assistant" and "answer" not in first
    assert " → " not in first["snippet"]


def test_a_chinese_question_finds_the_english_conversation(world):
    _, sessions = world
    out = search(world, "订单服务最后选了哪个数据库", "ask-orders", mode="semantic")
    assert out["results"] and out["results"][0]["session_id"] == sessions["db"]


def test_a_conversation_row_shows_its_other_top_messages(world):
    _, sessions = world
    out = search(world, "掉线 heartbeat", "ask-bot", mode="keyword", limit=3)
    first = out["results"][0]
    assert first["session_id"] == sessions["bot"]
    shown = {first["message_id"], *(m["message_id"] for m in [first.get("answer") or {}, *first.get("more", [])] if m)}
    bot_messages = {m["id"] for m in world[0].messages(sessions["bot"])}
    assert shown == bot_messages  # both turns match: grouping by conversation hides neither
    assert len(out["results"]) == 1  # and no other conversation is padded in
