"""Project-scoped keyword search over Hermes' own FTS5 tables (read-only), ranked by BM25.

Why not ``MATCH 'a OR b' ORDER BY rank`` joined to the scope: FTS5 then computes bm25 for every
row that contains any word, in the whole profile, before the scope is applied — 0.4 s for one
common word in a 1M-message state.db (architecture.md measured the same). Instead:

1. candidates: for each query term, FTS5 returns matching rowids newest first, capped per term
   (no ranking, so this is cheap); they are intersected with the scope's message ids (cached);
   a scope small enough is simply read whole instead;
2. ranking: the few hundred candidates that match the most informative terms are read and
   scored with Okapi BM25 in Python, at most a few per conversation, so one chatty conversation
   cannot crowd out the others.

Latin words go to ``messages_fts`` (unicode61, with crude inflection matching), CJK runs of ≥3
characters to ``messages_fts_trigram`` as trigrams, shorter CJK runs are substring matches.
"""

from __future__ import annotations

import json
import logging
import math
import re
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .messages import ELIGIBLE_MESSAGE_SQL, message_text
from .query import CJK_CHAR, ParsedQuery, fold, fts_quote, trigrams

log = logging.getLogger(__name__)

# Measured on a 1M-message state.db (100k-message scope): budget 10k / 200 candidates gave keyword
# p95 33 ms, 6k / 120 gave 22 ms, with planted facts found in the top 3 for 97 vs 96 of 108 queries.
ROWID_BUDGET = 6_000  # newest matching rowids fetched over all terms of a query
MIN_PER_TERM = 1000
SCAN_SCOPE_MAX = 3000  # scopes up to this many messages are scored whole
RECENT_FALLBACK = 5000  # substring-only terms in a large scope: newest messages looked at
CANDIDATES_MAX = 120  # candidates read and scored with BM25
PER_CONVERSATION = 8  # hits kept per session in the ranked list (LoCoMo dev: 3 → 8 = +0.03 recall@10)
MAX_GRAMS = 16
K1, B, AVG_TOKENS = 1.2, 0.75, 30.0

_SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ies", "es", "ed", "s", "ly", "d", "e")
VARIANT_SUFFIXES = frozenset(("", "s", "es", "ed", "d", "ing", "ings", "er", "ers", "ion", "ions", "ation",
                              "ations", "e", "ies", "y", "ly"))
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Hit:
    message_id: int
    session_id: str
    score: float


@dataclass(frozen=True)
class KeywordResult:
    hits: list[Hit]
    # Words in more than COMMON_SHARE of the scope's messages (a project's own name, the user's
    # name): they rank nothing here, and they drown the meaning of a semantic query too.
    common_words: frozenset[str] = frozenset()


COMMON_SHARE = 0.10
MIN_SCOPE_FOR_COMMON = 50


@dataclass(frozen=True)
class Filters:
    session_ids: Sequence[str]  # the scope, current conversation already removed
    after: float | None = None
    before: float | None = None

    def sql(self) -> tuple[str, list]:
        clauses = [ELIGIBLE_MESSAGE_SQL, "m.session_id IN (SELECT value FROM json_each(?))"]
        params: list = [json.dumps(list(self.session_ids))]
        if self.after is not None:
            clauses.append("m.timestamp >= ?")
            params.append(self.after)
        if self.before is not None:
            clauses.append("m.timestamp < ?")
            params.append(self.before)
        return " AND ".join(clauses), params


def stem(word: str) -> str:
    """A deliberately crude English stem, never shorter than 4 characters: enough for "decide" to
    find "decided" without a stemming dependency."""
    if not (word.isascii() and word.isalpha()):
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


@dataclass(frozen=True)
class Term:
    """One thing to look for: a latin word (matched with its inflections), a trigram or a substring."""

    kind: str  # "word" | "gram" | "sub"
    text: str
    raw: str = ""  # the word as typed (lower-cased), when folding changed it

    def needles(self) -> list[str]:
        """Substrings a raw ``content`` holding this term must contain (for SQL ``instr``).

        Hermes stores multimodal messages as JSON with ``\\uXXXX`` escapes, so non-ASCII terms
        also look for their escaped spelling.
        """
        base = stem(self.text) if self.kind == "word" else self.text
        spellings = {base, self.raw} - {""}
        return sorted(spellings | {_escaped(x) for x in spellings if not x.isascii()})

    def escaped_phrase(self) -> str | None:
        """The FTS5 phrase that finds this term inside Hermes' escaped multimodal JSON."""
        source = self.raw or self.text
        if source.isascii():
            return None
        tokens = _TOKEN.findall(_escaped(source))
        return fts_quote(" ".join(tokens)) if tokens else None

    def fts(self) -> tuple[str, str] | None:
        if self.kind == "word":
            base = stem(self.text)
            return "messages_fts", (f"{fts_quote(base)}*" if base != self.text else fts_quote(self.text))
        if self.kind == "gram":
            return "messages_fts_trigram", fts_quote(self.text)
        return None

    def count(self, tokens: Counter, folded: str) -> int:
        if self.kind == "word":
            base = stem(self.text)
            if base == self.text:
                return tokens.get(self.text, 0)
            return sum(n for tok, n in tokens.items() if tok.startswith(base) and tok[len(base):] in VARIANT_SUFFIXES)
        return folded.count(self.text)


