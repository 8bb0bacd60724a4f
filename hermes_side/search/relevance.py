"""How relevant a hit is, so that ``limit`` is a maximum and not a quota (issue 9).

Two signals, both cheap at result time:

- meaning: the query–message cosine minus the query's best cosine against small talk in the
  message's script (``search.semantic.NULL_PASSAGES``), only for hits the semantic half returned.
  Raw e5 cosines say little alone: unrelated Chinese text scores ~0.85 against a Chinese query,
  unrelated English ~0.75 against an English one;
- words: the share of the query's content words found in the message (folded substring match,
  so a Chinese word counts like an English one).

Each signal is mapped onto [0, 1] and the larger wins, scaled by how much of the question the
scope holds at all. ``score`` ≥ ``high`` → "high", ≥ ``medium`` → "medium", else "low"; a hit with
a score of 0 (no margin over small talk and no query word) is not shown at all. The thresholds
(settings.py) are calibrated on the LoCoMo dev sets so that right-project questions rarely come
back all-low and wrong-project ones mostly do (benchmarks/README.md, "Relevance").
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple, Protocol

from .bm25 import Doc
from .query import CJK_CHAR, Term, fold
from .results import LEVELS
from .settings import RANKING

# Every threshold and weight is ``RANKING`` (settings.py, "relevance"), read at call time.


@dataclass(frozen=True)
class Relevance:
    level: str
    score: float
    # The medium threshold this hit's score was judged by (it depends on the message's script and
    # on whether words can tell, ``judge``); None: ``RANKING.medium``. Not shown.
    medium: float | None = field(default=None, compare=False)

    def as_dict(self) -> dict[str, object]:
        return {"level": self.level, "score": round(self.score, 3)}

    def at(self, score: float) -> Relevance:
        """The same judgement at another score (results.in_order), labelled by the same thresholds."""
        return replace(self, level=level_of(score, RANKING.medium if self.medium is None else self.medium),
                       score=score)


def level_of(score: float, medium: float) -> str:
    return "high" if score >= RANKING.high else "medium" if score >= medium else "low"


SCRIPT_SAMPLE = 2000  # characters a message's script is judged by (a pasted log can be 100k)


def script_of(text: str) -> str:
    """"cjk" when at least a third of the text's word characters are CJK, else "latin"."""
    sample = text[:SCRIPT_SAMPLE]
    if sample.isascii():  # no CJK in it; counting its word characters one by one was most of a label's cost
        return "latin"
    word_chars = sum(map(str.isalnum, sample))
    return "cjk" if word_chars and 3 * len(CJK_CHAR.findall(sample)) >= word_chars else "latin"


def word_coverage(text: str, terms: Sequence[str]) -> float:
    """Share of ``terms`` (query content words) found in ``text``. A CJK run longer than a word
    (a whole unspaced question) earns the share of its character pairs found, so one matched word
    inside a long Chinese question still counts for something."""
    return _word_share(fold(text), _folded(tuple(terms)))


@functools.lru_cache(maxsize=256)
def _folded(terms: tuple[str, ...]) -> tuple[str, ...]:
    """Distinct query words folded, once per query however many texts are judged by them."""
    return tuple(fold(t) for t in dict.fromkeys(terms) if t)


def _word_share(folded: str, terms: tuple[str, ...]) -> float:
    if not terms:
        return 0.0
    return sum(_found(t, folded) for t in terms) / len(terms)


def translated_coverage(text: str, concepts: Sequence[Sequence[str]],
                        weak: Sequence[Sequence[str]] = ()) -> float:
    """Share of a Chinese query's words (each with its English translations, ``translate.Concept.forms``)
    found in ``text`` in either language; an English form must start a word ("art" is not in "start").
    ``weak`` (parallel to ``concepts``): translations through a sense the project does not hold
    (``translate.weigh_senses``), or, for an English word, Chinese words it only may stand for
    (``translate.Concept.more``); a word found only through them counts ``RANKING.weak_sense``, so
    it cannot make a message a sure answer on its own."""
    return _translated_share(fold(text), concepts, weak)


