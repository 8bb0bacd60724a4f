"""Issue 34: forget, opt-out and recall-off hold after everything Hermes does to its rows — one
test per hole of the fourth red-team round, through the real recall API and the real plugin's tools.

Hermes rewrites history after a rule was made: in-place compaction writes the kept tail again with
new ids and the compaction's time, a rotation's child carries the tail, the operator's CLI
``/branch`` copies the whole transcript into a ``cli`` session with no working folder
(``tests/hermes/hermes_ops.py`` runs Hermes' own code or its exact ``SessionDB`` calls). A rule
belongs to what was said, so none of that brings forgotten words back.
"""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from hermes_side.api.app import create_app
from hermes_side.stores import bindings
from tests.hermes import hermes_ops
from tests.hermes.world import call_tool, call_tool_raw

KEY = "rules-follow-turns-key-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}
G111, G444 = "onebotv11:111", "onebotv11:444"
S2 = "hermes-onebotv11+group+111+10002"
S3 = "hermes-onebotv11+group+111+10003"
SHARED = "hermes-onebotv11+group+444"  # HERMES_SESSION_SHARE_GROUP=true: one session for the group
SECRET = "the vault code is plum-4471"
REPLY = "Noted, plum-4471 for the vault."


def tagged(nick: str, uid: str, text: str) -> str:
    """A shared group session's turn as nonebot-plugin-hermes 0.5.5's reactive mode writes it
    (``prompt_builder.build_reactive_user_content``: runtime state, recent lines, the current
    message with the sender tag, the reminder)."""
    return (f"<runtime_state>\nyou: [user=bot id=1]\n</runtime_state>\n\n<recent_messages>\n</recent_messages>\n\n"
            f"<current_message>\n[user={nick} id={uid}]: {text}\n</current_message>\n\n"
            "请用 submit_decision JSON 对象回复(字段:should_reply / reply_text / topic_hint / should_exit_active),"
            "不要直接说话或扮演动作。")


@pytest.fixture
def group(world, loaded_plugin):
    alpha = world.folder("alpha")
    project = world.project("Alpha", alpha)
    bindings.set_binding(world.home, G111, project)
    bindings.set_binding(world.home, G444, world.project("Gamma", world.folder("gamma")))
    world.session(("user", "hello, checking in"), ("assistant", "Hi!"), ("user", SECRET), ("assistant", REPLY),
                  source="api_server", sid=S2, cwd=alpha)
    world.session(("user", "the database moves to blue green deploys"), ("assistant", "Blue green, got it."),
                  source="api_server", sid=S3, cwd=alpha)
    world.alpha = alpha
    return world, TestClient(create_app(world.home, KEY))


def search(client, query: str, chat: str = G111, mode: str = "keyword") -> str:
    r = client.post("/search", json={"query": query, "chat": chat, "mode": mode, "limit": 10}, headers=AUTH)
    assert r.status_code == 200, r.text
    return json.dumps(r.json(), ensure_ascii=False).replace(">>>", "").replace("<<<", "")


def agent_in_group(query: str, session: str = S3) -> str:
    return call_tool_raw("project_history_search", {"query": query, "mode": "keyword"}, session)


def forget_result(client, world, sid: str, text: str, user: str) -> dict:
    mid = next(m["id"] for m in world.db.get_messages(sid) if m["content"] == text)
    r = client.post("/forget", json={"chat": G111, "scope": "member", "user": user, "message_id": mid,
                                     "apply": True, "actor": f"onebotv11:{user}"}, headers=AUTH)
    assert r.status_code == 200, r.text
    return r.json()


def gone(client, *words: str, chat: str = G111, session: str = S3) -> None:
    for word in words:
        assert word not in search(client, word, chat), word
        assert word not in agent_in_group(word, session), word


# -- a forget is undone later --------------------------------------------------------------------
def test_a_forget_holds_when_hermes_compacts_the_session_afterwards(group):
    world, client = group
    forget_result(client, world, S2, SECRET, "10002")
    hermes_ops.compact(world.db, S2)  # writes SECRET and REPLY again: new ids, the compaction's time

    gone(client, "plum")
    assert "blue green" in search(client, "blue green")


