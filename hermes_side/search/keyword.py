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
3. ranking: Okapi BM25 in Python over those candidates (bm25.py), every term weighed by how many
   of the scope's messages hold it — at most a few hits per conversation so one chatty
   conversation cannot crowd out the others.

Every statistic that weighs a term (document frequencies, the collection size, which words are
"common", which terms of a long query are kept) is counted over the scope alone, never over the
profile: a chat reads only its project, and weights counted over other chats would let it learn,
from the order of messages it planted itself, whether a word occurs in them (issue 15 §4).

Every statement has a fixed shape: lists travel as one JSON parameter (``json_each``), so a long
query never grows an SQL expression.
"""

from __future__ import annotations

import dataclasses
import functools
import heapq
import json
import logging
import re
import sqlite3
import threading
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ..stores.hermes_db import plain_cursor
from ..stores.messages import MESSAGES_FROM, eligible_sql, message_text
from . import buffered, probes
from .bm25 import Doc, Hit, Matcher, best, doc_terms, idf
from .episodes import cut, parts
from .query import MAX_TERMS, ParsedQuery, Term, bigrams, cjk_runs, fold, like_pattern
from .settings import RANKING

log = logging.getLogger(__name__)

# Every weight and budget below is ``RANKING`` (settings.py), read at call time.


@dataclass(frozen=True)
class KeywordResult:
    hits: list[Hit]
    # Words in more than ``common_share`` of the scope's messages (a project's own name, the user's
    # name): they rank nothing here, and they drown the meaning of a semantic query too.
    common_words: frozenset[str] = frozenset()
    # Terms of an over-long query that were not searched (the least distinctive ones).
    dropped_terms: tuple[str, ...] = ()
    # Every message scored (not only the best ``limit``): which query terms each conversation holds,
    # for ranking conversations (conversations.py).
    docs: Sequence[Doc] = ()
    # The terms that weighed, each with its BM25 weight in this scope (its rarity): how much the
    # list counts when fused (relevance.keyword_list_weight).
    weights: Mapping[Term, float] = field(default_factory=dict)
    # Why the scope was not searched whole (Hermes' FTS index damaged): for the operator, with the fix.
    detail: str = ""

    @functools.cached_property
    def terms(self) -> frozenset[Term]:  # the terms that weighed
        return frozenset(self.weights)

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


# -- the scope's statistics ----------------------------------------------------------------
@dataclass
class ScopeStats:
    """Document frequencies over the scope's newest messages (``STATS_SAMPLE``), built once per
    scope and reused: they weigh the terms of a big scope and pick the terms of an over-long query."""

    size: int  # messages sampled
    df: Counter
    built_for: int  # scope size when built
    members: frozenset[str] = frozenset()  # the words of the members' names its sender tags show
    spread: Counter = field(default_factory=Counter)  # term → conversations holding it (sessions cut at pauses)
    conversations: int = 0  # conversations sampled
    cjk_rows: int = 0  # sampled messages holding Chinese (CJK) text

    def holds_cjk(self, word: str) -> bool:
        """Whether the sampled messages hold every character pair of a CJK ``word`` (its one
        character, for a one-character word): the word, or all of its parts."""
        return bool(word) and all(self.df.get(g, 0) > 0 for g in bigrams(word))

    def common_cjk(self, word: str) -> bool:
        """Whether a CJK ``word`` is common in the scope as a word is (:func:`_drop_common`: in more
        than ``common_share`` of the messages and ``common_spread`` of the conversations) — a
        bridge's Chinese reminder on every turn is, and says nothing about any of them."""
        grams = bigrams(word)
        if self.size < RANKING.common_min_scope or not grams:
            return False
        return all(self.df.get(g, 0) > RANKING.common_share * self.size
                   and self.spread.get(g, 0) > RANKING.common_spread * max(1, self.conversations) for g in grams)

    def share(self, term: Term) -> float:
        return self.df_of(term) / max(1, self.size)

    def spread_of(self, term: Term) -> float:
        return max((self.spread.get(f, 0) for f in term.forms), default=0) / max(1, self.conversations)

    def df_of(self, term: Term) -> int:
        return sum(self.df.get(f, 0) for f in term.forms)