def _translated_share(folded: str, concepts: Sequence[Sequence[str]], weak: Sequence[Sequence[str]]) -> float:
    if not concepts:
        return 0.0
    return sum(_concept_shares(folded, concepts, weak)) / len(concepts)


def concept_shares(text: str, concepts: Sequence[Sequence[str]],
                   weak: Sequence[Sequence[str]] = ()) -> list[float]:
    """Per Chinese query word, how much of it ``text`` holds (1, a share of its character pairs,
    or ``RANKING.weak_sense``), as :func:`translated_coverage` counts it."""
    return _concept_shares(fold(text), concepts, weak)


def _concept_shares(folded: str, concepts: Sequence[Sequence[str]], weak: Sequence[Sequence[str]]) -> list[float]:
    out = []
    weak_patterns = _concept_patterns(tuple(map(tuple, weak))) if weak else ()
    for n, (cjk, english) in enumerate(_concept_patterns(tuple(map(tuple, concepts)))):
        if english is not None and english.search(folded):
            out.append(1.0)
            continue
        own = max((_found(f, folded) for f in cjk), default=0.0)
        if n < len(weak_patterns) and (
                ((pattern := weak_patterns[n][1]) is not None and pattern.search(folded))
                or any(f in folded for f in weak_patterns[n][0])):  # an English word's Chinese ones, whole
            own = max(own, RANKING.weak_sense)
        out.append(own)
    return out


def holds_words(folded: str, words: Sequence[str]) -> bool:
    """Whether folded text holds every one of ``words`` at a word start, inflections included."""
    return all(re.search(r"\b" + _word_pattern(fold(w)), folded) for w in words)


@functools.lru_cache(maxsize=64)
def _concept_patterns(concepts: tuple[tuple[str, ...], ...]) -> list[tuple[list[str], re.Pattern[str] | None]]:
    """Per concept: its CJK forms, and one pattern for all its English forms (built once per query)."""
    out = []
    for forms in concepts:
        folded = [fold(f) for f in forms]
        english = [_word_pattern(f) for f in folded if not CJK_CHAR.search(f)]
        out.append(([f for f in folded if CJK_CHAR.search(f)],
                    re.compile(r"\b(?:" + "|".join(english) + ")") if english else None))
    return out


def keyword_list_weight(docs: Sequence[Doc], weights: Mapping[Term, float]) -> float:
    """How much the keyword list counts when fused with the semantic one, and its conversations
    with theirs (conversations.lexical_order): by the share of the question's rarity its hits
    (``docs``) hold — each term by its weight in the scope (``weights``: BM25's idf; times a CJK
    bigram's share of its piece), so a term the scope lacks weighs the most — full weight from half
    of it, less below. A Chinese question over English history matches a name or two, and that
    list is mostly noise (LoCoMo dev xl msg@5 0.783 at full weight, 0.810 weighed); an English
    question over Chinese history matches the speaker's name a turn begins with ("Melanie：…"),
    which, counted as one of the question's words, made half of "What did Melanie paint?" and the
    list full weight (rev hybrid sess@1 0.460 → 0.571; benchmarks/README.md, "Fifth pass")."""
    total = sum(w * t.weight for t, w in weights.items())
    if not total:
        return 0.0
    held = {t for doc in docs for t in doc.tf}
    found = sum(w * t.weight for t, w in weights.items() if t in held) / total
    return min(1.0, RANKING.keyword_coverage_scale * found)


def translated_list_weight(texts: Sequence[str], concepts: Sequence[Sequence[str]], own: Sequence[str],
                           sources: Sequence[str]) -> float:
    """How much the translated list counts: by the Chinese words its hits hold that the keyword
    list's hits (``own``) do not already hold in Chinese (``sources``: each word as asked). In
    English history the keyword list holds none of them and this is their share found;
    in Chinese history beside English turns (LoCoMo ``zhmix``) a question whose words the Chinese
    turns hold gains nothing from their dictionary senses, which match every English turn that
    says "love" or "plan" — that list then put an English turn, or the session with the most
    English matches, above the Chinese answer the question's own words found (benchmarks/README.md,
    "zhmix diagnosed")."""
    if not texts or not concepts:
        return 0.0
    if not RANKING.translated_adds:
        return min(1.0, RANKING.keyword_coverage_scale * translated_coverage("\n".join(texts), concepts))
    found = concept_shares("\n".join(texts), concepts)
    held = concept_shares("\n".join(own), [(s,) for s in sources]) if own else [0.0] * len(found)
    added = sum(max(0.0, f - h) for f, h in zip(found, held, strict=True)) / len(concepts)
    return min(1.0, RANKING.keyword_coverage_scale * added)


