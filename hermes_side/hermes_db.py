"""Read-only access to Hermes' per-profile databases (``state.db``, ``projects.db``).

The plugin only ever SELECTs from these files. Connections use SQLite's ``mode=ro`` URI so a
bug here cannot write; the single write path (moves) goes through ``SessionDB`` in ``move.py``.
"""

from __future__ import annotations

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


def sessions_fingerprint(conn: sqlite3.Connection) -> tuple:
    """Cheap summary that changes when sessions are added, moved, archived or re-parented.

    One C-level scan of the sessions table (no Python per row), so the scope cache can be
    trusted without re-attributing every session on every query.
    """
    row = conn.execute(
        "SELECT count(*), max(rowid),"
        " total(rowid * (length(coalesce(cwd,'')) + 7 * unicode(substr(coalesce(cwd,'')||'~', -2, 1))"
        "   + 13 * unicode(substr(coalesce(cwd,'')||'~', -5, 1)) + 3 * length(coalesce(git_repo_root,''))"
        "   + 101 * coalesce(archived, 0) + 37 * (parent_session_id IS NOT NULL)"
        "   + 53 * (coalesce(end_reason,'') = 'compression')))"
        " FROM sessions"
    ).fetchone()
    return tuple(row)


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
