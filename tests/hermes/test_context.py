"""Opening a hit: ``POST /context`` for chat groups and the ``project_history_open`` tool.

Real state.db written by SessionDB, real projects, the plugin loaded by Hermes' loader and the tool
dispatched through ``model_tools.handle_function_call``. The scope is the search's scope: anything
outside it answers ``not_found``, exactly like a message that does not exist.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from hermes_side.api.app import create_app
from tests.hermes.world import call_tool

KEY = "k" * 24
AUTH = {"Authorization": f"Bearer {KEY}"}
CHAT = "onebotv11:111"


@pytest.fixture
def two_projects(world):
    alpha_dir, beta_dir = world.folder("alpha"), world.folder("beta")
    world.project("Alpha", alpha_dir)
    world.project("Beta", beta_dir)
    talk = world.session(
        ("user", "we need a plan for the database"),
        ("assistant", "first question: which engine"),
        ("user", "postgres, because of the jsonb columns"),
        ("assistant", "then the walrus migration tool does the schema"),
        ("user", "and the rollback?"),
        ("assistant", "walrus keeps a down script for each step"),
        ("user", "good, ship it on friday"),
        cwd=alpha_dir, title="Database plan", ts=1_780_000_000,
    )
    secret = world.session("beta's walrus budget is secret", "noted", cwd=beta_dir, title="Beta budget")
    current = world.session("where were we with the database?", cwd=alpha_dir)
    ids = {m["content"]: m["id"] for sid in (talk, secret) for m in world.messages(sid)}
    return world, talk, secret, current, ids


def test_api_opens_the_turns_around_a_hit_of_the_chats_project(two_projects):
    world, talk, _, _, ids = two_projects
    client = TestClient(create_app(world.home, KEY))
    client.post("/move", headers=AUTH, json={"chat": CHAT, "project": "alpha"})
    hit = client.post("/search", headers=AUTH, json={"query": "down script", "chat": CHAT, "mode": "keyword"}).json()
    mid = hit["results"][0]["message_id"]
    assert mid == ids["walrus keeps a down script for each step"]

    opened = client.post("/context", headers=AUTH, json={"chat": CHAT, "message_id": mid, "before": 2, "after": 1})
    assert opened.status_code == 200
    body = opened.json()
    assert body["session_id"] == talk and body["title"] == "Database plan" and body["project"]["name"] == "Alpha"
    assert [(t["role"], t["text"]) for t in body["turns"]] == [
        ("past_assistant", "then the walrus migration tool does the schema"),
        ("past_user", "and the rollback?"),
        ("past_assistant", "walrus keeps a down script for each step"),
        ("past_user", "good, ship it on friday"),
    ]
    assert [t["hit"] for t in body["turns"]] == [False, False, True, False]
    assert body["more_before"] is True and body["more_after"] is False
    assert all(t["when"].startswith("2026-") for t in body["turns"])


def test_api_never_opens_a_message_outside_the_chats_project(two_projects):
    world, _, _, _, ids = two_projects
    client = TestClient(create_app(world.home, KEY))
    client.post("/move", headers=AUTH, json={"chat": CHAT, "project": "alpha"})
    secret = ids["beta's walrus budget is secret"]
    other = client.post("/context", headers=AUTH, json={"chat": CHAT, "message_id": secret})
    missing = client.post("/context", headers=AUTH, json={"chat": CHAT, "message_id": 999_999})
    assert other.status_code == missing.status_code == 404
    assert other.json() == missing.json() == {"success": False, "error": other.json()["error"], "code": "not_found"}
    assert "secret" not in other.text

    # Another chat, linked to Beta, opens Beta's message but not Alpha's.
    client.post("/move", headers=AUTH, json={"chat": "onebotv11:222", "project": "beta"})
    beta = client.post("/context", headers=AUTH, json={"chat": "onebotv11:222",
                                                        "message_id": ids["beta's walrus budget is secret"]})
    assert beta.json()["turns"][0]["text"] == "beta's walrus budget is secret"
    alpha = client.post("/context", headers=AUTH, json={"chat": "onebotv11:222",
                                                         "message_id": ids["and the rollback?"]})
    assert alpha.json()["code"] == "not_found"


def test_api_context_of_an_unlinked_chat_is_refused(two_projects):
    world, _, _, _, ids = two_projects
    client = TestClient(create_app(world.home, KEY))
    body = {"chat": "onebotv11:333", "message_id": ids["and the rollback?"]}
    response = client.post("/context", headers=AUTH, json=body)
    assert response.status_code == 409 and response.json()["code"] == "chat_unbound"


@pytest.mark.parametrize("body", [
    {"chat": CHAT},
    {"chat": CHAT, "message_id": "abc"},
    {"chat": CHAT, "message_id": 1, "before": 11},
    {"chat": CHAT, "message_id": 1, "after": -1},
    {"chat": CHAT, "message_id": 1, "project": "beta"},
    {"message_id": 1},
])
def test_api_context_bad_input_is_a_clear_400(two_projects, body):
    world, *_ = two_projects
    client = TestClient(create_app(world.home, KEY))
    client.post("/move", headers=AUTH, json={"chat": CHAT, "project": "alpha"})
    response = client.post("/context", headers=AUTH, json=body)
    assert response.status_code == 400 and response.json()["code"] == "bad_request" and response.json()["error"]


def test_tool_opens_a_hit_found_by_the_search_tool(two_projects, loaded_plugin):
    _, talk, _, current, ids = two_projects
    found = call_tool("project_history_search", {"query": "jsonb", "mode": "keyword"}, current)
    mid = found["results"][0]["message_id"]
    opened = call_tool("project_history_open", {"message_id": mid, "before": 1, "after": 1}, current)
    assert opened["success"] and opened["session_id"] == talk
    assert [t["text"] for t in opened["turns"]] == [
        "first question: which engine",
        "postgres, because of the jsonb columns",
        "then the walrus migration tool does the schema",
    ]


def test_tool_is_sealed_like_the_search(two_projects, loaded_plugin):
    _, talk, _, current, ids = two_projects
    other = call_tool("project_history_open", {"message_id": ids["beta's walrus budget is secret"]}, current)
    assert other == {"success": False, "error": other["error"], "code": "not_found"}
    # The search does not show Beta's message either: both tools see the same history.
    found = call_tool("project_history_search", {"query": "walrus", "mode": "keyword", "limit": 10}, current)
    # Alpha's own walrus conversation is found (so the check below is over something), Beta's not.
    assert [r["session_id"] for r in found["results"]] == [talk]
    assert all("secret" not in r["snippet"] for r in found["results"])
    # Its own conversation is not searchable, so it cannot be opened either.
    own = call_tool("project_history_open", {"message_id": ids["and the rollback?"]}, talk)
    assert own["code"] == "not_found"


def test_tool_bad_arguments_are_errors_not_tracebacks(two_projects, loaded_plugin):
    _, _, _, current, _ = two_projects
    for args in ({}, {"message_id": "x"}, {"message_id": 1, "before": 99}, {"message_id": 1, "query": "x"}):
        out = call_tool("project_history_open", args, current)
        assert out["success"] is False and out["code"] == "bad_request", args
