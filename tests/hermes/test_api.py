"""The recall API over a real state.db: keys and profiles, chat scoping, bindings, moves, errors."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from hermes_side.api.app import create_app

KEY = "k" * 24
AUTH = {"Authorization": f"Bearer {KEY}"}
WORK_KEY = "work-profile-key-0123456789"


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def add_profile(world, name: str, *, enabled: bool = True, key: str | None = None):
    """A second Hermes profile next to the world's: its own state.db, config.yaml and .env."""
    from tests.hermes.world import World

    home = world.home / "profiles" / name
    home.mkdir(parents=True)
    other = World(home, world.work.parent / f"work-{name}")
    (home / "config.yaml").write_text(
        "plugins:\n  enabled: [" + ("project-history-recall" if enabled else "") + "]\n")
    if key:
        (home / ".env").write_text(f"RECALL_API_KEY={key}\n")
    return other


@pytest.fixture
def groups(world):
    alpha_dir, beta_dir = world.repo("alpha"), world.folder("beta-notes")
    alpha, beta = world.project("Alpha", alpha_dir), world.project("Beta", beta_dir)
    world.session("alpha rollout plan for kubernetes", cwd=alpha_dir, title="Alpha rollout")
    world.session("beta secret canary kubernetes plan zebra", cwd=beta_dir, title="Beta canary")
    world.session("group one asked about kubernetes quota", "raise the quota", source="api_server",
                  sid="hermes-onebotv11+group+111+42")
    client = TestClient(create_app(world.home, KEY))
    return world, client, alpha, beta


def test_health_needs_no_key_but_everything_else_does(groups):
    _, client, _, _ = groups
    assert client.get("/health").json()["ok"] is True
    assert "profile" not in client.get("/health").json()  # the profile's name is for key holders
    assert client.get("/health", headers=AUTH).json()["profile"] == "default"
    for method, path in [("get", "/projects"), ("post", "/search"), ("get", "/status"), ("post", "/move"),
                         ("get", "/chats/onebotv11:1/binding"), ("get", "/p/default/health")]:
        response = getattr(client, method)(path)
        assert response.status_code == 401, path
        assert response.json()["code"] == "unauthorized"
    wrong = {"Authorization": "Bearer " + "x" * 24}
    assert client.get("/projects", headers=wrong).status_code == 401


@pytest.mark.parametrize("key", ["", "   ", "short-key", "x" * 15])
def test_create_app_refuses_an_empty_or_short_key(world, key):
    with pytest.raises(ValueError, match="16"):
        create_app(world.home, key)


def test_api_docs_and_schema_are_not_served(groups):
    _, client, _, _ = groups
    for path in ("/docs", "/redoc", "/openapi.json", "/p/default/openapi.json"):
        assert client.get(path).status_code in (401, 404), path
        assert client.get(path, headers=AUTH).status_code == 404, path
        assert "paths" not in client.get(path, headers=AUTH).text


def test_unbound_chat_never_falls_back_to_a_global_search(groups):
    _, client, _, _ = groups
    response = client.post("/search", headers=AUTH, json={"query": "kubernetes", "chat": "onebotv11:111"})
    assert response.status_code == 409
    assert response.json()["code"] == "chat_unbound"


def test_moving_a_chat_binds_it_and_moves_its_conversations(groups):
    world, client, alpha, beta = groups
    moved = client.post("/move", headers=AUTH, json={"chat": "onebotv11:111", "project": "alpha"}).json()
    assert moved["success"] and moved["moved_sessions"] == 1
    assert world.db.get_session("hermes-onebotv11+group+111+42")["cwd"] == str(world.work / "alpha")
    found = client.post("/search", headers=AUTH, json={"query": "kubernetes", "chat": "onebotv11:111",
                                                       "mode": "keyword", "limit": 10}).json()
    titles = {r["session_id"] for r in found["results"]}
    assert "hermes-onebotv11+group+111+42" in titles
    assert all("zebra" not in r["snippet"] for r in found["results"])  # Beta's history stays private
    assert found["project"]["id"] == alpha
    # Home: the chat is no longer linked, so /recall must refuse rather than search everything.
    client.post("/move", headers=AUTH, json={"chat": "onebotv11:111", "project": ""})
    binding = client.get("/chats/onebotv11:111/binding", headers=AUTH).json()
    assert binding["state"] == "home"
    again = client.post("/search", headers=AUTH, json={"query": "kubernetes", "chat": "onebotv11:111"})
    assert again.status_code == 409


