"""``semantic_search``: the semantic half of project history search. Never raises.

Status values (the seed's ``semantic_status``):

- ``disabled``: ``embedding.enabled`` is false.
- ``consent_required``: a remote provider without a matching consent record; nothing is sent.
- ``unavailable``: settings error, provider down, model failure, no state.db (detail says which).
- ``indexing``: some in-scope messages are not indexed yet and an index run is working on them.
- ``partial``: some in-scope messages are not indexed yet (hits cover the indexed ones).
- ``ready``: every eligible in-scope message is indexed.

Candidates are re-checked against state.db before they are returned, so a message rewound,
deleted or archived after it was indexed is never shown.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from . import catchup, history, runlock, store
from .consent import consent_state
from .coverage import open_store_if_exists, pending_sessions
from .providers import ProviderError, make_embedder
from .settings import EmbeddingSettings, SettingsError, load_settings
from .vectors import get_index

log = logging.getLogger(__name__)

_RECHECK_ROUNDS = 4


@dataclass(frozen=True)
class SemanticHits:
    status: str
    hits: list[tuple[int, str, float]] = field(default_factory=list)  # (message_id, session_id, score)
    detail: str = ""


def semantic_search(
    home: Path,
    query: str,
    session_ids: Iterable[str],
    *,
    top_k: int = 50,
    profile: str | None = None,
    projects: Iterable[str] = (),
    catch_up: bool = True,
    settings: EmbeddingSettings | None = None,
) -> SemanticHits:
    """Best ``top_k`` messages of ``session_ids`` by meaning, best first.

    ``projects`` are the project keys of the scope, checked against consent for a remote
    provider. ``catch_up`` lets a local provider index missing messages in the background.
    """
    try:
        return _search(Path(home), query, list(dict.fromkeys(session_ids)), top_k, profile,
                       list(projects), catch_up, settings)
    except (SettingsError, ProviderError, history.StateMissing) as exc:
        return SemanticHits("unavailable", [], str(exc))
    except Exception as exc:  # the keyword half must still answer; log for the operator
        log.warning("semantic search failed", exc_info=True)
        return SemanticHits("unavailable", [], f"semantic search failed ({exc.__class__.__name__})")


def _search(home: Path, query: str, scope: list[str], top_k: int, profile: str | None, projects: list[str],
            catch_up: bool, settings: EmbeddingSettings | None) -> SemanticHits:
    settings = settings or load_settings(home)
    if not settings.enabled:
        return SemanticHits("disabled", [], "embedding.enabled is false")
    if settings.remote and consent_state(home, settings, profile, projects) != "granted":
        return SemanticHits("consent_required", [], f"semantic search would send text to {settings.endpoint}")
    embedder = make_embedder(home, settings)
    state = history.connect_ro(home)
    db = open_store_if_exists(home)
    try:
        pending = pending_sessions(state, db, embedder.fingerprint, settings, scope)
        hits = _hits(home, state, embedder, query, scope, top_k) if db is not None and scope else []
    finally:
        state.close()
        if db is not None:
            db.close()
    status = _status(home, settings, embedder.fingerprint, pending, catch_up)
    detail = f"{len(pending)} session(s) in scope have messages not indexed yet" if pending else ""
    return SemanticHits(status, hits, detail)


def _hits(home: Path, state, embedder, query: str, scope: list[str], top_k: int) -> list[tuple[int, str, float]]:
    index = get_index(store.store_path(home), embedder.fingerprint)
    if not len(index) or top_k <= 0:
        return []  # nothing to compare with: do not embed (or send) the query at all
    vector = embedder.embed_query(query)
    want = top_k + 8
    for _ in range(_RECHECK_ROUNDS):
        candidates = index.search(vector, scope, want)
        alive = history.still_eligible(state, [c[0] for c in candidates])
        hits = [c for c in candidates if c[0] in alive][:top_k]
        if len(hits) >= top_k or len(candidates) < want:
            return hits
        want *= 4
    return hits


def _status(home: Path, settings: EmbeddingSettings, fingerprint: str, pending: dict[str, int],
            catch_up: bool) -> str:
    if not pending:
        return "ready"
    if catchup.catch_up_running(home) or runlock.run_covers(runlock.current_run(home), fingerprint, list(pending)):
        return "indexing"
    if catch_up and catchup.start_catch_up(home, settings):
        return "indexing"
    return "partial"

