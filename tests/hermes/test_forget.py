"""Forgetting, through the real recall API, the real plugin's tools, the CLI and the real local model.

Two groups: 111 (project Alpha) where members 10002 and 10003 talk in their per-member sessions
(the bridge's ``hermes-onebotv11+group+111+<uid>`` ids), and 222 (project Beta) where 10002 also
talks. Member 10002 forgets their words in group 111; afterwards no surface finds them, everyone
else's words still are found, and group 222 is untouched — across re-indexing, rebuilds, a /move
and a restart (a fresh engine and app over the same files).
"""

from __future__ import annotations

import json
import time

import pytest
from fastapi.testclient import TestClient

from hermes_side.api.app import create_app
from hermes_side.cli import main
from hermes_side.stores import bindings
from tests.hermes.world import copied_world, indexed_ids, template_world

KEY = "forget-test-key-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}
G111, G222 = "onebotv11:111", "onebotv11:222"
S2 = "hermes-onebotv11+group+111+10002"
S3 = "hermes-onebotv11+group+111+10003"
S2_OTHER = "hermes-onebotv11+group+222+10002"
SHARED = "hermes-onebotv11+group+333"

SECRET_EN = "My launch password for the staging cluster is marmalade-seven, please keep it"
SECRET_ZH = "我的银行卡密码是八八六六，千万别告诉别人"
KEPT_EN = "The database migration will use blue green deploys with a canary on Friday"
KEPT_ZH = "我们决定下周二把数据库迁移到新的机房"


def _search(client, chat: str, query: str, mode: str = "keyword") -> list[dict]:
    r = client.post("/search", json={"query": query, "chat": chat, "mode": mode, "limit": 10}, headers=AUTH)
    assert r.status_code == 200, r.text
    return r.json()["results"]


def _texts(results: list[dict]) -> str:
    text = "\n".join(json.dumps(r, ensure_ascii=False) for r in results)
    return text.replace(">>>", "").replace("<<<", "").lower()  # without the highlight marks


@pytest.fixture(scope="module")
def chats_built(tmp_path_factory):
    """The two groups' history and its index, built once: each test forgets in its own copy."""
    from hermes_side.embedding import build_index, load_settings

    with template_world(tmp_path_factory.mktemp("forget-chats")) as world:
        alpha_dir, beta_dir = world.repo("alpha"), world.folder("beta")
        bindings.set_binding(world.home, G111, world.project("Alpha", alpha_dir))
        bindings.set_binding(world.home, G222, world.project("Beta", beta_dir))
        t0 = time.time() - 3600
        world.session(("user", "hello everyone, checking in"), ("assistant", "Hi! Good to see you."),
                      ("user", SECRET_EN), ("assistant", "Understood, I noted marmalade-seven for staging."),
                      ("user", SECRET_ZH), ("assistant", "好的，八八六六我记下了。"),
                      ("user", "what time is the standup tomorrow?"), ("assistant", "The standup is at nine."),
                      source="api_server", sid=S2, cwd=alpha_dir, ts=t0)
        world.session(("user", KEPT_EN), ("assistant", "Blue green with a Friday canary, got it."),
                      ("user", KEPT_ZH), ("assistant", "好的，下周二迁移数据库。"),
                      source="api_server", sid=S3, cwd=alpha_dir, ts=t0 + 100)
        world.session(("user", "In this group too: marmalade-seven is my staging password"),
                      ("assistant", "Noted for group 222."), source="api_server", sid=S2_OTHER, cwd=beta_dir, ts=t0)
        build_index(world.home, load_settings(world.home))
    return world


@pytest.fixture
def chats(chats_built, tmp_path):
    with copied_world(chats_built, tmp_path) as world:
        yield world, TestClient(create_app(world.home, KEY))


def _ids(world, sid: str) -> dict[str, int]:
    return {m["content"]: m["id"] for m in world.messages(sid)}


def _forget(client, **body) -> dict:
    r = client.post("/forget", json={"chat": G111, **body}, headers=AUTH)
    assert r.status_code == 200, r.text
    return r.json()