def test_chat_facing_answers_carry_no_server_path(groups):
    """What the bot may show a group: no folder of the Hermes machine in search, move or projects."""
    world, client, _, _ = groups
    moved = client.post("/move", headers=AUTH, json={"chat": "onebotv11:111", "project": "alpha"})
    found = client.post("/search", headers=AUTH, json={"query": "kubernetes", "chat": "onebotv11:111"})
    listed = client.get("/projects", headers=AUTH)
    for response in (moved, found, listed):
        assert response.status_code == 200
        assert str(world.work) not in response.text and "primary_path" not in response.text, response.text
    # The operator's own project-scoped search still names the folder.
    by_project = client.post("/search", headers=AUTH, json={"query": "kubernetes", "project": "alpha"}).json()
    assert by_project["project"]["primary_path"] == str(world.work / "alpha")


def test_move_into_a_project_whose_folder_is_gone_says_so_without_the_path(groups):
    world, client, _, _ = groups
    gone = world.folder("gone-notes")
    world.project("Gone", gone)
    shutil.rmtree(gone)
    for body in ({"chat": "onebotv11:111", "project": "gone"},
                 {"session_id": "hermes-onebotv11+group+111+42", "project": "gone"}):
        response = client.post("/move", headers=AUTH, json=body)
        assert response.status_code == 409 and response.json()["code"] == "folder_missing"
        assert str(gone) not in response.text and "/" not in response.json()["error"]
    assert world.db.get_session("hermes-onebotv11+group+111+42")["cwd"] is None  # nothing moved


def test_a_broken_config_yaml_does_not_turn_move_into_a_500(groups):
    """A YAML error in config.yaml (``terminal.cwd`` is where Home lives) used to escape the move as
    an unhandled ``yaml.ScannerError``: the bot got ``internal error``. The move to Home now goes to
    the next candidate folder, and a move into a project never reads the file."""
    world, client, alpha, _ = groups
    (world.home / "config.yaml").write_text("terminal:\n  cwd: [unclosed\n")
    home_move = client.post("/move", headers=AUTH, json={"session_id": "hermes-onebotv11+group+111+42",
                                                         "project": ""})
    assert home_move.status_code == 200, home_move.text
    assert home_move.json()["project"] == {"kind": "home"}
    into = client.post("/move", headers=AUTH, json={"chat": "onebotv11:111", "project": "alpha"})
    assert into.status_code == 200 and into.json()["project"]["id"] == alpha


def test_initial_binding_does_not_override_an_admin_decision(groups):
    _, client, _, beta = groups
    first = client.put("/chats/onebotv11:222/binding", headers=AUTH, json={"project": "beta", "only_if_unset": True})
    assert first.json()["project"]["id"] == beta
    client.post("/move", headers=AUTH, json={"chat": "onebotv11:222", "project": "alpha"})
    again = client.put("/chats/onebotv11:222/binding", headers=AUTH, json={"project": "beta", "only_if_unset": True})
    assert again.json()["project"]["slug"] == "alpha"
    cleared = client.delete("/chats/onebotv11:222/binding", headers=AUTH).json()
    assert cleared["state"] == "unset"


def _files(home: Path) -> set[str]:
    # SQLite's -wal/-shm companions of databases that already exist are not new data.
    return {str(p.relative_to(home)) for p in home.rglob("*") if not p.name.endswith(("-wal", "-shm"))}


def test_no_get_creates_a_file(groups):
    world, client, _, _ = groups
    before = _files(world.home)
    for path in ("/health", "/p/default/health", "/projects", "/status", "/chats/onebotv11:111/binding",
                 "/p/default/chats/onebotv11:5/binding", "/p/default/status", "/p/nosuch/status"):
        assert client.get(path, headers=AUTH).status_code in (200, 401), path
    assert _files(world.home) == before
    assert not (world.home / "project-history-recall").exists()


