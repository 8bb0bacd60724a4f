"""Red-team hole (issue 15 §4): an operator's ``/branch`` of a chat session.

Hermes 0.19.0's ``/branch`` (``hermes_cli/cli_commands_mixin.py::_handle_branch_command``) ends the
current session with ``branched`` and creates a ``cli`` row with ``parent_session_id`` and
``model_config._branched_from`` pointing at it, then copies the whole transcript into it. When the
operator resumed a group's session and branched it, that ``cli`` row carries the group's words; filed
under another project it used to be readable there — by that project's own group. A session
descended from a chat session now stays that chat's, wherever it is filed.

The branch is made by Hermes' own ``/branch`` code over a real state.db; the reads go through
Hermes' plugin loader (the agent tool) and the recall API (the bot's path).
"""

from __future__ import annotations

import contextvars
import json
import os

import pytest
from fastapi.testclient import TestClient

from hermes_side.actions import chat_service
from hermes_side.actions.move import move_sessions
from hermes_side.api.app import create_app
from tests.hermes.world import call_tool_raw

KEY = "branch-test-key-0123456789"
SECRET = "walrusword"  # only group 111 ever says it
G111, G222 = "hermes-onebotv11+group+111", "hermes-onebotv11+group+222"


def hermes_branch(db, session_id: str) -> str:
    """Run Hermes' own ``/branch`` on ``session_id`` as the CLI would after ``/resume`` of it."""
    from hermes_cli.cli_commands_mixin import CLICommandsMixin

    class Resumed(CLICommandsMixin):
        pass

    cli = Resumed()
    cli.session_id, cli._session_db, cli.agent = session_id, db, None
    cli.model, cli.max_turns, cli.reasoning_config = "m", 10, None
    cli.conversation_history = [{"role": m["role"], "content": m["content"]} for m in db.get_messages(session_id)]
    cli._transfer_session_yolo = lambda old, new: None
    # /branch makes the new session the process's current one (ContextVar and os.environ): keep
    # that inside this call, as it would stay inside that CLI process.
    saved = os.environ.get("HERMES_SESSION_ID")
    try:
        contextvars.copy_context().run(cli._handle_branch_command, "/branch")
    finally:
        if saved is None:
            os.environ.pop("HERMES_SESSION_ID", None)
        else:
            os.environ["HERMES_SESSION_ID"] = saved
    return cli.session_id


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


def test_branch_of_a_chat_session_gets_the_chats_rule(branched):
    world, branch = branched
    # Searching from inside the branch is searching as group one: its bound project, Alpha.
    out = json.loads(call_tool_raw("project_history_search", {"query": "kestrel", "mode": "keyword"}, branch))
    assert out["success"] is True and out["project"]["name"] == "Alpha"
    assert "group two" not in json.dumps(out)


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
