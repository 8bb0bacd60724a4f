"""Incremental indexing: eligible state.db messages -> chunks -> vectors in embeddings.db.

A run walks messages newer than the stored marker in id order (ids are AUTOINCREMENT), skips
chunks already stored with the same content hash under the same fingerprint, embeds the rest in
batches and writes each batch together with the advanced marker in one transaction. Batches
hold whole messages, so the marker never passes a half-written message: a run killed at any
point resumes where it stopped and ends identical to a from-scratch build.

With ``reconcile`` (the CLI default) a run also compares every eligible id with the indexed ids:
vectors of messages deleted, rewound or archived since are dropped, and messages that became
eligible again (un-archived session, restored rewind) are embedded.

A producer thread reads SQLite, chunks and hash-checks the next batch while the model embeds
the current one, so the pipeline costs only a few percent of raw model throughput.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from ..stores import faults, forgotten, hermes_db
from ..stores.messages import is_summary_text, message_text
from . import damage, forgetting, history, store
from .chunking import Chunk, chunk_text
from .consent import ALL_PROJECTS, consent_state
from .providers import Embedder, ProviderError, make_embedder
from .runlock import Run, RunBusy, hold_run
from .settings import EmbeddingSettings
from .vectors import encode

log = logging.getLogger(__name__)

_GROUP = 64  # messages per existing-hash lookup
_MAX_BATCH_MESSAGES = 512  # flush even when every chunk was skipped, so markers keep moving


class StopSignal(Protocol):
    """What a run asks after each batch: a ``threading.Event``, or the catch-up's "an operator waits"."""

    def is_set(self) -> bool: ...


@dataclass
class IndexProgress:
    messages_done: int
    messages_total: int | None
    chunks_embedded: int
    chunks_skipped: int


@dataclass
class IndexStats:
    status: str  # done | stopped | limited | consent_required | busy | unavailable
    fingerprint: str
    messages_scanned: int = 0
    chunks_embedded: int = 0
    chunks_skipped: int = 0
    chunks_deleted: int = 0
    batches: int = 0
    seconds: float = 0.0
    detail: str = ""

    @property
    def passages_per_second(self) -> float:
        return self.chunks_embedded / self.seconds if self.seconds else 0.0


@dataclass
class _Message:
    id: int
    session_id: str
    tail: bool  # part of the id-ordered walk (advances markers) vs. a reconciliation repair
    todo: list[Chunk]
    stale: list[tuple[int, int]]
    skipped: int


@dataclass
class _Batch:
    messages: list[_Message] = field(default_factory=list)
    texts: int = 0


def chunker_key(settings: EmbeddingSettings) -> str:
    """Markers are per chunking too: new chunk sizes or composition rescan (and re-embed only what
    changed). ``alone``: a chunk holds its message's text only (no previous-turn context);
    ``fenced``: prose and fenced code blocks are chunked apart (chunking.py), so an index built
    before is walked again and only messages with code are embedded anew; ``terms``: the local
    model also stores each chunk's latent terms (``terms.py``), so an index built before them is
    walked again and its chunks get terms."""
    terms = settings.latent_terms and not settings.remote
    return f"{settings.chunk_size}/{settings.chunk_overlap}/alone/fenced" + ("/terms" if terms else "")


