"""/forget (dry run, then /forget confirm), the admin forms, /recall-off|on and /recall-optout|optin,
through the real bot and the real server's recorded answers."""

from __future__ import annotations

import json

import httpx
from nonebug import App

from tests.nonebot.nb_helpers import (
    ADMIN_ID,
    PLAIN_GROUP,
    USER_ID,
    Captured,
    FakeRecallApi,
    group_message,
    recorded,
)

CHAT = f"onebotv11:{PLAIN_GROUP}"


async def _reply(app: App, bot_factory, event) -> str:
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})
    assert reply.quotes(event)
    return reply.text


async def _silence(app: App, bot_factory, event) -> None:
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)  # nonebug fails on any send that was not declared


def _forget_route(api: FakeRecallApi) -> tuple[dict, dict]:
    """POST /forget answering the recorded dry run or the recorded applied forget, by ``apply``."""
    dry, done = recorded("forget_member_dry_run"), recorded("forget_member")

    def respond(request: httpx.Request) -> httpx.Response:
        rec = done if json.loads(request.content).get("apply") else dry
        return httpx.Response(rec["status"], json=rec["body"])

    api.route_raw("POST", "/forget", respond)
    return dry["body"], done["body"]


async def test_forget_asks_first_and_forgets_only_after_confirm(app: App, api: FakeRecallApi, bot_factory):
    from nonebot_plugin_history_recall.handlers.forget import forget_pending_requests

    forget_pending_requests()
    dry, done = _forget_route(api)
    text = await _reply(app, bot_factory, group_message("/forget --after 30d"))
    assert api.bodies() == [{"chat": CHAT, "scope": "member", "user": str(USER_ID), "actor": f"onebotv11:{USER_ID}",
                             "apply": False, "after": "30d"}]
    assert f"{dry['user_turns']} 条发言" in text and f"{dry['replies']} 条回复" in text and "/forget confirm" in text
    # Someone else's confirm does not apply this member's request.
    assert "没有等待确认" in await _reply(app, bot_factory, group_message("/forget confirm", user_id=ADMIN_ID))
    text = await _reply(app, bot_factory, group_message("/forget confirm"))
    assert api.bodies()[-1] == {**api.bodies()[0], "apply": True}
    assert done["receipt"] in text and "state.db" in text
    assert "没有等待确认" in await _reply(app, bot_factory, group_message("/forget confirm"))  # used up
    assert len(api.requests) == 2


async def test_cancel_and_timeout_forget_nothing(app: App, api: FakeRecallApi, bot_factory, monkeypatch):
    from nonebot_plugin_history_recall.handlers import forget as forget_handler

    forget_handler.forget_pending_requests()
    _forget_route(api)
    await _reply(app, bot_factory, group_message("/forget"))
    assert "取消" in await _reply(app, bot_factory, group_message("/forget cancel"))
    await _reply(app, bot_factory, group_message("/forget"))
    now = forget_handler.time.monotonic()
    monkeypatch.setattr(forget_handler.time, "monotonic", lambda: now + 3600)
    assert "没有等待确认" in await _reply(app, bot_factory, group_message("/forget confirm"))
    assert all(body["apply"] is False for body in api.bodies())


async def test_a_member_cannot_use_the_admin_forms(app: App, api: FakeRecallApi, bot_factory):
    for text in ("/forget --session hermes-onebotv11+group+1+2", "/forget --all --before 2026-01-01",
                 "/forget --member 10003"):
        assert "只有管理员" in await _reply(app, bot_factory, group_message(text))
    assert api.requests == []
    await _silence(app, bot_factory, group_message("/recall-off"))
    await _silence(app, bot_factory, group_message("/recall-on"))
    assert api.requests == []


