"""A search's question, worked out once: what was asked, what it means in the scope, and where.

Every stage of a search (ranker.py, relevance.py, engine.py) reads the one :class:`Question` that
:func:`ask` builds; none works any part of it out again. It holds the request, its parsed query
(whose terms and highlight words the query works out once, query.py), the query's script, the
scope with the ids of its rows (read once, so every stage sees the same rows), and the
translation of its Chinese words with their senses weighed by what the scope holds — worked out
when a stage first reads it: the ranker does once the semantic side runs (ranker.gather), so
the translations' keyword searches run beside the model instead of before it.
"""

from __future__ import annotations

import sqlite3
import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import tzinfo
from functools import cached_property

from ..host import clock
from ..scope.scope_map import ScopeMap
from .conversations import NamedTime, named_time
from .keyword import Filters, KeywordResult, ScopeMemo, ScopeRows, keyword_search, scope_members, scope_stats
from .query import ParsedQuery, check_length, clean_text, parse_clean, parse_query
from .reader import ProfileReader, Scope
from .relevance import script_of
from .request import SearchRequest
from .settings import RANKING
from .translate import (
    Concept,
    TranslationUnavailable,
    chinese_query,
    english_concepts,
    english_query,
    translate,
    weigh_senses,
)


@dataclass(frozen=True)
class Translation:
    """The query's Chinese words with their English translations, for the keyword side of
    ``keyword`` and ``hybrid`` (``semantic`` bridges languages by meaning alone)."""

    concepts: tuple[Concept, ...] = ()  # senses weighed by the scope (translate.weigh_senses)
    detail: str = ""  # why there are none although the query has Chinese words
    found: KeywordResult | None = None  # the translations' own keyword list in the scope

    @cached_property
    def english(self) -> tuple[str, ...]:
        """Every translation searched (a snippet marks them)."""
        return tuple(dict.fromkeys(w for c in self.concepts for w in c.searched))

    @cached_property
    def forms(self) -> tuple[tuple[str, ...], ...]:
        """Each Chinese word and its translations (``Concept.forms``), as relevance counts them."""
        return tuple(c.forms for c in self.concepts)

    @cached_property
    def weak(self) -> tuple[tuple[str, ...], ...]:
        """Each word's translations held only partly (``Concept.weak`` and ``more``), or () when no
        word has any (relevance.translated_coverage)."""
        return (tuple((*c.weak, *c.more) for c in self.concepts)
                if any(c.weak or c.more for c in self.concepts) else ())


# Where a question posed apart from any search is asked (relevance rules on their own): nowhere.
NOWHERE = Scope(ScopeMap({}, [], {}, {}), None, [])


@dataclass(frozen=True)
class Question:
    """One search's question (see the module's docstring); ``query.terms`` are its search terms."""

    request: SearchRequest
    query: ParsedQuery
    scope: Scope = NOWHERE
    rows: ScopeRows = field(default_factory=lambda: ScopeRows(array("q"), ScopeMemo()))
    filters: Filters = Filters(())  # the scope's sessions and the request's time bounds
    translate: Callable[[], Translation] = field(default=Translation, repr=False, compare=False)
    members: frozenset[str] = frozenset()  # the words of the chat members' names (keyword.scope_members)
    zone: tzinfo | None = None  # the profile's calendar (host/clock.py; None: the machine's local time)
    # The day, week or month it names on that calendar (conversations.named_time): "5月3日", "in May
    # 2023", and counted back from when it is asked, "昨天", "last week".
    when: NamedTime | None = None
    # Each conversation held then: its session and first turns (ProfileReader.first_turns), oldest first.
    held: Sequence[tuple[str, list[int]]] = ()

    @property
    def mode(self) -> str:
        return self.request.mode

    @cached_property
    def translation(self) -> Translation:
        """The query's Chinese words and their translations, worked out at the first read (on the
        search's own thread) and kept."""
        return self.translate()

    @property
    def words(self) -> tuple[str, ...]:
        """The query's own words as a message shows them (``ParsedQuery.highlights``)."""
        return self.query.highlights

    @cached_property
    def highlights(self) -> tuple[str, ...]:
        """What a result's snippet marks: the query's words, then its translations."""
        return (*self.query.highlights, *self.translation.english)

    @cached_property
    def script(self) -> str:
        return script_of(self.query.text)

    @property
    def small(self) -> bool:
        """A scope of few messages (under ``common_min_scope``), where a word's share of it says
        little: there only the names a question gives decide how much of it the scope holds, and
        row labels lead the order (settings.level_order)."""
        return len(self.rows.ids) < RANKING.common_min_scope


