"""Where a big scope's keyword candidates come from: FTS5 probes that read the scope's own matches.

A scope too big to score whole (keyword.py) asks Hermes' FTS tables, one probe per query word and
per trigram of a long CJK piece, for its newest matching messages. Each probe keeps the *scope's*
newest matches up to its cap, never the profile's (a busy project must not push a quiet one's answers
out of reach), and reads what the scope holds rather than what the profile holds: a scope that is
sparse in its id range is asked span by span (``scope_spans``), a dense one in one pass over its
range (``range_rowids``); both give the same rows. A word asks for the inflections BM25 counts that
the index holds (``held_forms``), not its stem's prefix: the prefix also finds "imagine" for "image",
rows that score nothing and take a candidate's place, and FTS5 merges every matching term's whole
list again for each span.
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
import weakref
from collections.abc import Sequence
from typing import NamedTuple

from ..stores.hermes_db import plain_cursor
from .query import TOKEN, ParsedQuery, Term, escaped_phrase, fts_quote, trigrams
from .settings import RANKING

_FTS_PAGE = 2048  # rowids fetched at a time while a probe looks for the scope's matches


class Probe(NamedTuple):
    table: str  # messages_fts or messages_fts_trigram
    match: str  # its MATCH expression
    holds: tuple[Term, ...]  # the query terms a row found here holds (none: the multimodal probe)


def range_rowids(conn: sqlite3.Connection, table: str, match: str, cap: int, scope_ids: Sequence[int],
                 in_scope: frozenset[int]) -> list[int]:
    """The scope's newest ``cap`` messages that match: the index's matches newest first from the
    scope's newest message down to its oldest, kept when in the scope, until ``cap`` are found.
    Counted in the scope, never in the profile: the profile's newest matches cut at a fixed number
    let a busy project push a quiet one's answers out of reach (issue 25: a 10k project kept the
    same top 5 for 1 of 10 queries once 990k messages of other projects were added)."""
    if not scope_ids:
        return []
    cur = plain_cursor(conn).execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND rowid BETWEEN ? AND ?"
                                     " ORDER BY rowid DESC", (match, scope_ids[0], scope_ids[-1]))
    out: list[int] = []
    while page := cur.fetchmany(_FTS_PAGE):
        out += [r[0] for r in page if r[0] in in_scope]
        if len(out) >= cap:
            return out[:cap]
    return out


# Measured: benchmarks/README.md, "Constants chosen by measurement".
_SPAN_GAP = 256  # other rows between two of the scope's messages that one span may cover
_MAX_SPANS = 96  # each span costs the index one lookup per form (~0.05 ms)
_SPARSE = 0.1  # spans only when the scope holds under this share of the ids in its range


def scope_spans(scope_ids: Sequence[int]) -> list[tuple[int, int]]:
    """The scope's sorted ids as few (first, last) ranges — or none, when the scope is dense in its
    range (one range read whole costs less) or too scattered (more than ``_MAX_SPANS`` ranges)."""
    if not len(scope_ids) or len(scope_ids) >= _SPARSE * (scope_ids[-1] - scope_ids[0] + 1):
        return []
    cuts = [i for i in range(1, len(scope_ids)) if scope_ids[i] - scope_ids[i - 1] > _SPAN_GAP]
    if len(cuts) >= _MAX_SPANS:
        return []
    starts, ends = [0, *cuts], [*(c - 1 for c in cuts), len(scope_ids) - 1]
    return [(int(scope_ids[a]), int(scope_ids[b])) for a, b in zip(starts, ends, strict=True)]


# Whether ``messages_fts`` holds a token, per connection, for as long as its ``PRAGMA data_version``
# stays put: a query word's ~17 forms cost one index lookup each, for every word of every search
# (~0.6 ms a word), and the index changes only when Hermes writes. A read-only connection's
# data_version moves exactly when another connection commits, so a new message's word is seen by
# the next search. Keyed weakly: a closed connection's entries go with it.
_HELD: weakref.WeakKeyDictionary[sqlite3.Connection, tuple[int, dict[str, bool]]] = weakref.WeakKeyDictionary()
_HELD_LOCK = threading.Lock()  # searches on other threads lease other connections at the same time
_HELD_MAX = 50_000  # tokens remembered per connection before the memo starts over


def held_memo(conn: sqlite3.Connection) -> dict[str, bool]:
    """This connection's memo of which tokens the index holds, emptied when the file has changed
    since it was filled (one ``PRAGMA data_version``: microseconds). A connection that takes no
    weak reference (a plain ``sqlite3.connect``) gets a memo for this call only."""
    version = conn.execute("PRAGMA data_version").fetchone()[0]
    with _HELD_LOCK:
        try:
            kept = _HELD.get(conn)
        except TypeError:
            return {}
        if kept is None or kept[0] != version or len(kept[1]) > _HELD_MAX:
            kept = (version, {})
            _HELD[conn] = kept
        return kept[1]


def held_forms(conn: sqlite3.Connection, term: Term, memo: dict[str, bool] | None = None) -> list[str] | None:
    """The forms of ``term`` (the tokens BM25 counts for it) that ``messages_fts`` holds at all: one
    cheap lookup each, or none when ``memo`` (``held_memo``) knows the token. None when the term's
    words do not tokenise to one FTS token each."""
    memo = {} if memo is None else memo
    held = []
    for form in term.forms:
        if not TOKEN.fullmatch(form):
            return None
        found = memo.get(form)
        if found is None:
            found = memo[form] = conn.execute("SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT 1",
                                              (fts_quote(form),)).fetchone() is not None
        if found:
            held.append(form)
    return held


def span_rowids(conn: sqlite3.Connection, table: str, match: str, cap: int, spans: Sequence[tuple[int, int]],
                in_scope: frozenset[int]) -> list[int]:
    """The newest ``cap`` matches of a word (an OR of the forms the index holds) or of a CJK trigram
    in a scope that is sparse in the profile, asked span by span: what is read is the scope's
    matches, not every project's (a common word in a 10k project of a 1M profile: 5 ms instead of
    150; Chinese queries there p95 243 → 130 ms). Never a stem's prefix query: that merges every
    matching term's whole list again for each span (20 ms a span)."""
    # CROSS JOIN keeps the spans outside, so each span's bounds reach the FTS table as its rowid range.
    rows = plain_cursor(conn).execute(
        f"SELECT f.rowid FROM json_each(?) AS span CROSS JOIN {table} AS f"
        f" WHERE f.{table} MATCH ? AND f.rowid BETWEEN json_extract(span.value, '$[0]')"
        " AND json_extract(span.value, '$[1]')", (json.dumps(spans), match)).fetchall()
    return sorted((r[0] for r in rows if r[0] in in_scope), reverse=True)[:cap]


