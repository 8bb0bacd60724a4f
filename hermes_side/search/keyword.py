"""Project-scoped keyword search over Hermes' own FTS5 tables (read-only), ranked by BM25.

Why not ``MATCH 'a OR b' ORDER BY rank`` joined to the scope: FTS5 then computes bm25 for every
row that contains any word, in the whole profile, before the scope is applied — 0.4 s for one
common word in a 1M-message state.db (architecture.md measured the same). Instead:

1. terms: Latin words (with crude inflections) and CJK character bigrams (query.py); a query
   with more than ``MAX_TERMS`` distinct terms keeps the rarest in the scope, so the work per
   query is bounded whatever is typed;
2. candidates: a scope small enough is read whole (only rows holding a term cross into Python);
   in a big scope each word asks ``messages_fts`` and each CJK piece of ≥3 characters asks
   ``messages_fts_trigram`` for the scope's newest matching rowids (probes.py: no ranking, so
   cheap, and the same whatever other projects hold); CJK pieces of 1–2 characters, which no
   Hermes index can find, are looked for in the scope's newest messages;
3. ranking: Okapi BM25 in Python over those candidates, every term weighed by how many of the
   scope's messages hold it — at most a few hits per conversation so one chatty conversation
   cannot crowd out the others.

Every statistic that weighs a term (document frequencies, the collection size, which words are
"common", which terms of a long query are kept) is counted over the scope alone, never over the
profile: a chat reads only its project, and weights counted over other chats would let it learn,
from the order of messages it planted itself, whether a word occurs in them (issue 15 §4).

Every statement has a fixed shape: lists travel as one JSON parameter (``json_each``), so a long
query never grows an SQL expression.
"""

from __future__ import annotations

import functools
import heapq
import json
import logging
import math
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..stores.hermes_db import plain_cursor
from ..stores.messages import MESSAGES_FROM, eligible_sql, message_text
from ..text import without_code
from . import probes
from .query import (
    CJK_CHAR,
    MAX_TERMS,
    TOKEN,
    ParsedQuery,
    Term,
    cjk_runs,
    fold,
    like_pattern,
    query_terms,
)
from .settings import RANKING

log = logging.getLogger(__name__)

# Every weight and budget below is ``RANKING`` (settings.py), read at call time.


@dataclass(frozen=True)
class Hit:
    message_id: int
    session_id: str
    score: float


@dataclass(frozen=True)
class KeywordResult:
    hits: list[Hit]
    # Words in more than ``common_share`` of the scope's messages (a project's own name, the user's
    # name): they rank nothing here, and they drown the meaning of a semantic query too.
    common_words: frozenset[str] = frozenset()
    # Terms of an over-long query that were not searched (the least distinctive ones).
    dropped_terms: tuple[str, ...] = ()
    # Every message scored (not only the best ``limit``) and the terms that weighed: which query
    # terms each conversation holds, for ranking conversations (conversations.py).
    docs: Sequence[Doc] = ()
    terms: frozenset[Term] = frozenset()

    @functools.cached_property
    def held(self) -> frozenset[Term]:  # the query terms any scored message holds, gathered once
        return frozenset(t for doc in self.docs for t in doc.tf)



@dataclass(frozen=True)
class Filters:
    session_ids: Sequence[str]  # the scope, current conversation already removed
    after: float | None = None
    before: float | None = None

    def sql(self, conn: sqlite3.Connection) -> tuple[str, list]:
        clauses = [eligible_sql(conn), "m.session_id IN (SELECT value FROM json_each(?))"]
        params: list = [json.dumps(list(self.session_ids))]
        if self.after is not None:
            clauses.append("m.timestamp >= ?")
            params.append(self.after)
        if self.before is not None:
            clauses.append("m.timestamp < ?")
            params.append(self.before)
        return " AND ".join(clauses), params


# -- how one message scores -----------------------------------------------------------------
@dataclass(frozen=True)
class Doc:
    message_id: int
    session_id: str
    tf: dict[Term, int]  # occurrences of each query term
    length: int  # Latin tokens + CJK characters, outside fenced code blocks


def doc_terms(folded: str) -> Counter:
    """Every term of folded text: Latin tokens as unicode61 cuts them, and each CJK run as its
    overlapping bigrams (a one-character run as itself). For the scope's statistics."""
    terms = Counter(TOKEN.findall(CJK_CHAR.sub(" ", folded)))
    for run in cjk_runs(folded):
        if len(run) == 1:
            terms[run] += 1
        else:
            terms.update(run[i:i + 2] for i in range(len(run) - 1))
    return terms


