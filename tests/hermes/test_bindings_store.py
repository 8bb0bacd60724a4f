"""bindings.db: numbered migrations like embeddings.db, and stores from before them keep their rows."""

from __future__ import annotations

import sqlite3

from hermes_side.host.profile import profile_at
from hermes_side.stores import bindings


def test_a_new_store_is_at_the_last_migration(tmp_path):
    bindings.set_binding(tmp_path, "onebotv11:1", "p1")
    with sqlite3.connect(profile_at(tmp_path).bindings_db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(bindings.MIGRATIONS)
    assert bindings.get_binding(tmp_path, "onebotv11:1")["project_id"] == "p1"


def test_a_store_from_before_numbered_migrations_keeps_every_link(tmp_path):
    """The tables as the unnumbered schema made them (user_version 0), with a link and a session."""
    path = profile_at(tmp_path).bindings_db
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as conn:
        conn.executescript("""
            CREATE TABLE bindings (chat TEXT PRIMARY KEY, state TEXT NOT NULL CHECK (state IN ('bound', 'home')),
                                   project_id TEXT, updated_at REAL NOT NULL);
            CREATE TABLE chat_sessions (session_id TEXT PRIMARY KEY, chat TEXT NOT NULL, first_seen REAL NOT NULL);
            INSERT INTO bindings VALUES ('onebotv11:7', 'bound', 'p7', 1.0);
            INSERT INTO chat_sessions VALUES ('s1', 'onebotv11:7', 1.0);
        """)
    bindings.record_session(tmp_path, "onebotv11:7", "s2")  # a write opens (and migrates) the store
    assert bindings.get_binding(tmp_path, "onebotv11:7") == {"chat": "onebotv11:7", "state": "bound",
                                                             "project_id": "p7"}
    assert sorted(bindings.sessions_for_chat(tmp_path, "onebotv11:7")) == ["s1", "s2"]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(bindings.MIGRATIONS)
        assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'chat_sessions_by_chat'").fetchone()
