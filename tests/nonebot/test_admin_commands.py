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
)

MOVED = {
    "success": True,
    "project": {"id": "p_1", "slug": "hermes-dev", "name": "Hermes Dev"},
    "moved_sessions": 4,
    "cwd": "/srv/hermes-dev",
    "message": "moved",
}


async def _reply(app: App, bot_factory, event) -> str:
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})
    return reply.text


async def test_admin_move_moves_the_chat_and_reports_project_and_count(app: App, api: FakeRecallApi, bot_factory):
    api.route("POST", "/p/team-a/move", json_body=MOVED)
    text = await _reply(app, bot_factory, group_message("/move hermes-dev", user_id=ADMIN_ID, group_id=ROUTED_GROUP))

    (request,) = api.requests
    assert request.headers["Authorization"] == f"Bearer {TEAM_KEY}"
    assert json.loads(request.content) == {"chat": f"onebotv11:{ROUTED_GROUP}", "project": "hermes-dev"}
    assert "Hermes Dev" in text and "4" in text


async def test_admin_move_home_sends_empty_project(app: App, api: FakeRecallApi, bot_factory):
    api.route("POST", "/move", json_body={**MOVED, "project": None, "moved_sessions": 2})
    text = await _reply(app, bot_factory, group_message("/move --home", user_id=ADMIN_ID))

    assert api.bodies() == [{"chat": f"onebotv11:{PLAIN_GROUP}", "project": ""}]
    assert "Home" in text and "2" in text


async def test_move_to_unknown_project_passes_the_server_sentence_on(app: App, api: FakeRecallApi, bot_factory):
    api.route(
        "POST",
        "/move",
        status=404,
        json_body={"success": False, "error": "project not found: nope", "code": "unknown_project"},
    )
    text = await _reply(app, bot_factory, group_message("/move nope", user_id=ADMIN_ID))

    assert "project not found: nope" in text


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
    api.route("GET", "/p/team-a/health", json_body={"ok": True, "profile": "team-a", "version": "0.1.0"})
    api.route(
        "GET",
        "/p/team-a/status",
        json_body={
            "success": True,
            "profile": "team-a",
            "projects": [{"id": "p_1", "name": "Hermes Dev", "messages": 1234, "chunks_indexed": 900, "sessions": 31}],
            "semantic": {
                "provider": "local",
                "model": "multilingual-e5-small",
                "consent": "not_needed",
                "status": "ready",
            },
        },
    )
    api.route(
        "GET",
        f"/p/team-a/chats/onebotv11:{ROUTED_GROUP}/binding",
        json_body={
            "success": True,
            "chat": f"onebotv11:{ROUTED_GROUP}",
            "state": "bound",
            "project": {"id": "p_1", "slug": "hermes-dev", "name": "Hermes Dev"},
        },
    )
    text = await _reply(app, bot_factory, group_message("/recall-status", user_id=ADMIN_ID, group_id=ROUTED_GROUP))

    assert "team-a" in text  # profile
    assert "Hermes Dev" in text and "hermes-dev" in text  # bound project
    assert "1234" in text and "900" in text  # index of that project
    assert "multilingual-e5-small" in text and "ready" in text


async def test_status_when_the_server_is_down_says_so(app: App, api: FakeRecallApi, bot_factory):
    import httpx

    api.route("GET", "/health", raises=httpx.ConnectError("refused"))
    api.route("GET", "/status", raises=httpx.ConnectError("refused"))
    text = await _reply(app, bot_factory, group_message("/recall-status", user_id=ADMIN_ID))

    assert "❌" in text and "cannot reach" in text
