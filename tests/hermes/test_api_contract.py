"""The recall API contract, recorded from the real server.

The real app (the same ``create_app`` that ``hermes recall serve`` runs) answers every request the
bot makes — health, projects, search by chat, binding get/put, moves, status and the error answers
— over a real world (state.db by Hermes' SessionDB, projects by projects_db, the local model's
index). The answers are compared with ``tests/fixtures/recall_api/*.json``; the bot's tests
(``tests/nonebot``) replay the very same files. A change on either side fails a test.

Re-record after an intended change of the contract (then update docs/recall-api.md)::

    RECORD_RECALL_API=1 .venv/bin/python -m pytest -p no:nonebug tests/hermes/test_api_contract.py
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from hermes_side.api.app import create_app

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "recall_api"
RECORD = os.environ.get("RECORD_RECALL_API") == "1"
KEY = "contract-test-key-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}
GROUP, OTHER, HOMELESS, SHARED = "onebotv11:111", "onebotv11:222", "onebotv11:333", "onebotv11:555"
SHELVED = "onebotv11:666"  # bound to a project the operator archived

# Values that differ from one run to the next (random project ids, clock times, the package
# version): only their type is compared. Everything else must match exactly.
VOLATILE = {"id", "when", "now", "version", "project_id", "timestamp", "receipt", "first_when", "last_when"}
# Values that say which Hermes runs (the newer facts /status reports: 0.19 has none, 0.22 all):
# the recording is made on one line and replayed on every line, so the keys and types are the
# contract here and each value is checked against what this Hermes offers (test below).
LINE_DEPENDENT = ("$.body.hermes.optional",)

# name → (method, path, body, headers). Order matters: later answers see earlier moves.
EXCHANGES: list[tuple[str, str, str, dict[str, Any] | None, dict[str, str]]] = [
    ("health", "GET", "/health", None, AUTH),  # the bot sends its key: the profile is named
    ("health_no_key", "GET", "/health", None, {}),  # anyone else: up or not, no profile
    ("projects", "GET", "/projects", None, AUTH),
    ("binding_unset", "GET", f"/chats/{GROUP}/binding", None, AUTH),
    ("search_chat_unbound", "POST", "/search", {"query": "rollout", "chat": GROUP}, AUTH),
    ("binding_put", "PUT", f"/chats/{OTHER}/binding", {"project": "beta", "only_if_unset": True}, AUTH),
    ("binding_put_unknown_project", "PUT", f"/chats/{OTHER}/binding", {"project": "nope", "only_if_unset": True},
     AUTH),
    ("move_chat", "POST", "/move", {"chat": GROUP, "project": "alpha"}, AUTH),
    ("binding_bound", "GET", f"/chats/{GROUP}/binding", None, AUTH),
    ("search_chat", "POST", "/search",
     {"query": "kubernetes rollout", "chat": GROUP, "mode": "keyword", "limit": 3}, AUTH),
    ("search_chat_no_results", "POST", "/search",
     {"query": "zeppelin", "chat": GROUP, "mode": "keyword", "limit": 3}, AUTH),
    ("search_chat_hybrid", "POST", "/search", {"query": "kubernetes rollout plan", "chat": GROUP}, AUTH),
    ("search_bad_date", "POST", "/search", {"query": "rollout", "chat": GROUP, "after": "yesterday"}, AUTH),
    ("context", "POST", "/context", {"chat": GROUP, "message_id": 1, "before": 2, "after": 2}, AUTH),
    ("context_not_found", "POST", "/context", {"chat": GROUP, "message_id": 3, "before": 2, "after": 2}, AUTH),
    ("move_chat_home", "POST", "/move", {"chat": HOMELESS, "project": ""}, AUTH),
    ("binding_home", "GET", f"/chats/{HOMELESS}/binding", None, AUTH),
    # A chat that cannot search says why (``reason``): the bot's sentence follows it.
    ("search_chat_home", "POST", "/search", {"query": "rollout", "chat": HOMELESS}, AUTH),
    ("search_chat_archived", "POST", "/search", {"query": "rollout", "chat": SHELVED}, AUTH),
    ("move_unknown_project", "POST", "/move", {"chat": GROUP, "project": "nope"}, AUTH),
    ("move_folder_missing", "POST", "/move", {"chat": GROUP, "project": "gone"}, AUTH),
    ("status", "GET", "/status", None, AUTH),
    ("unauthorized", "GET", "/status", None, {"Authorization": "Bearer " + "w" * 24}),
    ("search_query_too_long", "POST", "/search", {"query": "x" * 5000, "chat": GROUP}, AUTH),
    ("search_bad_request", "POST", "/search", {"query": "x", "chat": GROUP, "mode": "fuzzy"}, AUTH),
    ("no_such_route", "GET", "/nosuch", None, AUTH),
    # Forgetting (member 42 talks in GROUP's per-member session); later answers see it applied.
    ("forget_member_dry_run", "POST", "/forget",
     {"chat": GROUP, "scope": "member", "user": "42", "actor": "onebotv11:42"}, AUTH),
    ("forget_member", "POST", "/forget",
     {"chat": GROUP, "scope": "member", "user": "42", "actor": "onebotv11:42", "apply": True}, AUTH),
    ("forget_not_attributable", "POST", "/forget",
     {"chat": GROUP, "scope": "member", "user": "43", "message_id": 4, "apply": True}, AUTH),
    ("forget_session_not_found", "POST", "/forget", {"chat": GROUP, "scope": "session", "session_id": "nope"}, AUTH),
    ("forget_chat_dry_run", "POST", "/forget",
     {"chat": GROUP, "scope": "chat", "before": "2999-01-01T00:00:00+00:00"}, AUTH),
    ("forget_bad_request", "POST", "/forget", {"chat": GROUP, "scope": "everything"}, AUTH),
    ("recall_state", "GET", f"/chats/{GROUP}/recall", None, AUTH),
    ("recall_off", "PUT", f"/chats/{GROUP}/recall", {"enabled": False, "actor": "onebotv11:1"}, AUTH),
    ("search_recall_off", "POST", "/search", {"query": "rollout", "chat": GROUP}, AUTH),
    ("recall_on", "PUT", f"/chats/{GROUP}/recall", {"enabled": True, "actor": "onebotv11:1"}, AUTH),
    ("optout", "PUT", f"/chats/{GROUP}/members/42/optout", {"opted_out": True, "actor": "onebotv11:42"}, AUTH),
    ("optin", "PUT", f"/chats/{GROUP}/members/42/optout", {"opted_out": False, "actor": "onebotv11:42"}, AUTH),
    # SHARED talks in one shared session without the bridge's sender tags (issue 34 §2).
    ("optout_not_attributable", "PUT", f"/chats/{SHARED}/members/42/optout",
     {"opted_out": True, "actor": "onebotv11:42"}, AUTH),
    # Last: Hermes' projects.db overwritten with garbage. A search fails closed and names the file and
    # its problem (``file``, ``reason``), so the group hears "ask the operator", not "try again".
    ("search_projects_damaged", "POST", "/search", {"query": "rollout", "chat": GROUP}, AUTH),
]
# What happens to the world just before an exchange is sent.
DAMAGE = {"search_projects_damaged": lambda home: (home / "projects.db").write_bytes(b"not a database " * 512)}


@pytest.fixture(scope="module")
def answers(tmp_path_factory) -> dict[str, dict[str, Any]]:
    from hermes_side.embedding import build_index, load_settings
    from tests.hermes.world import World

    base = tmp_path_factory.mktemp("contract")
    home = base / "hermes-home"
    home.mkdir()
    mp = pytest.MonkeyPatch()
    mp.setenv("HERMES_HOME", str(home))
    world = World(home, base / "work")
    try:
        alpha, beta, gone = world.repo("alpha"), world.folder("beta-notes"), world.folder("gone")
        world.project("Alpha", alpha)
        world.project("Beta", beta)
        world.project("Gone", gone)
        shutil.rmtree(gone)
        from hermes_side.stores import bindings
        bindings.set_binding(home, SHELVED, world.project("Shelved", world.folder("shelved"), archived=True))
        (home / "config.yaml").write_text("plugins:\n  enabled: [project-history-recall]\n"
                                          f"terminal:\n  cwd: {world.folder('plain-home')}\n")
        world.session("kubernetes rollout plan: canary first", "agreed, then the fleet", cwd=alpha,
                      title="Rollout plan", ts=1_760_000_000)
        world.session("beta notes about the zebra budget", cwd=beta, title="Beta budget", ts=1_760_000_100)
        world.session("group one asked about the kubernetes rollout", "see the plan", source="api_server",
                      sid=f"hermes-{GROUP.replace(':', '+group+')}+42", ts=1_760_000_200)
        world.session("morning all", "morning!", source="api_server", sid=f"hermes-{SHARED.replace(':', '+group+')}",
                      ts=1_760_000_300)
        build_index(home, load_settings(home))
        client = TestClient(create_app(home, KEY))
        out = {}
        for name, method, path, body, headers in EXCHANGES:
            if name in DAMAGE:
                DAMAGE[name](home)
            response = client.request(method, path, json=body, headers=headers)
            out[name] = {"request": {"method": method, "path": path, "body": body},
                         "status": response.status_code, "body": response.json()}
        yield out
    finally:
        world.close()
        mp.undo()


def drift(recorded: Any, live: Any, where: str = "$") -> list[str]:
    """Differences that matter: keys, list lengths, types, and every non-volatile value."""
    if isinstance(recorded, dict) and isinstance(live, dict):
        if set(recorded) != set(live):
            return [f"{where}: keys {sorted(recorded)} != {sorted(live)}"]
        out: list[str] = []
        for key in recorded:
            volatile = key in VOLATILE or where in LINE_DEPENDENT
            if volatile and not isinstance(recorded[key], dict | list):
                if type(recorded[key]) is not type(live[key]):
                    out.append(f"{where}.{key}: type {type(recorded[key]).__name__} != {type(live[key]).__name__}")
            else:
                out += drift(recorded[key], live[key], f"{where}.{key}")
        return out
    if isinstance(recorded, list) and isinstance(live, list):
        if len(recorded) != len(live):
            return [f"{where}: {len(recorded)} items != {len(live)}"]
        return [d for i, (r, v) in enumerate(zip(recorded, live, strict=True)) for d in drift(r, v, f"{where}[{i}]")]
    return [] if recorded == live and type(recorded) is type(live) else [f"{where}: {recorded!r} != {live!r}"]


@pytest.mark.parametrize("name", [e[0] for e in EXCHANGES])
def test_live_answer_matches_the_recorded_one(answers, name):
    path = FIXTURES / f"{name}.json"
    live = answers[name]
    if RECORD:
        FIXTURES.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(live, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return
    assert path.exists(), f"no recording for {name}: run with RECORD_RECALL_API=1"
    recorded = json.loads(path.read_text(encoding="utf-8"))
    assert drift(recorded, live) == [], f"{name} drifted from {path.name}; re-record if intended"


def test_the_line_dependent_status_values_are_this_hermes(answers):
    """What replaying /status cannot pin: its newer-Hermes flags, compared with host/features.py's
    own probe of the running Hermes (0.19: all False; 0.22: all True)."""
    from hermes_side.host import features

    live = answers["status"]["body"]["hermes"]["optional"]
    assert features.optional_features() == {
        k: live[k] for k in ("replace_git_meta", "official_non_messaging_sources")}


def test_every_recording_is_still_produced():
    """A fixture nobody records any more would be replayed by the bot against nothing real."""
    assert {p.stem for p in FIXTURES.glob("*.json")} == {e[0] for e in EXCHANGES}


def test_recorded_answers_show_a_group_nothing_internal(answers):
    """What the bot may put in front of a group carries no server path or key."""
    for name, exchange in answers.items():
        text = json.dumps(exchange["body"], ensure_ascii=False)
        assert KEY not in text and "primary_path" not in text and "pytest-" not in text, (name, text)
