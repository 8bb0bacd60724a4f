"""/recall as a group member sees it: what reaches the recall API and what comes back."""

from __future__ import annotations

import json

import pytest
from nonebug import App

from tests.nonebot.nb_helpers import (
    ADMIN_ID,
    API_KEY,
    API_URL,
    PLAIN_GROUP,
    ROUTED_GROUP,
    TEAM_KEY,
    Captured,
    FakeRecallApi,
    group_message,
    private_message,
)


async def test_recall_in_routed_group_sends_chat_key_and_shows_results(app: App, api: FakeRecallApi, bot_factory):
    answer = api.replay("search_chat", prefix="/p/team-a")
    event = group_message("/recall 数据库 迁移 --mode keyword --limit 2", group_id=ROUTED_GROUP)
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})

    (request,) = api.requests
    assert str(request.url) == "http://recall.test/p/team-a/search"
    assert request.headers["Authorization"] == f"Bearer {TEAM_KEY}"
    assert json.loads(request.content) == {
        "query": "数据库 迁移",
        "mode": "keyword",
        "limit": 2,
        "chat": f"onebotv11:{ROUTED_GROUP}",
    }
    assert answer["project"]["name"] in reply.text
    assert answer["results"][0]["title"] in reply.text
    assert "【kubernetes】 【rollout】 plan: canary first" in reply.text  # the hit kept visible
    # Nothing internal: no session link or id, no project id.
    for result in answer["results"]:
        assert result["link"] not in reply.text and result["session_id"] not in reply.text
    assert answer["project"]["id"] not in reply.text


async def test_unlisted_group_uses_default_endpoint_and_default_mode_and_limit(
    app: App, api: FakeRecallApi, bot_factory
):
    api.replay("search_chat")
    event = group_message("/recall alembic")
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, Captured(), result={"message_id": 1})

    (request,) = api.requests
    assert str(request.url) == f"{API_URL}/search"
    assert request.headers["Authorization"] == f"Bearer {API_KEY}"
    assert json.loads(request.content) == {
        "query": "alembic",
        "mode": "hybrid",
        "limit": 3,
        "chat": f"onebotv11:{PLAIN_GROUP}",
    }
    assert api.timeouts == [7]


async def test_unbound_group_is_told_to_ask_an_admin_and_never_searched_globally(
    app: App, api: FakeRecallApi, bot_factory
):
    api.replay("search_chat_unbound")
    event = group_message("/recall 部署流程")
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})

    assert "还没有关联项目" in reply.text and "/move" in reply.text
    assert len(api.requests) == 1  # no second, unscoped search
    assert all("project" not in body for body in api.bodies())


async def test_empty_results_name_the_project(app: App, api: FakeRecallApi, bot_factory):
    answer = api.replay("search_chat_no_results")
    event = group_message("/recall 不存在的话题")
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})

    assert "没有检索到" in reply.text and answer["project"]["name"] in reply.text


async def test_private_chat_gets_one_polite_line_and_no_request(app: App, api: FakeRecallApi, bot_factory):
    event = private_message("/recall 数据库")
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})

    assert "只能在群里用" in reply.text and "\n" not in reply.text
    assert api.requests == []


async def test_recall_alone_shows_help_without_admin_commands(app: App, api: FakeRecallApi, bot_factory):
    event = group_message("/recall")
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})

    assert "/recall <问题>" in reply.text and "--limit" in reply.text
    assert "/move" not in reply.text and "/recall-status" not in reply.text
    assert api.requests == []


async def test_admin_help_lists_admin_commands(app: App, api: FakeRecallApi, bot_factory):
    event = group_message("/recall", user_id=ADMIN_ID)
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})

    assert "/move <项目>" in reply.text and "/move --home" in reply.text and "/recall-status" in reply.text


@pytest.mark.parametrize("args", ["--limit abc", "--limit 0", "--limit 11", "-n 99"])
async def test_bad_limit_is_explained_and_not_sent(app: App, api: FakeRecallApi, bot_factory, args: str):
    event = group_message(f"/recall 数据库 {args}")
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})

    assert "--limit" in reply.text and "1" in reply.text and "10" in reply.text
    assert api.requests == []


async def test_bad_mode_is_explained_and_not_sent(app: App, api: FakeRecallApi, bot_factory):
    event = group_message("/recall 数据库 --mode fuzzy")
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})

    assert "hybrid" in reply.text and "keyword" in reply.text and "semantic" in reply.text
    assert api.requests == []


async def test_option_without_value_gets_usage(app: App, api: FakeRecallApi, bot_factory):
    event = group_message("/recall 数据库 --limit")
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})

    assert "用法" in reply.text
    assert api.requests == []


async def test_similar_command_names_do_not_trigger_recall(app: App, api: FakeRecallApi, bot_factory):
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, group_message("/recallx 数据库"))
        ctx.receive_event(bot, group_message("recall 数据库"))  # no command start
    assert api.requests == []


async def test_today_and_yesterday_follow_the_hermes_profiles_calendar_not_the_bots_clock(
    app: App, api: FakeRecallApi, bot_factory
):
    """The API writes each row's ``when`` and its ``now`` on the Hermes profile's calendar (Hermes'
    ``timezone``, e.g. Beijing on a UTC server); the bot says 今天 / 昨天 by that ``now``, so a
    row from 06:50 Beijing time is "today" at 07:00 Beijing whatever zone the bot's own clock is in."""
    from tests.nonebot.nb_helpers import recorded

    body = recorded("search_chat")["body"]
    first, second, *rest = body["results"]
    api.route("POST", "/search", json_body={**body, "now": "2031-03-04 07:00", "results": [
        {**first, "when": "2031-03-04 06:50"}, {**second, "when": "2031-03-03 23:59"}, *rest]})
    event = group_message("/recall 数据库 迁移")
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})

    assert "今天 06:50" in reply.text and "昨天 23:59" in reply.text, reply.text
