"""The bot speaks one language per deployment, in one voice: Chinese by default (one glossary, no
English glosses), English with ``HISTORY_RECALL_LANGUAGE=en``, the operator's command names.

Every text the bot can send is produced here (texts.py and render.py with recorded API answers) in
both languages and held to the glossary; the renamed-command and the English-setting tests run
through a real matcher.
"""

from __future__ import annotations

import json
import re
import string
from datetime import datetime

import pytest
from nonebug import App

from tests.nonebot.nb_helpers import ADMIN_ID, Captured, FakeRecallApi, group_message, recorded

NOW = datetime(2026, 11, 20, 12, 0)
# Words the glossary replaced (texts.py): the same thing is never called two names, and nothing is
# said the way issue 38 found unidiomatic.
NOT_IN_THE_GLOSSARY = ("会话", "机器人", "回忆", "封印", "查找", "绑定", "slug", "Seal", "seal", "assistant",
                       "untitled", "检索得有点快")
# An English gloss after Chinese: "(please wait 7 s)", "(nothing found)", "(2 related)".
GLOSS = re.compile(r"\((?:please |nothing |\d+ related|[a-z]+ [a-z]+)[^()]*\)")
CJK = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")


def every_reply(language: str = "zh") -> dict[str, str]:
    """Each whole reply the bot can send, by name, with sample values, in ``language``."""
    from nonebot_plugin_history_recall import render, texts
    from nonebot_plugin_history_recall.client import _ADMIN_KEYS, ApiResult

    t = texts.texts_for(language, texts.Names("/", "move", "recall-status"))
    query = "迁移" if language == "zh" else "migration"
    search = recorded("search_chat")["body"]
    status = recorded("status")["body"]
    health = recorded("health")["body"]
    binding = recorded("binding_bound")["body"]
    member = recorded("forget_member_dry_run")["body"]
    simple = ("private_chat", "bad_open", "open_gone", "unreachable", "timeout", "unauthorized", "unknown_profile",
              "no_route", "query_too_long", "server_error", "unknown_project", "folder_missing", "no_db",
              "session_not_found", "bad_request", "refused", "not_yours", "bad_answer", "unbound", "unbound_home",
              "unbound_archived", "unbound_missing", "recall_off",
              "move_usage", "forget_admin_only", "forget_nothing_pending", "forget_cancelled", "forget_usage")
    replies = {key: t(key) for key in simple}
    admin = {code: ApiResult(code=code, url="http://127.0.0.1:8765", cause="refused", timeout=15)
             for code in _ADMIN_KEYS}
    replies |= {f"admin_{code}": _admin_text(result, t) for code, result in admin.items()}
    damaged = ApiResult(code="unavailable", url="http://127.0.0.1:8765", cause="damaged", file="projects.db")
    replies |= {"admin_store_fault": _admin_text(damaged, t),
                "store_fault": t("store_fault", **t.file_fault("projects.db", "damaged")),
                "store_fault_unnamed": t("store_fault", **t.file_fault("", "")),
                "store_busy": t("store_busy"),
                "status_store": render.render_status(False, (health, ""), (
                    {**status, "projects": [], "projects_unavailable": "the project list (projects.db) cannot be read",
                     "stores": [{"file": "forgotten.db", "problem": "full", "error": "…", "recovery": "…"}]}, ""),
                    (binding, ""), t)}
    replies |= {
        "help_admin": t.help(True), "help_member": t.help(False, cooldown=10), "usage": t.usage(),
        "bad_mode": t("bad_mode", value="fast"), "bad_limit": t.bad_limit("99"),
        "bad_date": t.bad_dates("yesterday", ""), "bad_dates": t.bad_dates("x", "y"),
        "cooldown": t("cooldown", seconds=7), "open_none": t.open_unavailable(0), "open_range": t.open_unavailable(3),
        "in_group": t("in_group_only", command="/forget"),
        "unknown_project_named": t("unknown_project_named", project="nope"),
        "results": render.join_blocks(render.result_blocks(search, query, NOW, t)),
        "no_results": render.join_blocks(render.result_blocks({**search, "results": []}, query, NOW, t)),
        "no_results_dated": render.join_blocks(render.result_blocks({**search, "results": []}, query, NOW, t,
                                                                    before="2020-01-01")),
        "held_then_too_many": render.join_blocks(render.result_blocks(
            {**search, "results": [], "held_then": 23}, "上个月" if language == "zh" else "last month", NOW, t)),
        "context": render.join_blocks(render.context_blocks(recorded("context")["body"], 1, NOW, t)),
        "status": render.render_status(False, (health, ""), (status, ""), (binding, ""), t),
        "status_down": render.render_status(True, (None, _admin_text(admin["unreachable"], t)), (None, ""), None, t),
        "moved": render.render_move(recorded("move_chat")["body"], t),
        "moved_home": render.render_move(recorded("move_chat_home")["body"], t),
        "moved_nothing": render.render_move({**recorded("move_chat")["body"], "moved_sessions": 0}, t),
        "projects": render.render_projects(recorded("projects")["body"], binding, t),
        "no_projects": render.render_projects({"projects": []}, None, t),
        "move_none": render.render_move_not_allowed([], t),
        "move_some": render.render_move_not_allowed([{"slug": "alpha", "name": "Alpha"}], t),
        "forget_preview": render.forget_preview(member, True, 60, t),
        "forget_nothing": render.forget_preview({**member, "messages": 0}, True, 60, t),
        "forget_shared": render.forget_preview({**member, "messages": 0, "shared_sessions": 2}, True, 60, t),
        "forget_done": render.forget_done(recorded("forget_member")["body"], True, t),
        "recall_off_done": render.recall_switched(recorded("recall_off")["body"], t),
        "recall_on_done": render.recall_switched(recorded("recall_on")["body"], t),
        "optout": render.optout_done(recorded("optout")["body"], t),
        "optin": render.optout_done(recorded("optin")["body"], t),
    }
    return replies


