"""The bot speaks in one voice: one glossary, a gloss on every reply, the operator's command names.

Every text the bot can send is produced here (texts.py and render.py with recorded API answers) and
held to the glossary of texts.py; the renamed-command test runs through a real matcher.
"""

from __future__ import annotations

import json
import re
from datetime import datetime

import pytest
from nonebug import App

from tests.nonebot.nb_helpers import Captured, FakeRecallApi, group_message, recorded

NOW = datetime(2026, 11, 20, 12, 0)
# Words the glossary replaced (texts.py): the same thing is never called two names.
NOT_IN_THE_GLOSSARY = ("会话", "机器人", "回忆", "封印", "查找", "Seal", "seal", "assistant", "untitled")
GLOSS = re.compile(r"\([^()]*[A-Za-z][^()]*\)[。.]?$")  # the first line ends with its English gloss


def every_reply() -> dict[str, str]:
    """Each whole reply the bot can send, by name, with sample values."""
    from nonebot_plugin_history_recall import render, texts

    names = texts.Names("/", "move", "recall-status")
    search = recorded("search_chat")["body"]
    status = recorded("status")["body"]
    health = recorded("health")["body"]
    binding = recorded("binding_bound")["body"]
    member = recorded("forget_member_dry_run")["body"]
    replies = {name: value for name, value in vars(texts).items() if name.startswith("MSG_")}
    replies |= {
        "help_admin": texts.help_text(True, names),
        "help_member": texts.help_text(False, names, cooldown=10),
        "usage": texts.usage_error(names),
        "private": texts.PRIVATE_CHAT, "bad_mode": texts.BAD_MODE, "bad_limit": texts.BAD_LIMIT,
        "bad_date": texts.BAD_DATE, "bad_open": texts.BAD_OPEN, "open_gone": texts.OPEN_GONE,
        "cooldown": texts.cooldown_text(7),
        "open_none": texts.open_unavailable(0, names), "open_range": texts.open_unavailable(3, names),
        "unbound": texts.unbound(names), "recall_off": texts.recall_off(names),
        "results": render.join_blocks(render.result_blocks(search, "迁移", NOW, names)),
        "no_results": render.join_blocks(render.result_blocks({**search, "results": []}, "迁移", NOW, names)),
        "context": render.join_blocks(render.context_blocks(recorded("context")["body"], 1, NOW)),
        "status": render.render_status("default", (health, ""), (status, ""), (binding, "")),
        "status_down": render.render_status("default", (None, texts.MSG_UNREACHABLE), (None, ""), None),
        "move_in_group": texts.move_in_group(names), "move_usage": texts.move_usage(names),
        "moved": render.render_move(recorded("move_chat")["body"]),
        "moved_home": render.render_move(recorded("move_chat_home")["body"]),
        "projects": render.render_projects(recorded("projects")["body"], binding, names),
        "no_projects": render.render_projects({"projects": []}, None, names),
        "move_none": render.render_move_not_allowed([], names),
        "move_some": render.render_move_not_allowed([{"slug": "alpha", "name": "Alpha"}], names),
        "forget_usage": texts.forget_usage(names),
        "forget_preview": render.forget_preview(member, True, 60, names),
        "forget_nothing": render.forget_preview({**member, "messages": 0}, True, 60, names),
        "forget_shared": render.forget_preview({**member, "messages": 0, "shared_sessions": 2}, True, 60, names),
        "forget_done": render.forget_done(recorded("forget_member")["body"], True),
        "forget_admin_only": texts.FORGET_ADMIN_ONLY, "forget_pending": texts.FORGET_NOTHING_PENDING,
        "forget_cancelled": texts.FORGET_CANCELLED, "forget_in_group": texts.FORGET_IN_GROUP,
        "recall_off_done": render.recall_switched(recorded("recall_off")["body"], names),
        "recall_on_done": render.recall_switched(recorded("recall_on")["body"], names),
        "optout": render.optout_done(recorded("optout")["body"], names),
        "optin": render.optout_done(recorded("optin")["body"], names),
    }
    return replies


def test_every_reply_uses_the_glossary(nonebug_init):
    for name, text in every_reply().items():
        found = [word for word in NOT_IN_THE_GLOSSARY if word in text]
        # "session" only as the literal admin option --session, never as a word for a conversation.
        found += ["session"] if "session" in text.replace("--session", "") else []
        assert not found, f"{name} says {found}: {text!r}"


def test_every_reply_carries_its_english_gloss_on_the_first_line(nonebug_init):
    for name, text in every_reply().items():
        assert GLOSS.search(text.splitlines()[0]), f"{name}: first line has no English gloss: {text!r}"


def test_admin_status_is_in_words_not_raw_values(nonebug_init):
    status = every_reply()["status"]
    assert recorded("status")["body"]["semantic"]["consent"] == "not_needed"
    for raw in ("ready", "not_needed", "consent", "partial", "chunks"):
        assert raw not in status, (raw, status)
    assert "已就绪" in status and "无需授权" in status


def test_forget_with_nothing_says_nothing_to_forget_not_shared_sessions(nonebug_init):
    replies = every_reply()
    assert "nothing to forget" in replies["forget_nothing"] and "共用" not in replies["forget_nothing"]
    assert "共用" in replies["forget_shared"] and "ask an admin" in replies["forget_shared"]


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


def test_a_malformed_list_setting_is_corrected_with_the_operators_own_words(nonebug_init):
    from nonebot import logger

    from nonebot_plugin_history_recall.config import Config

    lines: list[str] = []
    sink = logger.add(lambda message: lines.append(message.record["message"]), level="WARNING")
    try:
        config = Config(history_recall_move_aliases="绑定 link")
    finally:
        logger.remove(sink)
    assert config.history_recall_move_aliases == {"绑定", "link"}
    (warning,) = [line for line in lines if "HISTORY_RECALL_MOVE_ALIASES" in line]
    assert f"HISTORY_RECALL_MOVE_ALIASES='{json.dumps(['绑定', 'link'], ensure_ascii=False)}'" in warning
    assert "onebotv11" not in warning and "10001" not in warning  # no made-up id to paste
