"""Long result lists: alconna's cross-adapter forward card where the adapter has one (OneBot v11),
trimmed text where it has none (OneBot v12) or the forward fails."""

from __future__ import annotations

import pytest
from nonebot.adapters.onebot.v11 import ActionFailed
from nonebug import App

from tests.nonebot.nb_helpers import BOT_ID, PLAIN_GROUP, Captured, FakeRecallApi, group_message, recorded


def _many_results(n: int) -> dict:
    """The real server's search answer (recorded), with ``n`` long results of the same shape."""
    answer = recorded("search_chat")["body"]
    shape = answer["results"][0]
    return {
        **answer,
        "results": [
            {
                **shape,
                "session_id": f"s{i}",
                "link": f"@session:s{i}",
                "title": f"会话 {i} " + "关于部署与迁移的长时间讨论" * 6,
                "message_id": i,
                "snippet": "很长的上下文 " * 15 + ">>>迁移<<<" + " 后面的内容" * 15,
            }
            for i in range(1, n + 1)
        ],
    }


class ForwardCall(dict):
    """Expected ``send_group_forward_msg`` params: matches any node list, keeps it for asserts."""

    def __init__(self, group_id: int) -> None:
        super().__init__()
        self.group_id = group_id
        self.messages: list = []

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, dict) or other.get("group_id") != self.group_id:
            return False
        self.messages = other["messages"]
        return True

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = None  # type: ignore[assignment]


def _node_texts(forward: ForwardCall) -> list[str]:
    return [node.data["content"].extract_plain_text() for node in forward.messages]


async def test_long_result_list_goes_out_as_a_merged_forward(app: App, api: FakeRecallApi, bot_factory):
    api.route("POST", "/search", json_body=_many_results(10))
    event = group_message("/recall 迁移 --limit 10")
    forward = ForwardCall(PLAIN_GROUP)
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_api("send_group_forward_msg", forward, result={"message_id": 5})
        # and no send_msg: nonebug fails on any undeclared call

    assert len(forward.messages) == 11  # a header node, then one node per result
    assert all(node.type == "node" and node.data["user_id"] == BOT_ID for node in forward.messages)
    texts = _node_texts(forward)
    assert "Alpha" in texts[0]
    assert "会话 10" in texts[-1] and "【迁移】" in texts[-1] and "@session:s10" not in texts[-1]


async def test_failed_forward_falls_back_to_trimmed_text(app: App, api: FakeRecallApi, bot_factory):
    from nonebot_plugin_history_recall.outbound import PLAIN_TEXT_LIMIT

    api.route("POST", "/search", json_body=_many_results(10))
    event = group_message("/recall 迁移 --limit 10")
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_api(
            "send_group_forward_msg",
            ForwardCall(PLAIN_GROUP),
            exception=ActionFailed(status="failed", retcode=100, msg="forward disabled"),
        )
        ctx.should_call_send(event, reply, result={"message_id": 6})

    assert len(reply.text) <= PLAIN_TEXT_LIMIT
    assert "会话 1" in reply.text  # whole results from the top ...
    assert "没有显示" in reply.text  # ... and a note that the rest was cut
    assert "会话 10" not in reply.text
    assert reply.quotes(event)


@pytest.fixture
def v12_bot_factory(nonebug_init: None):
    """OneBot v12 has no forward messages in alconna: the adapter stands for 'elsewhere'."""
    import nonebot
    from nonebot.adapters.onebot.v12 import Adapter, Bot

    if "OneBot V12" not in nonebot.get_adapters():
        nonebot.get_driver().register_adapter(Adapter)

    def make(ctx):
        adapter = nonebot.get_adapter(Adapter)
        return ctx.create_bot(base=Bot, adapter=adapter, self_id=BOT_ID, platform="qq", impl="test")

    return make


def _v12_group_message(text: str):
    from datetime import datetime

    from nonebot.adapters.onebot.v12 import GroupMessageEvent, Message
    from nonebot.adapters.onebot.v12.event import BotSelf

    return GroupMessageEvent(
        id="e1",
        time=datetime.now(),
        type="message",
        detail_type="group",
        sub_type="",
        self=BotSelf(platform="qq", user_id=BOT_ID),
        message_id="m-v12-1",
        message=Message(text),
        original_message=Message(text),
        alt_message=text,
        user_id="10002",
        group_id="30003",
    )


async def test_adapter_without_forward_gets_trimmed_text(app: App, api: FakeRecallApi, v12_bot_factory):
    from nonebot_plugin_history_recall.outbound import PLAIN_TEXT_LIMIT

    api.route("POST", "/search", json_body=_many_results(10))
    event = _v12_group_message("/recall 迁移 --limit 10")
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = v12_bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": "r1"})  # and no forward call

    assert api.bodies()[0]["chat"] == "onebotv12:30003"
    assert len(reply.text) <= PLAIN_TEXT_LIMIT and "没有显示" in reply.text and "会话 1" in reply.text


async def test_short_result_list_stays_plain_text(app: App, api: FakeRecallApi, bot_factory):
    api.route("POST", "/search", json_body=_many_results(2))
    event = group_message("/recall 迁移 --limit 2")
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 7})

    assert "会话 1" in reply.text and "会话 2" in reply.text
    assert reply.quotes(event)