def _admin_text(result, t) -> str:
    from nonebot_plugin_history_recall import client

    return client.admin_error(result, t)


def test_both_languages_have_the_same_texts_with_the_same_placeholders():
    from nonebot_plugin_history_recall.texts import ZH
    from nonebot_plugin_history_recall.texts_en import EN

    def fields(template: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name}

    assert set(ZH) == set(EN)
    # A date this year: English writes it in full (2026-11-20), Chinese without the year (11月20日).
    differ = {"this_year"}
    assert {key: fields(ZH[key]) for key in ZH if key not in differ} == \
           {key: fields(EN[key]) for key in EN if key not in differ}
    assert fields(ZH["this_year"]) <= fields(EN["this_year"]) == fields(EN["other_year"])


def test_every_chinese_reply_uses_the_glossary_and_carries_no_english_gloss(nonebug_init):
    for name, text in every_reply("zh").items():
        found = [word for word in NOT_IN_THE_GLOSSARY if word in text]
        # "session" only as the literal admin option --session, never as a word for a conversation.
        found += ["session"] if "session" in text.replace("--session", "") else []
        assert not found, f"{name} says {found}: {text!r}"
        assert not GLOSS.search(text), f"{name} carries an English gloss: {text!r}"
        assert not text.splitlines()[0].rstrip("。").endswith(")"), f"{name}: {text!r}"


def test_every_english_reply_is_english_only(nonebug_init):
    for name, text in every_reply("en").items():
        # Recorded API data may hold Chinese (a project's turns); our words never do.
        ours = text.replace("【", "").replace("】", "")
        for sample in (recorded("search_chat")["body"], recorded("context")["body"]):
            for value in json.dumps(sample, ensure_ascii=False).split('"'):
                ours = ours.replace(value, "") if CJK.search(value) else ours
        assert not CJK.search(ours), f"{name} is not English only: {text!r}"
        words = ours.lower().replace("--session", "")
        found = [word for word in ("assistant", "session", "slug", "seal") if word in words]
        assert not found, f"{name} says {found}: {text!r}"


def test_admin_status_is_in_words_not_raw_values(nonebug_init):
    status = every_reply()["status"]
    assert recorded("status")["body"]["semantic"]["consent"] == "not_needed"
    for raw in ("ready", "not_needed", "consent", "partial", "chunks"):
        assert raw not in status, (raw, status)
    assert "已就绪" in status and "无需授权" in status


