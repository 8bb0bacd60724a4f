"""Vector encoding and the in-memory matrix that semantic search scans.

Encoding: each unit vector is stored as a float32 scale plus int8 components (absmax per
vector): a quarter of the memory of float32 at a cosine error below 0.002.

Scanning: rows are converted to float32 in cache-sized blocks (``_BLOCK``) and scored with
``np.matmul`` (BLAS sgemv) block by block. The measurements behind both choices, and the
alternatives dropped (einsum on bigger blocks, float16 storage), are in benchmarks/README.md,
"Constants chosen by measurement".

A search reads only its scope: one :class:`VectorIndex` per (embeddings.db, fingerprint, scope)
holds the vectors and latent terms of that scope's sessions alone, read through the
``chunks_by_session`` index, so the first search of a 10k-message project in a 1M-message profile
reads 10k rows, not 1M, and memory follows the scopes searched, not the profile (the least
recently searched scopes are dropped past ``CACHE_BYTES``). Each follows the database
incrementally: rows with a higher chunk id are appended, sessions that join the scope are read
when they do, and a bumped ``generation`` (deletes/replacements) triggers a full reload.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from . import damage, store
from .terms import TermIndex

# Rows converted to float32 and scored at once: a 1.5 MB block stays in cache.
_BLOCK = 1024
_PAGE = 8192
# Scope matrices kept for the next search: ~10 MB for each 10k messages (int8 vectors and
# latent terms); past this the least recently searched scopes are read again when asked.
CACHE_BYTES = 512 * 1024 * 1024


def encode(matrix: np.ndarray) -> list[bytes]:
    """Rows of float vectors -> blobs of (float32 scale, int8[dim])."""
    matrix = np.asarray(matrix, dtype=np.float32)
    scales = np.abs(matrix).max(axis=1) / 127.0
    scales[scales == 0] = 1.0
    q8 = np.clip(np.rint(matrix / scales[:, None]), -127, 127).astype(np.int8)
    scale_bytes = scales.astype("<f4")
    return [scale_bytes[i].tobytes() + q8[i].tobytes() for i in range(len(q8))]


def decode(blobs: list[bytes], dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Blobs -> (int8 matrix (n, dim), float32 scales (n,))."""
    if not blobs:
        return np.zeros((0, dim), np.int8), np.zeros(0, np.float32)
    raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), 4 + dim)
    scales = raw[:, :4].copy().view("<f4").reshape(-1).astype(np.float32)
    return raw[:, 4:].view(np.int8).copy(), scales