def build_index(
    home: Path,
    settings: EmbeddingSettings,
    *,
    session_ids: Sequence[str] | None = None,
    projects: Iterable[str] = (),
    profile: str | None = None,
    progress: Callable[[IndexProgress], None] | None = None,
    stop_event: StopSignal | None = None,
    embedder: Embedder | None = None,
    limit: int | None = None,
    reconcile: bool = True,
    rebuild: bool = False,
    kind: str = "index",
) -> IndexStats:
    """Index eligible messages (all sessions, or ``session_ids`` belonging to ``projects``).

    Never raises for expected conditions; the outcome is ``IndexStats.status``. A remote
    provider is not contacted unless ``consent.json`` covers it and the projects. ``kind`` names
    the run for whoever waits for it (``runlock.describe``).
    """
    home = Path(home)
    embedder = embedder or make_embedder(home, settings)
    stats = IndexStats(status="done", fingerprint=embedder.fingerprint)
    if embedder.remote or settings.remote:
        needed = [ALL_PROJECTS] if session_ids is None else list(projects)
        if consent_state(home, settings, profile, needed) != "granted":
            stats.status = "consent_required"
            stats.detail = f"sending history to {settings.endpoint} needs the user's consent (hermes recall consent)"
            return stats
    scope = None if session_ids is None else sorted(set(session_ids))
    started = time.monotonic()
    try:
        if not rebuild and (known := damage.seen(store.store_path(home))):
            raise store.StoreCorrupt(known)  # never write into a file a reader found damaged
        with hold_run(home, embedder.fingerprint, scope, kind=kind) as run:
            _Run(home, settings, embedder, scope, stats).execute(_published(run, progress), stop_event, limit,
                                                                 reconcile, rebuild)
    except RunBusy as exc:
        stats.status, stats.detail = "busy", str(exc)
    except (ProviderError, hermes_db.NoDatabase, store.DimensionMismatch) as exc:
        stats.status, stats.detail = "unavailable", str(exc)
    except store.StoreCorrupt as exc:
        stats.status, stats.detail = "corrupt", str(exc)
    except (sqlite3.DatabaseError, OSError, hermes_db.Unavailable) as exc:
        stats.status, stats.detail = _stopped_by(home, exc)
    stats.seconds = time.monotonic() - started
    return stats


def _stopped_by(home: Path, exc: BaseException) -> tuple[str, str]:
    """(status, detail) of a run a file stopped: embeddings.db damaged (checked, not guessed: the
    error may be state.db's), or the disk, a lock, another store — each with its file and its fix.
    Every batch written before it is kept."""
    db = store.store_path(home)
    if faults.is_corruption(exc):
        known = damage.confirm(db, exc)
        return ("corrupt", known) if known else ("unavailable", f"a database this run reads is damaged ({exc})")
    if isinstance(exc, hermes_db.Unavailable):
        fault = exc
    else:
        fault = faults.of(db, exc, writing=True) if isinstance(exc, sqlite3.Error) else faults.unattributed(exc, home)
    return "unavailable", f"{fault}; {fault.recovery}" if isinstance(fault, faults.StoreFault) else str(fault)


def _published(run: Run, progress: Callable[[IndexProgress], None] | None) -> Callable[[IndexProgress], None]:
    """The caller's progress callback, and the run's note for whoever waits for it."""
    def both(p: IndexProgress) -> None:
        run.progress(p.messages_done, p.messages_total)
        if progress is not None:
            progress(p)

    return both


