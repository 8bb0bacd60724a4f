"""The recall API over a real state.db: auth, profiles, chat scoping, bindings, moves, errors."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from hermes_side.api import create_app

KEY = "k" * 24
AUTH = {"Authorization": f"Bearer {KEY}"}


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
    for method, path in [("get", "/projects"), ("post", "/search"), ("get", "/status"), ("post", "/move"),
                         ("get", "/chats/onebotv11:1/binding")]:
        response = getattr(client, method)(path)
        assert response.status_code == 401, path
        assert response.json()["code"] == "unauthorized"
    wrong = {"Authorization": "Bearer " + "x" * 24}
    assert client.get("/projects", headers=wrong).status_code == 401


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


def test_initial_binding_does_not_override_an_admin_decision(groups):
    _, client, _, beta = groups
    first = client.put("/chats/onebotv11:222/binding", headers=AUTH, json={"project": "beta", "only_if_unset": True})
    assert first.json()["project"]["id"] == beta
    client.post("/move", headers=AUTH, json={"chat": "onebotv11:222", "project": "alpha"})
    again = client.put("/chats/onebotv11:222/binding", headers=AUTH, json={"project": "beta", "only_if_unset": True})
    assert again.json()["project"]["slug"] == "alpha"
    cleared = client.delete("/chats/onebotv11:222/binding", headers=AUTH).json()
    assert cleared["state"] == "unset"


@pytest.mark.parametrize("body, code", [
    ({"query": "x", "project": "nope"}, "unknown_project"),
    ({"query": "", "project": "alpha"}, "bad_request"),
    ({"query": "x" * 100_000, "project": "alpha"}, "query_too_long"),
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


def test_profiles_are_selected_by_prefix_and_unknown_names_are_404(groups, tmp_path):
    world, client, _, _ = groups
    assert client.get("/p/nosuch/projects", headers=AUTH).json()["code"] == "unknown_profile"
    assert client.get("/p/%2e%2e/projects", headers=AUTH).status_code == 404
    assert client.get("/p/Bad..Name/projects", headers=AUTH).status_code == 404
    work = world.home / "profiles" / "work"
    work.mkdir(parents=True)
    from tests.hermes.world import World

    other = World(work, tmp_path / "work2")
    folder = other.folder("ops")
    other.project("Ops", folder)
    other.session("ops only pager rotation", cwd=folder)
    assert [p["name"] for p in client.get("/p/work/projects", headers=AUTH).json()["projects"]] == ["Ops"]
    found = client.post("/p/work/search", headers=AUTH, json={"query": "pager", "project": "ops", "mode": "keyword"})
    assert found.json()["results"][0]["snippet"].startswith("ops only")
    assert client.get("/p/work/health").json()["profile"] == "work"
    other.close()


def test_openapi_schema_is_served(groups):
    _, client, _, _ = groups
    paths = client.get("/openapi.json").json()["paths"]
    assert "/search" in paths and "/p/{profile}/search" in paths


def test_status_counts_projects(groups):
    _, client, alpha, _ = groups
    status = client.get("/status", headers=AUTH).json()
    row = next(p for p in status["projects"] if p["id"] == alpha)
    assert row["sessions"] == 1 and row["messages"] == 1