def test_a_forget_holds_when_a_rotation_carries_the_tail(group):
    world, client = group
    forget_result(client, world, S2, SECRET, "10002")
    child = hermes_ops.rotate(world.db, S2)
    world.db.append_message(child, "user", "and the lobby code is walrus-12")

    gone(client, "plum")
    assert "walrus" in search(client, "walrus lobby")


def test_a_forget_holds_when_the_operator_branches_the_chat_afterwards(group):
    world, client = group
    forget_result(client, world, S2, SECRET, "10002")
    hermes_ops.branch(world.db, S2)

    gone(client, "plum")


# -- opt-out and recall-off spans -------------------------------------------------------------------
def test_words_said_while_opted_out_stay_out_after_opt_in_and_compaction(group):
    world, client = group
    put = client.put(f"/chats/{G111}/members/10002/optout", json={"opted_out": True}, headers=AUTH)
    assert put.status_code == 200, put.text
    world.db.append_message(S2, "user", "my locker code is mango-12")
    world.db.append_message(S2, "assistant", "Got it, mango-12.")
    client.put(f"/chats/{G111}/members/10002/optout", json={"opted_out": False}, headers=AUTH)
    gone(client, "mango")

    hermes_ops.compact(world.db, S2)  # the copies carry the compaction's time, after the opt-out ended

    gone(client, "mango")
    assert "plum" in search(client, "plum vault")  # said before the opt-out: still recalled


def test_words_said_while_recall_was_off_stay_out_after_compaction(group):
    world, client = group
    client.put(f"/chats/{G111}/recall", json={"enabled": False}, headers=AUTH)
    world.db.append_message(S3, "user", "the pelican protocol starts at noon")
    world.db.append_message(S3, "assistant", "Pelican protocol at noon, noted.")
    client.put(f"/chats/{G111}/recall", json={"enabled": True}, headers=AUTH)
    hermes_ops.compact(world.db, S3)

    gone(client, "pelican", session=S2)
    assert "blue green" in search(client, "blue green")


# -- shared group sessions ----------------------------------------------------------------------------
def test_opt_out_in_a_shared_group_without_sender_tags_is_refused_plainly(group):
    world, client = group
    world.session(("user", "morning all"), ("assistant", "Morning!"), source="api_server", sid=SHARED,
                  cwd=world.folder("gamma"))

    r = client.put(f"/chats/{G444}/members/10002/optout", json={"opted_out": True}, headers=AUTH)

    assert r.status_code == 403 and r.json()["code"] == "not_attributable", r.text
    assert "/recall-off" in r.json()["error"] and "admin" in r.json()["error"]
    assert client.get(f"/chats/{G444}/recall", headers=AUTH).json()["opted_out"] == []


def test_a_member_of_a_shared_group_opts_out_and_forgets_by_the_bridges_sender_tag(group):
    world, client = group
    gamma = world.folder("gamma")
    world.session(("user", tagged("Ann", "10002", "my bike lock is kiwi-55")), ("assistant", "Kiwi-55, noted."),
                  ("user", tagged("Bob", "10003", "the standup moves to ten")), ("assistant", "Ten it is."),
                  source="api_server", sid=SHARED, cwd=gamma)

    done = client.post("/forget", json={"chat": G444, "scope": "member", "user": "10002", "apply": True},
                       headers=AUTH).json()
    assert (done["user_turns"], done["replies"]) == (1, 1)
    r = client.put(f"/chats/{G444}/members/10002/optout", json={"opted_out": True}, headers=AUTH)
    assert r.status_code == 200 and r.json()["opted_out"] is True, r.text
    world.db.append_message(SHARED, "user", tagged("Ann", "10002", "and my gym locker is fig-31"))
    world.db.append_message(SHARED, "assistant", "Fig-31 for the gym.")
    world.db.append_message(SHARED, "user", tagged("Bob", "10003", "lunch is at the canteen"))

    for word in ("kiwi", "fig"):
        assert word not in search(client, word, G444)
    assert "standup" in search(client, "standup ten", G444) and "canteen" in search(client, "canteen", G444)


