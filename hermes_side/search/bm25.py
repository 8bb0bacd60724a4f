"""A query's terms and how one message scores on them: words with their inflections, CJK bigrams, Okapi BM25.

Pure text work, no database: keyword.py finds the candidates in the scope and weighs each term by
the scope's statistics; this module says which tokens of a message count as which term.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from ..text import without_code
from .query import CJK_CHAR, ParsedQuery, bigrams, cjk_runs, fold, fts_quote
from .settings import RANKING

_SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ies", "es", "ed", "s", "ly", "d", "e")
VARIANT_SUFFIXES = ("", "s", "es", "ed", "d", "ing", "ings", "er", "ers", "ion", "ions", "ation",
                    "ations", "e", "ies", "y", "ly")
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


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
    """One BM25 term: a Latin word (counted with its inflections) or a CJK bigram / character."""

    kind: str  # "word" | "cjk"
    text: str
    raw: str = ""  # the word as typed (lower-cased), when folding changed it
    weight: float = field(default=1.0, compare=False)  # a bigram's share of its CJK piece

    @cached_property
    def forms(self) -> tuple[str, ...]:
        """Document tokens that count as this term (see ``Matcher``): a word and its inflections."""
        if self.kind != "word":
            return (self.text,)
        base = stem(self.text)
        if base == self.text and not (RANKING.inflect_unstemmed and self.text.isascii() and self.text.isalpha()
                                      and len(self.text) >= 4):
            return (self.text,)
        return tuple(dict.fromkeys([self.text, *(base + suffix for suffix in VARIANT_SUFFIXES)]))

    def needles(self) -> list[str]:
        """Substrings a raw ``content`` holding this term must contain (for SQL ``instr``).

        Hermes stores multimodal messages as JSON with ``\\uXXXX`` escapes, so non-ASCII terms
        also look for their escaped spelling.
        """
        base = stem(self.text) if self.kind == "word" else self.text
        spellings = {base, self.raw} - {""}
        return sorted(spellings | {_escaped(x) for x in spellings if not x.isascii()})

    def fts(self) -> str:
        """The ``messages_fts`` MATCH expression of a word."""
        base = stem(self.text)
        if base != self.text or len(self.forms) > 1:
            return f"{fts_quote(base)}*"
        return fts_quote(self.text)


def _escaped(text: str) -> str:
    return json.dumps(text)[1:-1].lower()


def escaped_phrase(source: str) -> str | None:
    """The FTS5 phrase that finds non-ASCII text inside Hermes' escaped multimodal JSON."""
    if source.isascii():
        return None
    tokens = _TOKEN.findall(_escaped(source))
    return fts_quote(" ".join(tokens)) if tokens else None


def query_terms(query: ParsedQuery) -> list[Term]:
    """Every distinct term of the query, in order (``select_terms`` bounds how many are used)."""
    typed = {fold(t): t.lower() for t in _TOKEN.findall(query.full_text or query.text)}
    terms = [Term("word", w, typed.get(w, w) if typed.get(w, w) != w else "") for w in query.words]
    weight: dict[str, float] = {}
    for piece in query.cjk:
        grams = bigrams(piece)
        for g in grams:
            weight[g] = max(weight.get(g, 0.0), 1 / len(grams) ** RANKING.piece_alpha)
    return terms + [Term("cjk", g, weight=w) for g, w in weight.items()]


@dataclass(frozen=True)
class Doc:
    message_id: int
    session_id: str
    tf: dict[Term, int]  # occurrences of each query term
    length: int  # Latin tokens + CJK characters, outside fenced code blocks


def doc_terms(folded: str) -> Counter:
    """Every term of folded text: Latin tokens as unicode61 cuts them, and each CJK run as its
    overlapping bigrams (a one-character run as itself). For the scope's statistics."""
    terms = Counter(_TOKEN.findall(CJK_CHAR.sub(" ", folded)))
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
        latin, n_cjk = CJK_CHAR.subn(" ", folded)
        tokens = _TOKEN.findall(latin)
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
            tokens = _TOKEN.findall(latin)
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


def term_idf(df: float, total: int) -> float:
    return math.log(1 + (total - df + 0.5) / (df + 0.5))
