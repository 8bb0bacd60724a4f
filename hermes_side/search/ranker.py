"""The ranker: a :class:`~.question.Question` → ranked, judged message hits, in named stages.

1. :func:`gather` the candidate lists: keyword, semantic (the Chinese query's translated keyword
   list was found with the question's translation, question.py);
2. :func:`fold` each turn into one id (Hermes' compaction writes copies of the last turns);
3. :func:`fuse` the lists (RRF, the keyword lists weighted by the query words they hold);
4. :func:`answered`: each question among the top hits followed by its answer, looked up once;
5. :func:`judged`: each hit's relevance from its evidence (meaning, words, the scope's coverage).

Every message read on the way is kept in :attr:`Ranking.texts`, so none is read twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any

from ..host import deps
from ..scope.attribution import identity
from ..stores.messages import copy_key
from . import threads
from .answers import with_replies
from .bm25 import Hit
from .conversations import lexical_order, passage_order
from .episodes import Episodes
from .fusion import rrf
from .keyword import Filters, FtsPlan, KeywordResult, keyword_search, planned_common_words
from .question import Question
from .reader import Message, ProfileReader, Scope
from .records import RankedHit
from .relevance import (
    Candidate,
    Evidence,
    Relevance,
    judge,
    keyword_list_weight,
    scope_names,
    scope_terms,
    translated_coverage,
    translated_list_weight,
)
from .results import with_conversation_words
from .settings import RANKING


@dataclass
class SemanticOutcome:
    status: str
    hits: list[tuple[int, str, float]] = field(default_factory=list)
    detail: str = ""
    baselines: dict[str, float] = field(default_factory=dict)  # see search.semantic.SemanticHits
    passages: Callable[[Sequence[str]], dict[str, float]] | None = None  # see search.semantic.SemanticHits


def semantic_side(reader: ProfileReader, text: str, scope: Scope) -> SemanticOutcome:
    """The scope's messages nearest in meaning to ``text`` (search/semantic.py), or why there are none."""
    if deps.missing(deps.EMBEDDING) is not None:  # a directory install into a Hermes without numpy
        return SemanticOutcome("unavailable", detail=deps.missing(deps.SEMANTIC).message("semantic search"))
    from .semantic import semantic_search

    place = scope.place
    projects = [place.id] if place.kind == "explicit" else [place.kind]
    # The place's vectors are read once and kept: every session of it, what this search sees or not.
    res = semantic_search(reader.home, text, scope.session_ids, top_k=RANKING.candidates,
                          profile=reader.profile, projects=projects,
                          place=(":".join(identity(place)), scope.place_sessions))
    return SemanticOutcome(res.status, list(res.hits), res.detail, dict(res.baselines), res.passages)


def semantic_text(text: str, common_words: frozenset[str]) -> str:
    """The query for the embedder without words common in the scope (names, the project itself):
    measured on LoCoMo, a name in the question pulls every turn that mentions it to the top."""
    if not common_words:
        return text
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in common_words) + r")(?:['’]s)?\b", re.IGNORECASE)
    stripped = " ".join(pattern.sub(" ", text).split())
    return stripped if re.search(r"\w", stripped) else text


@dataclass
class Candidates:
    """What the three lists found: keyword (``kw``), translated (``tr``), semantic (``sem``)."""

    keyword: KeywordResult
    kw: list[Hit]
    tr: list[Hit]
    sem: list[tuple[int, str]]
    outcome: SemanticOutcome | None


@dataclass
class Ranking:
    """A query's ranked hits and what was learnt on the way."""

    hits: list[RankedHit]
    outcome: SemanticOutcome | None
    texts: dict[int, Message]  # every message read, by id
    answers: dict[int, dict[str, Any] | None]  # each asking top hit's answer, looked up once
    conversations: list[tuple[list[str], float]]  # conversation lists (words, passages) and their weights
    evidence: Evidence  # what bears on every hit's relevance (relevance.Evidence)
    episodes: Episodes  # what a conversation is: a lineage cut at its pauses (episodes.py), keyed per search
    keyword_detail: str = ""  # why keyword search did not read the whole scope (KeywordResult.detail)

    @property
    def status(self) -> str | None:
        return self.outcome.status if self.outcome else None