@pytest.mark.parametrize("body, code", [
    ({"query": "x", "project": "nope"}, "unknown_project"),
    ({"query": "", "project": "alpha"}, "bad_request"),
    ({"query": "x" * 5_000, "project": "alpha"}, "query_too_long"),
    ({"query": "x" * 100_000, "project": "alpha"}, "body_too_large"),
    ({"query": "x", "project": "alpha", "chat": "onebotv11:1"}, "bad_request"),
    ({"query": "x", "chat": "../../etc"}, "bad_request"),
    ({"query": "x", "project": "alpha", "limit": "many"}, "bad_request"),
    ({"query": "x", "project": "alpha", "mode": "fuzzy"}, "bad_request"),
    ({"query": "x", "project": "alpha", "surprise": 1}, "bad_request"),
    ({"query": ["x"], "project": "alpha"}, "bad_request"),
])
def test_bad_search_input_is_a_clear_4xx(groups, body, code):
    _, client, _, _ = groups
    response = client.post("/search", headers=AUTH, json=body)
    assert 400 <= response.status_code < 500
    assert response.json() == {"success": False, "error": response.json()["error"], "code": code}
    assert response.json()["error"]


def test_malformed_json_and_wrong_shapes_are_4xx(groups):
    _, client, _, _ = groups
    assert client.post("/search", headers=AUTH, content=b"{nope").json()["code"] == "bad_request"
    assert client.post("/search", headers=AUTH, json=[1, 2]).json()["code"] == "bad_request"
    assert client.post("/move", headers=AUTH, json={"session_id": "nope", "project": "alpha"}).status_code == 404


# --- one key, one profile ----------------------------------------------------------------------


@pytest.fixture
def profiles(groups):
    """The launch profile (the world's home) plus: ``work`` (plugin on, own key), ``nokey`` (plugin
    on, no key of its own) and ``off`` (own key, plugin not enabled)."""
    world, client, _, _ = groups
    made = []
    work = add_profile(world, "work", key=WORK_KEY)
    folder = work.folder("ops")
    work.project("Ops", folder)
    work.session("ops only pager rotation", cwd=folder)
    made.append(work)
    made.append(add_profile(world, "nokey"))
    off = add_profile(world, "off", enabled=False, key="off-profile-key-0123456789")
    off.project("Hidden", off.folder("hidden"))
    made.append(off)
    yield world, client
    for w in made:
        w.close()


def test_each_profile_opens_with_its_own_key_only(profiles, caplog):
    caplog.set_level(logging.DEBUG)
    world, client = profiles
    work = bearer(WORK_KEY)
    assert [p["name"] for p in client.get("/p/work/projects", headers=work).json()["projects"]] == ["Ops"]
    found = client.post("/p/work/search", headers=work, json={"query": "pager", "project": "ops", "mode": "keyword"})
    assert found.json()["results"][0]["snippet"].startswith("ops only")
    assert client.get("/p/work/health", headers=work).json()["profile"] == "work"
    # The launch key does not open another profile; the work key opens nothing but work.
    for path, headers in [("/p/work/projects", AUTH), ("/p/work/status", AUTH), ("/p/nokey/projects", AUTH),
                          ("/projects", work), ("/p/default/projects", work), ("/p/nokey/projects", work)]:
        response = client.get(path, headers=headers)
        assert response.status_code == 401 and response.json()["code"] == "unauthorized", path
    moved = client.post("/p/work/move", headers=AUTH, json={"chat": "onebotv11:9", "project": "ops"})
    assert moved.status_code == 401
    assert not (world.home / "profiles" / "work" / "project-history-recall").exists()  # nothing written
    logged = "\n".join(r.getMessage() for r in caplog.records)
    # the operator learns why ...
    assert "refused GET /p/work/projects from testclient: wrong key for profile 'work'" in logged
    assert KEY not in logged and WORK_KEY not in logged  # ... and no key


def test_a_profile_without_the_plugin_is_not_served_even_with_its_key(profiles):
    _, client = profiles
    response = client.get("/p/off/projects", headers=bearer("off-profile-key-0123456789"))
    assert response.status_code == 401
    assert "Hidden" not in response.text


