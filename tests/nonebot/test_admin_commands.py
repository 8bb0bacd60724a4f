"""/move and /recall-status: answers for admins (configured, SUPERUSERS, opted-in group admins),
silence for everyone else."""

from __future__ import annotations

import json

import pytest
from nonebug import App

from tests.nonebot.nb_helpers import (
    ADMIN_ID,
    API_KEY,
    PLAIN_GROUP,
    ROUTED_GROUP,
    TEAM_KEY,
    Captured,
    FakeRecallApi,
    expect_role_lookup,
    group_message,
    recorded,
)


async def _reply(app: App, bot_factory, event) -> str:
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        expect_role_lookup(ctx, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})
    assert reply.quotes(event)  # every answer quotes the admin's command
    return reply.text


async def _silence(app: App, bot_factory, event, matcher) -> None:
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        expect_role_lookup(ctx, event)
        # Not ours to answer: the matcher does not match at all (so another plugin's command of
        # the same name still runs, tests/nonebot/test_good_citizen.py), and nothing is said.
        ctx.should_not_pass_rule(matcher)
        # nonebug fails the test on any send or API call that was not declared here.


PROJECTS = {
    "success": True,
    "projects": [
        {"id": "p_1", "slug": "hermes-dev", "name": "Hermes Dev", "primary_path": "/srv/hermes-dev"},
        {"id": "p_2", "slug": "website", "name": "Website", "primary_path": "/srv/website"},
    ],
}


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
    [("move_unknown_project", "没有叫「nope」的项目。发送 /move 查看可以关联的项目"),
     ("move_folder_missing", "文件夹")],
)
async def test_move_errors_get_our_own_sentence_never_the_servers(
    app: App, api: FakeRecallApi, bot_factory, recording: str, ours: str
):
    server = recorded(recording)
    api.route("POST", "/move", status=server["status"], json_body=server["body"])
    text = await _reply(app, bot_factory, group_message("/move nope", user_id=ADMIN_ID))

    assert ours in text and server["body"]["error"] not in text
    assert "/" not in text.replace("/move", "")  # no path, no URL


async def test_a_refused_key_tells_the_admin_which_address_and_which_two_settings(
    app: App, api: FakeRecallApi, bot_factory
):
    server = recorded("unauthorized")
    api.route("POST", "/move", status=server["status"], json_body=server["body"])
    text = await _reply(app, bot_factory, group_message("/move nope", user_id=ADMIN_ID))

    assert "http://recall.test" in text and "HISTORY_RECALL_API_KEY" in text and "RECALL_API_KEY" in text
    assert "recall-api.log" in text and server["body"]["error"] not in text and API_KEY not in text


async def test_move_takes_a_project_name_with_spaces_as_the_list_shows_it(app: App, api: FakeRecallApi, bot_factory):
    api.replay("move_chat")
    await _reply(app, bot_factory, group_message("/move Shop  Backend", user_id=ADMIN_ID))
    assert api.bodies() == [{"chat": f"onebotv11:{PLAIN_GROUP}", "project": "Shop Backend"}]


@pytest.mark.parametrize("command", ["/move x --home", "/move --home x"])
async def test_admin_move_with_wrong_arguments_gets_usage(app: App, api: FakeRecallApi, bot_factory, command: str):
    text = await _reply(app, bot_factory, group_message(command, user_id=ADMIN_ID))

    assert "用法" in text and "--home" in text
    assert api.requests == []


@pytest.mark.parametrize("command", ["/move", "/move hermes-dev", "/move --home", "/move --help", "/recall-status"])
async def test_non_admin_gets_silence_and_nothing_is_requested(app: App, api: FakeRecallApi, bot_factory, command):
    from nonebot_plugin_history_recall.handlers.admin import move_cmd, status_cmd

    matcher = status_cmd if command == "/recall-status" else move_cmd
    await _silence(app, bot_factory, group_message(command), matcher)
    assert api.requests == []


