"""A good citizen in a bot with other plugins: our admin commands never swallow another plugin's
command of the same name for people who are not our admins, and their names are configurable."""

from __future__ import annotations

from typing import Annotated

import pytest
from nonebot.adapters import Message
from nonebot.params import CommandArg
from nonebug import App

from tests.nonebot.nb_helpers import ADMIN_ID, ROUTED_GROUP, Captured, FakeRecallApi, group_message


@pytest.fixture
def chess(nonebug_init: None):
    """Another plugin's ``/move`` (a chess plugin, say), at NoneBot's default priority."""
    from nonebot import on_command

    matcher = on_command("move", priority=50, block=True)

    @matcher.handle()
    async def _(arg: Annotated[Message, CommandArg()]) -> None:
        await matcher.finish(f"chess: {arg.extract_plain_text()}")

    yield matcher
    matcher.destroy()


async def test_another_plugins_move_still_answers_a_non_admin(app: App, api: FakeRecallApi, bot_factory, chess):
    from nonebot_plugin_history_recall.handlers.admin import move_cmd

    event = group_message("/move e2e4")
    async with app.test_matcher([move_cmd, chess]) as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_not_pass_rule(move_cmd)
        ctx.should_call_send(event, "chess: e2e4", result={"message_id": 1})
        ctx.should_finished(chess)
    assert api.requests == []


async def test_our_admin_gets_ours_and_the_other_plugin_stays_quiet(app: App, api: FakeRecallApi, bot_factory, chess):
    from nonebot_plugin_history_recall.handlers.admin import move_cmd

    api.replay("move_chat", prefix="/p/team-a")
    event = group_message("/move alpha", user_id=ADMIN_ID, group_id=ROUTED_GROUP)
    reply = Captured()
    async with app.test_matcher([move_cmd, chess]) as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})
    assert "✅" in reply.text and "chess" not in reply.text
    assert len(api.requests) == 1


async def test_an_alias_reaches_the_same_command(app: App, api: FakeRecallApi, bot_factory):
    """HISTORY_RECALL_MOVE_ALIASES='["recall-move"]' (set for this suite in conftest.py)."""
    from nonebot_plugin_history_recall.handlers.admin import move_cmd

    api.replay("move_chat", prefix="/p/team-a")
    event = group_message("/recall-move alpha", user_id=ADMIN_ID, group_id=ROUTED_GROUP)
    reply = Captured()
    async with app.test_matcher(move_cmd) as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})
    assert "✅" in reply.text and len(api.requests) == 1


def test_command_names_are_checked_and_shown_in_the_help(nonebug_init: None):
    from pydantic import ValidationError

    from nonebot_plugin_history_recall.config import Config
    from nonebot_plugin_history_recall.texts import Names, texts_for

    assert Config(history_recall_move_command="/recall-move").history_recall_move_command == "recall-move"
    with pytest.raises(ValidationError, match="command name"):
        Config(history_recall_move_command="recall move")
    t = texts_for("zh", Names("/", "recall-move", "rs"))
    text = t.help(is_admin=True)
    assert "/recall-move <项目>" in text and "/rs —" in text and "/move " not in text
    assert t("move_usage").startswith("用法：/recall-move <项目>，或 /recall-move --home")


def test_a_plain_admin_list_is_read_with_a_warning_not_a_traceback(tmp_path):
    """HISTORY_RECALL_ADMIN_USERS=onebotv11:10001,telegram:5 (not JSON) at a real startup, through
    NoneBot's own env parsing: the plugin loads and the warning says how to write it."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = ("import nonebot; nonebot.init(driver='~none'); "
              "p = nonebot.load_plugin('nonebot_plugin_history_recall'); "
              "from nonebot_plugin_history_recall.config import plugin_config as c; "
              "print('ADMINS', sorted(c.history_recall_admin_users), p is not None)")
    env = {**os.environ, "HISTORY_RECALL_ADMIN_USERS": "onebotv11:10001, telegram:5", "ENVIRONMENT": "citizen",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "LOCALSTORE_DATA_DIR": str(tmp_path / "d"),
           "LOCALSTORE_CACHE_DIR": str(tmp_path / "c"), "LOCALSTORE_CONFIG_DIR": str(tmp_path / "f")}
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "ADMINS ['onebotv11:10001', 'telegram:5'] True" in proc.stdout
    out = proc.stdout + proc.stderr  # NoneBot logs to stdout
    assert "HISTORY_RECALL_ADMIN_USERS is not a JSON list" in out and "Traceback" not in out