def _escaped(text: str) -> str:
    return json.dumps(text)[1:-1].lower()


def query_terms(query: ParsedQuery) -> list[Term]:
    typed = {fold(t): t.lower() for t in _TOKEN.findall(query.text)}
    terms = [Term("word", w, typed.get(w, w) if typed.get(w, w) != w else "") for w in query.words]
    grams = [trigrams(run) for run in query.cjk_long]
    # Spread the gram budget over every run, so the end of a long question still counts.
    per_run = max(1, MAX_GRAMS // max(1, len(grams)))
    for run_grams in grams:
        step = max(1, math.ceil(len(run_grams) / per_run))
        terms += [Term("gram", g) for g in run_grams[::step][:per_run]]
    terms += [Term("sub", s) for s in query.cjk_short]
    return terms


@dataclass(frozen=True)
class Doc:
    message_id: int
    session_id: str
    tokens: Counter
    folded: str
    length: int


def make_doc(message_id: int, session_id: str, text: str) -> Doc:
    folded = fold(text)
    tokens = Counter(_TOKEN.findall(CJK_CHAR.sub(" ", folded)))
    length = sum(tokens.values()) + len(CJK_CHAR.findall(folded)) // 2
    return Doc(message_id, session_id, tokens, folded, max(1, length))


def bm25(doc: Doc, terms: Sequence[Term], idf: dict[Term, float]) -> float:
    score = 0.0
    for term in terms:
        tf = term.count(doc.tokens, doc.folded)
        if tf:
            score += idf[term] * tf * (K1 + 1) / (tf + K1 * (1 - B + B * doc.length / AVG_TOKENS))
    return score


def _idf(df: int, total: int) -> float:
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def _term_rowids(conn: sqlite3.Connection, term: Term, cap: int) -> np.ndarray:
    table, match = term.fts()  # type: ignore[misc]
    return _fts_rowids(conn, table, match, cap)


def _fts_rowids(conn: sqlite3.Connection, table: str, match: str, cap: int) -> np.ndarray:
    rows = conn.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT ?",
                        (match, cap)).fetchall()
    return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))


def _read(conn: sqlite3.Connection, ids: Sequence[int], filters: Filters,
          prefilter: Sequence[str] = ()) -> list[Doc]:
    where, params = filters.sql()
    extra = ""
    if prefilter:  # substring test in SQL, so only rows that can score cross into Python
        extra = " AND (" + " OR ".join("instr(lower(m.content), ?) > 0" for _ in prefilter) + ")"
        params = [*params, *prefilter]
    rows = conn.execute(
        f"SELECT m.id, m.session_id, m.content FROM messages m JOIN sessions s ON s.id = m.session_id"
        f" WHERE m.id IN (SELECT value FROM json_each(?)) AND {where}{extra}",
        [json.dumps([int(i) for i in ids]), *params]).fetchall()
    return [make_doc(r[0], r[1], message_text(r[2])) for r in rows]


def _scope_share(matches: np.ndarray, in_scope: np.ndarray, scope_ids: np.ndarray) -> float:
    """Share of the scope's messages holding a term. The matches are the newest ones (capped),
    so count only over the part of the scope their id range covers, where none is missing."""
    if not len(matches):
        return 0.0
    covered = scope_ids[scope_ids >= matches.min()]
    return len(in_scope) / max(1, len(covered))


def _drop_common(terms: Sequence[Term], share: dict[Term, float], scope_size: int) -> tuple[list[Term], frozenset[str]]:
    """Drop words found in more than COMMON_SHARE of the scope, unless the rest would find nothing
    (or the scope is too small for "common" to mean anything)."""
    if scope_size < MIN_SCOPE_FOR_COMMON:
        return list(terms), frozenset()
    common = [t for t in terms if t.kind == "word" and share.get(t, 0.0) > COMMON_SHARE]
    kept = [t for t in terms if t not in common]
    if not any(share.get(t, 0.0) > 0 for t in kept):
        return list(terms), frozenset()
    return kept, frozenset(t.raw or t.text for t in common)