def score_rows(q8: np.ndarray, scales: np.ndarray, query: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Cosine scores of ``query`` against all rows (``rows=None``) or the given row indices."""
    query = np.asarray(query, dtype=np.float32)
    count = len(q8) if rows is None else len(rows)
    out = np.empty(count, np.float32)
    buf = np.empty((min(_BLOCK, max(count, 1)), q8.shape[1]), np.float32)
    for start in range(0, count, _BLOCK):
        stop = min(count, start + _BLOCK)
        block = buf[: stop - start]
        src = q8[start:stop] if rows is None else q8[rows[start:stop]]
        np.copyto(block, src, casting="unsafe")
        np.matmul(block, query, out=out[start:stop])
    out *= scales if rows is None else scales[rows]
    return out


class VectorIndex:
    """The vectors of one fingerprint — of every session, or of a scope's ``sessions`` — with per-row
    message id and session code."""

    def __init__(self, db_path: Path, fingerprint: str, sessions: Iterable[str] | None = None) -> None:
        self.db_path = Path(db_path)
        self.fingerprint = fingerprint
        self.scope: frozenset[str] | None = None if sessions is None else frozenset(sessions)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._identity: tuple[int, int] | None = None
        self._data_version: int | None = None
        self._generation: int | None = None
        self._reset(0)

    def _reset(self, capacity: int, dim: int = 0) -> None:
        self.n = 0
        self.last_chunk_id = 0
        self.sessions: list[str] = []
        self.session_codes: dict[str, int] = {}
        self._q8 = np.zeros((capacity, dim), np.int8)
        self._scales = np.zeros(capacity, np.float32)
        self._messages = np.zeros(capacity, np.int64)
        self._session_of = np.zeros(capacity, np.int32)
        self.terms = TermIndex()

    def __len__(self) -> int:
        return self.n

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(a.nbytes for a in (self._q8, self._scales, self._messages, self._session_of)) + self.terms.nbytes

    # -- loading ------------------------------------------------------------------------------

    def refresh(self, sessions: Iterable[str] | None = None) -> None:
        """Bring the matrix up to date with embeddings.db (cheap when nothing changed); ``sessions``:
        the scope as it is now, whose sessions not read yet are read (a new conversation)."""
        with self._lock:
            try:
                self._refresh(sessions)
            except sqlite3.DatabaseError as exc:
                self._generation = None  # whatever was read before the error is read again next time
                raise store.unreadable(self.db_path, exc) from exc

    def _refresh(self, sessions: Iterable[str] | None) -> None:
        conn = self._connection()
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        joined = frozenset() if self.scope is None or sessions is None else frozenset(sessions) - self.scope
        if version == self._data_version and self._generation is not None and not joined:
            return
        conn.execute("BEGIN")
        try:
            gen = store.generation(conn)
            whole = gen != self._generation
            if whole:
                if self.scope is not None and sessions is not None:
                    self.scope = frozenset(sessions)  # sessions moved away are not read again
                self._reset(store.count_chunks(conn, self.fingerprint, self.scope),
                            store.model_dim(conn, self.fingerprint) or 0)
            elif joined:
                self._load(store.chunks_upto(conn, self.fingerprint, self.last_chunk_id, joined))
                self.scope = self.scope | joined
            self._load(store.chunks_after(conn, self.fingerprint, self.last_chunk_id, self.scope))
            self.terms.settle(whole)
            self._generation = gen
            self._data_version = version
        finally:
            conn.execute("COMMIT")

    def _connection(self) -> sqlite3.Connection:
        """The open connection while it reads the file now at ``db_path``: after ``--rebuild`` moved
        the old one aside (or a restore replaced it), read the new file from scratch."""
        identity = damage.identity(self.db_path)
        if self._conn is not None and identity != self._identity:
            self._conn.close()
            self._conn, self._generation = None, None
        if self._conn is None:
            self._conn = sqlite3.connect(self.db_path, timeout=10, isolation_level=None, check_same_thread=False)
            self._identity = identity
        return self._conn

    def _load(self, cursor) -> None:
        # Pages keep the peak small: a full 100k-row fetchall holds ~60 MB of Python objects.
        while page := cursor.fetchmany(_PAGE):
            blobs = [row[3] for row in page]
            dim = len(blobs[0]) - 4
            q8, scales = decode(blobs, dim)
            codes = np.fromiter((self._code(row[1]) for row in page), np.int32, len(page))
            messages = np.fromiter((row[2] for row in page), np.int64, len(page))
            self.terms.append(self.n, [row[4] for row in page])
            self._append(q8, scales, messages, codes)
            self.last_chunk_id = max(self.last_chunk_id, page[-1][0])

    def _code(self, session_id: str) -> int:
        code = self.session_codes.get(session_id)
        if code is None:
            code = self.session_codes[session_id] = len(self.sessions)
            self.sessions.append(session_id)
        return code

    def _append(self, q8: np.ndarray, scales: np.ndarray, messages: np.ndarray, codes: np.ndarray) -> None:
        need = self.n + len(q8)
        if need > len(self._q8) or self._q8.shape[1] != q8.shape[1]:
            self._grow(max(need, int(len(self._q8) * 1.5) + 1024), q8.shape[1])
        s = slice(self.n, need)
        self._q8[s], self._scales[s], self._messages[s], self._session_of[s] = q8, scales, messages, codes
        self.n = need

    def _grow(self, capacity: int, dim: int) -> None:
        # New arrays, never in-place resize: a concurrent search keeps reading its snapshot.
        def grown(old: np.ndarray, shape: tuple) -> np.ndarray:
            new = np.zeros(shape, old.dtype)
            if old.shape[1:] == shape[1:]:
                new[: self.n] = old[: self.n]
            return new

        self._q8 = grown(self._q8, (capacity, dim))
        self._scales = grown(self._scales, (capacity,))
        self._messages = grown(self._messages, (capacity,))
        self._session_of = grown(self._session_of, (capacity,))

    # -- searching ----------------------------------------------------------------------------

    def scan(self, query: np.ndarray, session_ids: Iterable[str]) -> Scan:
        """The dense cosine of ``query`` against every row of these sessions, scored once: the
        search's best messages, the cosines of hits found another way and the conversations' best
        passages all read it (:class:`Scan`)."""
        with self._lock:
            n, q8, scales = self.n, self._q8, self._scales
            messages, session_of, sessions = self._messages, self._session_of, list(self.sessions)
            known = dict(self.session_codes)
        codes = [known[s] for s in session_ids if s in known]
        if not n or not codes or q8.shape[1] != len(query):
            return Scan.EMPTY
        rows = _rows_of(codes, len(sessions), session_of[:n])
        if not len(rows):
            return Scan.EMPTY
        # Scoring everything and picking is cheaper than gathering when most rows are in scope.
        if len(rows) * 2 > n:
            scores = score_rows(q8[:n], scales[:n], query)[rows]
        else:
            scores = score_rows(q8, scales, query, rows)
        return Scan(scores, messages[rows], session_of[rows], sessions, known)

    def search(self, query: np.ndarray, session_ids: Iterable[str], limit: int) -> list[tuple[int, str, float]]:
        """Best ``limit`` messages of these sessions: (message_id, session_id, max chunk score)."""
        return self.scan(query, session_ids).top(limit)

    def search_terms(self, query_terms: np.ndarray, session_ids: Iterable[str],
                     limit: int) -> list[tuple[int, str, float]]:
        """Best ``limit`` messages of these sessions by latent terms (``terms.py``): (message_id,
        session_id, max chunk term cosine); empty when no row has terms."""
        with self._lock:
            n, messages, session_of, sessions = self.n, self._messages, self._session_of, list(self.sessions)
            codes = [self.session_codes[s] for s in session_ids if s in self.session_codes]
            terms = self.terms.snapshot()
        if not n or not codes or limit <= 0 or not terms.rows_with_terms:
            return []
        rows = _rows_of(codes, len(sessions), session_of[:n])
        scores = terms.scores(query_terms, n)[rows]
        keep = scores > 0
        return _top_messages(scores[keep], messages[rows][keep], session_of[rows][keep], sessions, limit) \
            if keep.any() else []

    def passages(self, query: np.ndarray, session_ids: Iterable[str], width: int) -> dict[str, float]:
        """Each session's best passage by meaning (:meth:`Scan.passages`)."""
        session_ids = list(session_ids)
        return self.scan(query, session_ids).passages(session_ids, width)


class Scan:
    """One query's dense cosines against the rows of a scope's sessions (``VectorIndex.scan``), row
    by row in the index's order: each row's score, message id and session code."""

    EMPTY: Scan

    def __init__(self, scores: np.ndarray, messages: np.ndarray, codes: np.ndarray, sessions: list[str],
                 session_codes: dict[str, int]) -> None:
        self.scores, self.messages, self.codes = scores, messages, codes
        self.sessions, self.session_codes = sessions, session_codes

    def top(self, limit: int) -> list[tuple[int, str, float]]:
        """Best ``limit`` messages: (message_id, session_id, max chunk score)."""
        if limit <= 0 or not len(self.scores):
            return []
        return _top_messages(self.scores, self.messages, self.codes, self.sessions, limit)

    def cosines(self, message_ids: Iterable[int]) -> dict[int, float]:
        """The dense cosine of given messages (max over their chunks), for hits found another way."""
        wanted = np.fromiter(message_ids, np.int64)
        if not len(wanted) or not len(self.scores):
            return {}
        rows = np.flatnonzero(np.isin(self.messages, wanted))
        out: dict[int, float] = {}
        for mid, score in zip(self.messages[rows].tolist(), self.scores[rows].tolist(), strict=True):
            out[mid] = max(score, out.get(mid, -1.0))
        return out

    def passages(self, session_ids: Iterable[str], width: int) -> dict[str, float]:
        """Each of these sessions' best run of ``width`` consecutive messages by their mean dense
        cosine (a message's best chunk; messages in id order, i.e. as written): a passage about the
        question — a question and its answer, a topic over a few turns — rather than one turn
        (search/conversations.py, ``passage_order``). Sessions with fewer messages: all of them."""
        codes = [self.session_codes[s] for s in session_ids if s in self.session_codes]
        if not codes or width <= 0:
            return {}
        wanted = np.zeros(len(self.sessions), bool)
        wanted[codes] = True
        rows = np.flatnonzero(wanted[self.codes])
        if not len(rows):
            return {}
        scores, mids, codes_of = self.scores[rows], self.messages[rows], self.codes[rows]
        order = np.lexsort((-scores, mids, codes_of))  # by session, then message, best chunk first
        mids, codes_of, scores = mids[order], codes_of[order], scores[order]
        first = np.ones(len(mids), bool)
        first[1:] = (mids[1:] != mids[:-1]) | (codes_of[1:] != codes_of[:-1])
        codes_of, scores = codes_of[first], scores[first].astype(np.float64)
        bounds = np.flatnonzero(np.r_[True, codes_of[1:] != codes_of[:-1], True])
        out: dict[str, float] = {}
        for start, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            run = min(width, stop - start)
            sums = np.convolve(scores[start:stop], np.ones(run), "valid")
            out[self.sessions[codes_of[start]]] = float(sums.max() / run)
        return out


Scan.EMPTY = Scan(np.zeros(0, np.float32), np.zeros(0, np.int64), np.zeros(0, np.int32), [], {})


def _rows_of(codes: list[int], n_sessions: int, session_of: np.ndarray) -> np.ndarray:
    wanted = np.zeros(n_sessions, bool)
    wanted[codes] = True
    return np.flatnonzero(wanted[session_of])


def _top_messages(scores, messages, session_of, sessions, limit) -> list[tuple[int, str, float]]:
    """Top chunks -> distinct messages by max score; widens the chunk pool until enough."""
    pool = min(len(scores), limit * 4)
    while True:
        top = np.argpartition(-scores, pool - 1)[:pool] if pool < len(scores) else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        seen: dict[int, tuple[int, str, float]] = {}
        for i in top:
            mid = int(messages[i])
            if mid not in seen:
                seen[mid] = (mid, sessions[session_of[i]], float(scores[i]))
                if len(seen) == limit:
                    return list(seen.values())
        if pool >= len(scores):
            return list(seen.values())
        pool = min(len(scores), pool * 4)


_INDEXES: OrderedDict[tuple[str, str, str | None], VectorIndex] = OrderedDict()
_INDEXES_LOCK = threading.Lock()


def get_index(db_path: Path, fingerprint: str, scope: str | None = None,
              sessions: Iterable[str] | None = None) -> VectorIndex:
    """The matrix of one embeddings.db and fingerprint, refreshed: of the scope named ``scope``
    (its ``sessions`` as they are now), or without a scope of every session (indexing benchmarks)."""
    key = (str(Path(db_path).resolve()), fingerprint, scope)
    members = None if scope is None else frozenset(sessions or ())
    with _INDEXES_LOCK:
        index = _INDEXES.get(key)
        if index is None:
            index = _INDEXES[key] = VectorIndex(Path(db_path), fingerprint, members)
        _INDEXES.move_to_end(key)
    index.refresh(members)
    _evict(keep=key)
    return index


def _evict(keep: tuple[str, str, str | None]) -> None:
    """Drop the least recently searched scopes past ``CACHE_BYTES`` (never the one just read)."""
    with _INDEXES_LOCK:
        total = sum(index.nbytes for index in _INDEXES.values())
        for key in list(_INDEXES):
            if total <= CACHE_BYTES:
                break
            if key != keep:
                total -= _INDEXES.pop(key).nbytes


def drop_indexes() -> None:
    """Forget cached matrices (tests; a long-lived process after --rebuild elsewhere is fine)."""
    with _INDEXES_LOCK:
        _INDEXES.clear()
