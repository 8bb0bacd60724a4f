"""Red-team holes (issue 15 §4, issue 34 §3): an operator's ``/branch`` of a chat session.

Hermes' ``/branch`` (``hermes_cli/cli_commands_mixin.py::_handle_branch_command``) creates a ``cli``
row with ``parent_session_id`` and ``model_config._branched_from`` pointing at the session, records no
working folder, and copies the whole transcript into it. When the operator resumed a group's session
and branched it, the branch carries the group's words and then the operator's own. The copies stay
the group's (never readable by another group, nor as the operator's own words), the branch itself is
the operator's from its first new turn (never in a chat's recall) — wherever it is filed.

The branch is made by Hermes' own ``/branch`` code over a real state.db (``hermes_ops.branch``); the
reads go through Hermes' plugin loader (the agent tool) and the recall API (the bot's path).
"""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from hermes_side.actions import chat_service
from hermes_side.actions.move import move_sessions
from hermes_side.api.app import create_app
from hermes_side.scope.guard import is_chat_session
from tests.hermes.hermes_ops import branch as hermes_branch
from tests.hermes.world import call_tool_raw

KEY = "branch-test-key-0123456789"
SECRET = "walrusword"  # only group 111 ever says it
G111, G222 = "hermes-onebotv11+group+111", "hermes-onebotv11+group+222"


@pytest.fixture
def branched(world, loaded_plugin):
    a, b = world.folder("alpha"), world.folder("beta")
    world.project("Alpha", a)
    world.project("Beta", b)
    world.session(f"kestrel {SECRET} plan of group one", "noted", source="api_server", sid=G111)
    chat_service.move_chat(world.home, "onebotv11:111", "alpha")
    world.session("kestrel hello from group two", source="api_server", sid=G222)
    chat_service.move_chat(world.home, "onebotv11:222", "beta")
    branch = hermes_branch(world.db, G111)
    row = world.db.get_session(branch)
    assert row["source"] == "cli" and row["parent_session_id"] == G111  # what 0.19.0's /branch writes
    assert json.loads(row["model_config"])["_branched_from"] == G111
    assert any(SECRET in (m["content"] or "") for m in world.db.get_messages(branch))
    # The operator files the branch under Beta (the recall API's operator move of one session).
    move_sessions(world.home, [branch], "beta")
    return world, branch


def test_branch_of_a_chat_session_filed_elsewhere_stays_that_chats(branched):
    world, branch = branched
    # Group two (bound to Beta) asks the agent and the bot: not a word of group one.
    for raw in (call_tool_raw("project_history_search", {"query": f"kestrel {SECRET}", "mode": "keyword"},
                              G222 + "+5"),
                TestClient(create_app(world.home, KEY)).post(
                    "/search", headers={"Authorization": f"Bearer {KEY}"},
                    json={"query": f"kestrel {SECRET}", "chat": "onebotv11:222", "mode": "keyword"}).text):
        out = json.loads(raw)
        assert out["success"] is True and out["project"]["name"] == "Beta"
        assert SECRET not in raw and branch not in raw
    # An operator session in Beta does not see it either: the branch is group one's, and group one
    # is bound to Alpha.
    cur = world.session("hello", cwd=world.folder("beta"))
    raw = call_tool_raw("project_history_search", {"query": f"kestrel {SECRET}", "mode": "keyword"}, cur)
    assert SECRET not in raw


def test_branch_of_a_chat_session_is_the_operators_own(branched):
    """Issue 34 §3 (before: the branch was group one's, sealed to Alpha wherever it was filed)."""
    world, branch = branched
    assert is_chat_session(world.home, branch, None, None) is False  # the operator's tools stay open
    # Searching from inside the branch is the operator's search of where it is filed (Beta).
    out = json.loads(call_tool_raw("project_history_search", {"query": "kestrel", "mode": "keyword"}, branch))
    assert out["success"] is True and out["project"]["name"] == "Beta"
    assert "group two" in json.dumps(out) and SECRET not in json.dumps(out)


def test_branch_of_an_operator_session_stays_the_operators(world, loaded_plugin):
    a = world.folder("alpha")
    world.project("Alpha", a)
    past = world.session("kestrel rollout in alpha", cwd=a)
    cli = world.session("kestrel question", "answer", cwd=a)
    branch = hermes_branch(world.db, cli)
    world.db.update_session_cwd(branch, str(a))
    out = json.loads(call_tool_raw("project_history_search", {"query": "kestrel rollout", "mode": "keyword"},
                                   branch))
    assert out["success"] is True and past in {r["session_id"] for r in out["results"]}
