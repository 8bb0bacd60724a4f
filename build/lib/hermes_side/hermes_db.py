"""Read-only access to Hermes' per-profile databases (``state.db``, ``projects.db``).

The plugin only ever SELECTs from these files. Connections use SQLite's ``mode=ro`` URI so a
bug here cannot write; the single write path (moves) goes through ``SessionDB`` in ``move.py``.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any


class NoDatabase(Exception):
    """Hermes' session database does not exist in this profile (yet)."""


def state_db_path(home: Path) -> Path:
    return Path(home) / "state.db"


def projects_db_path(home: Path) -> Path:
    return Path(home) / "projects.db"


def connect_ro(path: Path, *, timeout: float = 5.0) -> sqlite3.Connection:
    if not Path(path).exists():
        raise NoDatabase(str(path))
    conn = sqlite3.connect(f"file:{Path(path).as_posix()}?mode=ro", uri=True, timeout=timeout,
                           check_same_thread=False)
    conn.row_factory = sqlite3.Row
    return conn


SESSION_COLUMNS = (
    "id", "source", "cwd", "git_repo_root", "git_branch", "parent_session_id", "end_reason",
    "archived", "started_at", "title", "session_key", "chat_id", "chat_type", "message_count",
)


def load_session_rows(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    cols = ", ".join(SESSION_COLUMNS)
    return {r["id"]: dict(r) for r in conn.execute(f"SELECT {cols} FROM sessions")}


def sessions_fingerprint(conn: sqlite3.Connection) -> str:
    """A digest of every column attribution depends on, built in one C-level scan.

    Cheap next to re-attributing (no Python per row), and exact: any new session, move, archive
    flag or re-parenting changes it, whoever wrote it.
    """
    row = conn.execute(
        "SELECT count(*), group_concat(id || '|' || coalesce(cwd, '') || '|' || coalesce(git_repo_root, '')"
        " || '|' || coalesce(parent_session_id, '') || '|' || coalesce(end_reason, '') || '|'"
        " || coalesce(archived, 0) || '|' || coalesce(source, ''), char(10)) FROM sessions"
    ).fetchone()
    return f"{row[0]}:" + hashlib.blake2b((row[1] or "").encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def data_version(conn: sqlite3.Connection) -> int:
    """Changes whenever another connection commits to this database (SQLite's own counter)."""
    return conn.execute("PRAGMA data_version").fetchone()[0]


def has_sessions_table(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sessions'").fetchone() is not None


def session_titles(conn: sqlite3.Connection, ids: list[str]) -> dict[str, str]:
    rows = conn.execute("SELECT id, title FROM sessions WHERE id IN (SELECT value FROM json_each(?))",
                        (json.dumps(ids),)).fetchall()
    return {r[0]: r[1] or "" for r in rows}


def load_projects(home: Path) -> list[dict[str, Any]]:
    """All projects (archived included, flagged) as plain dicts; ``[]`` without a projects.db.

    Reads through Hermes' own ``projects_db.list_projects`` on a read-only connection, because
    ``projects_db.connect()`` would create or migrate the file.
    """
    path = projects_db_path(home)
    if not path.exists():
        return []
    from hermes_cli import projects_db

    conn = connect_ro(path)
    try:
        return [p.to_dict() for p in projects_db.list_projects(conn, include_archived=True)]
    except sqlite3.DatabaseError:
        return []
    finally:
        conn.close()


def projects_fingerprint(home: Path) -> tuple:
    path = projects_db_path(home)
    try:
        st = path.stat()
    except FileNotFoundError:
        return (0, 0)
    wal = path.with_name(path.name + "-wal")
    wal_m = wal.stat().st_mtime_ns if wal.exists() else 0
    return (st.st_mtime_ns, st.st_size, wal_m)


def find_project(projects: list[dict[str, Any]], id_or_slug: str) -> dict[str, Any] | None:
    """Same lookup order as ``projects_db.get_project``: id first, then lower-cased slug."""
    for p in projects:
        if p["id"] == id_or_slug:
            return p
    wanted = id_or_slug.strip().lower()
    return next((p for p in projects if p.get("slug") == wanted), None)
