"""A bound chat's new sessions land in its project on their first turn (pre_llm_call hook)."""

from __future__ import annotations

from hermes_side.stores import bindings
from tests.hermes.world import call_tool


def _first_turn(manager, session_id: str) -> list:
    return manager.invoke_hook("pre_llm_call", session_id=session_id, task_id="t", turn_id="1",
                               user_message="hi", conversation_history=[], is_first_turn=True,
                               model="m", platform="api_server", sender_id="")


def test_bound_chat_session_is_placed_and_agent_search_sees_the_project(world, loaded_plugin):
    folder = world.folder("ops")
    ops = world.project("Ops", folder)
    world.session("the pager rotation moved to Tuesdays", cwd=folder, title="Pager rotation")
    bindings.set_binding(world.home, "onebotv11:555", ops)
    sid = world.session("what about the pager rotation?", source="api_server", sid="hermes-onebotv11+group+555")
    assert world.db.get_session(sid)["cwd"] is None

    results = _first_turn(loaded_plugin, sid)

    assert results == []  # the hook injects nothing into the user's message
    assert world.db.get_session(sid)["cwd"] == str(folder)
    found = call_tool("project_history_search", {"query": "pager rotation", "mode": "keyword"}, sid)
    assert found["project"]["id"] == ops
    assert [r["title"] for r in found["results"]] == ["Pager rotation"]


def test_session_key_header_identifies_the_chat(world, loaded_plugin):
    from gateway.session_context import clear_session_vars, set_session_vars

    folder = world.folder("ops")
    ops = world.project("Ops", folder)
    bindings.set_binding(world.home, "telegram:-100777", ops)
    sid = world.session("hello", source="api_server", sid="api-0123456789abcdef")
    token = set_session_vars(platform="api_server", session_key="agent:main:nonebot-telegram:group:-100777",
                             session_id=sid)
    try:
        _first_turn(loaded_plugin, sid)
    finally:
        clear_session_vars(token)
    assert world.db.get_session(sid)["cwd"] == str(folder)
    assert bindings.sessions_for_chat(world.home, "telegram:-100777") == [sid]


def test_unbound_chat_and_cli_sessions_are_left_alone(world, loaded_plugin):
    sid = world.session("hello", source="api_server", sid="hermes-onebotv11+group+999")
    cli = world.session("hello", cwd=world.folder("x"))
    _first_turn(loaded_plugin, sid)
    _first_turn(loaded_plugin, cli)
    assert world.db.get_session(sid)["cwd"] is None
    assert world.db.get_session(cli)["cwd"] == str(world.work / "x")
    assert bindings.sessions_for_chat(world.home, "onebotv11:999") == [sid]
