"""How much of a scope is indexed: the cheap check every search runs, and the full count for
``hermes recall status``.

The cheap check compares, per session in scope, the newest eligible message id with the index
marker that covers it. It only walks ids above the lowest marker, so once the index is current
it reads a handful of rows whatever the scope size. (Messages that become eligible again below
the marker - an un-archived session - are caught by the next reconciling index run, not here.)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import history, store
from .indexer import chunker_key
from .settings import EmbeddingSettings


def open_store_if_exists(home: Path) -> sqlite3.Connection | None:
    """Searches never create embeddings.db; an absent one simply means nothing is indexed."""
    return store.connect(home) if store.store_path(home).exists() else None


# Last answer per scope, reused while neither state.db nor the index markers moved: with
# per-session markers (``hermes recall index --project``) the lowest marker of a big scope can be
# old, and walking every id above it cost ~80 ms per search on a 1M-message profile.
_PENDING_CACHE: dict[tuple, dict[str, int]] = {}
_PENDING_CACHE_MAX = 64


def pending_sessions(
    state: sqlite3.Connection, db: sqlite3.Connection | None, fingerprint: str,
    settings: EmbeddingSettings, session_ids: Sequence[str],
) -> dict[str, int]:
    """{session_id: newest unindexed eligible message id} for sessions with a backlog."""
    if not session_ids:
        return {}
    progress = db.execute("SELECT count(*), max(updated_at) FROM progress").fetchone() if db is not None else None
    key = (fingerprint, chunker_key(settings), hash(tuple(sorted(session_ids))), history.max_message_id(state),
           tuple(progress) if progress else None)
    cached = _PENDING_CACHE.get(key)
    if cached is not None:
        return dict(cached)
    result = _pending_sessions(state, db, fingerprint, settings, session_ids)
    if len(_PENDING_CACHE) >= _PENDING_CACHE_MAX:
        _PENDING_CACHE.pop(next(iter(_PENDING_CACHE)))
    _PENDING_CACHE[key] = result
    return dict(result)


def _pending_sessions(
    state: sqlite3.Connection, db: sqlite3.Connection | None, fingerprint: str,
    settings: EmbeddingSettings, session_ids: Sequence[str],
) -> dict[str, int]:
    marks = store.markers(db, fingerprint, chunker_key(settings)) if db is not None else {}
    base = marks.get(store.ALL, 0)
    starts = {s: max(base, marks.get(s, 0)) for s in session_ids}
    newest = history.newest_per_session(state, min(starts.values()), session_ids)
    return {s: top for s, top in newest.items() if top > starts.get(s, base)}


@dataclass(frozen=True)
class ScopeCounts:
    messages: int  # eligible messages in scope
    indexed_messages: int  # of those, with vectors under the current fingerprint
    chunks: int
    pending_sessions: int  # sessions holding messages newer than the index marker


def scope_counts(
    state: sqlite3.Connection, db: sqlite3.Connection | None, fingerprint: str,
    settings: EmbeddingSettings, session_ids: Sequence[str] | None,
) -> ScopeCounts:
    """Exact counts (O(scope); for status output, not for every search)."""
    messages = history.count_in_scope(state, session_ids)
    indexed, chunks = store.scope_counts(db, fingerprint, session_ids) if db is not None else (0, 0)
    scope = session_ids if session_ids is not None else history.all_session_ids(state)
    pending = pending_sessions(state, db, fingerprint, settings, scope)
    return ScopeCounts(messages, indexed, chunks, len(pending))