def rank(reader: ProfileReader, question: Question) -> Ranking:
    """Stages 1–4 (the module's docstring)."""
    c = gather(reader, question)
    scope = question.scope
    texts = reader.messages(list({h.message_id: None for h in [*c.kw, *c.tr]} | dict.fromkeys(m for m, _ in c.sem)))
    kw, tr, sem, alias = fold(c.kw, c.tr, c.sem, texts, scope.smap.root_of)
    kw_ids = {h.message_id for h in [*kw, *tr]}
    sem_ids = {mid for mid, _ in sem}
    cosine = {alias.get(mid, mid): score for mid, _, score in c.outcome.hits
              if alias.get(mid, mid) in sem_ids} if c.outcome else {}
    weights = list_weights(kw, tr, sem, texts, question, c.keyword)
    fused = rrf([[h.message_id for h in kw], [h.message_id for h in tr], [mid for mid, _ in sem]],
                k=RANKING.rrf_k, weights=weights)
    session_of = {h.message_id: h.session_id for h in [*kw, *tr]} | dict(sem)
    hits = [RankedHit(mid, session_of[mid], _source(mid in kw_ids, mid in cosine), cosine.get(mid), score)
            for mid, score in fused]
    # A conversation: a session lineage cut at its long pauses (episodes.py); the lineages of the
    # hits and of the turns keyword search read, read at once.
    results = [r for r in (c.keyword, question.translation.found) if r is not None]
    episodes = Episodes(reader.connection(), reader.timelines, scope.smap.root_of, scope.session_ids, texts)
    episodes.read(dict.fromkeys([*(h.session_id for h in hits), *(d.session_id for r in results for d in r.docs)]))
    lists: list[tuple[list[str], float]] = []
    if question.mode != "semantic":
        n = scope.conversations
        for result, weight in ((c.keyword if kw else None, weights[0] if weights else 1.0),
                               (question.translation.found, weights[1] if weights else 1.0)):
            if result is not None and result.docs and weight > 0:
                words = lexical_order(result.docs, result.terms, lambda d: episodes.at(d.session_id, d.timestamp), n)
                lists.append((words, weight))
    if c.outcome is not None and c.outcome.passages is not None and sem and RANKING.passage_weight > 0:
        # The conversations' best passages by meaning, of the conversations a hit came from: a
        # session's best, standing for each of its conversations, in the order of their hits.
        passages = c.outcome.passages(list(dict.fromkeys(h.session_id for h in hits)))
        found = dict.fromkeys(episodes.of(h.session_id, h.message_id) for h in hits)
        lists.append((episodes.expand(passage_order(passages, scope.smap.root_of), found), RANKING.passage_weight))
    baselines = c.outcome.baselines if c.outcome else {}
    evidence = Evidence(baselines, scope_coverage(reader, question, c.keyword, tr, texts),
                        scope_names(c.keyword, question.query.names))
    hits, answers = answered(reader, hits, texts, cosine)
    return Ranking(hits, c.outcome, texts, answers, lists, evidence, episodes, c.keyword.detail)


