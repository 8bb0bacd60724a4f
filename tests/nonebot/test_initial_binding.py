"""The config's ``project`` gives a group its first binding; the server keeps later /move choices."""

from __future__ import annotations

import httpx
import pytest
from nonebug import App

from tests.nonebot.nb_helpers import API_KEY, PLAIN_GROUP, Captured, FakeRecallApi, group_message

CHAT = f"onebotv11:{PLAIN_GROUP}"
PUT_BINDING = f"/chats/{CHAT}/binding"


@pytest.fixture
def alpha_group(monkeypatch: pytest.MonkeyPatch, plugin_config):
    from nonebot_plugin_history_recall.config import GroupEndpoint

    groups = {**plugin_config.history_recall_groups, CHAT: GroupEndpoint(project="alpha")}
    monkeypatch.setattr(plugin_config, "history_recall_groups", groups)


async def test_startup_push_uses_only_if_unset(api: FakeRecallApi, alpha_group):
    from nonebot_plugin_history_recall import bindings

    api.replay("binding_put", path=PUT_BINDING)
    await bindings.push_initial_bindings()

    (request,) = api.requests
    assert request.headers["Authorization"] == f"Bearer {API_KEY}"
    assert api.bodies() == [{"project": "alpha", "only_if_unset": True}]
    assert CHAT not in bindings._pending


async def test_push_that_cannot_reach_the_server_is_retried_on_the_first_recall(
    app: App, api: FakeRecallApi, bot_factory, alpha_group
):
    from nonebot_plugin_history_recall import bindings

    api.route("PUT", f"/chats/{CHAT}/binding", raises=httpx.ConnectError("refused"))
    await bindings.push_initial_bindings()  # server down at startup: logged, not raised
    assert CHAT in bindings._pending

    api.replay("binding_put", path=PUT_BINDING)  # the server is back
    answer = api.replay("search_chat_no_results")
    event = group_message("/recall 上线")
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})

    assert [(r.method, r.url.path) for r in api.requests] == [
        ("PUT", f"/chats/{CHAT}/binding"),
        ("PUT", f"/chats/{CHAT}/binding"),
        ("POST", "/search"),
    ]
    assert api.bodies()[1] == {"project": "alpha", "only_if_unset": True}
    assert answer["project"]["name"] in reply.text

    # Once it landed, later /recall calls go straight to the search (another member: no cooldown).
    api.requests.clear()
    event = group_message("/recall 上线", user_id=10050)
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, Captured(), result={"message_id": 2})
    assert [r.method for r in api.requests] == ["POST"]


async def test_refused_push_is_not_retried(api: FakeRecallApi, alpha_group):
    from nonebot_plugin_history_recall import bindings

    api.replay("binding_put_unknown_project", path=PUT_BINDING)
    await bindings.push_initial_bindings()

    assert CHAT not in bindings._pending


async def test_admin_move_cancels_a_pending_initial_binding(app: App, api: FakeRecallApi, bot_factory, alpha_group):
    from nonebot_plugin_history_recall import bindings
    from tests.nonebot.nb_helpers import ADMIN_ID

    bindings._pending.add(CHAT)
    api.replay("move_chat_home")
    event = group_message("/move --home", user_id=ADMIN_ID)
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, Captured(), result={"message_id": 1})

    assert CHAT not in bindings._pending