def _word_pattern(word: str) -> str:
    """An English word at a word start, with its inflections ("celebrate" finds "celebrated")."""
    head = word[:max(4, len(word) - 3)] if word.isalpha() and len(word) >= 5 else word
    return re.escape(head) + ("" if head != word else r"(?:s|es|ed|ing)?\b")


@functools.lru_cache(maxsize=1024)
def _stem_pattern(term: str) -> re.Pattern[str]:
    return re.compile(r"\b" + re.escape(term[:max(4, len(term) - 3)]))


def _found(term: str, text: str) -> float:
    if term in text:
        return 1.0
    if term.isascii() and term.isalpha() and len(term) >= 5:
        # Inflections, as keyword search stems them: "deploying" finds "deployed".
        return 1.0 if _stem_pattern(term).search(text) else 0.0
    if len(term) < 3 or not CJK_CHAR.search(term):
        return 0.0
    pairs = _pairs(term)
    return sum(1 for p in pairs if p in text) / len(pairs)


@functools.lru_cache(maxsize=4096)
def _pairs(term: str) -> frozenset[str]:
    return frozenset(term[i:i + 2] for i in range(len(term) - 1))


def margin_of(cosine: float | None, baselines: Mapping[str, float], text: str,
              script: str | None = None) -> float | None:
    """The cosine's margin over small talk in the message's own script."""
    if cosine is None or not baselines:
        return None
    return cosine - baselines.get(script or script_of(text), max(baselines.values()))


def meaning_score(margin: float | None, cross_script: bool = False) -> float:
    if margin is None:
        return 0.0
    margin += RANKING.cross_script if cross_script else 0.0
    return min(1.0, max(0.0, (margin - RANKING.sem_zero) / (RANKING.sem_one - RANKING.sem_zero)))


def scope_terms(keyword, names: bool = False) -> float:
    """Share of the query's keyword terms (``keyword.KeywordResult``) that any message keyword search
    read holds; words dropped as common in the scope are held by definition. 1.0 without terms.
    ``names``: only its Latin-script words made of letters — in a Chinese question, mostly the
    people it names ("Gina", "Max"); "2023" or "5k" name no one."""
    held = keyword.held
    terms = [t for t in keyword.terms if not names or (t.kind == "word" and t.text.isalpha())]
    common = sum(1 for w in keyword.common_words if not names or w.isalpha())
    # fsum: ``keyword.terms`` is a set, and a plain sum's last bit followed its hash order.
    total = math.fsum(t.weight for t in terms) + common
    if total <= 0:
        return 1.0
    return (math.fsum(t.weight for t in terms if t in held) + common) / total


def scope_names(keyword, names: Sequence[str]) -> float | None:
    """Share of the people and places a question names (``query.ParsedQuery.names``) that any
    message keyword search read holds (a name too common in the scope to search by is held);
    None when it names none."""
    if not names:
        return None
    held = {t.raw or t.text for t in keyword.held} | keyword.common_words
    return sum(name in held for name in names) / len(names)


class Translated(Protocol):
    @property
    def forms(self) -> Sequence[Sequence[str]]: ...  # each Chinese word of the query and its translations

    @property
    def weak(self) -> Sequence[Sequence[str]]: ...  # each word's translations through a sense the scope lacks


class Asked(Protocol):
    """What a candidate is judged against (``question.Question``): the query's words as a message
    shows them, the script it is written in, and its Chinese words' translations."""

    @property
    def words(self) -> Sequence[str]: ...

    @property
    def script(self) -> str: ...

    @property
    def translation(self) -> Translated: ...


