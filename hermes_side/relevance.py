"""How relevant a hit is, so that ``limit`` is a maximum and not a quota (issue 9).

Two signals, both cheap at result time:

- meaning: the query–message cosine minus the query's best cosine against small talk (only for
  hits the semantic half returned);
- words: the share of the query's content words that occur in the message (folded substring
  match, so a Chinese word counts like an English one).

Each signal is mapped onto [0, 1] and the larger wins: a message can be relevant by meaning, by
words, or by both. ``score`` ≥ HIGH → "high", ≥ MEDIUM → "medium", ≥ FLOOR → "low", below FLOOR the
hit is not shown at all. The constants are calibrated on the LoCoMo dev sets (benchmarks/README.md,
"Relevance"): FLOOR keeps almost every evidence turn; MEDIUM is the line that questions asked in the
wrong project should stay under.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .query import fold

# Meaning: the cosine's margin over the query's best cosine against small talk (see
# embedding.semantic.NULL_PASSAGES); SEM_ZERO → score 0, SEM_ONE → score 1, linear in between.
SEM_ZERO = 0.0
SEM_ONE = 0.08
# A word match only says much when several query words agree; one word of three is a weak signal.
WORDS_MIN_TERMS = 2
HIGH = 0.75
MEDIUM = 0.5
FLOOR = 0.2


@dataclass(frozen=True)
class Relevance:
    level: str
    score: float

    def as_dict(self) -> dict[str, object]:
        return {"level": self.level, "score": round(self.score, 3)}


def word_coverage(text: str, terms: Sequence[str]) -> float:
    """Share of ``terms`` (query content words) found in ``text``."""
    terms = [fold(t) for t in dict.fromkeys(terms) if t]
    if not terms:
        return 0.0
    folded = fold(text)
    return sum(1 for t in terms if t in folded) / len(terms)


def meaning_score(margin: float | None) -> float:
    if margin is None:
        return 0.0
    return min(1.0, max(0.0, (margin - SEM_ZERO) / (SEM_ONE - SEM_ZERO)))


def words_score(coverage: float, n_terms: int) -> float:
    # One-word queries are keyword lookups: an exact match is what was asked for.
    if n_terms < WORDS_MIN_TERMS:
        return coverage
    return coverage


def judge(margin: float | None, text: str, terms: Sequence[str]) -> Relevance | None:
    """The hit's relevance, or None when it falls below the floor and must not be shown."""
    n_terms = len(set(terms))
    score = max(meaning_score(margin), words_score(word_coverage(text, terms), n_terms))
    if score < FLOOR:
        return None
    level = "high" if score >= HIGH else "medium" if score >= MEDIUM else "low"
    return Relevance(level, score)