def posed(text: str, mode: str = "hybrid", translation: Translation | None = None) -> Question:
    """A question asked nowhere: what the relevance rules judge a text by, on their own."""
    translated = translation or Translation()
    return Question(SearchRequest(query=text, mode=mode), parse_query(text), translate=lambda: translated)


def ask(reader: ProfileReader, request: SearchRequest, scope: Scope) -> Question:
    """The question of one search in ``scope``: its rows read once, its translation weighed once,
    the time it names and the turns held then read once — and its text parsed once, without the
    words that count a time back where that time holds the scope's turns (conversations.named_time:
    "昨天我们聊了什么" is not about the turn that said 昨天 three days ago, nor is "yesterday" to be
    translated). Raises ``QueryError`` for a text that cannot be searched."""
    rows = reader.scope_rows(scope)
    filters = Filters(scope.session_ids, after=request.after, before=request.before)
    members = scope_members(reader.connection(), rows, filters)
    zone = clock.zone(reader.home)
    text = clean_text(check_length(request.query))
    when = named_time(text, zone, time.time())
    # Each conversation's first turns held then (ranker.held_then shows them), under every read-time rule.
    held = reader.first_turns(filters, when, RANKING.more_per_row + 2) if when is not None else []
    unsaid = when is not None and when.said and held
    query = parse_clean(" ".join(text.replace(when.said, " ", 1).split()) if unsaid else text)
    return Question(request, query, scope, rows, filters,
                    lambda: _translation(reader, query, request.mode, filters, rows, members), members,
                    zone, when, held)


def _translation(reader: ProfileReader, query: ParsedQuery, mode: str, filters: Filters,
                 rows: ScopeRows, members: frozenset[str] = frozenset()) -> Translation:
    """The query's Chinese words translated (translate.py), each with the senses the scope's history
    holds: the translations are searched in the scope, and a sense the project holds beats one it
    does not (translate.weigh_senses) — searched again without the words only the senses it lacks
    give (缓存: "cache", not "memory"). ``RANKING.translated_list`` off: no translation at all."""
    if mode == "semantic" or not RANKING.translated_list:
        return Translation()

    def found_by(translated: ParsedQuery | None) -> KeywordResult | None:
        return None if translated is None else keyword_search(reader.connection(), translated, filters, rows,
                                                              limit=RANKING.candidates, members=members)

    if not query.cjk:
        return _reverse(reader, query, filters, rows, found_by)
    try:
        concepts = translate(query)
    except TranslationUnavailable as exc:
        return Translation(detail=str(exc))
    found = found_by(english_query(query, concepts))
    if found is not None and found.hits and RANKING.weigh_senses:
        texts = reader.messages([h.message_id for h in found.hits])
        senses = weigh_senses(concepts, [m.text for m in texts.values()])
        if senses != concepts:
            concepts = senses
            found = found_by(english_query(query, concepts))
    return Translation(concepts, found=found)


def _reverse(reader: ProfileReader, query: ParsedQuery, filters: Filters, rows: ScopeRows,
             found_by: Callable[[ParsedQuery | None], KeywordResult | None]) -> Translation:
    """An English query's words as the Chinese words the dictionary gives them that the scope's
    history holds (translate.english_concepts), searched as a list of their own (``found_by``, as
    the other direction's) — in a scope whose sampled messages hold Chinese
    (``RANKING.reverse_min_cjk``); else nothing, at no cost beyond the scope's statistics."""
    if not RANKING.reverse_translation or not rows.ids:
        return Translation()
    try:
        stats = scope_stats(reader.connection(), rows, filters)
    except sqlite3.DatabaseError:  # as scope_members: the keyword side says what is damaged
        return Translation()
    if stats.cjk_rows < RANKING.reverse_min_cjk * max(1, stats.size):
        return Translation()
    try:
        concepts = english_concepts(query, lambda word: stats.holds_cjk(word) and not stats.common_cjk(word))
    except TranslationUnavailable as exc:
        return Translation(detail=str(exc))
    found = found_by(chinese_query(query, concepts))
    return Translation(concepts, found=found) if found is not None else Translation()
