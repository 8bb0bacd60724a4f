"""Project-scoped keyword search over Hermes' own FTS5 tables (read-only).

Latin words go to ``messages_fts`` (unicode61), CJK runs of ≥3 characters to
``messages_fts_trigram`` as OR-ed trigrams, shorter CJK runs to LIKE. Words are pruned by
document frequency (``fts5vocab``) before the OR query: ranking every row that contains a very
common word is what makes naive OR slow at scale (architecture.md), and such words carry
almost no BM25 weight anyway.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from .fusion import rrf
from .messages import ELIGIBLE_MESSAGE_SQL, message_text
from .query import ParsedQuery, fold, fts_quote, like_pattern, trigrams

log = logging.getLogger(__name__)

MAX_TERMS = 12
# Stop adding ever-commoner words once this many rows would be ranked.
MAX_RANKED_ROWS = 60_000
MAX_TRIGRAMS = 24


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


def _vocab_table(conn: sqlite3.Connection, fts: str) -> str:
    name = f"recall_vocab_{fts}"
    # TEMP objects live in the connection's private temp schema, so this works on a read-only handle.
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{name} USING fts5vocab(main, '{fts}', 'row')")
    return f"temp.{name}"


def select_terms(doc_freqs: dict[str, int], *, max_terms: int = MAX_TERMS,
                 budget: int = MAX_RANKED_ROWS) -> list[str]:
    """Rarest first; drop absent words; stop before the ranked-row budget is spent (keep ≥1)."""
    present = sorted((df, t) for t, df in doc_freqs.items() if df > 0)
    chosen: list[str] = []
    spent = 0
    for df, term in present[:max_terms]:
        if chosen and spent + df > budget:
            break
        chosen.append(term)
        spent += df
    return chosen


_SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ies", "es", "ed", "s", "ly", "d", "e")
VARIANT_SUFFIXES = frozenset(("", "s", "es", "ed", "d", "ing", "ings", "er", "ers", "ion", "ions", "ation",
                              "ations", "e", "ies", "y", "ly"))


def stem(word: str) -> str:
    """A deliberately crude English stem: enough to let "decide" find "decided"/"decision"-free
    variants without a stemming dependency; never shorter than 4 characters."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def _doc_freqs(conn: sqlite3.Connection, fts: str, words: Sequence[str]) -> dict[str, int]:
    """Document frequency of each word and of its inflected forms present in the index."""
    vocab = _vocab_table(conn, fts)
    freqs: dict[str, int] = {}
    for word in words:
        base = stem(word) if word.isalpha() and word.isascii() else word
        if base == word:
            row = conn.execute(f"SELECT doc FROM {vocab} WHERE term = ?", (word,)).fetchone()
            freqs[word] = row[0] if row else 0
            continue
        rows = conn.execute(f"SELECT term, doc FROM {vocab} WHERE term >= ? AND term < ? LIMIT 64",
                            (base, base + "\uffff")).fetchall()
        for term, doc in rows:
            if term[len(base):] in VARIANT_SUFFIXES or term == word:
                freqs[term] = doc
        freqs.setdefault(word, 0)
    return freqs


def _fts_hits(conn: sqlite3.Connection, fts: str, match: str, filters: Filters, limit: int,
              terms: Sequence[str]) -> list[Hit]:
    where, params = filters.sql()
    sql = (
        f"SELECT m.id, m.session_id, bm25({fts}) AS score,"
        # Byte comparison: SQLite's text functions stop at the NUL of Hermes' "\\x00json:" prefix.
        f" CASE WHEN substr(CAST(m.content AS BLOB), 1, 6) = X'006A736F6E3A' THEN m.content END AS multimodal"
        f" FROM {fts} JOIN messages m ON m.id = {fts}.rowid JOIN sessions s ON s.id = m.session_id"
        f" WHERE {fts} MATCH ? AND {where} ORDER BY rank LIMIT ?"
    )
    rows = conn.execute(sql, [match, *params, limit]).fetchall()
    # Hermes indexes a multimodal row's raw JSON encoding; a hit only on its plumbing
    # ("image_url", "base64", a data URL) is not a hit on anything the person said.
    return [Hit(r[0], r[1], -float(r[2])) for r in rows if r[3] is None or _says_any(r[3], terms)]


def _says_any(content: str, terms: Sequence[str]) -> bool:
    text = fold(message_text(content))
    return any(term in text for term in terms)


def _like_hits(conn: sqlite3.Connection, terms: Sequence[str], filters: Filters, limit: int) -> list[Hit]:
    """Substring search for terms FTS cannot serve; messages matching more terms first, then newest."""
    where, params = filters.sql()
    like = "m.content LIKE ? ESCAPE '\\'"
    matched = " + ".join(f"({like})" for _ in terms)
    any_match = " OR ".join(like for _ in terms)
    sql = (
        f"SELECT m.id, m.session_id, ({matched}) AS n FROM messages m JOIN sessions s ON s.id = m.session_id"
        f" WHERE ({any_match}) AND {where} ORDER BY n DESC, m.timestamp DESC LIMIT ?"
    )
    patterns = [like_pattern(t) for t in terms]
    rows = conn.execute(sql, [*patterns, *patterns, *params, limit]).fetchall()
    return [Hit(r[0], r[1], float(r[2])) for r in rows]


def keyword_search(conn: sqlite3.Connection, query: ParsedQuery, filters: Filters,
                   *, limit: int = 50) -> list[Hit]:
    if not filters.session_ids or query.empty:
        return []
    lists: list[list[Hit]] = []
    try:
        if query.words:
            terms = select_terms(_doc_freqs(conn, "messages_fts", query.words))
            if terms:
                lists.append(_fts_hits(conn, "messages_fts", " OR ".join(map(fts_quote, terms)), filters, limit,
                                       [stem(t) for t in terms]))
        if query.cjk_long:
            grams = [g for run in query.cjk_long for g in trigrams(run)][:MAX_TRIGRAMS]
            lists.append(_fts_hits(conn, "messages_fts_trigram", " OR ".join(map(fts_quote, grams)),
                                   filters, limit, grams))
    except sqlite3.OperationalError as exc:
        # A malformed MATCH (or an FTS table this Hermes build lacks) must not cost the user
        # their answer: fall back to substring search over the same scope.
        log.info("FTS query failed (%s); falling back to LIKE", exc)
        return _like_hits(conn, query.highlight_terms()[:MAX_TERMS], filters, limit)
    if query.cjk_short:
        lists.append(_like_hits(conn, query.cjk_short, filters, limit))
    lists = [hits for hits in lists if hits]
    if len(lists) <= 1:
        return lists[0] if lists else []
    by_id = {h.message_id: h for hits in lists for h in hits}
    fused = rrf([[h.message_id for h in hits] for hits in lists])
    return [Hit(mid, by_id[mid].session_id, score) for mid, score in fused[:limit]]