def test_a_member_forgets_their_words_and_no_surface_finds_them(chats, capsys):
    from hermes_side.embedding import build_index, load_settings
    from tests.hermes.world import call_tool

    world, client = chats
    home = world.home
    s2 = _ids(world, S2)
    secret_ids = {s2[SECRET_EN], s2[SECRET_ZH]}
    replies = {s2["Understood, I noted marmalade-seven for staging."], s2["好的，八八六六我记下了。"]}
    # Found before: keyword (both languages) and a paraphrase by meaning.
    assert "marmalade" in _texts(_search(client, G111, "marmalade staging password"))
    assert "八八六六" in _texts(_search(client, G111, "银行卡密码"))
    assert secret_ids & indexed_ids(home)
    # ...and by meaning alone, so "not found after" below is about forgetting, not a weak model.
    for query in ("what is the secret phrase for the staging cluster launch", "我的卡的口令是多少"):
        assert {r["message_id"] for r in _search(client, G111, query, "semantic")} & (secret_ids | replies), query

    def alpha_counts() -> tuple[int, int]:
        project = next(p for p in client.get("/status", headers=AUTH).json()["projects"] if p["name"] == "Alpha")
        return project["messages"], project["indexed_messages"]

    before_counts = alpha_counts()
    dry = _forget(client, scope="member", user="10002", actor="onebotv11:10002")
    assert dry["applied"] is False and dry["receipt"] is None
    assert dry["user_turns"] == 4 and dry["replies"] == 4 and dry["sessions"] == 1
    assert "marmalade" in _texts(_search(client, G111, "marmalade"))  # a dry run changes nothing

    done = _forget(client, scope="member", user="10002", actor="onebotv11:10002", apply=True)
    assert done["applied"] is True and done["receipt"].startswith("fg-")
    assert done["user_turns"] == 4 and done["replies"] == 4
    assert "state.db" in done["note"]
    assert alpha_counts()[0] == before_counts[0] - 8  # status counts what recall can still find
    assert alpha_counts()[1] <= before_counts[1] - 8

    def gone_everywhere(client) -> None:
        for query, mode in [("marmalade staging password", "keyword"), ("marmalade", "hybrid"),
                            ("what is the secret phrase for the staging cluster launch", "semantic"),
                            ("银行卡密码", "keyword"), ("银行卡密码", "hybrid"), ("我的卡的口令是多少", "semantic")]:
            found = _search(client, G111, query, mode)
            assert "marmalade" not in _texts(found) and "八八六六" not in _texts(found), (query, mode)
            assert not {r["message_id"] for r in found} & (secret_ids | replies)
        # Everyone else's words in the same group still are found.
        assert "blue green" in _texts(_search(client, G111, "database migration blue green"))
        assert "机房" in _texts(_search(client, G111, "数据库迁移"))
        assert "marmalade" in _texts(_search(client, G222, "marmalade"))  # the other group is untouched
        # Opening a forgotten turn is "not found"; its neighbours are not shown around a kept hit.
        for mid in secret_ids | replies:
            r = client.post("/context", json={"chat": G111, "message_id": mid}, headers=AUTH)
            assert r.status_code == 404
        # The vectors and latent terms are deleted from embeddings.db, not only hidden.
        assert not (secret_ids | replies) & indexed_ids(home)
        # The agent's tools in group 111 (member 10003's session) see nothing of it either.
        out = call_tool("project_history_search", {"query": "marmalade staging password", "mode": "hybrid"}, S3)
        assert out["success"] and "marmalade" not in json.dumps(out)
        opened = call_tool("project_history_open", {"message_id": s2[SECRET_EN]}, S3)
        assert opened.get("success") is False

    gone_everywhere(client)
    # The CLI sees the same; the log lists the receipt without content.
    main(["search", "marmalade", "--project", "Alpha", "--mode", "keyword", "--json"])
    assert "marmalade" not in capsys.readouterr().out
    main(["forget", "--log"])
    log = capsys.readouterr().out
    assert done["receipt"] in log and "marmalade" not in log and "user=10002" in log

    # Re-indexing, a rebuild, a move and a restart keep it forgotten.
    build_index(home, load_settings(home))
    build_index(home, load_settings(home), rebuild=True)
    assert indexed_ids(home) and not (secret_ids | replies) & indexed_ids(home)
    r = client.post("/move", json={"chat": G111, "project": "Beta"}, headers=AUTH)
    assert r.status_code == 200, r.text
    from hermes_side.search import engine as engine_mod

    engine_mod._engines.clear()  # a restart: nothing cached in memory survives
    fresh = TestClient(create_app(home, KEY))
    for query, mode in [("marmalade", "hybrid"), ("银行卡密码", "keyword")]:
        found = _search(fresh, G111, query, mode)
        assert not {r["message_id"] for r in found} & (secret_ids | replies)
    assert "blue green" in _texts(_search(fresh, G111, "database migration blue green"))


def test_one_result_forgets_its_exchange_and_open_windows_skip_it(chats):
    world, client = chats
    s2 = _ids(world, S2)
    target = s2[SECRET_EN]
    done = _forget(client, scope="member", user="10002", message_id=target, apply=True, actor="onebotv11:10002")
    assert (done["user_turns"], done["replies"]) == (1, 1)
    # Opening the turn before it shows the turns after it without the forgotten exchange.
    r = client.post("/context", json={"chat": G111, "message_id": s2["Hi! Good to see you."], "after": 3},
                    headers=AUTH)
    assert r.status_code == 200, r.text
    shown = [t["text"] for t in r.json()["turns"]]
    assert SECRET_EN not in shown and "Understood, I noted marmalade-seven for staging." not in shown
    assert SECRET_ZH in shown  # the member's other words were not part of that result
    assert "八八六六" in _texts(_search(client, G111, "银行卡密码"))


