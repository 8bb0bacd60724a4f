"""Plugin-owned store of chat → project bindings and of the sessions seen for each chat.

``<HERMES_HOME>/project-history-recall/bindings.db`` per profile. A binding has three states:
``unset`` (never linked), ``bound`` (a project) and ``home`` (an admin moved the chat to Home);
``only_if_unset`` lets a bot's configured initial project apply once without overriding a later
admin decision.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Iterator
from contextlib import ExitStack, closing, contextmanager
from pathlib import Path
from typing import Any

from ..host import locks
from ..host.profile import profile_at
from . import faults, hermes_db, ledger
from .migrations import migrate

# Numbered, append-only (stores/migrations.py); never edit one that shipped, add the next.
MIGRATIONS: tuple[str, ...] = (
    # 1: bindings and the sessions seen per chat. IF NOT EXISTS: stores made before migrations
    # were numbered already hold these tables at user_version 0.
    """
    CREATE TABLE IF NOT EXISTS bindings (
        chat TEXT PRIMARY KEY,
        state TEXT NOT NULL CHECK (state IN ('bound', 'home')),
        project_id TEXT,
        updated_at REAL NOT NULL
    );
    CREATE TABLE IF NOT EXISTS chat_sessions (
        session_id TEXT PRIMARY KEY,
        chat TEXT NOT NULL,
        first_seen REAL NOT NULL
    );
    CREATE INDEX IF NOT EXISTS chat_sessions_by_chat ON chat_sessions(chat)
    """,
)
LOCK_WAIT = 30.0  # seconds a placement or a /move waits for another one on the same chat


STORE = "bindings.db"


def plugin_dir(home: Path) -> Path:
    return profile_at(home).plugin_dir


def bindings_path(home: Path) -> Path:
    return profile_at(home).bindings_db


def connect(home: Path) -> sqlite3.Connection:
    """bindings.db for writing (created and migrated). A store the ledger says existed is never
    created again empty, nor an older copy written to (``ledger.vouch``)."""
    ledger.vouch(home, STORE)
    path = bindings_path(home)
    with faults.guard(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=10, isolation_level=None)
        conn.row_factory = sqlite3.Row
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            migrate(conn, MIGRATIONS)
        except BaseException:
            conn.close()
            raise
    return conn


@contextmanager
def _writing(home: Path) -> Iterator[sqlite3.Connection]:
    """One write: its faults name bindings.db, and the ledger notes what the store holds after it."""
    with faults.guard(bindings_path(home)), closing(connect(home)) as conn:
        yield conn
    ledger.note(home, STORE)


def _read(home: Path, sql: str, params: tuple) -> list[sqlite3.Row]:
    """Read-only, vouched for by the ledger: no bindings.db yet means no binding and no sessions;
    one that is missing, damaged or older than the ledger says is a ``StoreFault``."""
    path = bindings_path(home)
    if ledger.vouch(home, STORE) is None:
        return []
    with faults.guard(path, writing=False):
        try:
            conn = hermes_db.connect_ro(path)
        except hermes_db.NoDatabase:  # removed since it was vouched for: vouched for again
            ledger.vouch(home, STORE)
            return []
        try:
            return conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            return []  # a store of an older version that lacks the table: nothing recorded in it
        finally:
            conn.close()


def get_binding(home: Path, chat: str) -> dict[str, Any]:
    rows = _read(home, "SELECT state, project_id FROM bindings WHERE chat = ?", (chat,))
    row = rows[0] if rows else None
    if row is None:
        return {"chat": chat, "state": "unset", "project_id": None}
    return {"chat": chat, "state": row["state"], "project_id": row["project_id"]}


def set_binding(home: Path, chat: str, project_id: str | None, *, only_if_unset: bool = False) -> dict[str, Any]:
    """Bind ``chat`` to ``project_id`` (``None`` = Home). Returns the binding now in force."""
    state = "bound" if project_id else "home"
    verb = "INSERT OR IGNORE" if only_if_unset else "INSERT OR REPLACE"
    with _writing(home) as conn:
        conn.execute(f"{verb} INTO bindings (chat, state, project_id, updated_at) VALUES (?, ?, ?, ?)",
                     (chat, state, project_id, time.time()))
    return get_binding(home, chat)


def clear_binding(home: Path, chat: str) -> dict[str, Any]:
    with _writing(home) as conn:
        conn.execute("DELETE FROM bindings WHERE chat = ?", (chat,))
    return get_binding(home, chat)


def record_session(home: Path, chat: str, session_id: str) -> None:
    with _writing(home) as conn:
        conn.execute("INSERT OR IGNORE INTO chat_sessions (session_id, chat, first_seen) VALUES (?, ?, ?)",
                     (session_id, chat, time.time()))


def sessions_for_chat(home: Path, chat: str) -> list[str]:
    return [r[0] for r in _read(home, "SELECT session_id FROM chat_sessions WHERE chat = ?", (chat,))]


def all_bindings(home: Path) -> list[dict[str, Any]]:
    """Every chat that was ever linked (``bound`` or ``home``), ordered by chat name."""
    return [dict(r) for r in _read(home, "SELECT chat, state, project_id, updated_at FROM bindings ORDER BY chat", ())]


def load_all(home: Path) -> tuple[dict[str, str | None], dict[str, str]]:
    """Every binding (chat → project id, ``None`` for Home) and every recorded session (session
    id → chat), read-only: a search must not create the store. Unreadable → ``Unavailable``."""
    path = bindings_path(home)
    if ledger.vouch(home, STORE) is None:
        return {}, {}
    with faults.guard(path, writing=False):
        try:
            conn = hermes_db.connect_ro(path)
        except hermes_db.NoDatabase:  # removed since it was vouched for: vouched for again
            ledger.vouch(home, STORE)
            return {}, {}
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            bound = ({r[0]: (r[2] if r[1] == "bound" else None)
                      for r in conn.execute("SELECT chat, state, project_id FROM bindings")}
                     if "bindings" in tables else {})
            seen = ({r[0]: r[1] for r in conn.execute("SELECT session_id, chat FROM chat_sessions")}
                    if "chat_sessions" in tables else {})
        finally:
            conn.close()
    return bound, seen


def fingerprint(home: Path) -> tuple:
    """Changes with the store and with the ledger that vouches for it: a bindings.db deleted after
    a map was built without one must be vouched for again, not read from the cache."""
    return hermes_db.file_fingerprint(bindings_path(home)), hermes_db.file_fingerprint(ledger.ledger_path(home))


@contextmanager
def chat_lock(home: Path, chat: str, timeout: float | None = None) -> Iterator[None]:
    """Serialise everything that places or moves one chat's sessions, across processes.

    The first-turn hook runs in the Hermes process and an admin's ``/move`` in the recall API
    process; without this a hook that read the old binding could write a new session into the
    old project after the move finished. An OS file lock: the kernel drops it if a holder dies.
    """
    name = hashlib.blake2b(chat.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
    folder = plugin_dir(home) / "locks"
    with ExitStack() as held:
        with faults.guard(folder):  # a full disk or a read-only profile: said, before anything moves
            held.enter_context(locks.hold(folder / f"{name}.lock", wait=LOCK_WAIT if timeout is None else timeout,
                                          busy=TimeoutError(f"chat {chat} is busy"), poll=0.02))
        yield
