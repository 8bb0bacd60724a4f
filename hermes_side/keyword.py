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
from .query import ParsedQuery, fold, fts_quote, trigrams

log = logging.getLogger(__name__)

CAP_PER_TERM = 5000  # newest matching rowids fetched per term
SCAN_SCOPE_MAX = 3000  # scopes up to this many messages are scored whole
RECENT_FALLBACK = 5000  # substring-only terms in a large scope: newest messages looked at
CANDIDATES_MAX = 300  # candidates read and scored with BM25
PER_CONVERSATION = 3  # hits kept per session in the ranked list
MAX_GRAMS = 16
K1, B, AVG_TOKENS = 1.2, 0.75, 30.0

_SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ies", "es", "ed", "s", "ly", "d", "e")
VARIANT_SUFFIXES = frozenset(("", "s", "es", "ed", "d", "ing", "ings", "er", "ers", "ion", "ions", "ation",
                              "ations", "e", "ies", "y", "ly"))
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


@dataclass(frozen=True)
class Hit:
    message_id: int
    session_id: str
    score: float


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


def query_terms(query: ParsedQuery) -> list[Term]:
    terms = [Term("word", w) for w in query.words]
    grams = [trigrams(run) for run in query.cjk_long]
    # Spread the gram budget over every run, so the end of a long question still counts.
    per_run = max(1, MAX_GRAMS // max(1, len(grams)))
    for run_grams in grams:
        step = max(1, math.ceil(len(run_grams) / per_run))
        terms += [Term("gram", g) for g in run_grams[::step][:per_run]]
    terms += [Term("sub", s) for s in query.cjk_short]
    return terms


def _tokens(text: str) -> tuple[Counter, str, int]:
    folded = fold(text)
    tokens = Counter(_TOKEN.findall(_CJK_CHAR.sub(" ", folded)))
    length = sum(tokens.values()) + len(_CJK_CHAR.findall(folded)) // 2
    return tokens, folded, max(1, length)


def bm25(text: str, terms: Sequence[Term], idf: dict[Term, float]) -> float:
    tokens, folded, length = _tokens(text)
    score = 0.0
    for term in terms:
        tf = term.count(tokens, folded)
        if tf:
            score += idf[term] * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / AVG_TOKENS))
    return score


def _idf(df: int, total: int) -> float:
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def _term_rowids(conn: sqlite3.Connection, term: Term) -> np.ndarray:
    table, match = term.fts()  # type: ignore[misc]
    rows = conn.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT ?",
                        (match, CAP_PER_TERM)).fetchall()
    return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))


def _read(conn: sqlite3.Connection, ids: Sequence[int], filters: Filters) -> list[tuple[int, str, str]]:
    where, params = filters.sql()
    rows = conn.execute(
        f"SELECT m.id, m.session_id, m.content FROM messages m JOIN sessions s ON s.id = m.session_id"
        f" WHERE m.id IN (SELECT value FROM json_each(?)) AND {where}",
        [json.dumps([int(i) for i in ids]), *params]).fetchall()
    return [(r[0], r[1], message_text(r[2])) for r in rows]


def _rank(rows: list[tuple[int, str, str]], terms: Sequence[Term], idf: dict[Term, float],
          limit: int) -> list[Hit]:
    scored = sorted(((bm25(text, terms, idf), mid, sid) for mid, sid, text in rows), key=lambda t: (-t[0], -t[1]))
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


def _scan(conn, scope_ids: np.ndarray, terms, filters, total, limit) -> list[Hit]:
    """Score every (recent) message of the scope directly: small scopes, substring terms, or no FTS."""
    rows = _read(conn, scope_ids[-RECENT_FALLBACK:], filters)
    df = Counter()
    for _, _, text in rows:
        tokens, folded, _ = _tokens(text)
        for term in terms:
            df[term] += term.count(tokens, folded) > 0
    scale = total / max(1, len(rows))  # document frequency in the scope, projected to the profile
    idf = {t: _idf(int(df[t] * scale), total) for t in terms}
    return _rank(rows, terms, idf, limit)


def keyword_search(conn: sqlite3.Connection, query: ParsedQuery, filters: Filters, *,
                   scope_ids: np.ndarray, total: int, limit: int = 50) -> list[Hit]:
    """Best-first hits; ``scope_ids`` are the sorted message ids of the scope's sessions."""
    terms = query_terms(query)
    if not filters.session_ids or not terms or not len(scope_ids):
        return []
    fts_terms = [t for t in terms if t.fts()]
    if len(scope_ids) <= SCAN_SCOPE_MAX or not fts_terms:
        return _scan(conn, scope_ids, terms, filters, total, limit)
    try:
        matched = {t: _term_rowids(conn, t) for t in fts_terms}
    except sqlite3.OperationalError as exc:
        # A malformed MATCH or an FTS table this Hermes lacks must not cost the answer.
        log.info("FTS query failed (%s); scanning recent messages instead", exc)
        return _scan(conn, scope_ids, terms, filters, total, limit)
    # A capped list means "at least this common": its idf is an upper bound, which is what matters.
    idf = {t: _idf(len(ids) * (4 if len(ids) >= CAP_PER_TERM else 1), total) for t, ids in matched.items()}
    prescore: dict[int, float] = {}
    for term, ids in matched.items():
        for mid in ids[np.isin(ids, scope_ids, assume_unique=True)].tolist():
            prescore[mid] = prescore.get(mid, 0.0) + idf[term]
    best = sorted(prescore, key=lambda mid: (-prescore[mid], -mid))[:CANDIDATES_MAX]
    rows = _read(conn, best, filters)
    subs = [t for t in terms if not t.fts()]
    if subs:
        rows += [r for r in _read(conn, scope_ids[-RECENT_FALLBACK:], filters)
                 if r[0] not in prescore and any(s.text in fold(r[2]) for s in subs)]
        idf.update({s: _idf(CAP_PER_TERM, total) for s in subs})
    return _rank(rows, terms, idf, limit)