async def test_admin_forms_send_their_scope(app: App, api: FakeRecallApi, bot_factory):
    from nonebot_plugin_history_recall.handlers.forget import forget_pending_requests

    forget_pending_requests()
    api.replay("forget_chat_dry_run")
    for text, scope in [("/forget --all --before 2026-01-01", {"scope": "chat", "before": "2026-01-01"}),
                        ("/forget --session s1", {"scope": "session", "session_id": "s1"}),
                        ("/forget --member 10003", {"scope": "member", "user": "10003"})]:
        reply = await _reply(app, bot_factory, group_message(text, user_id=ADMIN_ID))
        assert "没有可以忘记的内容" in reply  # the recorded answer counts nothing
        assert {k: v for k, v in api.bodies()[-1].items() if k not in ("chat", "actor", "apply")} == scope


async def test_forget_a_result_that_is_not_yours_is_refused(app: App, api: FakeRecallApi, bot_factory):
    from nonebot_plugin_history_recall import last_results

    last_results.remember(CHAT, [{"message_id": 4, "session_id": "x"}, {"message_id": 9, "session_id": "y"}])
    api.replay("forget_not_attributable")
    text = await _reply(app, bot_factory, group_message("/forget --result 2"))
    assert api.bodies()[-1]["message_id"] == 9 and api.bodies()[-1]["user"] == str(USER_ID)
    assert "不能确认是你说的" in text
    assert "--open" in await _reply(app, bot_factory, group_message("/forget --result 5"))  # no such result


async def test_recall_off_on_and_a_search_while_off(app: App, api: FakeRecallApi, bot_factory):
    off = api.replay("recall_off", path=f"/chats/{CHAT}/recall")
    text = await _reply(app, bot_factory, group_message("/recall-off", user_id=ADMIN_ID))
    assert json.loads(api.requests[-1].content) == {"enabled": False, "actor": f"onebotv11:{ADMIN_ID}"}
    assert off["receipt"] in text and "已关闭" in text
    api.replay("search_recall_off", path="/search")
    assert "已被管理员关闭" in await _reply(app, bot_factory, group_message("/recall rollout"))
    api.replay("recall_on", path=f"/chats/{CHAT}/recall")
    assert "重新打开" in await _reply(app, bot_factory, group_message("/recall-on", user_id=ADMIN_ID))


async def test_optout_and_optin_are_the_members_own(app: App, api: FakeRecallApi, bot_factory):
    path = f"/chats/{CHAT}/members/{USER_ID}/optout"
    api.replay("optout", path=path)
    text = await _reply(app, bot_factory, group_message("/recall-optout"))
    assert json.loads(api.requests[-1].content) == {"opted_out": True, "actor": f"onebotv11:{USER_ID}"}
    assert "不会再进入检索" in text
    api.replay("optin", path=path)
    assert "重新进入检索" in await _reply(app, bot_factory, group_message("/recall-optin"))


async def test_optout_in_a_shared_group_is_refused_with_what_an_admin_can_do(app: App, api: FakeRecallApi,
                                                                             bot_factory):
    """Issue 34 §2: the server cannot tell the member's turns apart; the bot says so, not "opted out"."""
    api.replay("optout_not_attributable", path=f"/chats/{CHAT}/members/{USER_ID}/optout")
    text = await _reply(app, bot_factory, group_message("/recall-optout"))
    assert "分不出哪句话是谁说的" in text and "/recall-off" in text and "不会再进入检索" not in text


def test_the_preview_names_the_days_on_the_hermes_profiles_calendar(monkeypatch):
    """A bot kept in UTC beside a Hermes set to Beijing: the turns were said at 01:00 on 10 October in
    Beijing (17:00 UTC on the 9th); the preview names the group's day, as the API writes it
    (``first_when``). An older server sends only the epoch: read on the bot's own clock."""
    import time

    from nonebot_plugin_history_recall import render

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        member = recorded("forget_member_dry_run")["body"]
        said = 1760029200.0  # 2025-10-09 17:00 UTC
        answer = {**member, "first": said, "last": said + 60,
                  "first_when": "2025-10-10 01:00", "last_when": "2025-10-10 01:01"}
        assert "2025-10-10" in render.forget_preview(answer, True, 60)
        assert "2025-10-09" not in render.forget_preview(answer, True, 60)
        older = {k: v for k, v in answer.items() if not k.endswith("_when")}
        assert "2025-10-09" in render.forget_preview(older, True, 60)
    finally:
        monkeypatch.undo()
        time.tzset()