class _Run:
    def __init__(self, home: Path, settings: EmbeddingSettings, embedder: Embedder,
                 scope: list[str] | None, stats: IndexStats) -> None:
        self.home, self.settings, self.embedder, self.scope, self.stats = home, settings, embedder, scope, stats
        self.fp = embedder.fingerprint
        self.chunker = chunker_key(settings)
        self.checker: sqlite3.Connection | None = None
        # Only a provider that has latent terms asks for them (a remote one is never called here).
        self.terms = settings.latent_terms and embedder.embed_terms([]) is not None

    def execute(self, progress, stop_event, limit, reconcile, rebuild) -> None:
        if rebuild:  # a damaged index cannot be cleared row by row: start over beside it
            try:
                store.check(self.home)
            except store.StoreCorrupt:
                store.move_aside(self.home)
        state = history.connect_ro(self.home)
        try:
            db = store.connect(self.home)
        except BaseException:
            state.close()
            raise
        try:
            if rebuild:
                store.clear_fingerprint(db, self.fp)
            snapshot = history.max_message_id(state)
            marks = store.markers(db, self.fp, self.chunker)
            lower, start_of = self._starts(marks)
            missing = self._reconcile(state, db, snapshot, lower) if reconcile else np.zeros(0, np.int64)
            total = None
            if progress is not None:
                total = len(missing) + history.count_after(state, lower, snapshot, self.scope)
                if limit is not None:
                    total = min(total, limit + len(missing))
            rows = self._rows(state, missing, lower, snapshot, None if reconcile else start_of)
            finished = self._pipeline(db, rows, limit, progress, total, stop_event)
            if finished:
                scopes = [store.ALL] if self.scope is None else self.scope
                store.set_markers(db, self.fp, self.chunker, dict.fromkeys(scopes, snapshot))
            if forgotten.load(self.home).pending:  # a forget killed before its vectors went
                self.stats.chunks_deleted += forgetting.finish_pending(self.home)["vectors_deleted"]
        finally:
            state.close()
            db.close()
            if self.checker is not None:
                self.checker.close()

    def _out_of_recall(self, ids: Sequence[int]) -> set[int]:
        """Asked inside a batch's write (``forgetting.out_of_recall``), on a connection of its own:
        the producer thread reads rows on the run's."""
        if self.checker is None:
            self.checker = history.connect_ro(self.home)
        return forgetting.out_of_recall(self.checker, self.home, ids)

    def _starts(self, marks: dict[str, int]):
        base = marks.get(store.ALL, 0)

        def start_of(session_id: str) -> int:
            return max(base, marks.get(session_id, 0))

        if self.scope is None:
            return base, start_of
        return min((start_of(s) for s in self.scope), default=base), start_of

    def _reconcile(self, state, db, snapshot: int, lower: int) -> np.ndarray:
        eligible = history.eligible_ids(state, snapshot, self.scope)
        indexed = np.fromiter(store.indexed_message_ids(db, self.fp, self.scope), np.int64)
        gone = np.setdiff1d(indexed, eligible)
        self.stats.chunks_deleted = store.delete_messages(db, self.fp, gone.tolist())
        store.set_meta(db, "reconciled_at", str(time.time()))
        return np.setdiff1d(eligible[eligible <= lower], indexed)

    def _rows(self, state, missing, lower, snapshot, start_of) -> Iterator[tuple[bool, tuple]]:
        for row in history.rows_by_id(state, missing.tolist()):
            yield False, row
        for row in history.rows_after(state, lower, snapshot, self.scope):
            if start_of is None or row[0] > start_of(row[1]):
                yield True, row

    # -- pipeline -----------------------------------------------------------------------------

    def _pipeline(self, db, rows, limit, progress, total, stop_event) -> bool:
        """Embed and write batches; True when every row was processed."""
        batches: queue.Queue = queue.Queue(maxsize=2)
        cancel = threading.Event()
        producer = threading.Thread(target=self._produce, args=(rows, limit, batches, cancel),
                                    name="recall-index-prefetch", daemon=True)
        producer.start()
        done = 0
        try:
            while True:
                item = batches.get()
                if isinstance(item, BaseException):
                    raise item
                if item is None or isinstance(item, str):
                    if item == "limited":
                        self.stats.status = "limited"
                    return item is None
                if stop_event is not None and stop_event.is_set():
                    self.stats.status = "stopped"
                    return False
                self._write(db, item)
                done += len(item.messages)
                if progress is not None:
                    progress(IndexProgress(done, total, self.stats.chunks_embedded, self.stats.chunks_skipped))
        finally:
            cancel.set()
            while producer.is_alive():  # unblock a producer waiting on a full queue
                with contextlib.suppress(queue.Empty):
                    batches.get(timeout=0.05)

    def _produce(self, rows, limit, batches: queue.Queue, cancel: threading.Event) -> None:
        def put(item) -> bool:
            while not cancel.is_set():
                try:
                    batches.put(item, timeout=0.1)
                    return True
                except queue.Full:
                    continue
            return False

        try:
            lookup = store.connect(self.home)  # own connection: sqlite3 objects stay per thread
            try:
                end = None
                for batch in self._batches(lookup, rows, limit):
                    if isinstance(batch, str):
                        end = batch
                    elif not put(batch):
                        return
                put(end)
            finally:
                lookup.close()
        except BaseException as exc:  # handed to the consumer, which re-raises it
            put(exc)

    def _batches(self, lookup, rows, limit) -> Iterator[_Batch | str]:
        batch = _Batch()
        tail_seen = 0
        group: list[tuple[bool, tuple]] = []
        for item in rows:
            if item[0]:
                if limit is not None and tail_seen >= limit:
                    yield from self._flush(lookup, group, batch, final=True)
                    yield "limited"
                    return
                tail_seen += 1
            group.append(item)
            if len(group) >= _GROUP:
                yield from self._flush(lookup, group, batch)
                group = []
        yield from self._flush(lookup, group, batch, final=True)

    def _flush(self, lookup, group, batch: _Batch, final: bool = False) -> Iterator[_Batch]:
        existing = store.existing_chunks(lookup, self.fp, [row[0] for _, row in group],
                                         with_terms=self.terms) if group else {}
        for tail, (message_id, session_id, content, _previous) in group:
            msg = self._message(message_id, session_id, content, tail, existing.get(message_id, {}))
            batch.messages.append(msg)
            batch.texts += len(msg.todo)
            if batch.texts >= self.settings.batch_size or len(batch.messages) >= _MAX_BATCH_MESSAGES:
                yield _Batch(batch.messages, batch.texts)
                batch.messages, batch.texts = [], 0
        if final and batch.messages:
            yield _Batch(batch.messages, batch.texts)
            batch.messages, batch.texts = [], 0

    def _message(self, message_id: int, session_id: str, content: str, tail: bool,
                 existing: dict) -> _Message:
        text = message_text(content)
        chunks = [] if is_summary_text(text) else chunk_text(
            text, chunk_size=self.settings.chunk_size, overlap=self.settings.chunk_overlap,
            count_tokens=self.embedder.count_tokens)
        # Each message is embedded alone. Embedding it after the end of the turn before it
        # (tried earlier) let a reply outrank the very message it quoted: on LoCoMo-zh the tool's
        # semantic msg@5 fell from 0.90 (message level) to 0.59 once grouped by conversation, and
        # cross-lingual questions matched the neighbour of their evidence turn. Answers to a
        # question are pulled in after ranking instead (search/answers.py).
        wanted = {c.index: c.content_hash for c in chunks}
        todo = [c for c in chunks if existing.get(c.index) != c.content_hash]
        stale = [(message_id, i) for i, digest in existing.items() if wanted.get(i) != digest]
        return _Message(message_id, session_id, tail, todo, stale, len(chunks) - len(todo))

    def _write(self, db, batch: _Batch) -> None:
        texts = [c.text for m in batch.messages for c in m.todo]
        vectors = self.embedder.embed_passages(texts) if texts else None
        terms = iter((self.embedder.embed_terms(texts) if self.terms and texts else None) or [None] * len(texts))
        rows, stale, marks = [], [], {}
        blobs = iter(encode(vectors)) if vectors is not None else iter(())
        for m in batch.messages:
            rows.extend(store.ChunkRow(m.session_id, m.id, c.index, c.content_hash, next(blobs), next(terms))
                        for c in m.todo)
            stale.extend(m.stale)
            if m.tail:
                key = store.ALL if self.scope is None else m.session_id
                marks[key] = max(marks.get(key, 0), m.id)
            self.stats.chunks_skipped += m.skipped
        dim = None if vectors is None else int(vectors.shape[1])
        store.write_batch(db, self.fp, dim, rows, stale, marks, self.chunker,
                          out_of_recall=self._out_of_recall)
        self.stats.messages_scanned += len(batch.messages)
        self.stats.chunks_embedded += len(rows)
        self.stats.batches += 1