def _build_stats(conn: sqlite3.Connection, sample: Sequence[int], filters: Filters, built_for: int) -> ScopeStats:
    df: Counter = Counter()
    members: set[str] = set()
    held: dict[tuple[str, int], set[str]] = {}  # each conversation's terms: a session's part (episodes.parts)
    cjk_rows = 0
    rows = _rows(conn, sample, Filters(filters.session_ids))
    part = parts(((mid, session, ts) for mid, session, _, ts in rows), RANKING.conversation_pause)
    for mid, session, content, _ in rows:
        folded = fold(message_text(content))
        runs = cjk_runs(folded)
        cjk_rows += bool(runs)
        terms = doc_terms(folded).keys() | {ch for run in runs if len(run) > 1 for ch in run}
        df.update(terms)  # CJK single characters too
        held.setdefault((session, part.get(mid, 0)), set()).update(terms)
        members.update(w for name in SENDER.findall(folded) for w in WORD.findall(name))
    spread = Counter(t for terms in held.values() for t in terms)
    return ScopeStats(len(rows), df, built_for, frozenset(members), spread, len(held), cjk_rows)


# The NoneBot bridge's sender tag, ``[user=Nick id=ID]`` (scope/quotes.py), as folded text.
SENDER = re.compile(r"\[user=([^\]]*?) id=[^\]\s]+\]")
WORD = re.compile(r"[^\W_]+")  # as query.py splits a query into words


def scope_members(conn: sqlite3.Connection, rows: ScopeRows, filters: Filters) -> frozenset[str]:
    """The words of the chat members' names in the scope's newest messages (their sender tags):
    a group chat repeats them in every turn the bridge writes, so they are "common" there — yet a
    question naming one asks about that member's turns (RANKING.member_names)."""
    if not RANKING.member_names or not filters.session_ids or len(rows.ids) < RANKING.common_min_scope:
        return frozenset()  # a smaller scope drops no word as common (_drop_common)
    try:
        return scope_stats(conn, rows, filters).members
    except sqlite3.DatabaseError:  # no FTS table, or a damaged one: keyword_search says which
        return frozenset()


@dataclass
class ScopeMemo:
    """Per-scope memo kept by the caller next to the scope's message ids (reader.ScopeMessageIds)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    id_set: frozenset[int] = frozenset()
    spans: list[tuple[int, int]] = field(default_factory=list)
    id_set_len: int = -1
    stats: ScopeStats | None = None
    # (ids counted, pause) → each session's conversations' first times in the scope (_scope_parts)
    parts: tuple[int, float, dict[str, list[float]]] | None = None


class ScopeRows(NamedTuple):
    """The sorted ids of a scope's text turns up to one moment, read once per search
    (``reader.ProfileReader.scope_rows``), with the memo kept beside them for that scope."""

    ids: Sequence[int]
    memo: ScopeMemo


def _scope_id_set(rows: ScopeRows) -> tuple[frozenset[int], list[tuple[int, int]]]:
    """The scope's ids as a set, and as spans when they are sparse in their range (scope_spans)."""
    memo, ids = rows.memo, rows.ids
    with memo.lock:
        if memo.id_set_len != len(ids):
            memo.id_set = frozenset(ids)
            memo.spans = probes.scope_spans(ids)
            memo.id_set_len = len(ids)
        return memo.id_set, memo.spans


def scope_stats(conn: sqlite3.Connection, rows: ScopeRows, filters: Filters) -> ScopeStats:
    """The scope's statistics (:class:`ScopeStats`), built at the first need and kept in its memo."""
    memo, ids = rows.memo, rows.ids
    with memo.lock:
        stats = memo.stats
    if stats is None or len(ids) > stats.built_for * RANKING.stats_refresh:
        stats = _build_stats(conn, ids[-RANKING.stats_sample:], filters, len(ids))
        with memo.lock:
            memo.stats = stats
    return stats


# -- reading -------------------------------------------------------------------------------
def _rows(conn: sqlite3.Connection, ids: Sequence[int], filters: Filters,
          needles: tuple[Sequence[str], Sequence[str]] | None = None) -> list[tuple[int, str, str, float | None]]:
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
        f"SELECT m.id, m.session_id, m.content, m.timestamp {MESSAGES_FROM}"
        f" WHERE m.id IN (SELECT value FROM json_each(?)) AND {where}{extra}",
        [json.dumps(list(ids)), *params]).fetchall()