async def test_admin_sees_status_of_endpoint_binding_and_index(app: App, api: FakeRecallApi, bot_factory):
    api.replay("health", prefix="/p/team-a")
    status = api.replay("status", prefix="/p/team-a")
    binding = api.replay("binding_bound", prefix="/p/team-a", path=f"/chats/onebotv11:{ROUTED_GROUP}/binding")
    text = await _reply(app, bot_factory, group_message("/recall-status", user_id=ADMIN_ID, group_id=ROUTED_GROUP))

    row = next(p for p in status["projects"] if p["id"] == binding["project"]["id"])
    assert text.splitlines()[0] == "🩺 本群的历史检索状态"  # no route label, no profile in the header
    assert "本群单独配置的地址" in text  # the group has its own routing entry
    assert f"本群项目：「{binding['project']['name']}」" in text and "slug" not in text
    assert f"{row['indexed_messages']}/{row['messages']}" in text and f"{row['sessions']} 段对话" in text
    # The API's values in words (texts.py), never raw: "ready" and "consent: not_needed" reach no admin.
    assert status["semantic"]["status"] == "ready" and "已就绪" in text and "无需授权" in text
    assert "ready" not in text and "not_needed" not in text and "consent" not in text
    assert status["semantic"]["model"] in text
    assert "recall.test" not in text and "http" not in text  # the endpoint URL stays in the log
    assert status["seal"]["closed"] is True and "隔离：✅" in text


async def test_admin_sees_each_open_door_of_the_seal(app: App, api: FakeRecallApi, bot_factory):
    api.replay("health")
    status = api.replay("status")
    status["seal"] = {"closed": False, "unverified": [],
                      "open_doors": [{"door": "terminal", "why": "allowed in chats (chat_tools.allow): runs commands"}]}
    api.route("GET", "/status", json_body=status)
    text = await _reply(app, bot_factory, group_message("/recall-status", user_id=ADMIN_ID))

    assert "隔离：⚠️ 未完全隔离（terminal），详情请在 Hermes 那台机器上运行 `hermes recall status`" in text
    assert "隔离：✅" not in text and "allowed in chats" not in text  # the API's English stays out


async def test_status_when_the_server_is_down_says_so(app: App, api: FakeRecallApi, bot_factory):
    import httpx

    api.route("GET", "/health", raises=httpx.ConnectError("refused"))
    api.route("GET", "/status", raises=httpx.ConnectError("refused"))
    text = await _reply(app, bot_factory, group_message("/recall-status", user_id=ADMIN_ID))

    # What an admin must check: the address tried, the cause, the command that serves it.
    assert "连接：❌ 连不上检索服务 http://recall.test（连接被拒绝" in text
    assert "`hermes recall serve`" in text and "HISTORY_RECALL_API_URL" in text
    assert "⚠️" not in text and "请稍后再试" not in text  # not the member's sentence
    assert text.splitlines()[1] == "检索服务：默认地址（HISTORY_RECALL_API_URL）"


async def test_move_alone_lists_the_profiles_projects_and_marks_the_groups(app: App, api: FakeRecallApi, bot_factory):
    api.route("GET", "/p/team-a/projects", json_body=PROJECTS)
    api.route(
        "GET",
        f"/p/team-a/chats/onebotv11:{ROUTED_GROUP}/binding",
        json_body={"success": True, "chat": f"onebotv11:{ROUTED_GROUP}", "state": "bound",
                   "project": {"id": "p_2", "slug": "website", "name": "Website"}},
    )
    text = await _reply(app, bot_factory, group_message("/move", user_id=ADMIN_ID, group_id=ROUTED_GROUP))

    lines = text.splitlines()
    hermes_line = next(line for line in lines if "Hermes Dev" in line)
    website_line = next(line for line in lines if "Website" in line)
    assert "hermes-dev" in hermes_line and "✅" not in hermes_line
    assert "website" in website_line and "✅" in website_line  # the group's current project
    assert "/srv" not in text  # folders on the Hermes machine are not the group's business
    assert "用法" in text
    assert all(r.method == "GET" for r in api.requests)  # listing moves nothing