def test_nobody_forgets_another_members_turns_or_another_groups_session(chats):
    world, client = chats
    s3 = _ids(world, S3)
    r = client.post("/forget", json={"chat": G111, "scope": "member", "user": "10002",
                                     "message_id": s3[KEPT_EN], "apply": True}, headers=AUTH)
    assert r.status_code == 403 and r.json()["code"] == "not_attributable"
    # A group's session scope stays inside the group: 222's session is "not found" from 111.
    r = client.post("/forget", json={"chat": G111, "scope": "session", "session_id": S2_OTHER, "apply": True},
                    headers=AUTH)
    assert r.status_code == 404
    assert "blue green" in _texts(_search(client, G111, "blue green"))
    assert "marmalade" in _texts(_search(client, G222, "marmalade"))
    for bad in [{"scope": "member"}, {"scope": "nope"}, {"scope": "chat"}, {"scope": "member", "user": "a*b"},
                {"scope": "member", "user": "1", "after": "yesterday"}]:
        r = client.post("/forget", json={"chat": G111, **bad}, headers=AUTH)
        assert r.status_code == 400, (bad, r.text)


def test_admin_scopes_a_session_and_a_date(chats, capsys):
    world, client = chats
    dry = _forget(client, scope="session", session_id=S3)
    assert dry["messages"] == 4 and dry["applied"] is False
    main(["forget", "--project", "Alpha", "--before", "2999-01-01"])
    out = capsys.readouterr().out
    assert "Dry run: would forget 12 turn(s)" in out and "marmalade" not in out
    main(["forget", "--chat", G111, "--user", "10003", "--apply"])
    assert "Forgot 4 turn(s), receipt fg-" in capsys.readouterr().out
    assert "blue green" not in _texts(_search(client, G111, "blue green database migration", "hybrid"))
    assert "marmalade" in _texts(_search(client, G111, "marmalade"))
    done = _forget(client, scope="chat", before="2999-01-01", apply=True)
    assert done["messages"] == 8  # 10002's turns; 10003's were forgotten already
    assert _search(client, G111, "marmalade") == []
    assert "marmalade" in _texts(_search(client, G222, "marmalade"))


def test_the_span_is_named_on_the_profiles_calendar(chats, monkeypatch):
    """The answer names the span's first and last turn as rows show their time: on the profile's
    calendar (Hermes' HERMES_TIMEZONE here), so a bot kept in UTC tells a Beijing group its days."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    try:
        beijing = ZoneInfo("Asia/Shanghai")
    except Exception:  # noqa: BLE001 — a machine without a tz database cannot name the zone
        pytest.skip("no tz database on this machine")
    _, client = chats
    monkeypatch.setenv("HERMES_TIMEZONE", "Asia/Shanghai")
    dry = _forget(client, scope="session", session_id=S3)
    for edge in ("first", "last"):
        assert dry[f"{edge}_when"] == datetime.fromtimestamp(dry[edge], beijing).strftime("%Y-%m-%d %H:%M"), dry


def test_opt_out_keeps_future_turns_out_and_recall_off_is_reversible(chats):
    from hermes_side.embedding import build_index, load_settings
    from tests.hermes.world import call_tool

    world, client = chats
    r = client.put(f"/chats/{G111}/members/10002/optout", json={"opted_out": True, "actor": "onebotv11:10002"},
                   headers=AUTH)
    assert r.status_code == 200 and r.json()["opted_out"] is True
    world.db.append_message(S2, "user", "after opting out: the vault code is tangerine-nine")
    world.db.append_message(S3, "user", "meanwhile 10003 says the vault is on floor nine")
    build_index(world.home, load_settings(world.home))
    found = _texts(_search(client, G111, "vault tangerine nine", "hybrid"))
    assert "tangerine" not in found and "floor nine" in found
    new_id = world.messages(S2)[-1]["id"]
    assert new_id not in indexed_ids(world.home)  # never embedded
    assert "marmalade" in _texts(_search(client, G111, "marmalade"))  # earlier turns are not touched

    r = client.put(f"/chats/{G111}/recall", json={"enabled": False, "actor": "onebotv11:1"}, headers=AUTH)
    assert r.status_code == 200 and r.json()["recall"] == "off"
    r = client.post("/search", json={"query": "marmalade", "chat": G111}, headers=AUTH)
    assert r.status_code == 409 and r.json()["code"] == "recall_off"
    out = call_tool("project_history_search", {"query": "marmalade"}, S3)
    assert out.get("success") is False and "marmalade" not in json.dumps(out)
    assert "marmalade" in _texts(_search(client, G222, "marmalade"))  # only that group is off
    world.db.append_message(S3, "user", "said while recall was off: the pelican protocol")
    r = client.put(f"/chats/{G111}/recall", json={"enabled": True}, headers=AUTH)
    assert r.json()["recall"] == "on"
    assert client.get(f"/chats/{G111}/recall", headers=AUTH).json() == {
        "success": True, "chat": G111, "recall": "on", "opted_out": ["10002"]}
    assert "marmalade" in _texts(_search(client, G111, "marmalade"))
    assert "pelican" not in _texts(_search(client, G111, "pelican protocol"))