def _read(conn: sqlite3.Connection, ids: Sequence[int], filters: Filters, matcher: Matcher,
          needles: tuple[Sequence[str], Sequence[str]] | None = None) -> list[Doc]:
    return _docs(_rows(conn, ids, filters, needles), matcher)


def _docs(rows: Sequence[tuple[int, str, str, float | None]], matcher: Matcher) -> list[Doc]:
    """The rows read, each counting what it holds of the query — a buffered line of the group only
    in the turn that first stored it, when that was more than a pause before (buffered.py)."""
    texts = [message_text(r[2]) for r in rows]
    pause = RANKING.conversation_pause if RANKING.buffer_once else 0.0
    first = buffered.first_stored(zip(texts, (r[3] for r in rows), strict=True)) if pause else {}
    return [matcher.doc(r[0], r[1], buffered.counted(text, r[3], first, pause), r[3], whole=text)
            for r, text in zip(rows, texts, strict=True)]


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


def _drop_common(terms: Sequence[Term], share: dict[Term, float], scope_size: int,
                 members: frozenset[str] = frozenset(),
                 spread: Callable[[Term], float] = lambda t: 1.0) -> tuple[list[Term], frozenset[str]]:
    """Drop words found in more than ``common_share`` of the scope (and ``common_spread`` of its
    conversations), unless the rest would find nothing (or the scope is too small for "common" to
    mean anything); a word of a member's name stays."""
    if scope_size < RANKING.common_min_scope:
        return list(terms), frozenset()
    common = [t for t in terms if t.kind == "word" and share.get(t, 0.0) > RANKING.common_share
              and t.text not in members and spread(t) > RANKING.common_spread]
    kept = [t for t in terms if t not in common]
    if not any(share.get(t, 0.0) > 0 for t in kept):
        return list(terms), frozenset()
    return kept, frozenset(t.raw or t.text for t in common)


def _dropped(terms: Sequence[Term]) -> tuple[str, ...]:
    return tuple(t.raw or t.text for t in terms)


# -- the two paths -------------------------------------------------------------------------
def _scan(conn, rows: ScopeRows, terms: list[Term], filters: Filters, limit: int,
          members: frozenset[str] = frozenset()) -> KeywordResult:
    """Score the scope's newest messages directly: small scopes, or no usable FTS. Only messages
    containing a term are read; document frequencies come from the window itself, or for a query
    of many terms from the scope's statistics (then only its rarest terms choose what is read)."""
    window = rows.ids[-RANKING.recent_fallback:]
    if len(terms) <= RANKING.scan_needle_terms:
        docs = _read(conn, window, filters, Matcher(terms), _needles(terms))
        df: Counter = Counter(t for doc in docs for t in doc.tf)
        share = {t: df[t] / max(1, len(window)) for t in terms}
        dropped: list[Term] = []
        spread = _doc_spread(docs, filters, _scope_parts(conn, rows, window))
    else:
        stats = scope_stats(conn, rows, filters)
        terms, dropped = select_terms(terms, stats.df_of)
        needles = _needles(_rarest(terms, stats.df_of, RANKING.scan_needle_terms))
        docs = _read(conn, window, filters, Matcher(terms), needles)
        share = {t: stats.share(t) for t in terms}
        spread = stats.spread_of
    kept, common = _drop_common(terms, share, len(window), members, spread)
    weights = _scope_idf(kept, share, len(rows.ids))
    return KeywordResult(best(docs, weights, limit), common, _dropped(dropped), docs, weights)


def _doc_spread(docs: Sequence[Doc], filters: Filters, starts: Mapping[str, list[float]]) -> Callable[[Term], float]:
    """Each term's share of the scope's conversations that hold it, from the scanned rows: each
    session of the scope one conversation, or as many as ``starts`` gives it (:func:`_scope_parts`)."""
    held: dict[Term, set[tuple[str, int]]] = {}
    for doc in docs:
        first = starts.get(doc.session_id)
        part = max(0, bisect_right(first, doc.timestamp) - 1) if first and doc.timestamp is not None else 0
        for t in doc.tf:
            held.setdefault(t, set()).add((doc.session_id, part))
    n = max(1, len(filters.session_ids) + sum(max(0, len(first) - 1) for first in starts.values()))
    return lambda t: len(held.get(t, ())) / n