def _rank(docs: list[Doc], terms: Sequence[Term], idf: dict[Term, float], limit: int) -> list[Hit]:
    scored = sorted(((bm25(d, terms, idf), d.message_id, d.session_id) for d in docs), key=lambda t: (-t[0], -t[1]))
    per_session: Counter = Counter()
    hits: list[Hit] = []
    for score, mid, sid in scored:
        if score <= 0 or per_session[sid] >= PER_CONVERSATION:
            continue
        per_session[sid] += 1
        hits.append(Hit(mid, sid, score))
        if len(hits) >= limit:
            break
    return hits


def _scan(conn, scope_ids: np.ndarray, terms, filters, total, limit) -> KeywordResult:
    """Score the scope's newest messages directly: small scopes, CJK words under three characters,
    or no usable FTS. Only messages containing a term are read; idf comes from the window."""
    window = scope_ids[-RECENT_FALLBACK:]
    docs = _read(conn, window, filters, sorted({n for t in terms for n in t.needles()}))
    df: Counter = Counter()
    for doc in docs:
        for term in terms:
            df[term] += term.count(doc.tokens, doc.folded) > 0
    kept, common = _drop_common(terms, {t: df[t] / max(1, len(window)) for t in terms}, len(window))
    scale = total / max(1, len(window))  # document frequency in the scope, projected to the profile
    idf = {t: _idf(int(df[t] * scale), total) for t in kept}
    return KeywordResult(_rank(docs, kept, idf, limit), common)


def keyword_search(conn: sqlite3.Connection, query: ParsedQuery, filters: Filters, *,
                   scope_ids: np.ndarray, total: int, limit: int = 50) -> KeywordResult:
    """Best-first hits; ``scope_ids`` are the sorted message ids of the scope's sessions."""
    terms = query_terms(query)
    if not filters.session_ids or not terms or not len(scope_ids):
        return KeywordResult([])
    fts_terms = [t for t in terms if t.fts()]
    if len(scope_ids) <= SCAN_SCOPE_MAX or not fts_terms:
        return _scan(conn, scope_ids, terms, filters, total, limit)
    cap = max(MIN_PER_TERM, ROWID_BUDGET // len(fts_terms))
    try:
        matched = {t: _term_rowids(conn, t, cap) for t in fts_terms}
    except sqlite3.OperationalError as exc:
        # A malformed MATCH or an FTS table this Hermes lacks must not cost the answer.
        log.info("FTS query failed (%s); scanning recent messages instead", exc)
        return _scan(conn, scope_ids, terms, filters, total, limit)
    in_scope = {t: ids[np.isin(ids, scope_ids, assume_unique=True)] for t, ids in matched.items()}
    share = {t: _scope_share(matched[t], ids, scope_ids) for t, ids in in_scope.items()}
    kept, common = _drop_common(terms, share, len(scope_ids))
    # A capped list means "at least this common": its idf is an upper bound, which is what matters.
    idf = {t: _idf(len(matched[t]) * (4 if len(matched[t]) >= cap else 1), total) for t in kept if t in matched}
    escaped = [p for p in dict.fromkeys(t.escaped_phrase() for t in kept) if p]
    if escaped:  # non-ASCII text inside multimodal JSON; BM25 on the decoded text decides later
        alt = Term("sub", "\x00escaped")
        ids = _fts_rowids(conn, "messages_fts", " OR ".join(escaped), cap)
        in_scope[alt] = ids[np.isin(ids, scope_ids, assume_unique=True)]
        idf[alt] = min(idf.values(), default=1.0)
    prescore: dict[int, float] = {}
    for term, ids in in_scope.items():
        if term in idf:
            for mid in ids.tolist():
                prescore[mid] = prescore.get(mid, 0.0) + idf[term]
    best = sorted(prescore, key=lambda mid: (-prescore[mid], -mid))[:CANDIDATES_MAX]
    docs = _read(conn, best, filters)
    subs = [t for t in kept if not t.fts()]
    if subs:
        recent = scope_ids[-RECENT_FALLBACK:]
        docs += _read(conn, recent[~np.isin(recent, best)], filters, sorted({n for t in subs for n in t.needles()}))
        idf.update({t: _idf(cap, total) for t in subs})
    return KeywordResult(_rank(docs, kept, idf, limit), common)