def test_profile_health_does_not_reveal_which_profiles_exist(profiles):
    _, client = profiles
    answers = {(r.status_code, r.text) for r in (
        client.get(f"/p/{name}/health", headers=headers)
        for name in ("work", "nokey", "off", "nosuch", "default")
        for headers in ({}, bearer("x" * 24)))}
    assert len(answers) == 1 and answers.pop()[0] == 401
    assert client.get("/p/nosuch/health", headers=AUTH).text == client.get("/p/work/health", headers=AUTH).text


def test_launch_key_opens_other_profiles_only_when_the_operator_shares_it(profiles):
    world, _ = profiles
    client = TestClient(create_app(world.home, KEY, share_key_with=["work"]))
    assert [p["name"] for p in client.get("/p/work/projects", headers=AUTH).json()["projects"]] == ["Ops"]
    assert client.get("/p/work/projects", headers=bearer(WORK_KEY)).status_code == 200  # its own key still works
    assert client.get("/p/nokey/projects", headers=AUTH).status_code == 401  # not shared
    assert client.get("/p/off/projects", headers=AUTH).status_code == 401  # shared or not: plugin is off


def test_a_named_launch_profile_is_its_own_root_and_default_needs_its_own_key(profiles):
    world, _ = profiles
    client = TestClient(create_app(world.home / "profiles" / "work", WORK_KEY))
    assert client.get("/health", headers=bearer(WORK_KEY)).json()["profile"] == "work"
    assert client.get("/p/work/projects", headers=bearer(WORK_KEY)).status_code == 200
    assert client.get("/p/default/projects", headers=bearer(WORK_KEY)).status_code == 401
    (world.home / "config.yaml").write_text("plugins:\n  enabled: [project-history-recall]\n")
    (world.home / ".env").write_text(f"RECALL_API_KEY={KEY}\n")
    assert [p["name"] for p in client.get("/p/default/projects", headers=AUTH).json()["projects"]] == ["Alpha", "Beta"]


def test_profile_names_that_are_not_profile_ids_are_refused(groups):
    _, client, _, _ = groups
    for path in ("/p/%2e%2e/projects", "/p/Bad..Name/projects", "/p/a%2Fb/projects"):
        assert client.get(path, headers=AUTH).status_code in (401, 404), path


# --- one status contract -----------------------------------------------------------------------

PROJECT_KEYS = {"id", "name", "slug", "sessions", "messages", "indexed_messages", "chunks", "state"}
SEMANTIC_KEYS = {"provider", "model", "consent", "status", "indexing"}


def test_status_is_the_documented_contract_and_counts_the_index(groups):
    """docs/recall-api.md: per project messages, indexed messages, chunks, state; semantic provider,
    model, consent, status — and the numbers move when the real local model indexes."""
    from hermes_side.embedding import build_index, load_settings

    world, client, alpha, _ = groups
    before = client.get("/status", headers=AUTH).json()
    assert {"success", "profile", "projects", "semantic"} <= set(before) and before["profile"] == "default"
    row = next(p for p in before["projects"] if p["id"] == alpha)
    assert set(row) == PROJECT_KEYS
    assert (row["sessions"], row["messages"], row["indexed_messages"], row["chunks"]) == (1, 1, 0, 0)
    assert row["state"] == "partial" and row["slug"] == "alpha"
    assert set(before["semantic"]) == SEMANTIC_KEYS
    assert before["semantic"] == {"provider": "local", "model": "multilingual-e5-small", "consent": "not_needed",
                                  "status": "partial", "indexing": False}

    build_index(world.home, load_settings(world.home))
    after = client.get("/status", headers=AUTH).json()
    row = next(p for p in after["projects"] if p["id"] == alpha)
    assert row["indexed_messages"] == row["messages"] == 1 and row["chunks"] >= 1 and row["state"] == "ready"
    assert after["semantic"]["status"] == "ready"


def test_status_says_why_semantic_search_is_unavailable_without_a_path(groups):
    world, client, _, _ = groups
    (world.home / "config.yaml").write_text(
        "plugins:\n  project-history-recall:\n    embedding:\n      chunk_sise: 3\n")
    status = client.get("/status", headers=AUTH).json()
    assert status["semantic"]["status"] == "unavailable" and "chunk_sise" in status["semantic"]["detail"]
    assert str(world.home) not in json.dumps(status)
    assert all(p["state"] == "unavailable" and p["messages"] >= 1 for p in status["projects"])
