"""Issue 39 §3–4: every known fault answers with the file, the cause and a recovery that works —
never a 500 or a traceback. Real faults: a small tmpfs filled to the last byte, the same tmpfs
remounted read-only, garbage written over a store; a real ``hermes recall serve`` process and the
real ``hermes recall`` CLI. Each recovery is run and the store is used again afterwards.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from pathlib import Path

import pytest

from hermes_side.stores import bindings, forgotten
from tests.hermes.faulty import (
    G111,
    M3,
    api,
    build_apart,
    fill,
    garbage,
    group_world,
    hermes,
    own_stderr,
    remount,
    settle,
    tmpfs,
)
from tests.hermes.world import World

pytestmark = pytest.mark.slow  # real processes, a mounted file system


@pytest.fixture
def disk_world(tmp_path, monkeypatch):
    """A Hermes home on its own 24 MB tmpfs: group 111 in Alpha with a forgotten turn; Beta waits."""
    with tmpfs(tmp_path / "disk") as disk:
        home = disk / "hermes-home"
        home.mkdir()
        monkeypatch.setenv("HERMES_HOME", str(home))
        ids = build_apart(home, tmp_path / "work")
        world = World(home, tmp_path / "work")  # for reading back what the server did
        try:
            world.disk, world.alpha_id = disk, ids["alpha"]
            yield world
        finally:
            world.close()


def _writes(world) -> list[tuple[str, str, dict | None]]:
    return [
        ("PUT", f"/chats/{G111}/binding", {"project": "beta"}),
        ("DELETE", f"/chats/{G111}/binding", None),
        ("POST", "/move", {"chat": G111, "project": "beta"}),
        ("POST", "/forget", {"chat": G111, "scope": "member", "user": "10003", "apply": True}),
        ("PUT", f"/chats/{G111}/members/10003/optout", {"opted_out": True}),
        ("PUT", f"/chats/{G111}/recall", {"enabled": False}),
    ]


def _reads() -> list[tuple[str, str, dict | None]]:
    return [
        ("POST", "/search", {"query": "marmalade", "chat": G111, "mode": "keyword"}),
        ("POST", "/search", {"query": "marmalade", "chat": G111, "mode": "hybrid"}),
        ("GET", f"/chats/{G111}/binding", None),
        ("GET", f"/chats/{G111}/recall", None),
        ("GET", "/status", None),
        ("GET", "/projects", None),
    ]


def _receipts(world) -> int:
    with sqlite3.connect(forgotten.store_path(world.home)) as conn:
        return conn.execute("SELECT count(*) FROM receipts").fetchone()[0]


def _unchanged(world) -> None:
    """Nothing half-written: the binding, every session's place, the forget record, no move journal."""
    assert bindings.get_binding(world.home, G111)["project_id"] == world.alpha_id
    assert {world.db.get_session(s)["cwd"] for s in (M3,)} == {str(world.work / "alpha")}
    assert _receipts(world) == 1
    assert list((world.home / "project-history-recall" / "moves").glob("*.json")) == []


def _refused(answers: list[tuple[str, int, dict]], cause: str) -> None:
    for path, status, body in answers:
        assert status == 503 and body["code"] == "unavailable", (path, status, body)
        assert cause in body["error"] and "(" in body["error"] and "/" not in body["error"], (path, body)


@contextmanager
def full_disk(world, log: Path):
    """A recall API serving ``world``, settled, then its disk filled: the server and the filler file
    (unlinking it is the recovery the answers name: free space)."""
    with api(world.home, log) as server:
        assert server.search()[0] == 200
        settle(world.home)
        yield server, fill(world.disk)


def test_a_full_disk_answers_503_with_the_file_and_the_cause_and_writes_nothing(disk_world, tmp_path):
    world = disk_world
    with full_disk(world, tmp_path / "recall.log") as (server, filler):
        writes = [(path, *server.call(method, path, body)) for method, path, body in _writes(world)]
        reads = [(path, *server.call(method, path, body)) for method, path, body in _reads()]

        _refused(writes, "the disk is full")
        assert all(status in (200, 503) for _, status, _ in reads), reads  # never a 500
        for _, status, body in reads:
            assert status == 200 or "the disk is full" in body["error"], body
        filler.unlink()  # the recovery the answer names: free space

        assert server.call("PUT", f"/chats/{G111}/members/10003/optout", {"opted_out": True})[0] == 200
        status, moved = server.call("POST", "/move", {"chat": G111, "project": "beta"})
        assert status == 200 and moved["project"]["name"] == "Beta"
    assert "Traceback" not in (tmp_path / "recall.log").read_text()