class Matcher:
    """Counts one query's terms in a message: a token → term lookup over the message's tokens and
    a C-level ``str.count`` per CJK term — the loop runs over what the message holds, never over
    every term × every message."""

    def __init__(self, terms: Sequence[Term]) -> None:
        self.cjk = [t for t in terms if t.kind == "cjk"]
        self.forms: dict[str, tuple[Term, ...]] = {}
        for term in terms:
            if term.kind == "word":
                for form in term.forms:
                    self.forms[form] = (*self.forms.get(form, ()), term)

    def doc(self, message_id: int, session_id: str, text: str) -> Doc:
        folded = fold(text)
        # Most history is ASCII: no CJK pass over it (a quarter of the time of a message's count).
        latin, n_cjk = (folded, 0) if folded.isascii() else CJK_CHAR.subn(" ", folded)
        tokens = TOKEN.findall(latin)
        tf: dict[Term, int] = {}
        if self.forms:
            for found in filter(None, map(self.forms.get, tokens)):
                for term in found:
                    tf[term] = tf.get(term, 0) + 1
        if n_cjk:
            for term in self.cjk:
                n = folded.count(term.text)
                if n:
                    tf[term] = n
        if "```" in folded:  # a pasted code block is not what the prose is about (text.FENCED_CODE)
            prose = without_code(folded)
            latin, n_cjk = CJK_CHAR.subn(" ", prose)
            tokens = TOKEN.findall(latin)
        return Doc(message_id, session_id, tf, max(1, len(tokens) + n_cjk))


def bm25(doc: Doc, idf: dict[Term, float]) -> float:
    """Okapi BM25 of a message over the terms in ``idf`` (terms missing there do not count)."""
    score = 0.0
    norm = RANKING.bm25_k1 * (1 - RANKING.bm25_b + RANKING.bm25_b * doc.length / RANKING.bm25_avg_tokens)
    for term, tf in doc.tf.items():
        weight = idf.get(term)
        if weight:
            score += weight * term.weight * tf * (RANKING.bm25_k1 + 1) / (tf + norm)
    return score


def _idf(df: float, total: int) -> float:
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


# -- the scope's statistics ----------------------------------------------------------------
@dataclass
class ScopeStats:
    """Document frequencies over the scope's newest messages (``STATS_SAMPLE``), built once per
    scope and reused: they weigh the terms of a big scope and pick the terms of an over-long query."""

    size: int  # messages sampled
    df: Counter
    built_for: int  # scope size when built

    def share(self, term: Term) -> float:
        return self.df_of(term) / max(1, self.size)

    def df_of(self, term: Term) -> int:
        return sum(self.df.get(f, 0) for f in term.forms)


def _build_stats(conn: sqlite3.Connection, sample: Sequence[int], filters: Filters, built_for: int) -> ScopeStats:
    df: Counter = Counter()
    rows = _rows(conn, sample, Filters(filters.session_ids))
    for _, _, content in rows:
        folded = fold(message_text(content))
        df.update(doc_terms(folded).keys())
        df.update({ch for run in cjk_runs(folded) if len(run) > 1 for ch in run})  # single-character terms
    return ScopeStats(len(rows), df, built_for)


@dataclass
class ScopeMemo:
    """Per-scope memo kept by the caller next to the scope's message ids (see search.ScopeMessageIds)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    id_set: frozenset[int] = frozenset()
    spans: list[tuple[int, int]] = field(default_factory=list)
    id_set_len: int = -1
    stats: ScopeStats | None = None


def _scope_id_set(cache: ScopeMemo, scope_ids: Sequence[int]) -> tuple[frozenset[int], list[tuple[int, int]]]:
    """The scope's ids as a set, and as spans when they are sparse in their range (scope_spans)."""
    with cache.lock:
        if cache.id_set_len != len(scope_ids):
            cache.id_set = frozenset(scope_ids)
            cache.spans = probes.scope_spans(scope_ids)
            cache.id_set_len = len(scope_ids)
        return cache.id_set, cache.spans


