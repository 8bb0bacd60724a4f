"""Plugin-owned store of chat → project bindings and of the sessions seen for each chat.

``<HERMES_HOME>/project-history-recall/bindings.db`` per profile. A binding has three states:
``unset`` (never linked), ``bound`` (a project) and ``home`` (an admin moved the chat to Home);
``only_if_unset`` lets a bot's configured initial project apply once without overriding a later
admin decision.
"""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

SCHEMA = [
    """CREATE TABLE IF NOT EXISTS bindings (
        chat TEXT PRIMARY KEY,
        state TEXT NOT NULL CHECK (state IN ('bound', 'home')),
        project_id TEXT,
        updated_at REAL NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS chat_sessions (
        session_id TEXT PRIMARY KEY,
        chat TEXT NOT NULL,
        first_seen REAL NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS chat_sessions_by_chat ON chat_sessions(chat)",
]


def plugin_dir(home: Path) -> Path:
    return Path(home) / "project-history-recall"


def connect(home: Path) -> sqlite3.Connection:
    path = plugin_dir(home) / "bindings.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=10, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    for stmt in SCHEMA:
        conn.execute(stmt)
    return conn


def get_binding(home: Path, chat: str) -> dict[str, Any]:
    with closing(connect(home)) as conn:
        row = conn.execute("SELECT state, project_id FROM bindings WHERE chat = ?", (chat,)).fetchone()
    if row is None:
        return {"chat": chat, "state": "unset", "project_id": None}
    return {"chat": chat, "state": row["state"], "project_id": row["project_id"]}


def set_binding(home: Path, chat: str, project_id: str | None, *, only_if_unset: bool = False) -> dict[str, Any]:
    """Bind ``chat`` to ``project_id`` (``None`` = Home). Returns the binding now in force."""
    state = "bound" if project_id else "home"
    verb = "INSERT OR IGNORE" if only_if_unset else "INSERT OR REPLACE"
    with closing(connect(home)) as conn:
        conn.execute(f"{verb} INTO bindings (chat, state, project_id, updated_at) VALUES (?, ?, ?, ?)",
                     (chat, state, project_id, time.time()))
    return get_binding(home, chat)


def clear_binding(home: Path, chat: str) -> dict[str, Any]:
    with closing(connect(home)) as conn:
        conn.execute("DELETE FROM bindings WHERE chat = ?", (chat,))
    return get_binding(home, chat)


def record_session(home: Path, chat: str, session_id: str) -> None:
    with closing(connect(home)) as conn:
        conn.execute("INSERT OR IGNORE INTO chat_sessions (session_id, chat, first_seen) VALUES (?, ?, ?)",
                     (session_id, chat, time.time()))


def sessions_for_chat(home: Path, chat: str) -> list[str]:
    with closing(connect(home)) as conn:
        return [r[0] for r in conn.execute("SELECT session_id FROM chat_sessions WHERE chat = ?", (chat,))]