def gather(reader: ProfileReader, question: Question) -> Candidates:
    """Stage 1: the keyword list, the translated list (the question's translation, worked out here)
    and the semantic list. The model and the vector scan run outside the GIL, so the semantic side
    runs beside both keyword searches."""
    mode, pq, scope = question.mode, question.query, question.scope
    # "/recall 昨天": the time is all it asks (question.ask took its words out), and a model's
    # neighbours of nothing are noise; the conversations held then are the answer (held_then).
    meaning = mode in ("semantic", "hybrid") and not (pq.empty and question.when)
    outcome: SemanticOutcome | None = None
    pending: Future[SemanticOutcome] | None = None
    early: str | None = None  # the semantic query, when known before the keyword search
    plan: FtsPlan | None = None  # the keyword search's plan, when made for the early start
    if meaning:
        # In a big scope the scope's statistics name the common words the semantic query leaves
        # out before the keyword search runs: the model passes and the vector scan (outside the
        # GIL) then run beside it instead of after it.
        planned = planned_common_words(reader.connection(), pq, question.filters, question.rows, question.members)
        if planned is not None:
            early, plan = semantic_text(pq.text, planned[0]), planned[1]
            pending = threads.pool("semantic").submit(semantic_side, reader, early, scope)
    keyword = keyword_search(reader.connection(), pq, question.filters, question.rows, limit=RANKING.candidates,
                             plan=plan, members=question.members)
    kw: list[Hit] = keyword.hits if mode in ("keyword", "hybrid") else []
    if meaning:
        text = semantic_text(pq.text, keyword.common_words)
        if pending is not None and text != early:  # the keyword side fell back to a scan: redo
            pending.cancel()
            pending = None
        if pending is None:
            pending = threads.pool("semantic").submit(semantic_side, reader, text, scope)
    translated = question.translation.found  # worked out here, while the semantic side runs
    tr: list[Hit] = translated.hits if translated else []
    sem: list[tuple[int, str]] = []
    if pending is not None:
        outcome = pending.result()
    if outcome is not None:
        sem = [(mid, sid) for mid, sid, _ in outcome.hits]
        if question.request.after is not None or question.request.before is not None:
            sem = _in_time_range(reader, sem, question.filters)
        if not sem and mode == "semantic" and outcome.status not in ("ready", "partial", "indexing"):
            kw = keyword.hits  # the seed's failure table: keyword results still come back
    return Candidates(keyword, kw, tr, sem, outcome)


def fold(kw: list[Hit], tr: list[Hit], sem: list[tuple[int, str]], texts: Mapping[int, Message],
         root_of: Mapping[str, str]) -> tuple[list[Hit], list[Hit], list[tuple[int, str]], dict[int, int]]:
    """Stage 2: the three lists with each turn once. Hermes' in-place compaction keeps the compacted
    turns and writes copies of the last ones as the live rows: the same words twice in one
    conversation, which took two places in every list and pushed the next turn down (agent world of
    bench_locomo.py). A turn is its conversation and its text; the first id ranked for it, in the
    order keyword → translated → semantic, stands for it in every list; returned too: each id that
    was folded into another → that id."""
    canon: dict[tuple[str, str], int] = {}
    alias: dict[int, int] = {}
    session_of = dict(sem) | {h.message_id: h.session_id for h in [*tr, *kw]}

    def one(ids: list[int]) -> list[int]:
        out: dict[int, None] = {}
        for mid in ids:
            message = texts.get(mid)
            if message is not None:
                rep = canon.setdefault(copy_key(root_of.get(message.session_id, message.session_id), message.text), mid)
                if rep != mid:
                    alias[mid] = rep
                mid = rep
            out.setdefault(mid)
        return list(out)

    def hits(ids: list[int], score: Mapping[int, float]) -> list[Hit]:
        return [Hit(mid, session_of[mid], score.get(mid, 0.0)) for mid in ids]

    kw_ids, tr_ids = one([h.message_id for h in kw]), one([h.message_id for h in tr])
    sem_ids = one([mid for mid, _ in sem])
    score = {h.message_id: h.score for h in [*tr, *kw]}
    return hits(kw_ids, score), hits(tr_ids, score), [(mid, session_of[mid]) for mid in sem_ids], alias


def list_weights(kw: list[Hit], tr: list[Hit], sem: list[tuple[int, str]], texts: Mapping[int, Message],
                 question: Question, keyword: KeywordResult) -> list[float] | None:
    """Stage 3's weights: the keyword list counts by the share of the query's rarity in the scope
    its hits hold (relevance.keyword_list_weight: a speaker's name on every other turn is not half
    the question); the translated list by the Chinese words it found in English that the keyword
    list did not find as asked (relevance.translated_list_weight: in Chinese history it holds the few
    messages with a name or an English word, and must not count fully)."""
    if not ((kw and sem) or tr):
        return None
    own = [texts[h.message_id].text for h in kw if h.message_id in texts]
    concepts = question.translation.concepts
    ids = {h.message_id for h in kw}
    own_weight = keyword_list_weight([d for d in keyword.docs if d.message_id in ids], keyword.weights)
    translated = translated_list_weight([texts[h.message_id].text for h in tr if h.message_id in texts],
                                        [c.english for c in concepts], own, [c.source for c in concepts])
    if sem and not question.query.cjk:  # an English question's Chinese words beside the model
        translated *= RANKING.reverse_beside_semantic
    return [own_weight, translated, 1.0]