def _scope_stats(cache: ScopeMemo, conn: sqlite3.Connection, scope_ids: Sequence[int],
                 filters: Filters) -> ScopeStats:
    with cache.lock:
        stats = cache.stats
    if stats is None or len(scope_ids) > stats.built_for * RANKING.stats_refresh:
        stats = _build_stats(conn, scope_ids[-RANKING.stats_sample:], filters, len(scope_ids))
        with cache.lock:
            cache.stats = stats
    return stats


# -- reading -------------------------------------------------------------------------------
def _rows(conn: sqlite3.Connection, ids: Sequence[int], filters: Filters,
          needles: tuple[Sequence[str], Sequence[str]] | None = None) -> list[tuple[int, str, str]]:
    """Eligible rows among ``ids``; with ``needles`` (exact, case-folded), only rows whose content
    holds one of them (tested in SQL, so only rows that can score cross into Python). No ``lower()``:
    CJK needles cannot change with case, and LIKE folds ASCII case as it goes — lowering every row
    once per needle was most of the cost of a long query."""
    where, params = filters.sql(conn)
    extra = ""
    if needles is not None:
        # LIKE reads text only up to a NUL, and multimodal rows start with one ("\x00json:"):
        # those rows (content < char(1) compares bytes) take lower() + instr(), which see it all.
        extra = (" AND (EXISTS (SELECT 1 FROM json_each(?) n WHERE instr(m.content, n.value) > 0)"
                 " OR EXISTS (SELECT 1 FROM json_each(?) n WHERE m.content LIKE n.value ESCAPE '\\')"
                 " OR (m.content < char(1)"
                 " AND EXISTS (SELECT 1 FROM json_each(?) n WHERE instr(lower(m.content), n.value) > 0)))")
        params = [*params, json.dumps(list(needles[0])), json.dumps([like_pattern(x) for x in needles[1]]),
                  json.dumps(list(needles[1]))]
    return plain_cursor(conn).execute(
        f"SELECT m.id, m.session_id, m.content {MESSAGES_FROM}"
        f" WHERE m.id IN (SELECT value FROM json_each(?)) AND {where}{extra}",
        [json.dumps(list(ids)), *params]).fetchall()


def _read(conn: sqlite3.Connection, ids: Sequence[int], filters: Filters, matcher: Matcher,
          needles: tuple[Sequence[str], Sequence[str]] | None = None) -> list[Doc]:
    return [matcher.doc(r[0], r[1], message_text(r[2])) for r in _rows(conn, ids, filters, needles)]


def _needles(terms: Sequence[Term]) -> tuple[list[str], list[str]]:
    """(exact, case-folded) substrings: rows holding none of them cannot score."""
    exact = sorted({n for t in terms if t.kind == "cjk" for n in t.needles()})
    return exact, sorted({n for t in terms if t.kind == "word" for n in t.needles()})


def _rarest(terms: Sequence[Term], df_of: Callable[[Term], int], n: int) -> list[Term]:
    """The ``n`` terms the scope holds in the fewest messages, and up to ``n`` it did not hold when
    its statistics were read: those may be new since (a word said a minute ago), or absent."""
    held = sorted((t for t in terms if df_of(t)), key=df_of)
    return held[:n] + [t for t in terms if not df_of(t)][:n]


# -- choosing and weighing terms -----------------------------------------------------------
def select_terms(terms: Sequence[Term], df_of: Callable[[Term], int]) -> tuple[list[Term], list[Term]]:
    """(kept, dropped): at most ``MAX_TERMS`` terms, the rarest in the scope first; terms the scope
    never holds go last (they cannot find anything). Kept terms stay in query order."""
    if len(terms) <= MAX_TERMS:
        return list(terms), []
    counts = {t: df_of(t) for t in terms}
    order = sorted(range(len(terms)), key=lambda i: (counts[terms[i]] == 0, counts[terms[i]], i))
    keep = set(order[:MAX_TERMS])
    return ([t for i, t in enumerate(terms) if i in keep], [t for i, t in enumerate(terms) if i not in keep])


def _drop_common(terms: Sequence[Term], share: dict[Term, float], scope_size: int) -> tuple[list[Term], frozenset[str]]:
    """Drop words found in more than ``common_share`` of the scope, unless the rest would find nothing
    (or the scope is too small for "common" to mean anything)."""
    if scope_size < RANKING.common_min_scope:
        return list(terms), frozenset()
    common = [t for t in terms if t.kind == "word" and share.get(t, 0.0) > RANKING.common_share]
    kept = [t for t in terms if t not in common]
    if not any(share.get(t, 0.0) > 0 for t in kept):
        return list(terms), frozenset()
    return kept, frozenset(t.raw or t.text for t in common)


