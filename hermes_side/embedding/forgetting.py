"""What forgetting does to the index: the vectors (and latent terms) of every message out of recall
leave embeddings.db, and a forget's receipt is done only once they have (issue 39 §5).

Two files cannot share one transaction (both are WAL), so the order makes it hold instead:

- a forget commits its rule with the receipt ``index_pending`` (``stores/forgotten.forget_turns``),
  then :func:`finish_pending` deletes the vectors of everything out of recall — copies made since
  included — and marks the receipt done; a kill between the two leaves the receipt pending, and the
  next forget, index run or server start finishes it;
- an index run checks its batch against the rules inside the batch's own write
  (:func:`out_of_recall`), so a forget committed while the batch was being embedded is either seen
  there or purges after that write: no vector of a forgotten turn is left behind a done receipt.

A chunk holds its own message's text only (the indexer's ``alone`` chunking), so no other turn's
vector carries a forgotten turn's words.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from ..host.profile import profile_at
from ..scope import rule_view
from ..stores import forgotten, hermes_db
from ..stores.messages import FORGOTTEN_TABLE


def purge_vectors(home: Path, ids: Sequence[int]) -> dict[str, Any]:
    """Delete the vectors (and latent terms) of ``ids`` from embeddings.db, every model's."""
    path = profile_at(home).embeddings_db
    if not path.exists():
        return {"vectors_deleted": 0}
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        cur = conn.execute("DELETE FROM chunks WHERE message_id IN (SELECT value FROM json_each(?))",
                           (json.dumps([int(i) for i in ids]),))
        deleted = cur.rowcount
        if deleted:  # in-memory matrices reload (store.generation)
            conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()
    return {"vectors_deleted": deleted}


def finish_pending(home: Path) -> dict[str, Any]:
    """Delete the vectors of every message out of recall now and mark the receipts that waited
    for it done."""
    pending = forgotten.load(home).pending
    try:
        conn = rule_view.connect_state(home)
    except hermes_db.NoDatabase:
        forgotten.index_purged(home, pending)
        return {"vectors_deleted": 0}
    with closing(conn):
        ids = [r[0] for r in conn.execute(f"SELECT id FROM {FORGOTTEN_TABLE}")]
    index = purge_vectors(home, ids)
    forgotten.index_purged(home, pending)
    return index


def out_of_recall(conn: sqlite3.Connection, home: Path, ids: Sequence[int]) -> set[int]:
    """Of ``ids``, those out of recall by the rules as they are now (``conn`` prepared again)."""
    rule_view.prepare(conn, home)
    rows = conn.execute(f"SELECT id FROM {FORGOTTEN_TABLE} WHERE id IN (SELECT value FROM json_each(?))",
                        (json.dumps([int(i) for i in ids]),)).fetchall()
    return {r[0] for r in rows}
