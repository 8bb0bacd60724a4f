"""Read-only queries over Hermes' ``state.db`` for the embedding side.

Every query is a short statement of its own: an index run lasting an hour must not hold one
read transaction open, or the agent's WAL could not be checkpointed and would keep growing.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from ..scope import rule_view
from ..stores.messages import MESSAGES_FROM, eligible_sql, turn_sql

_FROM = MESSAGES_FROM
# The turn before, in the same session: embedded with the message as its context (see indexer).
# A forgotten turn is never anyone's context: its words must not live on in a neighbour's vector.
_PREVIOUS = ("(SELECT p.content FROM messages p WHERE p.session_id = m.session_id AND p.id < m.id"
             f" AND {turn_sql('p')} ORDER BY p.id DESC LIMIT 1)")
_IN_SCOPE = " AND m.session_id IN (SELECT value FROM json_each(?))"


def connect_ro(home: Path) -> sqlite3.Connection:
    """state.db read-only through ``hermes_db`` (the quoted ``ro_uri``), rows as plain tuples;
    ``hermes_db.NoDatabase`` when there is none."""
    return rule_view.connect_state(home, rows=False)  # prepared: what was forgotten is out


def _scope(session_ids: Sequence[str] | None) -> tuple[str, tuple]:
    if session_ids is None:
        return "", ()
    return _IN_SCOPE, (json.dumps(list(session_ids)),)


def max_message_id(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COALESCE(MAX(id), 0) FROM messages").fetchone()[0]


def count_after(conn: sqlite3.Connection, after: int, upto: int, session_ids: Sequence[str] | None) -> int:
    where, params = _scope(session_ids)
    sql = f"SELECT COUNT(*) {_FROM} WHERE m.id > ? AND m.id <= ? AND {eligible_sql(conn)}{where}"
    return conn.execute(sql, (after, upto, *params)).fetchone()[0]


def rows_after(
    conn: sqlite3.Connection, after: int, upto: int, session_ids: Sequence[str] | None, page: int = 256
) -> Iterator[tuple[int, str, str, str | None]]:
    """Eligible (id, session_id, content, previous turn's content) with after < id <= upto, in id order."""
    where, params = _scope(session_ids)
    sql = (f"SELECT m.id, m.session_id, m.content, {_PREVIOUS} {_FROM} WHERE m.id > ? AND m.id <= ?"
           f" AND {eligible_sql(conn)}{where} ORDER BY m.id LIMIT ?")
    while True:
        rows = conn.execute(sql, (after, upto, *params, page)).fetchall()
        yield from rows
        if len(rows) < page:
            return
        after = rows[-1][0]


def rows_by_id(
    conn: sqlite3.Connection, ids: Sequence[int], page: int = 256
) -> Iterator[tuple[int, str, str, str | None]]:
    """Eligible (id, session_id, content, previous turn's content) among ``ids`` (ascending), paged."""
    sql = f"SELECT m.id, m.session_id, m.content, {_PREVIOUS} {_FROM} WHERE m.id IN (SELECT value FROM json_each(?))" \
          f" AND {eligible_sql(conn)} ORDER BY m.id"
    for start in range(0, len(ids), page):
        yield from conn.execute(sql, (json.dumps([int(i) for i in ids[start : start + page]]),))


def eligible_ids(conn: sqlite3.Connection, upto: int, session_ids: Sequence[str] | None) -> np.ndarray:
    """Sorted ids of every eligible message <= upto (numpy: 8 bytes per message, not ~150)."""
    where, params = _scope(session_ids)
    cur = conn.execute(f"SELECT m.id {_FROM} WHERE m.id <= ? AND {eligible_sql(conn)}{where} ORDER BY m.id",
                       (upto, *params))
    parts = []
    while page := cur.fetchmany(65536):
        parts.append(np.fromiter((r[0] for r in page), np.int64, len(page)))
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def still_eligible(conn: sqlite3.Connection, ids: Sequence[int]) -> set[int]:
    """The subset of ``ids`` that are still history (not rewound, deleted or archived)."""
    if not ids:
        return set()
    sql = f"SELECT m.id {_FROM} WHERE m.id IN (SELECT value FROM json_each(?)) AND {eligible_sql(conn)}"
    return {row[0] for row in conn.execute(sql, (json.dumps([int(i) for i in ids]),))}


# Backlog size (ids above the marker) up to which walking the id range beats walking the scope's
# sessions (benchmarks/README.md, "Constants chosen by measurement").
_RANGE_WALK_LIMIT = 100_000


def newest_per_session(conn: sqlite3.Connection, after: int, session_ids: Sequence[str]) -> dict[str, int]:
    """{session_id: newest eligible message id} for messages newer than ``after`` in scope.
    Once the index is current this reads only the few rows above the marker."""
    if max_message_id(conn) - after <= _RANGE_WALK_LIMIT:
        # "+" keeps SQLite off idx_messages_session; LIMIT -1 keeps the id-range subquery
        # from being flattened into the GROUP BY (which would also pick that index).
        sql = (f"SELECT session_id, MAX(id) FROM (SELECT m.id AS id, m.session_id AS session_id {_FROM}"
               f" WHERE m.id > ? AND {eligible_sql(conn)} AND +m.session_id IN (SELECT value FROM json_each(?))"
               " LIMIT -1) GROUP BY session_id")
    else:
        sql = (f"SELECT m.session_id, MAX(m.id) {_FROM} WHERE m.id > ? AND {eligible_sql(conn)}{_IN_SCOPE}"
               " GROUP BY m.session_id")
    return dict(conn.execute(sql, (after, json.dumps(list(session_ids)))).fetchall())


def count_in_scope(conn: sqlite3.Connection, session_ids: Sequence[str] | None) -> int:
    where, params = _scope(session_ids)
    return conn.execute(f"SELECT COUNT(*) {_FROM} WHERE {eligible_sql(conn)}{where}", params).fetchone()[0]


def all_session_ids(conn: sqlite3.Connection) -> list[str]:
    return [row[0] for row in conn.execute("SELECT id FROM sessions ORDER BY started_at")]