def _rank(docs: list[Doc], idf: dict[Term, float], limit: int) -> list[Hit]:
    scored = sorted(((bm25(d, idf), d.message_id, d.session_id) for d in docs), key=lambda t: (-t[0], -t[1]))
    per_session: Counter = Counter()
    hits: list[Hit] = []
    for score, mid, sid in scored:
        if score <= 0 or per_session[sid] >= RANKING.per_conversation:
            continue
        per_session[sid] += 1
        hits.append(Hit(mid, sid, score))
        if len(hits) >= limit:
            break
    return hits


def _dropped(terms: Sequence[Term]) -> tuple[str, ...]:
    return tuple(t.raw or t.text for t in terms)


# -- the two paths -------------------------------------------------------------------------
def _scan(conn, scope_ids: Sequence[int], terms: list[Term], filters: Filters, limit: int,
          cache: ScopeMemo) -> KeywordResult:
    """Score the scope's newest messages directly: small scopes, or no usable FTS. Only messages
    containing a term are read; document frequencies come from the window itself, or for a query
    of many terms from the scope's statistics (then only its rarest terms choose what is read)."""
    window = scope_ids[-RANKING.recent_fallback:]
    if len(terms) <= RANKING.scan_needle_terms:
        docs = _read(conn, window, filters, Matcher(terms), _needles(terms))
        df: Counter = Counter(t for doc in docs for t in doc.tf)
        share = {t: df[t] / max(1, len(window)) for t in terms}
        dropped: list[Term] = []
    else:
        stats = _scope_stats(cache, conn, scope_ids, filters)
        terms, dropped = select_terms(terms, stats.df_of)
        needles = _needles(_rarest(terms, stats.df_of, RANKING.scan_needle_terms))
        docs = _read(conn, window, filters, Matcher(terms), needles)
        share = {t: stats.share(t) for t in terms}
    kept, common = _drop_common(terms, share, len(window))
    idf = _scope_idf(kept, share, len(scope_ids))
    return KeywordResult(_rank(docs, idf, limit), common, _dropped(dropped), docs, frozenset(idf))


def _scope_idf(terms: Sequence[Term], share: dict[Term, float], size: int) -> dict[Term, float]:
    """BM25 weights from the scope alone: each term's share of the scope's messages, over the
    scope's size (see the module docstring: nothing counted outside the scope shapes a ranking)."""
    size = max(1, size)
    return {t: _idf(share[t] * size, size) for t in terms}


@dataclass(frozen=True)
class FtsPlan:
    """What a big scope's statistics decide before any probe runs: the terms searched, those
    dropped, the common words (which the semantic side leaves out of its query) and the weights."""

    stats: ScopeStats
    kept: list[Term]
    dropped: list[Term]
    common: frozenset[str]
    idf: dict[Term, float]
    # What it was planned for: a search given this plan (``keyword_search(plan=)``) uses it only for
    # the same terms over the same scope, else plans again.
    terms: tuple[Term, ...] = ()
    scope_size: int = -1


def _fts_plan(conn, scope_ids: Sequence[int], terms: list[Term], filters: Filters, cache: ScopeMemo) -> FtsPlan:
    stats = _scope_stats(cache, conn, scope_ids, filters)
    searched, dropped = select_terms(terms, stats.df_of)
    share = {t: stats.share(t) for t in searched}
    kept, common = _drop_common(searched, share, len(scope_ids))
    return FtsPlan(stats, kept, dropped, common, _scope_idf(kept, share, len(scope_ids)), tuple(terms), len(scope_ids))