def _scope_parts(conn: sqlite3.Connection, rows: ScopeRows, window: Sequence[int]) -> dict[str, list[float]]:
    """Each session of the scanned ``window`` → its conversations' first turns' times (a session cut
    at each pause of more than ``conversation_pause``, episodes.py): a direct chat of ten days in
    one bridge session is ten conversations when "movies" is asked about, not one that holds every
    word. Read once per scope and size (the scan path's scopes: at most ``recent_fallback`` rows)."""
    pause = RANKING.conversation_pause
    memo = rows.memo
    with memo.lock:
        if memo.parts is not None and memo.parts[:2] == (len(window), pause):
            return memo.parts[2]
    times: dict[str, list[float]] = {}
    for session, t in plain_cursor(conn).execute(
            "SELECT session_id, timestamp FROM messages WHERE id IN (SELECT value FROM json_each(?))"
            " ORDER BY timestamp", (json.dumps(list(window)),)):
        if t is not None:
            times.setdefault(session, []).append(t)
    starts = {session: [a for a, _ in cut(ts, pause)] if pause > 0 else ts[:1] for session, ts in times.items()}
    with memo.lock:
        memo.parts = (len(window), pause, starts)
    return starts


def _scope_idf(terms: Sequence[Term], share: dict[Term, float], size: int) -> dict[Term, float]:
    """BM25 weights from the scope alone: each term's share of the scope's messages, over the
    scope's size (see the module docstring: nothing counted outside the scope shapes a ranking)."""
    size = max(1, size)
    return {t: idf(share[t] * size, size) for t in terms}


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
    members: frozenset[str] = frozenset()


def _fts_plan(conn, rows: ScopeRows, terms: list[Term], filters: Filters,
              members: frozenset[str] = frozenset()) -> FtsPlan:
    stats = scope_stats(conn, rows, filters)
    searched, dropped = select_terms(terms, stats.df_of)
    share = {t: stats.share(t) for t in searched}
    size = len(rows.ids)
    kept, common = _drop_common(searched, share, size, members, stats.spread_of)
    return FtsPlan(stats, kept, dropped, common, _scope_idf(kept, share, size), tuple(terms), size, members)


def planned_common_words(conn: sqlite3.Connection, query: ParsedQuery, filters: Filters, rows: ScopeRows,
                         members: frozenset[str] = frozenset()) -> tuple[frozenset[str], FtsPlan | None] | None:
    """The common words :func:`keyword_search` will most likely report for this query, from the
    scope's statistics (kept per scope), before the search runs: so the semantic side, which leaves
    them out of its query, can start beside it. Exact for a big scope (its statistics decide), whose
    plan comes back too, for the search to use instead of making it again; for a scanned one the
    statistics cover the same newest messages the scan counts, and the caller compares with what
    the search reported. None when the search would find no terms."""
    terms = list(query.terms)
    if not filters.session_ids or not terms or not len(rows.ids):
        return None
    try:
        if len(rows.ids) > RANKING.scan_scope_max:
            plan = _fts_plan(conn, rows, terms, filters, members)
            return plan.common, plan
        stats = scope_stats(conn, rows, filters)
    except sqlite3.DatabaseError:  # no FTS table, or a damaged one: keyword_search says which
        return None
    if len(terms) > RANKING.scan_needle_terms:
        terms, _ = select_terms(terms, stats.df_of)
    share = {t: stats.share(t) for t in terms}
    return _drop_common(terms, share, len(rows.ids[-RANKING.recent_fallback:]), members, stats.spread_of)[1], None


