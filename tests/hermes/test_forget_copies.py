"""Forget reaches every copy of a turn and every quote of it (issue 24), through the real recall API,
the real plugin's tools and Hermes' own SessionDB writers.

Hermes keeps copies of a turn: in-place compaction (``archive_and_compact``) keeps the originals
and writes the last turns again as live rows, a rotation's child and a ``/branch`` start with the
parent's turns. The NoneBot bridge writes a replied-to message (``(引用: …)``) and the group's
last lines (``<recent_messages>``) into the *asker's* turn. A member's ``/forget`` and
``/recall-optout`` must reach all of them, and leave the asker's own words findable.
"""

from __future__ import annotations

import json
import time

import pytest
from fastapi.testclient import TestClient

from hermes_side.api.app import create_app
from hermes_side.cli import main
from hermes_side.stores import bindings
from tests.hermes.world import call_tool

KEY = "forget-copies-key-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}
G111 = "onebotv11:111"
S2 = "hermes-onebotv11+group+111+10002"
S3 = "hermes-onebotv11+group+111+10003"
SECRET = "the vault code is plum-4471"
REPLY = "Noted, plum-4471 for the vault."
COMPACTION = "[CONTEXT COMPACTION — REFERENCE ONLY] earlier turns were summarized"


@pytest.fixture
def group(world, loaded_plugin):
    alpha = world.folder("alpha")
    bindings.set_binding(world.home, G111, world.project("Alpha", alpha))
    t0 = time.time() - 7 * 86400  # a week ago: the compaction below runs now
    world.session(("user", "hello, checking in"), ("assistant", "Hi!"), ("user", SECRET), ("assistant", REPLY),
                  source="api_server", sid=S2, cwd=alpha, ts=t0)
    world.session(("user", "the database moves to blue green deploys"), ("assistant", "Blue green, got it."),
                  source="api_server", sid=S3, cwd=alpha, ts=t0 + 100)
    world.t0 = t0
    return world, TestClient(create_app(world.home, KEY))


def compact(world, sid: str) -> None:
    """Hermes' in-place compaction: a summary and copies of the last two turns as the live rows."""
    live = world.db.get_messages(sid)
    world.db.archive_and_compact(sid, [{"role": "user", "content": COMPACTION},
                                       *({"role": m["role"], "content": m["content"]} for m in live[-2:])])


def search(client, query: str) -> str:
    r = client.post("/search", json={"query": query, "chat": G111, "mode": "keyword", "limit": 10}, headers=AUTH)
    assert r.status_code == 200, r.text
    return json.dumps(r.json(), ensure_ascii=False).replace(">>>", "").replace("<<<", "")


def forget(client, **body) -> dict:
    r = client.post("/forget", json={"chat": G111, **body}, headers=AUTH)
    assert r.status_code == 200, r.text
    return r.json()


def rows(world, sid: str, text: str) -> list[int]:
    return [m["id"] for m in world.db.get_messages(sid, include_inactive=True) if m["content"] == text]


def nothing_findable(world, client) -> None:
    assert "plum" not in search(client, "plum vault code")
    for mid in rows(world, S2, SECRET) + rows(world, S2, REPLY):
        assert client.post("/context", json={"chat": G111, "message_id": mid}, headers=AUTH).status_code == 404
    out = call_tool("project_history_search", {"query": "plum vault code", "mode": "keyword"}, S3)
    assert out["success"] and "plum" not in json.dumps(out)
    assert "blue green" in search(client, "blue green database")  # the other member's words stay


def test_a_members_forget_of_one_result_takes_the_compactions_copies(group):
    world, client = group
    compact(world, S2)
    original, copy = rows(world, S2, SECRET)
    assert "plum" in search(client, "plum vault code")

    done = forget(client, scope="member", user="10002", message_id=original, apply=True, actor="onebotv11:10002")

    assert (done["user_turns"], done["replies"], done["copies"], done["messages"]) == (2, 2, 2, 4)
    nothing_findable(world, client)
    # The copy was what the live conversation shows: asking by its id is the same turn, already gone.
    r = client.post("/forget", json={"chat": G111, "scope": "member", "user": "10002", "message_id": copy},
                    headers=AUTH)
    assert r.status_code == 403


