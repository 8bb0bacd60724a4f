"""Issue 39 §1: a missing store is not an empty one. forgotten.db deleted, emptied or replaced by an
older copy used to bring forgotten turns back without a word; a lost bindings.db let the bot's
initial binding re-link a group. Now the ledger (stores/ledger.py) says they existed: every search
and the writers refuse, status names the file and the recovery, and each recovery is run here —
a restored backup, or ``hermes recall repair FILE --apply`` — and the store works again.

A real ``hermes recall serve`` process, the real ``hermes recall`` CLI and Hermes' own tool dispatch.
"""

from __future__ import annotations

import shutil

import pytest

from hermes_side.stores import bindings, forgotten
from tests.hermes.faulty import G111, KEPT, SECRET, api, group_world, hermes, texts

pytestmark = pytest.mark.slow  # real processes


def _plugin(world):
    return world.home / "project-history-recall"


def _delete(path):
    path.unlink()
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


def _empty(path):
    _delete(path)
    path.write_bytes(b"")  # a copy that skipped the file's contents


def _assert_refused(status: int, body: dict, file: str) -> None:
    assert status == 503 and body["code"] == "unavailable", body
    assert f"({file})" in body["error"] and str(body).find("/") == -1  # the file named, no server path
    assert "marmalade-seven" not in texts(body)


@pytest.mark.parametrize("damage", [_delete, _empty], ids=["deleted", "emptied"])
def test_a_lost_forgotten_db_fails_closed_until_restored_from_a_backup(world, tmp_path, damage):
    group_world(world)
    store = forgotten.store_path(world.home)
    backup = tmp_path / "backup"
    shutil.copytree(_plugin(world), backup)

    with api(world.home, tmp_path / "recall.log") as server:
        status, body = server.search()
        assert status == 200 and KEPT.split()[1] in texts(body) and "marmalade-seven" not in texts(body)
        damage(store)

        for mode in ("keyword", "hybrid"):
            _assert_refused(*server.search(mode=mode), "forgotten.db")
        _assert_refused(*server.call("GET", f"/chats/{G111}/recall"), "forgotten.db")
        code, st = server.call("GET", "/status")
        assert code == 200 and [p["file"] for p in st["stores"]] == ["forgotten.db"]
        assert "hermes recall repair forgotten.db --apply" in st["stores"][0]["recovery"]
        assert "backup" in st["stores"][0]["recovery"]

        shutil.copy2(backup / "forgotten.db", store)  # the recovery the status names first

        status, body = server.search()
        assert status == 200 and "marmalade-seven" not in texts(body) and "friday" in texts(body)
        assert server.call("GET", "/status")[1]["stores"] == []


def test_an_older_copy_of_forgotten_db_fails_closed(world, tmp_path):
    group_world(world)
    store = forgotten.store_path(world.home)
    older = tmp_path / "forgotten-older.db"
    shutil.copy2(store, older)
    from hermes_side.actions import forget

    forget.set_optout(world.home, G111, "10003", True, actor="onebotv11:10003", surface="api")  # receipt 2
    shutil.copy2(older, store)  # a backup from before it, restored

    with api(world.home, tmp_path / "recall.log") as server:
        status, body = server.search()
    _assert_refused(status, body, "forgotten.db")
    assert "holds 1 of the 2 receipt(s)" in body["error"]


def test_status_and_repair_name_the_file_and_the_repair_works(world, tmp_path):
    group_world(world)
    _delete(forgotten.store_path(world.home))

    done = hermes(world.home, "status")
    assert done.returncode == 1, done
    assert "Store forgotten.db:" in done.stdout and "hermes recall repair forgotten.db --apply" in done.stdout
    assert "projects.db" not in done.stdout and "index --rebuild" not in done.stdout

    dry = hermes(world.home, "repair", "forgotten.db")
    assert dry.returncode == 0 and "With --apply" in dry.stdout
    assert hermes(world.home, "search", "marmalade", "--project", "alpha").returncode == 1

    done = hermes(world.home, "repair", "forgotten.db", "--apply")
    assert done.returncode == 0 and "Repaired forgotten.db" in done.stdout, done

    # The operator said to start over: recall works again, and what the lost record held is no
    # longer applied (that is what starting over means; a backup keeps it).
    found = hermes(world.home, "search", "marmalade", "--project", "alpha", "--mode", "keyword")
    assert found.returncode == 0 and "marmalade" in found.stdout
    assert hermes(world.home, "status").returncode == 0


def test_a_writer_never_recreates_a_lost_forgotten_db(world, tmp_path):
    group_world(world)
    store = forgotten.store_path(world.home)
    _delete(store)

    with api(world.home, tmp_path / "recall.log") as server:
        status, body = server.call("PUT", f"/chats/{G111}/members/10003/optout", {"opted_out": True})
        _assert_refused(status, body, "forgotten.db")
        status, body = server.call("POST", "/forget", {"chat": G111, "scope": "member", "user": "10003",
                                                       "apply": True})
        assert status == 503 and "(forgotten.db)" in body["error"]
    assert not store.exists()  # a fresh empty store would have hidden the loss for good


def test_a_lost_bindings_db_fails_closed_and_the_bot_cannot_relink_the_group(world, tmp_path):
    pid = group_world(world)["alpha"]
    backup = tmp_path / "bindings-backup.db"
    shutil.copy2(bindings.bindings_path(world.home), backup)
    bindings.set_binding(world.home, G111, None)  # an admin moved the group to Home
    home_backup = tmp_path / "bindings-home.db"
    shutil.copy2(bindings.bindings_path(world.home), home_backup)
    _delete(bindings.bindings_path(world.home))

    with api(world.home, tmp_path / "recall.log") as server:
        _assert_refused(*server.search(), "bindings.db")
        _assert_refused(*server.call("GET", f"/chats/{G111}/binding"), "bindings.db")
        # The bot pushes its configured initial project on start (only_if_unset): refused, not re-bound.
        _assert_refused(*server.call("PUT", f"/chats/{G111}/binding", {"project": pid, "only_if_unset": True}),
                        "bindings.db")
        assert not bindings.bindings_path(world.home).exists()

        shutil.copy2(home_backup, bindings.bindings_path(world.home))
        status, body = server.call("GET", f"/chats/{G111}/binding")
        assert status == 200 and body["state"] == "home"
        status, body = server.call("PUT", f"/chats/{G111}/binding", {"project": pid, "only_if_unset": True})
        assert status == 200 and body["state"] == "home"  # the admin's decision stands


def test_the_agent_in_a_chat_is_refused_too(world, loaded_plugin):
    from tests.hermes.faulty import M3
    from tests.hermes.world import call_tool

    group_world(world)
    _delete(forgotten.store_path(world.home))

    out = call_tool("project_history_search", {"query": "marmalade", "mode": "keyword"}, M3)

    assert out["success"] is False and out["code"] == "unavailable" and "(forgotten.db)" in out["error"]
    assert SECRET.split()[-3] not in str(out)