class Candidate(NamedTuple):
    """What is judged: a message's text (or a conversation's hits' texts together), its dense
    cosine where semantic search scored it, and whether keyword search found it."""

    text: str
    cosine: float | None = None
    keyword_hit: bool = False


@dataclass(frozen=True)
class Evidence:
    """What a search learnt that bears on every hit: the query's cosine against small talk per
    script (``baselines``, search.semantic.SemanticHits), the share of the question the scope
    holds at all (``coverage``, scope_terms) and of the people it names (``names``, scope_names)."""

    baselines: Mapping[str, float] = field(default_factory=dict)
    coverage: float | None = None
    names: float | None = None


def judge(question: Asked, candidate: Candidate, evidence: Evidence = Evidence()) -> Relevance | None:
    """The candidate's relevance to the question, or None when nothing says it is related and it
    must not be shown. A hit keyword search found is never dropped (it holds a query word, maybe in
    a form this substring check misses); it can still be "low". A Chinese query's words also count
    when the message holds their English translations (``question.translation``; through a weak
    sense, partly)."""
    text, query_script, concepts = candidate.text, question.script, question.translation.forms
    coverage = evidence.coverage
    script = script_of(text)
    meaning = meaning_score(margin_of(candidate.cosine, evidence.baselines, text, script), script != query_script)
    folded = fold(text)  # once for both word shares
    words = max(_word_share(folded, _folded(tuple(question.words))),
                _translated_share(folded, concepts, question.translation.weak))
    floor = RANKING.min_shown if candidate.keyword_hit else 0.0
    if concepts and query_script == "latin" and script == "cjk":
        return _across(meaning, words, floor, coverage, evidence.names)
    score = max(meaning, words, floor)
    if score <= 0.0:
        return None
    medium = RANKING.medium_unscaled
    if coverage is not None and (script == query_script or concepts):
        medium = RANKING.medium_cross_script if script != query_script else RANKING.medium
        # Only where words can tell (same script, or a Chinese question with its translations):
        # a question whose words the project mostly lacks is about something else: a question asked
        # in the wrong project still finds turns about "the weekend", but not its people and things.
        # The hit passed the floor: it stays, at worst low.
        score = max(RANKING.min_shown, score * min(1.0, max(0.0, coverage)))
    elif evidence.names == 0.0 and script != query_script:
        # A question over history in another script, no dictionary between them (English over
        # Chinese turns): its words cannot tell, the people it names can. As for Chinese questions
        # over English history (ranker.scope_coverage), a project that mentions none of them is
        # not the one the question is about. None, not fewer: places, months and titles are
        # written in the history's own script ("Tampa" is 坦帕), so a partial share says little
        # (LoCoMo dev: benchmarks/README.md, "Issue 26, fourth round").
        score = RANKING.min_shown
    return Relevance(level_of(score, medium), score, medium)


def _across(meaning: float, words: float, floor: float, coverage: float | None,
            names: float | None) -> Relevance | None:
    """A Chinese row of an English question the dictionary translated: two kinds of evidence, the
    surer one stands. By meaning as without the dictionary — the people the question names decide
    where words cannot (``judge``'s last branch); by the dictionary's words, capped by how much of
    the question the project holds (``coverage``: a word whose Chinese the project lacks is
    missing). So the words can lift a row the model scored weak, never pull one it found down."""
    by_meaning = RANKING.min_shown if names == 0.0 and meaning > 0 else meaning
    by_words = words * min(1.0, max(0.0, coverage)) if coverage is not None and words > 0 else words
    if max(by_meaning, by_words, floor) <= 0.0:
        return None
    judged = [Relevance(level_of(max(by_meaning, floor), RANKING.medium_unscaled), max(by_meaning, floor),
                        RANKING.medium_unscaled),
              Relevance(level_of(max(by_words, floor), RANKING.medium_cross_script), max(by_words, floor),
                        RANKING.medium_cross_script)]
    return min(judged, key=lambda r: (LEVELS.index(r.level), -r.score))