# -- the operator's branch ---------------------------------------------------------------------------
def test_the_operators_notes_in_a_branch_of_the_chat_are_never_in_the_chats_recall(group):
    world, client = group
    branch = hermes_ops.branch(world.db, S2)
    world.db.append_message(branch, "user", "internal note: member 10002 is a churn risk, offer heron discount")
    world.db.append_message(branch, "assistant", "Noted the heron discount.")

    gone(client, "heron")
    # The operator's own search of the project finds them; the chat's words there are the chat's.
    cli = world.session("hello", cwd=world.alpha)
    out = call_tool("project_history_search", {"query": "heron discount", "mode": "keyword"}, cli)
    assert out["success"] and "heron" in json.dumps(out)
    # A member's forget still reaches the copies the branch holds.
    forget_result(client, world, S2, SECRET, "10002")
    assert "plum" not in json.dumps(call_tool("project_history_search", {"query": "plum vault", "mode": "keyword"},
                                              cli))


# -- quotes follow their author ------------------------------------------------------------------------
def test_one_members_forget_leaves_another_members_same_words_quoted(group):
    world, client = group
    said = "lighthouse keys are in the blue drawer"
    world.db.append_message(S3, "user", said)  # Bob said it first
    world.db.append_message(S2, "user", said)  # Ann repeats it, then forgets her copy
    world.session(("user", f"(引用: {said}) which drawer, walrus?"),
                  ("user", "<recent_messages>\n[user=Bob id=10003]: " + said + "\n[user=Ann id=10002]: " + said
                   + "\n</recent_messages>\n\nnarwhal question"),
                  source="api_server", sid="hermes-onebotv11+group+111+10005", cwd=world.alpha)

    forget_result(client, world, S2, said, "10002")

    asker = [m["id"] for m in world.db.get_messages("hermes-onebotv11+group+111+10005")]
    opened = client.post("/context", json={"chat": G111, "message_id": asker[0], "before": 0, "after": 1},
                         headers=AUTH).json()
    reply, recent = (t["text"] for t in opened["turns"])
    assert reply.startswith(f"(引用: {said})")  # Bob's words, quoted: Ann's forget does not hide them
    assert f"[user=Bob id=10003]: {said}" in recent
    assert "[user=Ann id=10002]: [hidden:" in recent  # Ann's own line is hers to take out
    assert "lighthouse" in search(client, "lighthouse drawer")  # Bob's own turn stays


# -- a store written before rules named turns ------------------------------------------------------------
def test_a_store_from_before_keeps_every_rule_and_its_forgets_now_reach_later_copies(group):
    """forgotten.db at migration 2 (ids and spans only, as shipped before issue 34) migrates; its
    forgotten ids count as forgotten turns, so a compaction after the upgrade brings nothing back."""
    import sqlite3
    import time

    from hermes_side.stores import forgotten
    from hermes_side.stores.migrations import migrate

    world, client = group
    ids = [m["id"] for m in world.db.get_messages(S2) if m["content"] in (SECRET, REPLY)]
    path = forgotten.store_path(world.home)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, forgotten._MIGRATIONS[:2])
    now = time.time()
    conn.executemany("INSERT INTO forgotten VALUES (?, ?, 'fg-old', ?)", [(i, S2, now) for i in ids])
    conn.execute("INSERT INTO rules (kind, chat, user_id, patterns, since, until, receipt)"
                 " VALUES ('optout', ?, '10003', '[]', ?, NULL, 'fg-opt')", (G111, now))
    conn.execute("INSERT INTO receipts (receipt, at, actor, surface, action, scope) VALUES"
                 " ('fg-old', ?, 'a', 'api', 'forget', '{}'), ('fg-opt', ?, 'a', 'api', 'optout', '{}')", (now, now))
    conn.close()
    world.db.append_message(S3, "user", "said after opting out: the otter is in room five")

    hermes_ops.compact(world.db, S2)
    gone(client, "plum", "otter")

    client.put(f"/chats/{G111}/members/10002/optout", json={"opted_out": True}, headers=AUTH)  # a write migrates
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(forgotten._MIGRATIONS)
    assert conn.execute("SELECT count(*) FROM forgotten").fetchone()[0] == len(ids)
    assert conn.execute("SELECT count(*) FROM rules").fetchone()[0] == 2
    assert {r[0] for r in conn.execute("SELECT receipt FROM receipts")} >= {"fg-old", "fg-opt"}
    conn.close()
    gone(client, "plum", "otter")
    assert "blue green" in search(client, "blue green")