def answered(reader: ProfileReader, hits: list[RankedHit], texts: dict[int, Message],
             cosine: Mapping[int, float]) -> tuple[list[RankedHit], dict[int, dict[str, Any] | None]]:
    """Stage 4: the questions among the top hits, each followed by its answer. The top hits' texts
    are read once into ``texts``; a pulled-in reply is judged by its own meaning where it has a score."""
    top = hits[:RANKING.expand_top]
    texts |= reader.messages([h.message_id for h in top if h.message_id not in texts])
    out, answers = with_replies(reader.connection(), hits, {mid: m.text for mid, m in texts.items()})
    return [replace(h, cosine=cosine.get(h.message_id, h.cosine)) if h.reply_to is not None else h
            for h in out], answers


class Verdicts:
    """Stage 5's verdicts: the hits kept, best first (``hits``), and each one's relevance (``of``)."""

    def __init__(self, hits: list[RankedHit], verdict: Callable[[RankedHit], Relevance | None]) -> None:
        self.hits = hits
        self._kept = {h.message_id: h for h in hits}
        self._verdict = verdict

    def of(self, message_id: int) -> Relevance | None:
        """A kept hit's relevance, judged now if it was not yet; None for a message that is not one."""
        hit = self._kept.get(message_id)
        if hit is None:
            return None
        if hit.relevance is None:
            hit = self._kept[message_id] = replace(hit, relevance=self._verdict(hit))
        return hit.relevance


def judged(ranking: Ranking, question: Question) -> Verdicts:
    """Stage 5: the hits with their relevance; hits below the floor are dropped, so a search's
    ``limit`` is a maximum: a query with nothing related in the project gets nothing back. The
    share of the question the scope holds at all (``ranking.evidence``) caps how related any hit can be.
    In a small scope, where labels lead the order, every hit is judged at once, and a hit is at
    least as related as its conversation's hits are by their words together
    (results.with_conversation_words). Elsewhere a hit keyword search found, which the floor never
    drops (``RANKING.min_shown``), is judged only when a result row shows it (``Verdicts.of``):
    most are never shown, and judging was a tenth of a keyword search."""

    def verdict(hit: RankedHit) -> Relevance | None:
        message = ranking.texts[hit.message_id]
        return judge(question, Candidate(message.text, hit.cosine, hit.score_source != "semantic"), ranking.evidence)

    now = question.small or RANKING.min_shown <= 0
    out = []
    for hit in ranking.hits:
        if hit.message_id not in ranking.texts:  # deleted between ranking and reading
            continue
        if now or hit.score_source == "semantic":
            relevance = verdict(hit)
            if relevance is None:
                continue
            hit = replace(hit, relevance=relevance)
        out.append(hit)
    if question.small:
        out = with_conversation_words(out, ranking.episodes,
                                      {mid: m.text for mid, m in ranking.texts.items()},
                                      lambda text: judge(question, Candidate(text), ranking.evidence))
    return Verdicts(out, verdict)


