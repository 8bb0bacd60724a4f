"""Numbered, append-only schema migrations for the plugin's own SQLite stores.

Migration ``n`` (1-based) runs once, in order, and ``PRAGMA user_version`` records the last one
applied — in the same transaction, so a crash leaves either the old or the new schema. Shared by
``bindings.db`` (stores/bindings.py) and ``embeddings.db`` (embedding/store.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence


def migrate(conn: sqlite3.Connection, migrations: Sequence[str]) -> None:
    """Bring ``conn`` (autocommit, ``isolation_level=None``) up to ``len(migrations)``. Each
    migration is a script of ``;``-separated statements."""
    if conn.execute("PRAGMA user_version").fetchone()[0] >= len(migrations):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]  # another process may have won
        for number, sql in enumerate(migrations[version:], start=version + 1):
            for statement in filter(str.strip, sql.split(";")):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