def probes_of(query: ParsedQuery, terms: list[Term]) -> list[Probe]:
    """FTS statements for a big scope: a word's, each CJK piece's trigrams, and one for non-ASCII
    words inside multimodal JSON."""
    kept = set(terms)
    probes = [Probe("messages_fts", t.fts(), (t,)) for t in terms if t.kind == "word"]
    pieces = [p for p in query.cjk_long if any(Term("cjk", p[i:i + 2]) in kept for i in range(len(p) - 1))]
    per_piece = max(1, RANKING.max_grams // max(1, len(pieces)))
    for piece in pieces[:RANKING.max_grams]:
        grams = trigrams(piece)
        step = max(1, math.ceil(len(grams) / per_piece))  # spread over the piece, so its end counts too
        for gram in grams[::step][:per_piece]:
            holds = tuple(t for t in (Term("cjk", gram[:2]), Term("cjk", gram[1:])) if t in kept)
            probes.append(Probe("messages_fts_trigram", fts_quote(gram), holds))
    escaped = [p for p in dict.fromkeys(escaped_phrase(t.raw or t.text) for t in terms if t.kind == "word") if p]
    escaped += [p for p in dict.fromkeys(escaped_phrase(piece) for piece in pieces) if p]
    if escaped:  # non-ASCII text inside multimodal JSON; BM25 on the decoded text decides later
        probes.append(Probe("messages_fts", " OR ".join(escaped[:RANKING.max_escaped]), ()))
    return probes


Found = list[tuple[tuple[Term, ...], list[int]]]  # each probe's terms and the rows it found


def scope_matches(conn: sqlite3.Connection, probes: Sequence[Probe], cap: int, scope_ids: Sequence[int],
                  in_scope: frozenset[int], spans: Sequence[tuple[int, int]]) -> Found:
    """Each probe's terms and the scope's newest ``cap`` rows it finds (span by span when ``spans``)."""
    found: Found = []
    memo = held_memo(conn)
    for table, match, holds in probes:
        forms = held_forms(conn, holds[0], memo) if len(holds) == 1 and holds[0].kind == "word" else None
        if forms is not None:
            if not forms:  # no form of the word anywhere in the profile
                found.append((holds, []))
                continue
            match = " OR ".join(fts_quote(f) for f in forms)
        if spans and (forms is not None or table == "messages_fts_trigram"):  # no prefix query in them
            found.append((holds, span_rowids(conn, table, match, cap, spans, in_scope)))
        else:
            found.append((holds, range_rowids(conn, table, match, cap, scope_ids, in_scope)))
    return found
