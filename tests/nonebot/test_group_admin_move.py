"""Red-team hole (issue 15 §4): with ``HISTORY_RECALL_GROUP_ADMINS_CAN_MOVE=true`` a group's owner
could list every project of the profile and ``/move`` a fresh group into another group's project,
then ``/recall`` that group's history. Group admins now move only to the projects the operator
listed for their group (``move_projects`` in ``HISTORY_RECALL_GROUPS``) and see only those; bot
admins keep every project. Through the real matchers (nonebug) against the recorded API answers.
"""

from __future__ import annotations

import json

import pytest
from nonebug import App

from tests.nonebot.nb_helpers import ADMIN_ID, PLAIN_GROUP, FakeRecallApi, group_message
from tests.nonebot.test_admin_commands import _reply

CHAT = f"onebotv11:{PLAIN_GROUP}"


@pytest.fixture
def opted_in(plugin_config, monkeypatch: pytest.MonkeyPatch):
    from nonebot_plugin_history_recall.config import GroupEndpoint

    monkeypatch.setattr(plugin_config, "history_recall_group_admins_can_move", True)
    groups = {**plugin_config.history_recall_groups, CHAT: GroupEndpoint(move_projects=["alpha"])}
    monkeypatch.setattr(plugin_config, "history_recall_groups", groups)
    return plugin_config


def _moves(api: FakeRecallApi) -> list:
    return [json.loads(r.content) for r in api.requests if r.method == "POST" and r.url.path == "/move"]


async def test_group_owner_cannot_move_the_group_into_another_groups_project(
    app: App, api: FakeRecallApi, bot_factory, opted_in
):
    api.replay("projects")  # Alpha, Beta, Gone
    api.replay("move_chat")
    for ref in ("beta", "p_60589395", "gone", "BETA"):
        text = await _reply(app, bot_factory, group_message(f"/move {ref}", role="owner"))
        assert "alpha" in text and "Beta" not in text and "beta" not in text.replace("alpha", "")
    assert _moves(api) == []  # the server was never asked to move the group

    text = await _reply(app, bot_factory, group_message("/move Alpha", role="owner"))  # slug, any case
    assert "Alpha" in text
    # The move names the project by id: the one that was checked, whatever a slug might match later.
    assert _moves(api) == [{"chat": CHAT, "project": "p_94271ea0"}]


async def test_group_owner_lists_only_the_projects_opened_to_the_group(
    app: App, api: FakeRecallApi, bot_factory, opted_in
):
    api.replay("projects")
    api.replay("binding_unset", path=f"/chats/{CHAT}/binding")
    text = await _reply(app, bot_factory, group_message("/move", role="admin"))
    assert "Alpha" in text and "Beta" not in text and "Gone" not in text and "1 个" in text
    # A bot admin still sees every project and may move anywhere.
    text = await _reply(app, bot_factory, group_message("/move", user_id=ADMIN_ID))
    assert "Alpha" in text and "Beta" in text and "Gone" in text


async def test_bot_admin_is_not_limited_by_move_projects(app: App, api: FakeRecallApi, bot_factory, opted_in):
    api.replay("move_chat")
    await _reply(app, bot_factory, group_message("/move beta", user_id=ADMIN_ID))
    assert _moves(api) == [{"chat": CHAT, "project": "beta"}]


async def test_group_owner_of_a_group_without_move_projects_moves_nothing(
    app: App, api: FakeRecallApi, bot_factory, plugin_config, monkeypatch: pytest.MonkeyPatch
):
    from nonebot_plugin_history_recall.texts import ZH

    MOVE_NONE_ALLOWED = ZH["move_none_allowed"]

    monkeypatch.setattr(plugin_config, "history_recall_group_admins_can_move", True)
    api.replay("projects")
    api.replay("binding_unset", path=f"/chats/{CHAT}/binding")
    assert await _reply(app, bot_factory, group_message("/move alpha", role="owner")) == MOVE_NONE_ALLOWED
    assert await _reply(app, bot_factory, group_message("/move", role="owner")) == MOVE_NONE_ALLOWED
    assert _moves(api) == []


async def test_group_owner_may_still_unlink_the_group(app: App, api: FakeRecallApi, bot_factory, opted_in):
    api.replay("move_chat_home")
    await _reply(app, bot_factory, group_message("/move --home", role="owner"))
    assert _moves(api) == [{"chat": CHAT, "project": ""}]


def test_startup_warns_about_move_projects_that_cannot_work(plugin_config, monkeypatch: pytest.MonkeyPatch):
    from nonebot_plugin_history_recall.config import GroupEndpoint
    from nonebot_plugin_history_recall.routing import validate_config

    monkeypatch.setattr(plugin_config, "history_recall_group_admins_can_move", True)
    assert any("no HISTORY_RECALL_GROUPS entry lists move_projects" in p for p in validate_config())

    groups = {**plugin_config.history_recall_groups, CHAT: GroupEndpoint(move_projects=["alpha", " "])}
    monkeypatch.setattr(plugin_config, "history_recall_groups", groups)
    problems = validate_config()
    assert any("move_projects has an empty entry" in p for p in problems)
    assert not any("no HISTORY_RECALL_GROUPS entry lists move_projects" in p for p in problems)

    monkeypatch.setattr(plugin_config, "history_recall_group_admins_can_move", False)
    assert any("move_projects is not used while HISTORY_RECALL_GROUP_ADMINS_CAN_MOVE is false" in p
               for p in validate_config())
