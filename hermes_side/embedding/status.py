"""Per-project index status for ``hermes recall status`` and the recall API."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..stores import faults, hermes_db
from . import damage, history, runlock, store
from .consent import consent_state
from .coverage import open_store_if_exists, scope_counts
from .providers import fingerprint_for
from .settings import EmbeddingSettings, SettingsError, load_settings

ALL_PROJECTS = "*"  # consent for every project at once (consent.ALL_PROJECTS)


def index_status(
    home: Path,
    projects: Mapping[str, Sequence[str]],
    *,
    profile: str | None = None,
    settings: EmbeddingSettings | None = None,
) -> dict:
    """``{"model", "fingerprint", "provider", "enabled", "indexing", "consent", "projects": {key: {...}}}``
    (``consent``: for every project at once).

    ``projects`` maps a project key to its session ids. Each project reports eligible
    ``messages``, ``indexed_messages``, ``chunks``, ``pending_sessions``, ``consent`` and
    ``state`` (ready / partial / indexing / consent_required / disabled). Never contains the key.
    """
    try:
        settings = settings or load_settings(Path(home))
    except SettingsError as exc:
        return {"error": str(exc), "projects": {}}
    fingerprint = fingerprint_for(settings)
    run = runlock.current_run(Path(home))
    out = {"provider": settings.provider, "model": settings.model, "endpoint": settings.endpoint,
           "fingerprint": fingerprint, "enabled": settings.enabled, "indexing": bool(run),
           "consent": consent_state(Path(home), settings, profile, [ALL_PROJECTS]), "projects": {}}
    try:
        state = history.connect_ro(Path(home))
    except (hermes_db.NoDatabase, hermes_db.Unavailable) as exc:  # no history, or a store it needs
        return {**out, "error": str(exc)}
    try:
        # quick_check (once per version of the file): a damaged index is said here and, through the
        # note it leaves, by every search — not only by the counts that happen to read its bad pages.
        if known := damage.check(store.store_path(Path(home))):
            raise store.StoreCorrupt(known)
        db = open_store_if_exists(Path(home))
    except (store.StoreCorrupt, hermes_db.Unavailable) as exc:
        state.close()
        return {**out, "error": str(exc), **({"fault": exc.as_dict()} if isinstance(exc, faults.StoreFault) else {})}
    try:
        for key, session_ids in projects.items():
            counts = scope_counts(state, db, fingerprint, settings, list(session_ids))
            consent = consent_state(Path(home), settings, profile, [key])
            out["projects"][key] = {
                "sessions": len(session_ids), "messages": counts.messages,
                "indexed_messages": counts.indexed_messages, "chunks": counts.chunks,
                "pending_sessions": counts.pending_sessions, "consent": consent,
                "state": _state(settings, consent, counts.pending_sessions, run, fingerprint, session_ids),
            }
    except sqlite3.DatabaseError as exc:
        return {**out, "error": damage.confirm(store.store_path(Path(home)), exc) or f"index status failed ({exc})"}
    finally:
        state.close()
        if db is not None:
            db.close()
    return out


def _state(settings, consent, pending, run, fingerprint, session_ids) -> str:
    if not settings.enabled:
        return "disabled"
    if consent == "required":
        return "consent_required"
    if not pending:
        return "ready"
    return "indexing" if runlock.run_covers(run, fingerprint, list(session_ids)) else "partial"
