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
from urllib.parse import quote

from ..errors import RecallError
from ..host.features import columns
from . import faults
from .faults import Unavailable  # noqa: F401 — every reader catches it here


class NoDatabase(RecallError):
    """A database of this profile does not exist (yet); ``detail`` is its path."""

    code = "no_db"


def state_db_path(home: Path) -> Path:
    return Path(home) / "state.db"


def projects_db_path(home: Path) -> Path:
    return Path(home) / "projects.db"


def ro_uri(path: Path) -> str:
    """A ``mode=ro`` URI for ``path``. The path is percent-encoded: a home containing ``?``, ``#``
    or ``%`` would otherwise end the path early and open a different file, without ``mode=ro``."""
    return f"file:{quote(Path(path).absolute().as_posix(), safe='/:')}?mode=ro"


class ReadConnection(sqlite3.Connection):
    """A read-only connection that per-connection caches can be keyed on weakly
    (``probes.held_forms``): ``sqlite3.Connection`` itself takes no weak references, and a cache
    keyed by ``id()`` could hand a new connection a dead one's entries."""


def connect_ro(path: Path, *, timeout: float = 5.0, rows: bool = True) -> sqlite3.Connection:
    """The one way this plugin opens a SQLite file read-only (``ro_uri``): it can neither write
    nor create it. ``rows=False`` returns plain tuples (the indexer reads millions of rows)."""
    path = Path(path)
    if not path.exists():
        raise NoDatabase(_MISSING.get(path.name, f"{path.name} not found"), str(path))
    conn = sqlite3.connect(ro_uri(path), uri=True, timeout=timeout, check_same_thread=False, factory=ReadConnection)
    if rows:
        conn.row_factory = sqlite3.Row
    return conn


_MISSING = {"state.db": "session database not found"}


def plain_cursor(conn: sqlite3.Connection) -> sqlite3.Cursor:
    """A cursor of ``conn`` that returns plain tuples whatever the connection's row factory: a
    keyword probe reads thousands of rowids, and building a ``sqlite3.Row`` for each was a third
    to half of its time (a word's 1,200 matches in a 23k project: 4.7 → 1.8 ms)."""
    cur = conn.cursor()
    cur.row_factory = None
    return cur


def connect_state(home: Path, *, rows: bool = True) -> sqlite3.Connection:
    """Hermes' ``state.db`` of the profile at ``home``, read-only; :class:`NoDatabase` without one.
    Readers of history use ``scope/rule_view.connect_state``, which also prepares the eligibility table."""
    return connect_ro(state_db_path(home), rows=rows)


SESSION_COLUMNS = (
    "id", "source", "cwd", "git_repo_root", "git_branch", "parent_session_id", "end_reason",
    "archived", "started_at", "title", "session_key", "chat_id", "chat_type", "message_count",
)


# Newer Hermes' ``sessions.created_source`` (how a session was created): read when the column
# exists, so the chat rule can keep a session a chat whose ``source`` later names an operator surface.
OPTIONAL_SESSION_COLUMNS = ("created_source",)


# Hermes' CLI ``/branch`` marks the session it makes from another one in ``model_config``
# (``_branched_from``, 0.19 and 0.22): the chat rule tells a branch from a rotation by it.
BRANCHED_FROM = ("CASE WHEN json_valid(model_config) THEN CASE WHEN json_type(model_config) = 'object'"
                 " THEN json_extract(model_config, '$._branched_from') END END AS branched_from")


def _session_columns(conn: sqlite3.Connection) -> str:
    have = columns(conn, "sessions")
    marker = (BRANCHED_FROM,) if "model_config" in have else ()
    return ", ".join((*SESSION_COLUMNS, *(c for c in OPTIONAL_SESSION_COLUMNS if c in have), *marker))


