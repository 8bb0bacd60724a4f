"""Long result lists: a merged forward on OneBot v11 groups, trimmed text when that fails."""

from __future__ import annotations

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


async def test_long_result_list_goes_out_as_a_merged_forward(app: App, api: FakeRecallApi, bot_factory):
    api.route("POST", "/search", json_body=_many_results(10))
    event = group_message("/recall 迁移 --limit 10")
    forward = ForwardCall(PLAIN_GROUP)
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_api("get_login_info", {}, result={"user_id": int(BOT_ID), "nickname": "回忆酱"})
        ctx.should_call_api("send_group_forward_msg", forward, result={"message_id": 5})
        # and no send_msg: nonebug fails on any undeclared call

    assert len(forward.messages) == 11  # a header node, then one node per result
    first, last = forward.messages[0], forward.messages[-1]
    assert first["data"]["name"] == "回忆酱" and first["data"]["uin"] == BOT_ID
    assert "Alpha" in first["data"]["content"][0]["data"]["text"]
    last_text = last["data"]["content"][0]["data"]["text"]
    assert "会话 10" in last_text and "【迁移】" in last_text and "@session:s10" not in last_text


async def test_failed_forward_falls_back_to_trimmed_text(app: App, api: FakeRecallApi, bot_factory):
    from nonebot_plugin_history_recall.outbound import PLAIN_TEXT_LIMIT

    api.route("POST", "/search", json_body=_many_results(10))
    event = group_message("/recall 迁移 --limit 10")
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_api("get_login_info", {}, result={"user_id": int(BOT_ID), "nickname": "回忆酱"})
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


async def test_short_result_list_stays_plain_text(app: App, api: FakeRecallApi, bot_factory):
    api.route("POST", "/search", json_body=_many_results(2))
    event = group_message("/recall 迁移 --limit 2")
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 7})

    assert "会话 1" in reply.text and "会话 2" in reply.text
