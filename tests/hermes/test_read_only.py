"""Read-only: searches never write Hermes' databases; a move writes only cwd/git of one conversation.

"Never writes" is checked two ways: the bytes of every database file (db, -wal, -shm) and SQLite's
``PRAGMA data_version`` seen from an observer connection, which changes whenever another connection
commits. The observers are opened first, the way a running Hermes always has state.db open; that
keeps SQLite's own reader bookkeeping (creating -wal/-shm for a reader) out of the comparison.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from hermes_side.stores.hermes_db import ro_uri
from tests.hermes import hermes_line
from tests.hermes.world import call_tool

DB_FILES = ("state.db", "projects.db")
MOVE_COLUMNS = frozenset({"cwd", "git_branch", "git_repo_root"})
# What Hermes' own update_session_cwd changes besides (0.22 bumps git_metadata_generation; 0.19
# nothing) — probed, since the plugin writes only through that call.
HERMES_MOVE_COLUMNS = hermes_line.update_cwd_writes() - MOVE_COLUMNS


def file_hashes(home: Path) -> dict[str, str | None]:
    out = {}
    for name in DB_FILES:
        for suffix in ("", "-wal", "-shm"):
            path = home / (name + suffix)
            out[name + suffix] = hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None
    return out


class Observers:
    def __init__(self, home: Path) -> None:
        self.conns = {n: sqlite3.connect(ro_uri(home / n), uri=True) for n in DB_FILES}
        self.data_version()  # first read: sets up the reader's view

    def data_version(self) -> dict[str, int]:
        return {n: c.execute("PRAGMA data_version").fetchone()[0] for n, c in self.conns.items()}

    def close(self) -> None:
        for c in self.conns.values():
            c.close()


def wait_for_background_indexing(home: Path) -> None:
    """A hybrid search may start the local model's catch-up indexer; let it finish reading."""
    try:
        from hermes_side.embedding.catchup import wait_for_catch_up
    except ImportError:  # no embedding half installed: nothing runs in the background
        return
    assert wait_for_catch_up(home, timeout=120)


