"""/move and /recall-status: answers for admins, silence for everyone else."""

from __future__ import annotations

import json

import pytest
from nonebug import App

from tests.nonebot.nb_helpers import (
    ADMIN_ID,
    PLAIN_GROUP,
    ROUTED_GROUP,
    TEAM_KEY,
    Captured,
    FakeRecallApi,
    group_message,
    recorded,
)


async def _reply(app: App, bot_factory, event) -> str:
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})
    return reply.text


async def test_admin_move_moves_the_chat_and_reports_project_and_count(app: App, api: FakeRecallApi, bot_factory):
    moved = api.replay("move_chat", prefix="/p/team-a")
    text = await _reply(app, bot_factory, group_message("/move alpha", user_id=ADMIN_ID, group_id=ROUTED_GROUP))

    (request,) = api.requests
    assert request.headers["Authorization"] == f"Bearer {TEAM_KEY}"
    assert json.loads(request.content) == {"chat": f"onebotv11:{ROUTED_GROUP}", "project": "alpha"}
    assert moved["project"]["name"] in text and f"{moved['moved_sessions']} 段" in text
    assert "Home" not in text and moved["project"]["id"] not in text


async def test_admin_move_home_sends_empty_project(app: App, api: FakeRecallApi, bot_factory):
    api.replay("move_chat_home")
    text = await _reply(app, bot_factory, group_message("/move --home", user_id=ADMIN_ID))

    assert api.bodies() == [{"chat": f"onebotv11:{PLAIN_GROUP}", "project": ""}]
    assert "Home" in text and "「?」" not in text


@pytest.mark.parametrize(
    ("recording", "ours"),
    [("move_unknown_project", "没有这个项目"), ("move_folder_missing", "文件夹"), ("unauthorized", "密钥")],
)
async def test_move_errors_get_our_own_sentence_never_the_servers(
    app: App, api: FakeRecallApi, bot_factory, recording: str, ours: str
):
    server = recorded(recording)
    api.route("POST", "/move", status=server["status"], json_body=server["body"])
    text = await _reply(app, bot_factory, group_message("/move nope", user_id=ADMIN_ID))

    assert ours in text and server["body"]["error"] not in text
    assert "/" not in text.replace("/move", "")  # no path, no URL


@pytest.mark.parametrize("command", ["/move", "/move x --home", "/move a b"])
async def test_admin_move_with_wrong_arguments_gets_usage(app: App, api: FakeRecallApi, bot_factory, command: str):
    text = await _reply(app, bot_factory, group_message(command, user_id=ADMIN_ID))

    assert "用法" in text and "--home" in text
    assert api.requests == []


@pytest.mark.parametrize("command", ["/move hermes-dev", "/move --home", "/move --help", "/recall-status"])
async def test_non_admin_gets_silence_and_nothing_is_requested(app: App, api: FakeRecallApi, bot_factory, command):
    from nonebot_plugin_history_recall.handlers.admin import move_cmd, status_cmd

    matcher = status_cmd if command == "/recall-status" else move_cmd
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, group_message(command))
        ctx.should_pass_rule(matcher)  # the command was recognised; the silence is deliberate
        # nonebug fails the test on any send or API call that was not declared here.

    assert api.requests == []


async def test_admin_sees_status_of_endpoint_binding_and_index(app: App, api: FakeRecallApi, bot_factory):
    api.replay("health", prefix="/p/team-a")
    status = api.replay("status", prefix="/p/team-a")
    binding = api.replay("binding_bound", prefix="/p/team-a", path=f"/chats/onebotv11:{ROUTED_GROUP}/binding")
    text = await _reply(app, bot_factory, group_message("/recall-status", user_id=ADMIN_ID, group_id=ROUTED_GROUP))

    row = next(p for p in status["projects"] if p["id"] == binding["project"]["id"])
    assert f"onebotv11:{ROUTED_GROUP}" in text  # the route's label
    assert binding["project"]["name"] in text and binding["project"]["slug"] in text  # bound project
    assert f"{row['indexed_messages']}/{row['messages']}" in text and f"{row['chunks']} 个片段" in text
    assert row["chunks"] > 0 and f"consent: {status['semantic']['consent']}" in text
    assert status["semantic"]["model"] in text and status["semantic"]["status"] in text
    assert "recall.test" not in text and "http" not in text  # the endpoint URL stays in the log


async def test_status_when_the_server_is_down_says_so(app: App, api: FakeRecallApi, bot_factory):
    import httpx

    api.route("GET", "/health", raises=httpx.ConnectError("refused"))
    api.route("GET", "/status", raises=httpx.ConnectError("refused"))
    text = await _reply(app, bot_factory, group_message("/recall-status", user_id=ADMIN_ID))

    assert "❌" in text and "cannot reach" in text
