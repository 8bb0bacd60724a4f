"""``project_history_search``: a request → its scope (reader.py) → ranked hits (ranker.py) → one row per conversation.

One engine per profile home, shared by the agent tool, the recall API, the CLI and the
benchmarks, so every surface scopes and formats results the same way. The engine reads the
profile through that profile's one :class:`~.reader.ProfileReader`, which the actions share.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..scope import quotes
from ..scope.scope_map import ScopeMap
from ..stores import hermes_db
from . import quoted, ranker
from .answers import asks, reply_to
from .conversations import in_period
from .query import QueryError
from .question import Question, ask
from .reader import MAX_CONCURRENT, ProfileReader, Scope, ScopeMessageIds, SearchError, public_place, reader_for
from .records import RankedHit
from .request import SearchRequest
from .results import best_of, conversation_order, group_by_conversation, in_order, result_row
from .settings import RANKING

# The reader's names that callers of the engine import from here (a search's scope and errors).
__all__ = ["MAX_CONCURRENT", "NO_CONTEXT", "NO_OTHERS", "Scope", "ScopeMessageIds", "SearchEngine", "SearchError",
           "engine_for"]

NO_CONTEXT = "No project context (no working directory recorded)"
NO_OTHERS = "No other sessions in this project"


class SearchEngine:
    """The search of one profile: the reader's scope, the ranker's hits, the tool's result rows."""

    def __init__(self, home: Path, reader: ProfileReader | None = None) -> None:
        self.reader = reader or ProfileReader(Path(home))
        self.home = self.reader.home
        self.profile = self.reader.profile

    # -- the reader's lease and scopes, for the surfaces that hold an engine ---------------------
    @property
    def scopes(self) -> Any:
        return self.reader.scopes

    @property
    def scope_messages(self) -> ScopeMessageIds:
        return self.reader.scope_messages

    @property
    def _pool(self) -> list[Any]:
        return self.reader._pool

    @contextmanager
    def leased(self) -> Iterator[Any]:
        with self.reader.leased() as conn:
            yield conn

    def connection(self) -> Any:
        return self.reader.connection()

    def scope_map(self) -> ScopeMap:
        return self.reader.scope_map()

    def scope_for(self, **request: Any) -> Scope:
        return self.reader.scope_in(self.scope_map(), **request)

    def scope_in(self, smap: ScopeMap, **request: Any) -> Scope:
        return self.reader.scope_in(smap, **request)

    # -- ranking ---------------------------------------------------------------------------------
    def rank_messages(self, query: str, *, mode: str = "hybrid", project: str | None = None,
                      session_id: str | None = None, limit: int | None = None) -> list[RankedHit]:
        with self.reader.leased():
            scope = self.scope_for(project=project, session_id=session_id)
            if scope.place is None:
                return []
            question = ask(self.reader, SearchRequest(query=query, mode=mode), scope)
            return ranker.rank(self.reader, question).hits[:RANKING.candidates if limit is None else limit]

    # -- the tool's result -----------------------------------------------------------------------
    def search(self, req: SearchRequest, *, project: str | None = None, session_id: str | None = None,
               chat: str | None = None, session_key: str | None = None, platform: str | None = None,
               scope: Scope | None = None) -> dict[str, Any]:
        """The tool's result object (seed §4.5), in ``scope`` when the surface resolved it already,
        else in the one ``project``/``chat``/``session_id`` names. Raises ``SearchError`` for caller
        mistakes, a refused chat (``chat_unbound``) and unreadable stores (``unavailable``)."""
        with self.reader.leased():
            if scope is None:
                scope = self.scope_for(project=project, session_id=session_id, chat=chat,
                                       session_key=session_key, platform=platform)
            try:
                return quoted.mark(self._search(req, scope), scope.smap)  # recalled text is data
            except QueryError as exc:  # a text no search can take (too long): the caller's mistake
                raise SearchError(str(exc), exc.code) from None

    def _search(self, req: SearchRequest, scope: Scope) -> dict[str, Any]:
        smap, place, ids = scope.smap, scope.place, scope.session_ids
        if place is None:
            return {"success": True, "mode": req.mode, "project": {"kind": "home"}, "results": [],
                    "message": NO_CONTEXT, "sessions_in_scope": 0}
        in_scope = scope.conversations + (1 if scope.current else 0)
        base = {"success": True, "mode": req.mode, "project": public_place(place, smap.projects)}
        if not ids:
            return {**base, "results": [], "message": NO_OTHERS if scope.current else "No sessions in this project",
                    "sessions_in_scope": in_scope}
        question = ask(self.reader, req, scope)
        ranking = ranker.rank(self.reader, question)
        texts = ranking.texts
        texts |= self.reader.messages([h.message_id for h in ranking.hits if h.message_id not in texts])
        conversations = ranking.episodes  # a session lineage cut at its long pauses (episodes.py)
        verdicts = ranker.judged(ranking, question)
        relevant = verdicts.hits
        lists = list(ranking.conversations)
        held_then: list[str] = []
        opening: dict[int, list[int]] = {}  # a row the day alone brought → the turns after its first
        if named := question.when:  # a date in the query: conversations held then
            order = conversation_order(relevant, conversations)
            when = {key: texts[hit["message_id"]].timestamp if hit["message_id"] in texts else None
                    for key, hit in order.items()}
            held_then = in_period(list(order), when, named)
            if RANKING.held_then_unfound:  # and those held then that nothing found, after them
                # Labelled apart from the rows' order (_rows: their verdict is their own), so a row
                # the day alone brought never pulls the label of a related row under it down.
                unfound = ranker.held_then(self.reader, question, ranking, order)
                relevant = [*relevant, *(hit for hit, _ in unfound)]
                held_then += [conversations(hit) for hit, _ in unfound]
                opening = {hit.message_id: after for hit, after in unfound}
            lists.append((held_then, 1.0))
        # Labels lead the order in a small project, where the ranking's word statistics say little
        # (settings.level_order); there a conversation is as related as its hits' words together.
        best = group_by_conversation(relevant, conversations, question.request.limit, lists,
                                     labels_lead=question.small,
                                     first=held_then if RANKING.named_time_leads else ())
        rows = self._rows(best, verdicts, ranking, question, opening)
        out = {**base, "results": rows, "sessions_in_scope": in_scope}
        if notice := question.query.notice(question.mode):  # an over-long query: say which part was searched
            out["notice"] = notice
        status = ranking.status
        if status is not None:
            out["semantic_status"] = status
        if ranking.keyword_detail:  # Hermes' keyword index is damaged: what was searched, and the fix
            out["keyword_detail"] = ranking.keyword_detail
        if question.translation.detail:  # the dictionary's package is missing: say so and how to fix it
            out["translation_detail"] = question.translation.detail
        if status == "unavailable" and ranking.outcome.detail:
            out["semantic_detail"] = ranking.outcome.detail  # e.g. which package is missing and how to install it
        if status == "consent_required":
            project_key = place.id or place.kind
            out["consent"] = {
                "reason": ranking.outcome.detail,
                "ask_user": "Semantic search would send this project's history to a remote embedding "
                            "provider. Ask the user; only if they agree, run: "
                            f"hermes recall consent grant --projects {project_key}",
            }
        if not rows:
            out["message"] = "No matching messages in this project"
            if question.when and question.query.empty:  # the time was all it asked, and held too many
                texts |= self.reader.messages([ids[0] for _, ids in question.held if ids[0] not in texts])
                held = len({conversations.of(session, ids[0]) for session, ids in question.held})
                if held:
                    out["held_then"] = held
                    out["message"] = (f"{held} conversations were held in the time the query names, more than the "
                                      f"{question.request.limit} rows: say what it was about, or name a shorter time")
        return out

    def _rows(self, best: list[Any], verdicts: ranker.Verdicts, ranking: ranker.Ranking,
              question: Question, opening: dict[int, list[int]]) -> list[dict[str, Any]]:
        """One result row per conversation: its best hit, that hit's answer when it asks something
        (the one the ranker looked up, else looked up now), and other top hits of the conversation
        — or, for a row the named day alone brought (``opening``), the turns after its first then.
        A row is labelled by the surest of what it shows (results.best_of), and the labels are
        made to read in the rows' order (results.in_order)."""
        texts, scope, limit, relevant = ranking.texts, question.scope, question.request.limit, verdicts.hits
        titles = hermes_db.session_titles(
            self.reader.connection(), sorted({scope.root(h.session_id) for h in best} | {h.session_id for h in best}))
        parts = []
        top = {h.message_id for h in relevant[:limit]}  # the hits that vouch for a row's label
        for hit in best:
            message = texts.get(hit.message_id)
            if message is None:  # deleted between ranking and fetching
                continue
            root = scope.root(hit.session_id)
            conversation = ranking.episodes(hit)
            title = titles.get(root) or titles.get(hit.session_id)
            answer = None
            if asks(message.text):
                answer = (ranking.answers[hit.message_id] if hit.message_id in ranking.answers
                          else reply_to(self.reader.connection(), hit.session_id, hit.message_id))
            if answer:  # read apart from the texts: another member's words it quotes are hidden here
                answer = {**answer, "text": quotes.hide_one(self.reader.connection(), self.home, lambda: scope.smap,
                                                             hit.session_id, answer.get("text", ""))}
            shown = {hit.message_id, answer["message_id"] if answer else None}
            # The conversation's next best turns among the top ``expand_top`` hits, not only among
            # the ``limit`` best overall (settings.more_from_read)
            pool = relevant[:RANKING.expand_top] if RANKING.more_from_read else relevant[:limit]
            following = (opening[hit.message_id] if hit.message_id in opening
                         else [h.message_id for h in pool if ranking.episodes(h) == conversation])
            more = [{**texts[m], "message_id": m} for m in following
                    if m not in shown and m in texts][:RANKING.more_per_row]
            # Labelled by what it shows among the ``limit`` best hits: a turn found further down is
            # context, and letting it vouch for the row cost wrong-project quiet (en 8–12, xl 7
            # questions) for 4 en right-project rows out of all-low (benchmarks/README.md, issue 26).
            vouching = [hit.message_id, *shown, *(m["message_id"] for m in more if m["message_id"] in top)]
            label = best_of([verdicts.of(m) for m in vouching])
            parts.append((hit, message, title, answer, more, label))
        labels = in_order([label for *_, label in parts])
        return [result_row(replace(hit, relevance=label) if label is not None else hit, message, title,
                           question.highlights, question.zone,
                           answer=answer, more=more)
                for (hit, message, title, answer, more, _), label in zip(parts, labels, strict=True)]


_engines: dict[str, SearchEngine] = {}
_engines_lock = threading.Lock()


def engine_for(home: Path) -> SearchEngine:
    """The engine of the profile at ``home``, reading through the profile's one reader (reader_for)."""
    key = str(Path(home).resolve())
    with _engines_lock:
        if key not in _engines:
            _engines[key] = SearchEngine(Path(home), reader_for(home))
        return _engines[key]