def _fts(conn, query: ParsedQuery, rows: ScopeRows, terms: list[Term], filters: Filters,
         limit: int, plan: FtsPlan | None = None, members: frozenset[str] = frozenset()) -> KeywordResult:
    scope_ids = rows.ids
    if plan is None or plan.terms != tuple(terms) or plan.scope_size != len(scope_ids) or plan.members != members:
        plan = _fts_plan(conn, rows, terms, filters, members)
    stats, kept, dropped, common, weights = plan.stats, plan.kept, plan.dropped, plan.common, plan.idf
    found_by = [p for p in probes.probes_of(query, kept) if not p.holds or set(p.holds) & set(weights)]
    cap = max(RANKING.min_per_probe, RANKING.rowid_budget // max(1, len(found_by)))
    if len(found_by) == 1:  # every row weighs the same: the newest ``candidates_max`` are all that is read
        cap = RANKING.candidates_max
    in_scope, spans = _scope_id_set(rows)
    found = probes.scope_matches(conn, found_by, cap, scope_ids, in_scope, spans)
    floor = min(weights.values(), default=1.0)
    prescore: dict[int, float] = {}
    for holds, rowids in found:
        weight = sum(weights.get(t, 0.0) for t in holds) / max(1, len(holds)) if holds else floor
        for mid in rowids:
            if mid in in_scope:
                prescore[mid] = prescore.get(mid, 0.0) + weight
    # The best by prescore, newest first among equals; a heap over (score, id) pairs, not a sort of
    # thousands of rowids through a key function (ids are unique: the same order).
    top = [-m for _, m in heapq.nsmallest(RANKING.candidates_max, ((-s, -mid) for mid, s in prescore.items()))]
    matcher = Matcher(kept)
    read = _rows(conn, top, filters)
    short = [t for t in kept if t.kind == "cjk" and not any(t.text in p for p in query.cjk_long)]
    if short:  # no Hermes index finds 1–2 character pieces: look in the scope's newest messages
        seen = set(top)
        recent = [mid for mid in scope_ids[-RANKING.recent_fallback:] if mid not in seen]
        needles = _needles(_rarest(short, stats.df_of, RANKING.window_needle_terms))
        read += _rows(conn, recent, filters, needles)
    docs = _docs(read, matcher)
    return KeywordResult(best(docs, weights, limit), common, _dropped(dropped), docs, weights)


def keyword_search(conn: sqlite3.Connection, query: ParsedQuery, filters: Filters, rows: ScopeRows, *,
                   limit: int = 50, plan: FtsPlan | None = None,
                   members: frozenset[str] = frozenset()) -> KeywordResult:
    """Best-first hits; ``rows``: the scope's text turns (sorted ids) and their memo; ``plan``:
    what :func:`planned_common_words` planned for this query and scope, if it ran; ``members``:
    words never dropped as common (:func:`scope_members`). Scopes up to
    ``RANKING.scan_scope_max`` messages are scanned whole.
    """
    terms = list(query.terms)
    if not filters.session_ids or not terms or not len(rows.ids):
        return KeywordResult([])
    if len(rows.ids) <= RANKING.scan_scope_max:
        return _scan(conn, rows, terms, filters, limit, members)
    try:
        return _fts(conn, query, rows, terms, filters, limit, plan, members)
    except sqlite3.OperationalError as exc:
        # A malformed MATCH or an FTS table this Hermes lacks must not cost the answer.
        log.info("FTS query failed (%s); scanning recent messages instead", exc)
        return _scan(conn, rows, terms, filters, limit, members)
    except sqlite3.DatabaseError as exc:
        # Hermes' FTS index itself is damaged ("database disk image is malformed": lost segments).
        # The scope's newest messages still answer, read from the messages table; the operator is
        # told what was not searched and the fix, Hermes' own rebuild of the index from its messages.
        # A damaged messages table fails the scan too, and the search reports the error.
        found = _scan(conn, rows, terms, filters, limit, members)
        db = _db_file(conn)
        n, read = len(rows.ids), min(len(rows.ids), RANKING.recent_fallback)
        searched = (f"this search read the project's {n} messages one by one instead (slower)" if read == n
                    else f"only this project's newest {read} of {n} messages were searched")
        detail = (f"Hermes' keyword index in {db} is damaged ({exc}): {searched}. "
                  "Fix: `hermes sessions repair`; where it finds nothing to repair (Hermes 0.19 does not see "
                  f"this damage), SQLite's own rebuild of the index from the messages: `sqlite3 {db} "
                  f'"{FTS_REBUILD}"` (nothing is lost).')
        if db not in _warned:  # once a process per file: every search says it in its result anyway
            _warned.add(db)
            log.warning("%s", detail)
        return dataclasses.replace(found, detail=detail)


_warned: set[str] = set()


# SQLite's FTS5 'rebuild' of Hermes' two message indexes from the messages table.
FTS_REBUILD = ("INSERT INTO messages_fts(messages_fts) VALUES('rebuild'); "
               "INSERT INTO messages_fts_trigram(messages_fts_trigram) VALUES('rebuild');")


def _db_file(conn: sqlite3.Connection) -> str:
    """The file of ``conn``'s main database (state.db), for messages that name it."""
    try:
        return next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), "") or "state.db"
    except sqlite3.Error:
        return "state.db"

