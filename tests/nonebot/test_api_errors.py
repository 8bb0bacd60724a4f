"""When the recall API fails, the group gets one short sentence and the operator gets the detail."""

from __future__ import annotations

import httpx
import pytest
from nonebug import App

from tests.nonebot.nb_helpers import API_KEY, PLAIN_GROUP, Captured, FakeRecallApi, group_message, recorded


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
    """One line, short, and Chinese only: no English gloss in parentheses after it."""
    assert "\n" not in text and len(text) <= 80, text
    assert "(" not in text and "please" not in text, text


async def test_api_down_gives_one_short_sentence(app: App, api: FakeRecallApi, bot_factory, log_lines):
    api.route("POST", "/search", raises=httpx.ConnectError("connection refused"))
    text = await _recall_reply(app, bot_factory)

    assert text == "⚠️ 暂时连不上检索服务，请稍后再试。"
    _assert_one_short_sentence(text)
    assert any(level == "WARNING" and "connection refused" in msg for level, msg in log_lines)


async def test_timeout_gives_one_short_sentence(app: App, api: FakeRecallApi, bot_factory):
    api.route("POST", "/search", raises=httpx.ReadTimeout("read timed out"))
    text = await _recall_reply(app, bot_factory)

    assert "超时" in text
    _assert_one_short_sentence(text)


async def test_wrong_key_gives_one_short_sentence_and_logs_no_secrets(
    app: App, api: FakeRecallApi, bot_factory, log_lines
):
    api.replay("unauthorized", method="POST", path="/search")
    text = await _recall_reply(app, bot_factory)

    assert "密钥" in text and "联系管理员" in text and "recall.test" not in text  # a member gets no address
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
    ("recording", "expected"),
    [
        ("search_chat_unbound", "还没有关联项目"),
        ("search_chat_home", "Home"),  # linked to no project: not "not yet"
        ("search_chat_archived", "已归档"),  # linked to an archived project: an admin links another
        ("search_query_too_long", "太长"),
        ("search_bad_request", "没看懂"),
        ("unauthorized", "密钥"),
        ("no_such_route", "地址配置有误"),
        ("move_unknown_project", "没有这个项目"),
        ("move_folder_missing", "文件夹"),
        # A file on the Hermes machine is broken: not "try again later" (it will not help), but which
        # file, and that the operator must fix it.
        ("search_projects_damaged", "数据文件 projects.db 已损坏，要等运维修好"),
    ],
)
async def test_recorded_error_answers_become_our_own_sentence(api: FakeRecallApi, recording, expected):
    """The real server's error answers (recorded): the group gets our sentence, never the server's."""
    from nonebot_plugin_history_recall import client

    server = recorded(recording)
    api.route("POST", "/search", status=server["status"], json_body=server["body"])
    result = await client.search(_endpoint(), f"onebotv11:{PLAIN_GROUP}", "q", "hybrid", 3)

    assert not result.ok
    assert expected in result.error
    assert server["body"].get("error", "") not in result.error or not server["body"].get("error")
    _assert_one_short_sentence(result.error)


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        # Answers the server does not produce on purpose, but a proxy or an older server might.
        (500, {"success": False, "error": "Traceback /srv/hermes/x.py", "code": "internal"}, "出错"),
        (502, {"detail": "bad gateway"}, "出错"),
        (200, {"success": False, "error": "project folder not found: /home/u/p", "code": "strange"}, "拒绝"),
        (404, {"success": False, "error": "no such profile", "code": "unknown_profile"}, "地址配置有误"),
    ],
)
async def test_unrecorded_error_answers_never_show_the_servers_text(api: FakeRecallApi, status, body, expected):
    from nonebot_plugin_history_recall import client

    api.route("POST", "/search", status=status, json_body=body)
    result = await client.search(_endpoint(), f"onebotv11:{PLAIN_GROUP}", "q", "hybrid", 3)

    assert not result.ok and expected in result.error
    assert "/home" not in result.error and "/srv" not in result.error and "Traceback" not in result.error
    _assert_one_short_sentence(result.error)


async def test_a_broken_file_tells_the_admin_which_and_where_to_look(api: FakeRecallApi):
    from nonebot_plugin_history_recall import client

    api.replay("search_projects_damaged", method="POST", path="/search")
    result = await client.search(_endpoint(), f"onebotv11:{PLAIN_GROUP}", "q", "hybrid", 3)

    assert "稍后再试" not in result.error
    admin = client.admin_error(result)
    assert "projects.db 已损坏" in admin and "hermes recall status" in admin and result.url in admin


@pytest.mark.parametrize(
    ("reason", "file", "member", "admin"),
    [
        # Locked by another process for a moment: the same search works again soon.
        ("busy", "forgotten.db", "请稍后再试", "请稍后再试"),
        ("full", "bindings.db", "数据文件 bindings.db 所在的磁盘满了", "bindings.db 所在的磁盘满了"),
        # A fault the server could not pin to a file, or a problem a newer server adds.
        ("", "", "一个数据文件读不了", "一个数据文件读不了"),
        ("scrambled", "ledger.json", "数据文件 ledger.json 读不了", "ledger.json 读不了"),
    ],
)
async def test_unavailable_answers_say_whether_waiting_helps(api: FakeRecallApi, reason, file, member, admin):
    from nonebot_plugin_history_recall import client

    body = {"success": False, "error": "x (f) cannot be used: y; ask the operator", "code": "unavailable"}
    api.route("POST", "/search", status=503, json_body=body | ({"reason": reason} if reason else {})
              | ({"file": file} if file else {}))
    result = await client.search(_endpoint(), f"onebotv11:{PLAIN_GROUP}", "q", "hybrid", 3)

    assert member in result.error and "ask the operator" not in result.error
    _assert_one_short_sentence(result.error)
    assert admin in client.admin_error(result)
    assert ("稍后再试" in result.error) == (reason == "busy")


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
    unknown = recorded("move_unknown_project")
    api.route("POST", "/move", status=unknown["status"], json_body=unknown["body"])

    assert (await client.health(_endpoint())).retryable
    assert (await client.status(_endpoint())).retryable
    assert not (await client.move_chat(_endpoint(), "onebotv11:1", "x")).retryable