def test_forget_before_a_date_takes_a_copy_dated_by_its_original(group, capsys):
    """The compaction wrote the copies now; they are a week old as turns: --before reaches them."""
    world, client = group
    compact(world, S2)
    day_after = time.strftime("%Y-%m-%d", time.localtime(world.t0 + 86400))

    dry = forget(client, scope="chat", before=day_after)
    assert dry["copies"] == 2 and dry["messages"] == 8  # 4 + 2 of S2, 2 of S3
    done = forget(client, scope="chat", before=day_after, apply=True)
    assert done["copies"] == 2

    assert "plum" not in search(client, "plum vault code") and "blue green" not in search(client, "blue green")
    main(["forget", "--log"])
    assert done["receipt"] in capsys.readouterr().out


def test_the_operator_forgets_a_project_span_with_its_copies(group, capsys):
    world, client = group
    compact(world, S2)
    day_after = time.strftime("%Y-%m-%d", time.localtime(world.t0 + 86400))

    main(["forget", "--project", "Alpha", "--before", day_after, "--apply"])

    out = capsys.readouterr().out
    assert "Forgot 8 turn(s)" in out and "2 copies" in out
    assert "plum" not in search(client, "plum vault code")


def test_a_rotations_child_and_a_branch_carrying_the_turn_lose_it_too(group):
    world, client = group
    world.db.end_session(S2, "compression")
    child = world.session(("user", SECRET), ("assistant", REPLY), ("user", "and the lobby code?"),
                          source="api_server", sid="20261201_120000_abcdef", parent=S2)
    branch = world.session(("user", SECRET), ("assistant", REPLY), ("user", "in the branch now"),
                           source="api_server", sid="20261201_130000_fedcba", parent=child)

    done = forget(client, scope="member", user="10002", message_id=rows(world, S2, SECRET)[0], apply=True,
                  actor="onebotv11:10002")

    assert done["copies"] == 4 and set(done["session_ids"]) == {S2, child, branch}
    nothing_findable(world, client)
    assert "lobby" in search(client, "lobby code")  # the member's other words are not part of that result


def test_a_quote_of_forgotten_words_in_another_members_turn_is_hidden_not_the_askers_words(group):
    world, client = group
    world.db.append_message(S3, "user", f"(引用: {SECRET}) what is this vault for, walrus?")
    world.db.append_message(S3, "user", "<recent_messages>\n[m:8] [user=Ann id=10002]: " + SECRET
                            + "\n[user=Bob id=10003]: hm\n</recent_messages>\n\nthe narwhal question stands")
    assert search(client, "plum").count("plum-4471") >= 2

    forget(client, scope="member", user="10002", message_id=rows(world, S2, SECRET)[0], apply=True,
           actor="onebotv11:10002")

    found = search(client, "walrus vault") + search(client, "narwhal question") + search(client, "plum")
    assert "plum" not in found
    assert "walrus" in found and "narwhal" in found and "[hidden:" in found  # the asker's words stay
    asked = rows(world, S3, f"(引用: {SECRET}) what is this vault for, walrus?")[0]
    opened = client.post("/context", json={"chat": G111, "message_id": asked, "before": 0, "after": 1},
                         headers=AUTH).json()
    assert "plum" not in json.dumps(opened) and "walrus" in json.dumps(opened)
    out = call_tool("project_history_open", {"message_id": asked}, S3)
    assert "plum" not in json.dumps(out, ensure_ascii=False)


def test_opt_out_hides_the_members_later_words_quoted_by_others(group):
    world, client = group
    r = client.put(f"/chats/{G111}/members/10002/optout", json={"opted_out": True, "actor": "onebotv11:10002"},
                   headers=AUTH)
    assert r.status_code == 200
    world.db.append_message(S2, "user", "kiwi-99 opens the side door")
    world.db.append_message(S3, "user", "(引用: kiwi-99 opens the side door) which door, walrus?")
    world.db.append_message(S3, "user", "<recent_messages>\n[user=Ann id=10002]: mango-12 is my locker\n"
                            "[user=Bob id=10003]: ok\n</recent_messages>\n\nlocker rules, narwhal?")

    found = search(client, "kiwi side door walrus") + search(client, "mango locker narwhal")

    assert "kiwi" not in found and "mango" not in found
    assert "walrus" in found and "narwhal" in found
    assert "plum" in search(client, "plum")  # words from before the opt-out are not touched
