"""What the running Hermes does, probed — for tests that must hold on every Hermes line.

Where Hermes legitimately changed between 0.19.0 and 0.22.x (a compression child inherits its
parent's cwd, ``update_session_cwd(…, "", "")`` clears the recorded git root, newer columns,
``restore_rewound`` gone, a ``search_messages`` that answers questions), a test asks these probes
what *this* Hermes does instead of pinning one line's answer, and still asserts the plugin's
user-visible outcome. Each probe runs Hermes' own ``SessionDB`` on a scratch database (never the
test's state.db) and is cached for the process: one Hermes per test run.
"""

from __future__ import annotations

import functools
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def scratch_db() -> Iterator[Any]:
    """Hermes' own SessionDB on a throwaway state.db."""
    from hermes_state import SessionDB

    with tempfile.TemporaryDirectory(prefix="recall-line-probe-") as tmp:
        db = SessionDB(db_path=Path(tmp) / "state.db")
        try:
            yield db
        finally:
            db.close()


@functools.cache
def update_cwd_clears_git_root() -> bool:
    """``update_session_cwd(sid, cwd, "", "")`` after a repo: 0.19 keeps the old git_repo_root
    (a stale root), 0.22 clears it."""
    with scratch_db() as db:
        db.create_session("probe", "cli", cwd="/probe/repo")
        db.update_session_cwd("probe", "/probe/repo", "main", "/probe/repo")
        db.update_session_cwd("probe", "/probe/notes", "", "")
        return not (db.get_session("probe") or {}).get("git_repo_root")


@functools.cache
def child_inherits_cwd() -> bool:
    """A session created with a parent and no cwd (a compression child): 0.19 leaves its cwd
    empty, 0.22 gives it the parent's."""
    with scratch_db() as db:
        db.create_session("parent", "cli", cwd="/probe/p")
        db.end_session("parent", "compression")
        db.create_session("child", "cli", parent_session_id="parent")
        return (db.get_session("child") or {}).get("cwd") == "/probe/p"


@functools.cache
def state_columns(table: str) -> frozenset[str]:
    """The columns Hermes' own schema gives ``table`` in a new state.db."""
    with scratch_db() as db:
        conn = sqlite3.connect(db.db_path)
        try:
            return frozenset(r[1] for r in conn.execute(f"PRAGMA table_info({table})"))
        finally:
            conn.close()


@functools.cache
def update_cwd_writes() -> frozenset[str]:
    """The sessions columns Hermes' ``update_session_cwd`` changes when a session moves into a
    repo (0.19: cwd and git; 0.22 also bumps ``git_metadata_generation``)."""
    with scratch_db() as db:
        db.create_session("probe", "cli", cwd="/probe/notes")
        before = dict(db.get_session("probe") or {})
        db.update_session_cwd("probe", "/probe/repo", "main", "/probe/repo")
        after = dict(db.get_session("probe") or {})
        return frozenset(k for k in after if after.get(k) != before.get(k))


def sessiondb_has(method: str) -> bool:
    from hermes_state import SessionDB

    return callable(getattr(SessionDB, method, None))


def journal_mode(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
    finally:
        conn.close()