def test_forget_with_nothing_says_nothing_to_forget_not_shared_sessions(nonebug_init):
    replies = every_reply()
    assert replies["forget_nothing"] == "📭 没有可以忘记的内容。"
    assert "共用" in replies["forget_shared"] and "管理员" in replies["forget_shared"]


async def test_a_renamed_move_command_is_the_one_every_reply_names(
    app: App, api: FakeRecallApi, bot_factory, plugin_config, monkeypatch: pytest.MonkeyPatch
):
    """The operator renamed /move (another plugin owns it): the unbound group is told the new name,
    also in the sentence that comes from an API error code (client.py)."""
    monkeypatch.setattr(plugin_config, "history_recall_move_command", "recall-move")
    api.replay("search_chat_unbound")
    event = group_message("/recall 迁移")
    reply = Captured()
    async with app.test_matcher() as ctx:
        ctx.receive_event(bot_factory(ctx), event)
        ctx.should_call_send(event, reply, result={"message_id": 1})
    assert "/recall-move <项目>" in reply.text and "/move " not in reply.text


async def _reply(app: App, bot_factory, event) -> str:
    reply = Captured()
    async with app.test_matcher() as ctx:
        ctx.receive_event(bot_factory(ctx), event)
        ctx.should_call_send(event, reply, result={"message_id": 1})
    return reply.text


async def test_english_on_the_setting_for_members_and_admins(
    app: App, api: FakeRecallApi, bot_factory, plugin_config, monkeypatch: pytest.MonkeyPatch
):
    """HISTORY_RECALL_LANGUAGE=en: the whole deployment answers in English, Chinese nowhere."""
    import httpx

    monkeypatch.setattr(plugin_config, "history_recall_language", "en")
    api.replay("search_chat")
    results = await _reply(app, bot_factory, group_message("/recall migration"))
    assert results.startswith("📚 ") and "conversations in project" in results
    assert not CJK.search(await _reply(app, bot_factory, group_message("/recall")))
    api.route("GET", "/health", raises=httpx.ConnectError("connection refused"))
    api.route("GET", "/status", raises=httpx.ConnectError("connection refused"))
    status = await _reply(app, bot_factory, group_message("/recall-status", user_id=ADMIN_ID))
    assert "Cannot reach the recall service at http://recall.test" in status and not CJK.search(status)


def test_the_language_setting_reads_common_spellings_and_refuses_others(nonebug_init):
    from pydantic import ValidationError

    from nonebot_plugin_history_recall.config import Config

    assert Config().history_recall_language == "zh"
    assert Config(history_recall_language="en_US").history_recall_language == "en"
    assert Config(history_recall_language="zh-CN").history_recall_language == "zh"
    with pytest.raises(ValidationError, match="HISTORY_RECALL_LANGUAGE"):
        Config(history_recall_language="fr")


def test_a_malformed_list_setting_is_corrected_with_the_operators_own_words(nonebug_init):
    from nonebot import logger

    from nonebot_plugin_history_recall.config import Config

    lines: list[str] = []
    sink = logger.add(lambda message: lines.append(message.record["message"]), level="WARNING")
    try:
        config = Config(history_recall_move_aliases="关联 link")
    finally:
        logger.remove(sink)
    assert config.history_recall_move_aliases == {"关联", "link"}
    (warning,) = [line for line in lines if "HISTORY_RECALL_MOVE_ALIASES" in line]
    assert f"HISTORY_RECALL_MOVE_ALIASES='{json.dumps(['关联', 'link'], ensure_ascii=False)}'" in warning
    assert "onebotv11" not in warning and "10001" not in warning  # no made-up id to paste


def test_a_time_that_held_too_many_conversations_asks_for_a_topic_or_a_shorter_time(nonebug_init):
    """"/recall 上个月" in a busy group: not "nothing about 上个月" — it says how many there were and
    what to add."""
    zh, en = every_reply("zh")["held_then_too_many"], every_reply("en")["held_then_too_many"]
    assert "23 段对话" in zh and "上周三" in zh and "没有检索到" not in zh, zh
    assert "23 conversations" in en and "Nothing" not in en, en