def planned_common_words(conn: sqlite3.Connection, query: ParsedQuery, filters: Filters, *, scope_ids: Sequence[int],
                         cache: ScopeMemo) -> tuple[frozenset[str], FtsPlan | None] | None:
    """The common words :func:`keyword_search` will most likely report for this query, from the
    scope's statistics (kept per scope), before the search runs: so the semantic side, which leaves
    them out of its query, can start beside it. Exact for a big scope (its statistics decide), whose
    plan comes back too, for the search to use instead of making it again; for a scanned one the
    statistics cover the same newest messages the scan counts, and the caller compares with what
    the search reported. None when the search would find no terms."""
    terms = query_terms(query)
    if not filters.session_ids or not terms or not len(scope_ids):
        return None
    try:
        if len(scope_ids) > RANKING.scan_scope_max:
            plan = _fts_plan(conn, scope_ids, terms, filters, cache)
            return plan.common, plan
        stats = _scope_stats(cache, conn, scope_ids, filters)
    except sqlite3.OperationalError:
        return None
    if len(terms) > RANKING.scan_needle_terms:
        terms, _ = select_terms(terms, stats.df_of)
    share = {t: stats.share(t) for t in terms}
    return _drop_common(terms, share, len(scope_ids[-RANKING.recent_fallback:]))[1], None


def _fts(conn, query: ParsedQuery, scope_ids: Sequence[int], terms: list[Term], filters: Filters,
         limit: int, cache: ScopeMemo, plan: FtsPlan | None = None) -> KeywordResult:
    if plan is None or plan.terms != tuple(terms) or plan.scope_size != len(scope_ids):
        plan = _fts_plan(conn, scope_ids, terms, filters, cache)
    stats, kept, dropped, common, idf = plan.stats, plan.kept, plan.dropped, plan.common, plan.idf
    found_by = [p for p in probes.probes_of(query, kept) if not p.holds or set(p.holds) & set(idf)]
    cap = max(RANKING.min_per_probe, RANKING.rowid_budget // max(1, len(found_by)))
    if len(found_by) == 1:  # every row weighs the same: the newest ``candidates_max`` are all that is read
        cap = RANKING.candidates_max
    in_scope, spans = _scope_id_set(cache, scope_ids)
    found = probes.scope_matches(conn, found_by, cap, scope_ids, in_scope, spans)
    floor = min(idf.values(), default=1.0)
    prescore: dict[int, float] = {}
    for holds, rowids in found:
        weight = sum(idf.get(t, 0.0) for t in holds) / max(1, len(holds)) if holds else floor
        for mid in rowids:
            if mid in in_scope:
                prescore[mid] = prescore.get(mid, 0.0) + weight
    # The best by prescore, newest first among equals; a heap over (score, id) pairs, not a sort of
    # thousands of rowids through a key function (ids are unique: the same order).
    best = [-m for _, m in heapq.nsmallest(RANKING.candidates_max, ((-s, -mid) for mid, s in prescore.items()))]
    matcher = Matcher(kept)
    docs = _read(conn, best, filters, matcher)
    short = [t for t in kept if t.kind == "cjk" and not any(t.text in p for p in query.cjk_long)]
    if short:  # no Hermes index finds 1–2 character pieces: look in the scope's newest messages
        seen = set(best)
        recent = [mid for mid in scope_ids[-RANKING.recent_fallback:] if mid not in seen]
        needles = _needles(_rarest(short, stats.df_of, RANKING.window_needle_terms))
        docs += _read(conn, recent, filters, matcher, needles)
    return KeywordResult(_rank(docs, idf, limit), common, _dropped(dropped), docs, frozenset(idf))


def keyword_search(conn: sqlite3.Connection, query: ParsedQuery, filters: Filters, *,
                   scope_ids: Sequence[int], limit: int = 50, cache: ScopeMemo | None = None,
                   scan_max: int | None = None, plan: FtsPlan | None = None) -> KeywordResult:
    """Best-first hits; ``scope_ids`` are the sorted message ids of the scope's sessions; ``plan``:
    what :func:`planned_common_words` planned for this query and scope, if it ran.

    ``scan_max``: scopes up to this many messages are scanned whole (default ``RANKING.scan_scope_max``);
    tests pass 0 to run the FTS path on a small scope.
    """
    terms = query_terms(query)
    if not filters.session_ids or not terms or not len(scope_ids):
        return KeywordResult([])
    cache = cache if cache is not None else ScopeMemo()
    threshold = RANKING.scan_scope_max if scan_max is None else scan_max
    if len(scope_ids) <= threshold:
        return _scan(conn, scope_ids, terms, filters, limit, cache)
    try:
        return _fts(conn, query, scope_ids, terms, filters, limit, cache, plan)
    except sqlite3.OperationalError as exc:
        # A malformed MATCH or an FTS table this Hermes lacks must not cost the answer.
        log.info("FTS query failed (%s); scanning recent messages instead", exc)
        return _scan(conn, scope_ids, terms, filters, limit, cache)