async def test_move_alone_with_the_server_down_says_so(app: App, api: FakeRecallApi, bot_factory):
    import httpx

    api.route("GET", "/projects", raises=httpx.ConnectError("refused"))
    api.route("GET", f"/chats/onebotv11:{PLAIN_GROUP}/binding", raises=httpx.ConnectError("refused"))
    text = await _reply(app, bot_factory, group_message("/move", user_id=ADMIN_ID))

    assert "连不上检索服务 http://recall.test" in text and "`hermes recall serve`" in text


@pytest.fixture
def superuser(monkeypatch: pytest.MonkeyPatch, nonebug_init: None) -> int:
    import nonebot

    monkeypatch.setattr(nonebot.get_driver().config, "superusers", {str(SUPERUSER_ID)})
    return SUPERUSER_ID


SUPERUSER_ID = 10077  # in NoneBot's SUPERUSERS only, not in HISTORY_RECALL_ADMIN_USERS


async def test_superusers_count_as_admins(app: App, api: FakeRecallApi, bot_factory, superuser: int):
    moved = api.replay("move_chat", path="/move")
    text = await _reply(app, bot_factory, group_message("/move hermes-dev", user_id=superuser))
    assert moved["project"]["name"] in text
    assert api.bodies() == [{"chat": f"onebotv11:{PLAIN_GROUP}", "project": "hermes-dev"}]

    help_text = await _reply(app, bot_factory, group_message("/recall", user_id=superuser))
    assert "/move <项目>" in help_text and "/recall-status" in help_text


async def test_superusers_written_with_the_adapter_prefix_count_too(
    app: App, api: FakeRecallApi, bot_factory, monkeypatch: pytest.MonkeyPatch
):
    import nonebot

    monkeypatch.setattr(nonebot.get_driver().config, "superusers", {f"onebot:{SUPERUSER_ID}"})
    moved = api.replay("move_chat")
    text = await _reply(app, bot_factory, group_message("/move hermes-dev", user_id=SUPERUSER_ID))
    assert moved["project"]["name"] in text


@pytest.mark.parametrize("role", ["owner", "admin"])
async def test_group_owners_and_admins_move_only_when_opted_in(
    app: App, api: FakeRecallApi, bot_factory, plugin_config, monkeypatch: pytest.MonkeyPatch, role: str
):
    from nonebot_plugin_history_recall.handlers.admin import move_cmd, status_cmd

    await _silence(app, bot_factory, group_message("/move hermes-dev", role=role), move_cmd)
    assert api.requests == []

    from nonebot_plugin_history_recall.config import GroupEndpoint

    monkeypatch.setattr(plugin_config, "history_recall_group_admins_can_move", True)
    monkeypatch.setattr(plugin_config, "history_recall_groups", {
        **plugin_config.history_recall_groups, f"onebotv11:{PLAIN_GROUP}": GroupEndpoint(move_projects=["alpha"])})
    api.replay("projects")
    moved = api.replay("move_chat")
    text = await _reply(app, bot_factory, group_message("/move alpha", role=role))
    assert moved["project"]["name"] in text and len(api.requests) == 2  # the project list, then the move
    # Moving their group is all they get: the service status stays with the bot's admins.
    await _silence(app, bot_factory, group_message("/recall-status", role=role), status_cmd)
    assert len(api.requests) == 2


async def test_opt_in_does_not_make_members_admins(
    app: App, api: FakeRecallApi, bot_factory, plugin_config, monkeypatch: pytest.MonkeyPatch
):
    from nonebot_plugin_history_recall.handlers.admin import move_cmd

    monkeypatch.setattr(plugin_config, "history_recall_group_admins_can_move", True)
    await _silence(app, bot_factory, group_message("/move hermes-dev", role="member"), move_cmd)
    await _silence(app, bot_factory, group_message("/move"), move_cmd)
    assert api.requests == []