def held_then(reader: ProfileReader, question: Question, ranking: Ranking,
              found: Collection[str]) -> list[tuple[RankedHit, list[int]]]:
    """The conversations held in the time the question names that no hit found (``found``: the
    roots that have one), oldest first: each shown by its first turn held then and the turns after
    it (``Question.held``: ``ProfileReader.first_turns``, read under every rule a hit is read under) — how that
    conversation opened — with ``score_source`` "date", labelled by its words as any hit is and
    never below low: a person who names the day asks for what was said then, whatever the words.
    Only when they all fit in the request's ``limit``: a month of a busy project holds hundreds,
    and a time that names more conversations than the rows can show names none in particular (the
    oldest five of them would push out the rows the words found). Their texts join ``ranking.texts``.
    ``found`` and the rows are ``ranking.episodes``' keys: in a lineage cut at its pauses, the time's
    first turn may open a conversation of its own though a hit came from an older one."""
    # The first turn, its answer, and ``more_per_row`` turns after them, of each conversation.
    held, limit = question.held, question.request.limit
    conversations = ranking.episodes
    hit_roots = {conversations.lineage(key) for key in found}
    if len({question.scope.root(session) for session, _ in held} - hit_roots) > limit:
        return []  # before reading any: more lineages held then than the rows, none of them found
    ranking.texts.update(reader.messages([ids[0] for _, ids in held if ids[0] not in ranking.texts]))
    opening: dict[str, tuple[str, list[int]]] = {}
    for session, ids in held:  # oldest first: a lineage's sessions in one conversation show its first
        if ids[0] in ranking.texts:  # else deleted since
            opening.setdefault(conversations.of(session, ids[0]), (session, ids))
    unfound = [(session, ids) for key, (session, ids) in opening.items() if key not in found]
    if len(unfound) > limit:
        return []
    ranking.texts.update(reader.messages([mid for _, ids in unfound for mid in ids[1:] if mid not in ranking.texts]))
    out = []
    for session, (first, *after) in unfound:
        message = ranking.texts[first]
        relevance = judge(question, Candidate(message.text), ranking.evidence) or Relevance("low", 0.0)
        out.append((RankedHit(first, session, "date", relevance=relevance), after))
    return out


def scope_coverage(reader: ProfileReader, question: Question, keyword: KeywordResult, tr: Sequence[Hit],
                   texts: dict[int, Message]) -> float | None:
    """How much of the question the scope holds at all (relevance.scope_terms): its words in
    the messages keyword search read, or for a Chinese question over English history, its
    words' translations in the translated list's hits — times the share of the Latin-script
    words it names (mostly names: "Gina 工作室 开业") that the scope holds. A dictionary finds
    "studio" and "opening" in any chat about life; a name the project never mentions says
    the question is about someone else's (LoCoMo dev, Chinese questions over English
    history: 68 of 72 asked in the wrong project name someone it lacks, 2 of 72 in the right
    one; benchmarks/README.md, "Relevance")."""
    concepts = question.translation.concepts
    if question.query.cjk and not concepts:
        return None  # Chinese words over history that may be English: the words cannot tell
    # A project of a few conversations lacks most words of any question, the ones it is about
    # included ("plan the schema change" over a talk about a migration): below the size where a
    # word's share says anything (as for common words), only the names a question gives decide.
    tiny = question.small
    found = None if tiny else scope_terms(keyword)
    if concepts and tr:
        # The people a question names: a Chinese question's Latin words; an English question's
        # names written with a capital (its other words are the ones translated), none: all held.
        names = scope_terms(keyword, names=True) if question.query.cjk else _names_held(question, keyword)
        if tiny:
            return names
        missing = [h.message_id for h in tr if h.message_id not in texts]
        known = {**texts, **reader.messages(missing)} if missing else texts
        joined = "\n".join(known[h.message_id].text for h in tr if h.message_id in known)
        found = max(found, translated_coverage(joined, [c.english for c in concepts],
                                               question.translation.weak) * names)
    return found


def _names_held(question: Question, keyword: KeywordResult) -> float:
    """Share of the names an English question gives that the Chinese history holds as typed — a
    person's name stays Latin in Chinese text ("Melanie：…") — of those the dictionary does not
    translate: a name it does ("New York" 纽约, "Console" 游戏机) is a place or a thing, which
    says nothing about whose project this is; 1.0 when none is left."""
    translated = {w for c in question.translation.concepts for w in c.source.split()}
    rest = [n for n in question.query.names if n not in translated]
    return (scope_names(keyword, rest) or 0.0) if rest else 1.0


def _in_time_range(reader: ProfileReader, hits: list[tuple[int, str]], bounds: Filters) -> list[tuple[int, str]]:
    if not hits:
        return hits
    ts = reader.timestamps([mid for mid, _ in hits])
    return [(mid, sid) for mid, sid in hits
            if (bounds.after is None or ts.get(mid, 0) >= bounds.after)
            and (bounds.before is None or ts.get(mid, 0) < bounds.before)]


def _source(in_keyword: bool, in_semantic: bool) -> str:
    return "both" if in_keyword and in_semantic else ("keyword" if in_keyword else "semantic")
