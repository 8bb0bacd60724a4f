"""The plugin-owned ``<HERMES_HOME>/project-history-recall/embeddings.db``.

Tables (numbered, append-only migrations tracked in ``PRAGMA user_version``):

- ``chunks``: the seed's schema. No project column: a conversation moved to another project
  keeps its vectors; scope is applied at search time by session id.
- ``models``: one row per fingerprint with its dimension, checked on every write so a remote
  endpoint that silently swaps models cannot mix vector spaces.
- ``progress``: per (fingerprint, chunker, scope) the highest message id fully indexed. Scope
  ``*`` is a whole-database run; a session id is a run limited to some sessions (a remote
  provider consented for one project only). Written in the same transaction as the chunks it
  covers, so a kill at any point leaves the two consistent.
- ``chunks.terms`` (migration 2): the chunk's latent terms from the local model (``terms.py``),
  NULL for a provider without them or a chunk indexed before they existed.
- ``meta``: ``generation`` (bumped whenever chunks are deleted or replaced, so in-memory
  matrices know to reload instead of appending) and ``reconciled_at``.

Vectors are stored as a float32 scale followed by int8 components (388 bytes at 384-d): 100k
vectors take 39 MB in memory instead of 154 MB, which is what keeps an API process under
300 MB RSS, at a cosine error below 0.002 (see ``vectors.py``).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..host.profile import profile_at
from ..stores import faults
from ..stores.faults import is_corruption
from ..stores.migrations import migrate
from . import damage

log = logging.getLogger(__name__)
STORE_FILE = "embeddings.db"
ALL = "*"

_MIGRATIONS: tuple[str, ...] = (
    # 1: the seed's chunks table plus bookkeeping
    """
    CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        message_id INTEGER NOT NULL,
        chunk_index INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        model_fingerprint TEXT NOT NULL,
        vector BLOB NOT NULL,
        created_at REAL NOT NULL,
        UNIQUE(session_id, message_id, chunk_index, model_fingerprint)
    );
    CREATE INDEX chunks_by_model ON chunks(model_fingerprint, id);
    CREATE INDEX chunks_by_message ON chunks(model_fingerprint, message_id);
    CREATE TABLE models (
        fingerprint TEXT PRIMARY KEY,
        dim INTEGER NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE TABLE progress (
        fingerprint TEXT NOT NULL,
        chunker TEXT NOT NULL,
        scope TEXT NOT NULL,
        last_message_id INTEGER NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (fingerprint, chunker, scope)
    );
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO meta(key, value) VALUES ('generation', '0');
    """,
    # 2: the local model's latent terms of each chunk (terms.py); NULL: indexed without them
    """
    ALTER TABLE chunks ADD COLUMN terms BLOB;
    """,
    # 3: a search reads only its scope's chunks (vectors.py), by session, in id order
    """
    CREATE INDEX chunks_by_session ON chunks(model_fingerprint, session_id, id);
    """,
)


class StoreCorrupt(Exception):
    """embeddings.db is damaged; ``hermes recall index --rebuild`` moves it aside and starts over."""


class DimensionMismatch(ValueError):
    """A fingerprint's vectors changed size: the model behind a remote name was swapped."""


@dataclass(frozen=True)
class ChunkRow:
    session_id: str
    message_id: int
    chunk_index: int
    content_hash: str
    vector: bytes
    terms: bytes | None = None


def store_path(home: Path) -> Path:
    return profile_at(home).embeddings_db


def connect(home: Path) -> sqlite3.Connection:
    """Open (creating and migrating) embeddings.db. WAL lets searches read while an index
    run writes; synchronous=NORMAL keeps every commit atomic, which is all resuming needs.
    A damaged file raises :class:`StoreCorrupt`, a full disk or a read-only profile its
    ``faults.StoreFault``."""
    path = store_path(home)
    with faults.guard(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    try:
        _ensure_wal(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
        migrate(conn, _MIGRATIONS)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise unreadable(path, exc, writing=True) from None  # damaged, or the disk / a read-only profile
    except BaseException:
        conn.close()
        raise
    return conn


def unreadable(path: Path, exc: BaseException, *, writing: bool = False) -> Exception:
    """The error of a failed read (or write) of embeddings.db: its damage (noted for every reader,
    ``damage.py``) or what else is wrong with it (``faults.py``: the disk, a lock)."""
    if is_corruption(exc):
        return StoreCorrupt(damage.record(path, str(exc)))
    return faults.of(path, exc, writing=writing)


def check(home: Path) -> None:
    """Raise :class:`StoreCorrupt` unless embeddings.db (if any) passes SQLite's quick check."""
    detail = damage.check(store_path(home))
    if detail:
        raise StoreCorrupt(detail)


def move_aside(home: Path) -> Path:
    """Move a damaged embeddings.db (and its -wal/-shm) out of the way; returns the new name."""
    path = store_path(home)
    aside = faults.move_aside(path)
    damage.clear(path)
    log.warning("moved the damaged embedding index aside to %s", aside.name)
    return aside


def _ensure_wal(conn: sqlite3.Connection, timeout: float = 30.0) -> None:
    """Switch to WAL once. The switch needs an exclusive lock and SQLite does not apply the busy
    timeout to it, so a second opener while the first creates the file retries here — until
    ``timeout``. When SQLite answers with another mode instead (no shared memory on this file
    system, an in-memory database), keep that mode: it works, readers just wait for writers."""
    deadline = time.monotonic() + timeout
    while conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0].lower()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
            continue
        if mode != "wal":
            log.warning("SQLite keeps journal_mode=%s for the embedding index (WAL refused)", mode)
            return


def _ids_json(values: Iterable) -> str:
    return json.dumps(list(values))


# -- reads ------------------------------------------------------------------------------------

def existing_chunks(conn: sqlite3.Connection, fingerprint: str, message_ids: Sequence[int],
                    *, with_terms: bool = False) -> dict[int, dict]:
    """{message_id: {chunk_index: content_hash}} for the given messages. ``with_terms``: a chunk
    stored without latent terms counts as missing (its hash is reported as ``""``)."""
    out: dict[int, dict] = {}
    rows = conn.execute(
        "SELECT message_id, chunk_index, content_hash, terms IS NOT NULL FROM chunks WHERE model_fingerprint = ?"
        " AND message_id IN (SELECT value FROM json_each(?))",
        (fingerprint, _ids_json(message_ids)),
    )
    for message_id, index, digest, has_terms in rows:
        out.setdefault(message_id, {})[index] = digest if has_terms or not with_terms else ""
    return out


def indexed_message_ids(conn: sqlite3.Connection, fingerprint: str, session_ids: Sequence[str] | None) -> set[int]:
    sql = "SELECT DISTINCT message_id FROM chunks WHERE model_fingerprint = ?"
    params: tuple = (fingerprint,)
    if session_ids is not None:
        sql += " AND session_id IN (SELECT value FROM json_each(?))"
        params += (_ids_json(session_ids),)
    return {row[0] for row in conn.execute(sql, params)}


def scope_counts(conn: sqlite3.Connection, fingerprint: str, session_ids: Sequence[str] | None) -> tuple[int, int]:
    """(distinct messages, chunks) indexed under ``fingerprint`` for these sessions."""
    sql = "SELECT COUNT(DISTINCT message_id), COUNT(*) FROM chunks WHERE model_fingerprint = ?"
    params: tuple = (fingerprint,)
    if session_ids is not None:
        sql += " AND session_id IN (SELECT value FROM json_each(?))"
        params += (_ids_json(session_ids),)
    messages, chunks = conn.execute(sql, params).fetchone()
    return int(messages), int(chunks)


_CHUNK_ROWS = "SELECT id, session_id, message_id, vector, terms FROM chunks WHERE model_fingerprint = ?"
_IN_SESSIONS = " AND session_id IN (SELECT value FROM json_each(?))"
# A scope's chunks through chunks_by_session, sorted afterwards. Left to itself SQLite picks
# chunks_by_model for ``ORDER BY id`` and reads every chunk of the profile to keep the scope's:
# 1.2–1.6 s for a 10k-message project in a 1M-message store, where the scope's own rows take ~0.1 s.
_SCOPE_CHUNK_ROWS = ("SELECT id, session_id, message_id, vector, terms FROM chunks INDEXED BY chunks_by_session"
                     " WHERE model_fingerprint = ?" + _IN_SESSIONS)


def chunks_after(conn: sqlite3.Connection, fingerprint: str, after_id: int, sessions: Iterable[str] | None = None):
    """Cursor of (id, session_id, message_id, vector, terms) in id order, for the in-memory matrix;
    ``sessions``: only theirs (a scope's matrix, read through ``chunks_by_session``)."""
    if sessions is None:
        return conn.execute(_CHUNK_ROWS + " AND id > ? ORDER BY id", (fingerprint, after_id))
    return conn.execute(_SCOPE_CHUNK_ROWS + " AND id > ? ORDER BY id",
                        (fingerprint, _ids_json(sorted(sessions)), after_id))


def chunks_upto(conn: sqlite3.Connection, fingerprint: str, upto_id: int, sessions: Iterable[str]):
    """The chunks of ``sessions`` with an id up to ``upto_id``: sessions that joined a loaded scope."""
    return conn.execute(_SCOPE_CHUNK_ROWS + " AND id <= ? ORDER BY id",
                        (fingerprint, _ids_json(sorted(sessions)), upto_id))


def count_chunks(conn: sqlite3.Connection, fingerprint: str, sessions: Iterable[str] | None = None) -> int:
    if sessions is None:
        return conn.execute("SELECT COUNT(*) FROM chunks WHERE model_fingerprint = ?", (fingerprint,)).fetchone()[0]
    return conn.execute("SELECT COUNT(*) FROM chunks WHERE model_fingerprint = ?" + _IN_SESSIONS,
                        (fingerprint, _ids_json(sorted(sessions)))).fetchone()[0]


def generation(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def markers(conn: sqlite3.Connection, fingerprint: str, chunker: str) -> dict[str, int]:
    """{scope: last_message_id}; scope ``*`` covers every session."""
    rows = conn.execute(
        "SELECT scope, last_message_id FROM progress WHERE fingerprint = ? AND chunker = ?", (fingerprint, chunker)
    )
    return dict(rows.fetchall())


def model_dim(conn: sqlite3.Connection, fingerprint: str) -> int | None:
    row = conn.execute("SELECT dim FROM models WHERE fingerprint = ?", (fingerprint,)).fetchone()
    return row[0] if row else None


# -- writes -----------------------------------------------------------------------------------

def write_batch(
    conn: sqlite3.Connection,
    fingerprint: str,
    dim: int | None,
    rows: Sequence[ChunkRow],
    stale: Sequence[tuple[int, int]],
    new_markers: dict[str, int],
    chunker: str,
    out_of_recall: Callable[[Sequence[int]], set[int]] | None = None,
) -> None:
    """One transaction: drop stale (message_id, chunk_index) pairs, insert rows, advance markers.
    Replaced chunks get new ids (delete + insert) so readers that load by id see them. Rows of
    messages ``out_of_recall`` names, asked inside the transaction, are not written
    (``embedding/forgetting.py``)."""
    now = time.time()
    conn.execute("BEGIN IMMEDIATE")
    try:
        if out_of_recall is not None and rows:
            out = out_of_recall(sorted({r.message_id for r in rows}))
            rows = [r for r in rows if r.message_id not in out]
        known = model_dim(conn, fingerprint)
        if rows and known is None:
            conn.execute("INSERT INTO models(fingerprint, dim, created_at) VALUES (?, ?, ?)", (fingerprint, dim, now))
        elif rows and known != dim:
            raise DimensionMismatch(f"{fingerprint}: the index holds {known}-d vectors, the provider returned {dim}-d")
        if stale:
            conn.executemany(
                "DELETE FROM chunks WHERE model_fingerprint = ? AND message_id = ? AND chunk_index = ?",
                [(fingerprint, m, i) for m, i in stale],
            )
            _bump_generation(conn)
        conn.executemany(
            "INSERT OR IGNORE INTO chunks(session_id, message_id, chunk_index, content_hash, model_fingerprint, vector,"
            " terms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(r.session_id, r.message_id, r.chunk_index, r.content_hash, fingerprint, r.vector, r.terms, now)
             for r in rows],
        )
        _set_markers(conn, fingerprint, chunker, new_markers, now)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _set_markers(conn: sqlite3.Connection, fingerprint: str, chunker: str, new: dict[str, int], now: float) -> None:
    conn.executemany(
        "INSERT INTO progress(fingerprint, chunker, scope, last_message_id, updated_at) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT(fingerprint, chunker, scope) DO UPDATE SET"
        " last_message_id = MAX(last_message_id, excluded.last_message_id), updated_at = excluded.updated_at",
        [(fingerprint, chunker, scope, last, now) for scope, last in new.items()],
    )


def set_markers(conn: sqlite3.Connection, fingerprint: str, chunker: str, new: dict[str, int]) -> None:
    if new:
        with _transaction(conn):
            _set_markers(conn, fingerprint, chunker, new, time.time())


def delete_messages(conn: sqlite3.Connection, fingerprint: str, message_ids: Sequence[int]) -> int:
    """Forget messages that were deleted, rewound or archived in state.db."""
    if not message_ids:
        return 0
    with _transaction(conn):
        cur = conn.execute(
            "DELETE FROM chunks WHERE model_fingerprint = ? AND message_id IN (SELECT value FROM json_each(?))",
            (fingerprint, _ids_json(message_ids)),
        )
        if cur.rowcount:
            _bump_generation(conn)
    return cur.rowcount


def clear_fingerprint(conn: sqlite3.Connection, fingerprint: str) -> None:
    """Drop every vector and marker of one model (``hermes recall index --rebuild``)."""
    with _transaction(conn):
        conn.execute("DELETE FROM chunks WHERE model_fingerprint = ?", (fingerprint,))
        conn.execute("DELETE FROM progress WHERE fingerprint = ?", (fingerprint,))
        conn.execute("DELETE FROM models WHERE fingerprint = ?", (fingerprint,))
        _bump_generation(conn)


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))


def _bump_generation(conn: sqlite3.Connection) -> None:
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")


class _transaction:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> None:
        self.conn.execute("ROLLBACK" if exc_type else "COMMIT")
