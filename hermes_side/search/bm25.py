"""Okapi BM25 over one query's candidates: what a message holds of the query, what it scores, the best.

Pure: texts and weights come in as data. keyword.py chooses the candidates and the terms' weights
(counted over the scope alone); this module counts and scores.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..text import without_code
from .episodes import parts
from .query import ASCII_TOKEN, CJK_CHAR, TOKEN, Term, cjk_runs, fold
from .settings import RANKING

# Every weight below is ``RANKING`` (settings.py), read at call time.


@dataclass(frozen=True)
class Hit:
    message_id: int
    session_id: str
    score: float


@dataclass(frozen=True)
class Doc:
    message_id: int
    session_id: str
    tf: dict[Term, int]  # occurrences of each query term
    length: int  # Latin tokens + CJK characters, outside fenced code blocks
    timestamp: float | None = None  # when it was said


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

    def doc(self, message_id: int, session_id: str, text: str, timestamp: float | None = None, *,
            whole: str | None = None) -> Doc:
        """What ``text`` holds of the query; ``whole``: the message's whole text when ``text`` is only
        what counts for the query (buffered.py) — the length is the message's own."""
        folded = fold(text)
        cut = _cut(folded)
        tokens, n_cjk = cut
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
        if whole is not None and whole != text:
            folded = fold(whole)
            cut = _cut(folded)
        return Doc(message_id, session_id, tf, _length(folded, cut), timestamp)


def _cut(folded: str) -> tuple[list[str], int]:
    """Folded text's Latin tokens and its count of CJK characters. Most history is ASCII: no CJK pass
    over it (a quarter of the time of a message's count), and its tokens cut by the ASCII pattern
    (half the time of the Unicode one)."""
    if folded.isascii():
        return ASCII_TOKEN.findall(folded), 0
    latin, n_cjk = CJK_CHAR.subn(" ", folded)
    return TOKEN.findall(latin), n_cjk


def _length(folded: str, cut: tuple[list[str], int]) -> int:
    """A message's length in BM25's terms (``cut``: :func:`_cut` of ``folded``): its tokens and CJK
    characters, a pasted code block's not — it is not what the prose is about (text.FENCED_CODE)."""
    tokens, n_cjk = cut
    if "```" in folded:
        prose = without_code(folded)
        latin, n_cjk = CJK_CHAR.subn(" ", prose)
        tokens = (ASCII_TOKEN if folded.isascii() else TOKEN).findall(latin)
    return max(1, len(tokens) + n_cjk)


def bm25(doc: Doc, idf: dict[Term, float]) -> float:
    """Okapi BM25 of a message over the terms in ``idf`` (terms missing there do not count)."""
    score = 0.0
    norm = RANKING.bm25_k1 * (1 - RANKING.bm25_b + RANKING.bm25_b * doc.length / RANKING.bm25_avg_tokens)
    for term, tf in doc.tf.items():
        weight = idf.get(term)
        if weight:
            score += weight * term.weight * tf * (RANKING.bm25_k1 + 1) / (tf + norm)
    return score


def idf(df: float, total: int) -> float:
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def best(docs: list[Doc], weights: dict[Term, float], limit: int) -> list[Hit]:
    """The ``limit`` best-scoring messages, newest first among equals, at most
    ``RANKING.per_conversation`` of one conversation — a session's matching turns cut at each pause
    of more than ``RANKING.conversation_pause`` between them (capped per session, a group's session
    of weeks gave 8 hits for its whole history)."""
    scored = sorted(((bm25(d, weights), d.message_id, d.session_id) for d in docs), key=lambda t: (-t[0], -t[1]))
    # a pasted log is one burst of matches; a session of weeks, many (episodes.parts)
    burst = parts(((d.message_id, d.session_id, d.timestamp) for d in docs), RANKING.conversation_pause)
    per_conversation: Counter = Counter()
    hits: list[Hit] = []
    for score, mid, sid in scored:
        conversation = (sid, burst.get(mid, 0))
        if score <= 0 or per_conversation[conversation] >= RANKING.per_conversation:
            continue
        per_conversation[conversation] += 1
        hits.append(Hit(mid, sid, score))
        if len(hits) >= limit:
            break
    return hits
