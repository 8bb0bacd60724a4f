"""Bounded background indexing started by a search, so a live agent's index follows its new
messages without anyone running ``hermes recall index``.

Only for the local provider (nothing leaves the machine), only from a search (never from plugin
registration, which runs in every Hermes process), at most one thread per HERMES_HOME, and at
most ``CATCH_UP_LIMIT`` new messages per start so an un-indexed history of a million messages
does not pin the CPU of an API process; the next search continues where this one stopped.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path

from . import runlock, store
from .indexer import build_index
from .settings import EmbeddingSettings

log = logging.getLogger(__name__)

CATCH_UP_LIMIT = 1000
RECONCILE_EVERY = 15 * 60.0  # seconds between catch-ups that also repair deletions/un-archives

RETRY_AFTER = 60.0  # seconds before a catch-up a file stopped (full disk, damage) is tried again
_THREADS: dict[str, threading.Thread] = {}
_FAILED: dict[str, float] = {}  # home -> when its last catch-up was stopped by a file
_LOCK = threading.Lock()


def catch_up_running(home: Path) -> bool:
    thread = _THREADS.get(_key(home))
    return thread is not None and thread.is_alive()


def start_catch_up(home: Path, settings: EmbeddingSettings) -> bool:
    """Start (or keep) the background run for ``home``; False for remote providers."""
    if settings.remote:
        return False
    key = _key(home)
    with _LOCK:
        thread = _THREADS.get(key)
        if key in _FAILED and time.monotonic() - _FAILED[key] < RETRY_AFTER:
            return False  # a full disk or a damaged index: not every search again (status says why)
        if thread is None or not thread.is_alive():
            thread = threading.Thread(target=_run, args=(Path(home), settings), name="recall-catch-up", daemon=True)
            _THREADS[key] = thread
            thread.start()
    return True


def wait_for_catch_up(home: Path, timeout: float | None = None) -> bool:
    """Join the background run (tests, benchmarks, orderly shutdown); True if none left."""
    thread = _THREADS.get(_key(home))
    if thread is not None:
        thread.join(timeout)
        return not thread.is_alive()
    return True


class _OperatorWaits:
    """The catch-up's stop signal: a ``hermes recall index`` waits for the lock (runlock.py). The
    indexer asks after each batch; the operator's run then does this work and the rest."""

    def __init__(self, home: Path) -> None:
        self.home = home

    def is_set(self) -> bool:
        return runlock.operator_waiting(self.home)


def _run(home: Path, settings: EmbeddingSettings) -> None:
    key = _key(home)
    try:
        stats = build_index(home, settings, limit=CATCH_UP_LIMIT, reconcile=_reconcile_due(home),
                            kind=runlock.CATCH_UP, stop_event=_OperatorWaits(home))
        log.debug("background catch-up %s: %d chunks in %.1fs", stats.status, stats.chunks_embedded, stats.seconds)
    except Exception:  # a background helper must never take the host process down
        log.exception("background embedding catch-up failed")
        stats = None
    if stats is None or stats.status in ("unavailable", "corrupt"):
        if stats is not None:
            log.warning("project-history-recall: the background catch-up stopped: %s", stats.detail)
        with _LOCK:
            _FAILED[key] = time.monotonic()
    else:
        with _LOCK:
            _FAILED.pop(key, None)


def _reconcile_due(home: Path) -> bool:
    if not store.store_path(home).exists():
        return False
    try:
        conn = store.connect(home)
    except (store.StoreCorrupt, sqlite3.Error, OSError):
        return False  # the run itself meets it and says what it is
    try:
        last = store.get_meta(conn, "reconciled_at")
    finally:
        conn.close()
    return last is None or time.time() - float(last) > RECONCILE_EVERY


def _key(home: Path) -> str:
    return str(Path(home).resolve())