def load_session_rows(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    cols = _session_columns(conn)
    cur = conn.cursor()
    cur.row_factory = sqlite3.Row  # whatever the connection's (the indexer reads plain tuples)
    return {r["id"]: dict(r) for r in cur.execute(f"SELECT {cols} FROM sessions")}


def session_chain(conn: sqlite3.Connection, session_id: str, limit: int = 64) -> dict[str, dict[str, Any]]:
    """The row of ``session_id`` and of each parent above it (any kind of link), at most ``limit``."""
    cols = _session_columns(conn)
    rows: dict[str, dict[str, Any]] = {}
    sid: str | None = session_id
    while sid and sid not in rows and len(rows) < limit:
        row = conn.execute(f"SELECT {cols} FROM sessions WHERE id = ?", (sid,)).fetchone()
        if row is None:
            break
        rows[sid] = dict(row)
        sid = row["parent_session_id"]
    return rows


def sessions_fingerprint(conn: sqlite3.Connection) -> str:
    """A digest of every column attribution and the chat rule depend on, built in one C-level scan.

    Cheap next to re-attributing (no Python per row), and exact: any new session, move, archive
    flag or re-parenting changes it, whoever wrote it.
    """
    extra = "".join(f" || '|' || coalesce({c}, '')" for c in OPTIONAL_SESSION_COLUMNS
                    if c in columns(conn, "sessions"))
    row = conn.execute(
        "SELECT count(*), group_concat(id || '|' || coalesce(cwd, '') || '|' || coalesce(git_repo_root, '')"
        " || '|' || coalesce(parent_session_id, '') || '|' || coalesce(end_reason, '') || '|'"
        " || coalesce(archived, 0) || '|' || coalesce(source, '') || '|' || coalesce(session_key, '')"
        f" || '|' || coalesce(chat_id, '') || '|' || coalesce(chat_type, ''){extra}, char(10)) FROM sessions"
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
    """All projects (archived included, flagged) as plain dicts; ``[]`` only without a projects.db.

    Reads through Hermes' own ``projects_db.list_projects`` on a read-only connection, because
    ``projects_db.connect()`` would create or migrate the file. A file that exists but cannot be
    read raises :class:`Unavailable`.
    """
    path = projects_db_path(home)
    if not path.exists():
        return []
    from hermes_cli import projects_db

    try:
        conn = connect_ro(path)
        try:
            return [p.to_dict() for p in projects_db.list_projects(conn, include_archived=True)]
        finally:
            conn.close()
    except NoDatabase:  # removed between the check and the open
        return []
    except (sqlite3.DatabaseError, OSError) as exc:
        raise faults.of(path, exc, writing=False) from None


def file_fingerprint(path: Path) -> tuple:
    """(mtime, size, WAL mtime) of a SQLite file; changes whenever anyone commits to it. An empty
    WAL holds nothing: a reader that merely opens the file creates one, which is no change."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return (0, 0)
    try:
        wal = path.with_name(path.name + "-wal").stat()
    except FileNotFoundError:
        wal = None
    return (st.st_mtime_ns, st.st_size, wal.st_mtime_ns if wal is not None and wal.st_size else 0)


def projects_fingerprint(home: Path) -> tuple:
    return file_fingerprint(projects_db_path(home))


def find_project(projects: list[dict[str, Any]], ref: str) -> dict[str, Any] | None:
    """``projects_db.get_project``'s order — id first, then lower-cased slug — then the name as
    ``hermes recall status`` and ``/move`` print it ("Shop Backend"; case and runs of spaces do not
    matter). A name two projects share names neither: None, and the caller lists them."""
    for p in projects:
        if p["id"] == ref:
            return p
    wanted = " ".join(ref.split()).lower()
    by_slug = next((p for p in projects if p.get("slug") == wanted), None)
    if by_slug is not None:
        return by_slug
    named = [p for p in projects if " ".join(str(p.get("name") or "").split()).lower() == wanted]
    return named[0] if len(named) == 1 else None