def rows(db: Path, table: str) -> dict:
    conn = sqlite3.connect(ro_uri(db), uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return {r["id"]: dict(r) for r in conn.execute(f"SELECT * FROM {table}")}
    finally:
        conn.close()


def every_table(db: Path) -> dict[str, list]:
    """Every table of the database, rows in storage order (FTS shadow tables included)."""
    conn = sqlite3.connect(ro_uri(db), uri=True)
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {n: conn.execute(f'SELECT * FROM "{n}"').fetchall() for n in names}
    finally:
        conn.close()


@pytest.fixture
def corpus(world, loaded_plugin):
    """Two projects, a repo without a project, a lineage, CJK, archived and rewound rows."""
    w = world
    w.repo_a, w.notes = w.repo("repoA"), w.folder("notes")
    w.pid_a, w.pid_b = w.project("RepoA", w.repo_a), w.project("Notes", w.notes)
    w.loose = w.repo("loose")
    w.in_a = w.session("kestrel deploy script uses rsync", "数据库迁移先加列", cwd=w.repo_a, git_root=w.repo_a)
    w.root = w.session("kestrel lineage root", cwd=w.repo_a, git_root=w.repo_a)
    w.tip = w.compress(w.root, "kestrel lineage tip")
    w.in_b = w.session("kestrel notes", cwd=w.notes)
    w.in_loose = w.session("kestrel loose repo", cwd=w.loose)
    archived = w.session("kestrel archived", cwd=w.repo_a)
    w.db.set_session_archived(archived, True)
    w.cur = w.session("hello", cwd=w.repo_a)
    w.nocwd = w.session("hello", source="api_server")
    w.observers = Observers(w.home)
    yield w
    w.observers.close()


SEARCHES = [
    ("cur", {"query": "what did we decide about the deploy script?", "mode": "keyword"}),
    ("cur", {"query": "数据库迁移", "mode": "keyword"}),
    ("cur", {"query": "部署", "mode": "keyword", "after": "7d"}),
    ("cur", {"query": "foo AND (", "mode": "keyword", "limit": 10}),
    ("tip", {"query": "kestrel", "mode": "keyword"}),
    ("in_b", {"query": "kestrel"}),  # default mode: hybrid, the semantic half reads state.db too
    ("cur", {"query": "how did we ship it", "mode": "semantic"}),
    ("in_loose", {"query": "kestrel", "mode": "keyword"}),
    ("nocwd", {"query": "kestrel", "mode": "keyword"}),
    ("cur", {"query": "", "mode": "keyword"}),  # an error answer
]


class TestSearchNeverWrites:
    def test_bytes_and_data_version_unchanged_across_searches(self, corpus):
        w = corpus
        hashes, versions = file_hashes(w.home), w.observers.data_version()

        for _ in range(3):
            for who, args in SEARCHES:
                assert "Tool execution failed" not in str(call_tool("project_history_search", args,
                                                                   getattr(w, who)))
        wait_for_background_indexing(w.home)

        assert w.observers.data_version() == versions
        assert file_hashes(w.home) == hashes

    def test_the_probe_does_see_a_real_write(self, corpus):
        """Control: the same checks notice a commit by Hermes itself."""
        w = corpus
        hashes, versions = file_hashes(w.home), w.observers.data_version()

        w.db.append_message(w.cur, "user", "a new message")

        assert w.observers.data_version()["state.db"] != versions["state.db"]
        # Where the commit lands depends on the journal Hermes chose: the -wal file in WAL mode
        # (0.19), the database file itself where Hermes keeps WAL off (0.22 on an older SQLite).
        changed = "state.db-wal" if hermes_line.journal_mode(w.home / "state.db") == "wal" else "state.db"
        assert file_hashes(w.home)[changed] != hashes[changed]

    def test_search_connection_cannot_write(self, corpus):
        from hermes_side.stores import hermes_db

        conn = hermes_db.connect_ro(hermes_db.state_db_path(corpus.home))
        try:
            with pytest.raises(sqlite3.OperationalError, match="readonly"):
                conn.execute("UPDATE sessions SET title = 'x'")
        finally:
            conn.close()


class TestMoveWritesOnlyWhereItMust:
    def snapshot(self, home: Path) -> tuple[dict, dict, dict]:
        return (rows(home / "state.db", "sessions"), rows(home / "state.db", "messages"),
                rows(home / "projects.db", "projects"))

    def diff(self, before: dict, after: dict) -> dict[str, set[str]]:
        assert before.keys() == after.keys()
        changed = {}
        for key in before:
            cols = {c for c in before[key] if before[key][c] != after[key][c]}
            if cols:
                changed[key] = cols
        return changed

    def test_move_changes_only_cwd_and_git_of_that_conversation(self, corpus):
        w = corpus
        sessions, messages, projects = self.snapshot(w.home)
        projects_hash = file_hashes(w.home)["projects.db"]
        tables = every_table(w.home / "state.db")

        out = call_tool("project_session_move", {"project_id": w.pid_b}, w.tip)

        assert out["success"] is True
        tables2 = every_table(w.home / "state.db")
        assert [t for t in tables if tables[t] != tables2.get(t)] == ["sessions"]
        assert tables2.keys() == tables.keys()
        sessions2, messages2, projects2 = self.snapshot(w.home)
        changed = self.diff(sessions, sessions2)
        assert set(changed) == {w.root, w.tip}
        assert all(cols <= MOVE_COLUMNS | HERMES_MOVE_COLUMNS for cols in changed.values()), changed
        assert all("cwd" in cols for cols in changed.values())
        assert self.diff(messages, messages2) == {}
        assert projects == projects2 and file_hashes(w.home)["projects.db"] == projects_hash

    def test_move_into_a_repo_sets_its_git_columns_and_nothing_else(self, corpus):
        w = corpus
        sessions, messages, _ = self.snapshot(w.home)

        call_tool("project_session_move", {"project_id": w.pid_a}, w.in_b)

        sessions2, messages2, _ = self.snapshot(w.home)
        assert self.diff(sessions, sessions2) == {w.in_b: MOVE_COLUMNS | HERMES_MOVE_COLUMNS}
        assert sessions2[w.in_b]["git_repo_root"] == str(w.repo_a)
        assert self.diff(messages, messages2) == {}

    def test_failed_move_writes_nothing(self, corpus):
        w = corpus
        hashes, versions = file_hashes(w.home), w.observers.data_version()

        out = call_tool("project_session_move", {"project_id": "p_nope1234"}, w.cur)

        assert out["success"] is False
        assert w.observers.data_version() == versions and file_hashes(w.home) == hashes
