"""When the recall API fails, the group gets one short sentence and the operator gets the detail."""

from __future__ import annotations

import httpx
import pytest
from nonebug import App

from tests.nonebot.nb_helpers import API_KEY, PLAIN_GROUP, Captured, FakeRecallApi, group_message


@pytest.fixture
def log_lines():
    """Everything this plugin logs (not NoneBot's own event log), as ``(level, message)``."""
    from nonebot import logger

    lines: list[tuple[str, str]] = []

    def sink(message) -> None:
        record = message.record
        if (record["name"] or "").startswith("nonebot_plugin_history_recall"):
            lines.append((record["level"].name, record["message"]))

    sink_id = logger.add(sink, level="DEBUG")
    yield lines
    logger.remove(sink_id)


async def _recall_reply(app: App, bot_factory, text: str = "/recall 机密的问题") -> str:
    event = group_message(text)
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})
    return reply.text


def _assert_one_short_sentence(text: str) -> None:
    assert "\n" not in text and len(text) <= 80, text


async def test_api_down_gives_one_short_sentence(app: App, api: FakeRecallApi, bot_factory, log_lines):
    api.route("POST", "/search", raises=httpx.ConnectError("connection refused"))
    text = await _recall_reply(app, bot_factory)

    assert "cannot reach" in text and "连不上" in text
    _assert_one_short_sentence(text)
    assert any(level == "WARNING" and "connection refused" in msg for level, msg in log_lines)


async def test_timeout_gives_one_short_sentence(app: App, api: FakeRecallApi, bot_factory):
    api.route("POST", "/search", raises=httpx.ReadTimeout("read timed out"))
    text = await _recall_reply(app, bot_factory)

    assert "超时" in text and "timed out" in text
    _assert_one_short_sentence(text)


async def test_wrong_key_gives_one_short_sentence_and_logs_no_secrets(
    app: App, api: FakeRecallApi, bot_factory, log_lines
):
    api.route("POST", "/search", status=401, json_body={"success": False, "error": "bad key", "code": "unauthorized"})
    text = await _recall_reply(app, bot_factory)

    assert "密钥" in text and "key rejected" in text
    _assert_one_short_sentence(text)
    assert any(level == "WARNING" and "401" in msg for level, msg in log_lines)
    assert not any(API_KEY in msg for _, msg in log_lines)
    assert not any("机密的问题" in msg for level, msg in log_lines if level != "DEBUG")
    assert any("机密的问题" in msg for level, msg in log_lines if level == "DEBUG")  # the capture works


# --- the client's mapping, one answer at a time ------------------------------------------------


def _endpoint():
    from nonebot_plugin_history_recall.routing import resolve_endpoint

    return resolve_endpoint("OneBot V11", str(PLAIN_GROUP))


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (404, {"success": False, "error": "no such profile", "code": "unknown_profile"}, "profile"),
        (404, {"detail": "Not Found"}, "404"),
        (404, {"success": False, "error": "Not Found", "code": "not_found"}, "404"),  # no such route
        (409, {"success": False, "error": "x", "code": "chat_unbound"}, "还没有关联项目"),
        (400, {"success": False, "error": "query too long", "code": "query_too_long"}, "太长"),
        (404, {"success": False, "error": "project not found: nope", "code": "unknown_project"}, "nope"),
        (500, {"success": False, "error": "Traceback ...", "code": "internal"}, "出错"),
        (200, {"success": False, "error": "session database not found", "code": "no_db"}, "session database"),
    ],
)
async def test_error_answers_become_a_user_sentence(api: FakeRecallApi, status, body, expected):
    from nonebot_plugin_history_recall import client

    api.route("POST", "/search", status=status, json_body=body)
    result = await client.search(_endpoint(), f"onebotv11:{PLAIN_GROUP}", "q", "hybrid", 3)

    assert not result.ok
    assert expected in result.error
    _assert_one_short_sentence(result.error)
    assert "Traceback" not in result.error


async def test_invalid_json_is_an_error_not_a_crash(api: FakeRecallApi):
    from nonebot_plugin_history_recall import client

    api.route_raw("GET", "/status", lambda request: httpx.Response(200, text="<html>proxy login</html>"))
    result = await client.status(_endpoint())

    assert not result.ok and result.code == "bad_json"
    assert "看不懂" in result.error


async def test_server_errors_and_transport_errors_are_retryable_but_refusals_are_not(api: FakeRecallApi):
    from nonebot_plugin_history_recall import client

    api.route("GET", "/health", status=503, json_body={"detail": "starting"})
    api.route("GET", "/status", raises=httpx.ConnectError("refused"))
    api.route("POST", "/move", status=404, json_body={"success": False, "error": "x", "code": "unknown_project"})

    assert (await client.health(_endpoint())).retryable
    assert (await client.status(_endpoint())).retryable
    assert not (await client.move_chat(_endpoint(), "onebotv11:1", "x")).retryable
