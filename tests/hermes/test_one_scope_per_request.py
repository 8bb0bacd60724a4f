"""One scope per request: each surface resolves the caller, its origin and its scope once.

Counted with spies on the real objects (no stubs): ``ScopeCache.get`` (where every surface's scope
map is read — the engine's and the reader's ``scope_map`` only pass it on, so a spy there misses a
read that goes round them), ``ScopeMap.origin`` (is the caller a chat?), and the project-list and binding reads
a chat's ``/recall`` used to make beside the scope map. Before this, one agent search read the scope
map 3–4 times and worked out the origin 3 times; one ``/recall`` looked the project up 3 times.
"""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from fastapi.testclient import TestClient

from hermes_side.api.app import create_app
from hermes_side.scope.scope_map import ScopeCache, ScopeMap
from hermes_side.stores import bindings, hermes_db
from tests.hermes.world import call_tool

KEY = "k" * 24
AUTH = {"Authorization": f"Bearer {KEY}"}
CHAT_SID = "hermes-onebotv11+group+111+42"


@pytest.fixture
def calls(monkeypatch) -> Counter:
    counted: Counter = Counter()

    def spy(owner, name):
        real = getattr(owner, name)

        def wrapper(*args, **kwargs):
            # Not the background catch-up a hybrid search starts (embedding/catchup.py): it reads a
            # scope map of its own, outside the request, and may still run from an earlier test.
            if threading.current_thread().name != "recall-catch-up":
                counted[name] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, wrapper)

    spy(ScopeCache, "get")
    spy(ScopeMap, "origin")
    spy(hermes_db, "load_projects")
    spy(bindings, "load_all")
    return counted


@pytest.fixture
def alpha(world, loaded_plugin):
    folder = world.folder("alpha")
    pid = world.project("Alpha", folder)
    world.session("the kestrel rollout uses a canary", "noted", cwd=folder)
    world.session("kestrel canary dashboards", "ok", cwd=folder)
    world.session("group one asked about the kestrel canary", "ok", source="api_server", sid=CHAT_SID)
    current = world.session("what did we say about kestrel?", cwd=folder)
    return world, pid, current


def _warm(current):
    """First call builds the scope map (projects and bindings read once, then cached by
    fingerprint): the counts below are those of a request, not of the cache's first fill."""
    call_tool("project_history_search", {"query": "kestrel", "mode": "keyword"}, current)


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_an_agent_search_reads_the_scope_and_the_origin_once(alpha, calls, mode):
    world, _, current = alpha
    _warm(current)
    calls.clear()
    out = call_tool("project_history_search", {"query": "kestrel canary", "mode": mode}, current)
    assert out["success"] and out["results"]
    assert calls["get"] == 1 and calls["origin"] == 1, calls


def test_an_agent_open_reads_the_scope_and_the_origin_once(alpha, calls):
    world, _, current = alpha
    found = call_tool("project_history_search", {"query": "kestrel canary", "mode": "keyword"}, current)
    calls.clear()
    opened = call_tool("project_history_open", {"message_id": found["results"][0]["message_id"]}, current)
    assert opened["success"]
    assert calls["get"] == 1 and calls["origin"] == 1, calls


def test_a_chats_recall_looks_its_project_up_once(alpha, calls):
    world, pid, current = alpha
    client = TestClient(create_app(world.home, KEY))
    client.post("/move", headers=AUTH, json={"chat": "onebotv11:111", "project": pid})
    _warm(current)
    body = {"query": "kestrel canary", "chat": "onebotv11:111", "mode": "keyword"}
    client.post("/search", headers=AUTH, json=body)
    calls.clear()
    found = client.post("/search", headers=AUTH, json=body).json()
    assert found["success"] and found["project"]["id"] == pid and found["results"]
    # The scope map holds the bindings and the projects: nothing is read again beside it.
    assert calls["get"] == 1, calls
    assert calls["load_projects"] == 0 and calls["load_all"] == 0, calls


def test_a_hits_text_is_read_once_by_the_engine(alpha, monkeypatch):
    """Each message the ranking reads (for the keyword list's weight, to tell a question, for
    relevance and the row) is read from state.db once per search; statements counted on the
    engine's own connections with SQLite's trace hook."""
    import json as _json
    import re

    from hermes_side.search.engine import engine_for

    world, _, current = alpha
    _warm(current)
    engine = engine_for(world.home)
    statements: list[str] = []
    for conn in engine._pool:
        conn.set_trace_callback(statements.append)
    try:
        out = call_tool("project_history_search", {"query": "kestrel canary", "mode": "hybrid"}, current)
    finally:
        for conn in engine._pool:
            conn.set_trace_callback(None)
    assert out["success"] and out["results"]
    reads: Counter = Counter()
    for sql in statements:
        # The engine's own reads of whole messages by id (not the keyword scorer's, not the next turn).
        if re.match(r"\s*SELECT id, (session_id, role, )?content", sql) and "json_each" in sql:
            for ids in re.findall(r"json_each\('(\[[^']*\])'\)", sql):
                reads.update(_json.loads(ids))
    assert reads and max(reads.values()) == 1, reads