def test_nothing_is_half_written_on_a_full_disk(disk_world, tmp_path):
    world = disk_world
    with full_disk(world, tmp_path / "recall.log") as (server, filler):
        for method, path, body in _writes(world):
            server.call(method, path, body)
        filler.unlink()
        _unchanged(world)
        status, body = server.search()
        assert status == 200 and "marmalade-seven" not in json.dumps(body)


def test_a_read_only_profile_answers_503_and_says_so(disk_world, tmp_path):
    # A profile mounted read-only (a container's volume, a snapshot): a file system with writers
    # cannot be remounted, so Hermes' own writer lets go first and the server starts on it read-only.
    from hermes_state import SessionDB

    world = disk_world
    with api(world.home, tmp_path / "recall.log") as server:  # Hermes has run on it before
        assert server.search()[0] == 200
    world.db.close()
    remount(world.disk, "ro")
    try:
        with api(world.home, tmp_path / "recall-ro.log") as server:
            writes = [(path, *server.call(method, path, body)) for method, path, body in _writes(world)]
            reads = [(path, *server.call(method, path, body)) for method, path, body in _reads()]
    finally:
        remount(world.disk, "rw")
    world.db = SessionDB(db_path=world.home / "state.db")
    _refused(writes, "read-only")
    for path, status, body in reads:
        assert status == 200 or (status == 503 and "read-only" in body["error"]), (path, status, body)
    _unchanged(world)
    with api(world.home, tmp_path / "recall.log") as server:  # the recovery: writable again
        assert server.call("PUT", f"/chats/{G111}/members/10003/optout", {"opted_out": True})[0] == 200
        assert server.search()[0] == 200


def test_the_cli_on_a_full_disk_prints_an_error_line_not_a_traceback(disk_world):
    world = disk_world
    settle(world.home)
    filler = fill(world.disk)
    runs = {"index": hermes(world.home, "index"),
            "forget": hermes(world.home, "forget", "--session", M3, "--apply"),
            "bindings": hermes(world.home, "bindings")}
    for name, done in runs.items():
        assert "Traceback" not in own_stderr(done.stderr), (name, done.stderr)
        assert done.returncode in (0, 1), (name, done)
    index = runs["index"]
    assert index.returncode == 1 and own_stderr(index.stderr).strip().splitlines()[-1].startswith("error: ")
    assert "the disk is full" in index.stderr and "free space" in index.stderr
    assert runs["forget"].returncode == 1 and "the disk is full" in runs["forget"].stderr

    filler.unlink()  # the recovery the error names
    assert _receipts(world) == 1  # the forget wrote nothing
    done = hermes(world.home, "index")
    assert done.returncode == 0 and "Done:" in done.stdout, done


@pytest.mark.parametrize("file", ["forgotten.db", "bindings.db"])
def test_a_damaged_store_is_named_with_a_repair_that_works(world, tmp_path, file):
    group_world(world)
    path = world.home / "project-history-recall" / file
    garbage(path, at=0.0, size=100)  # the header: SQLite cannot open it at all

    with api(world.home, tmp_path / "recall.log") as server:
        status, body = server.search()
        assert status == 503 and f"({file})" in body["error"] and "damaged" in body["error"]
        status, body = server.call("GET", f"/chats/{G111}/binding")
        assert status == (503 if file == "bindings.db" else 200), body  # was a 500 for bindings.db

        done = hermes(world.home, "status")
        assert done.returncode == 1 and f"Store {file}:" in done.stdout, done.stdout
        assert f"hermes recall repair {file} --apply" in done.stdout
        assert "(projects.db)" not in done.stdout and "index --rebuild" not in done.stdout

        fixed = hermes(world.home, "repair", file, "--apply")  # the repair status suggested
        assert fixed.returncode == 0 and f"Repaired {file}" in fixed.stdout, fixed
        assert list(path.parent.glob(f"{file}.corrupt-*"))  # the damaged file is kept beside it

        status, body = server.search()
        assert status == (200 if file == "forgotten.db" else 409), body  # a lost binding: "no project yet"
        assert server.call("GET", "/status")[1]["stores"] == []
        assert hermes(world.home, "status").returncode == 0
