"""``project_history_search``: scope → keyword and/or semantic hits → fused → one row per conversation.

One engine per profile home, shared by the agent tool, the recall API, the CLI and the
benchmarks, so every surface scopes and formats results the same way.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sqlite3
import threading
from array import array
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import RecallError
from ..host import deps, features
from ..host.profile import profile_name
from ..scope.chat_rule import CHAT_UNBOUND, RECALL_OFF, RECALL_OFF_TEXT, Origin, bound_project, refusal
from ..scope.scope_map import ScopeCache, ScopeMap
from ..stores import forgotten, hermes_db
from ..stores.messages import message_text, text_turn_sql
from .answers import asks, reply_to, with_replies
from .conversations import in_period, lexical_order, named_period
from .fusion import rrf
from .keyword import Filters, Hit, KeywordResult, ScopeMemo, keyword_search
from .query import ParsedQuery, QueryError, parse_query
from .relevance import judge, keyword_list_weight, scope_terms, script_of, translated_coverage
from .request import SearchRequest
from .results import conversation_order, group_by_conversation, result_row
from .settings import RANKING
from .translate import Concept, TranslationUnavailable, english_query, translate

log = logging.getLogger(__name__)

MAX_CONCURRENT = 4  # searches running at once per profile
NO_CONTEXT = "No project context (no working directory recorded)"
NO_OTHERS = "No other sessions in this project"


class SearchError(RecallError):
    """A search that cannot run (no database, unknown project, a chat without a project)."""


def check_recall_on(home: Path, chat: str | None) -> None:
    """Refuse (``recall_off``) when an admin switched the chat's recall off (stores/forgotten.py)."""
    if chat is None:
        return
    try:
        off = chat in forgotten.load(home).off_chats()
    except hermes_db.Unavailable as exc:
        log.warning("project-history-recall: %s (%s)", exc, exc.detail)
        raise SearchError(str(exc), exc.code) from None
    if off:
        raise SearchError(RECALL_OFF_TEXT, RECALL_OFF)


@dataclass(frozen=True)
class Scope:
    """Who asks and what they may read, resolved once at the edge of a surface (tool, API, CLI)
    and passed down, so no layer below works it out again: the scope map it was read from, whether
    the caller is a chat (sealed to its chat's project), the place, and the sessions to search."""

    smap: ScopeMap
    place: dict[str, Any] | None  # None: the calling session has no place to search from
    session_ids: list[str]  # searchable sessions of the place, the caller's conversation removed
    chat: bool = False
    current: str | None = None  # the calling session, for a scope resolved from one

    @property
    def place_sessions(self) -> list[str]:
        """Every session of the place (what the keyword side's scope statistics are kept for)."""
        return self.smap.sessions_in(self.place) if self.place else []


@dataclass
class SemanticOutcome:
    status: str
    hits: list[tuple[int, str, float]] = field(default_factory=list)
    detail: str = ""
    baselines: dict[str, float] = field(default_factory=dict)  # see search.semantic.SemanticHits


def _semantic(home: Path, text: str, session_ids: Sequence[str], projects: Sequence[str],
              profile: str) -> SemanticOutcome:
    gap = deps.missing(deps.EMBEDDING)
    if gap is not None:  # a directory install into a Hermes without numpy: keyword search only
        return SemanticOutcome("unavailable", detail=deps.missing(deps.SEMANTIC).message("semantic search"))
    from .semantic import semantic_search

    res = semantic_search(home, text, session_ids, top_k=RANKING.candidates, profile=profile, projects=projects)
    return SemanticOutcome(res.status, list(res.hits), res.detail, dict(res.baselines))


def semantic_text(text: str, common_words: frozenset[str]) -> str:
    """The query for the embedder without words common in the scope (names, the project itself):
    measured on LoCoMo, a name in the question pulls every turn that mentions it to the top."""
    if not common_words:
        return text
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in common_words) + r")(?:['’]s)?\b", re.IGNORECASE)
    stripped = " ".join(pattern.sub(" ", text).split())
    return stripped if re.search(r"\w", stripped) else text


def public_place(place: dict[str, Any], projects: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The ``project`` object of a result: explicit projects also carry slug and folder."""
    if place["kind"] != "explicit":
        return dict(place)
    project = hermes_db.find_project(list(projects), place["id"]) or {}
    return {"kind": "explicit", "id": place["id"], "name": place.get("name"),
            "slug": project.get("slug"), "primary_path": project.get("primary_path")}


# Only rows that can ever be a hit belong to a scope's ids: they are the denominator of every term's
# share and BM25 weight. Counting an agent's tool results and text-less tool-call rows made names
# fall under ``common_share`` (in a LoCoMo conversation written as agent transcripts, 72 of the first
# 120 questions kept a different set of common words), so semantic search stopped dropping them.
_TEXT_TURN = text_turn_sql("")


class ScopeMessageIds:
    """Sorted ids of a scope's sessions' text turns (``text_turn_sql``), cached and extended as new
    messages arrive, with the keyword search's per-scope memo (id set, term statistics) beside them."""

    def __init__(self, size: int = 64) -> None:
        self._cache: dict[str, tuple[array, int, frozenset[str], ScopeMemo]] = {}
        self._size = size
        self._lock = threading.Lock()

    def get(self, conn: sqlite3.Connection, session_ids: Sequence[str], max_id: int) -> array:
        return self.scope(conn, session_ids, max_id)[0]

    def scope(self, conn: sqlite3.Connection, session_ids: Sequence[str], max_id: int) -> tuple[array, ScopeMemo]:
        key = hashlib.blake2b("\n".join(sorted(session_ids)).encode("utf-8", "surrogatepass"),
                              digest_size=16).hexdigest()
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None and cached[1] >= max_id:
            # Another search already saw newer messages: this one must not see past its own max_id.
            ids = cached[0]
            return (ids if cached[1] == max_id else ids[: bisect_right(ids, max_id)]), cached[3]
        if cached is None:
            members = frozenset(session_ids)
            rows = conn.execute("SELECT id FROM messages WHERE session_id IN (SELECT value FROM json_each(?))"
                                f" AND id <= ? AND {_TEXT_TURN} ORDER BY id",
                                (json.dumps(sorted(members)), max_id)).fetchall()
            ids = array("q", (r[0] for r in rows))
            memo = ScopeMemo()
        else:
            old, seen, members, memo = cached
            new = [r[0] for r in conn.execute(f"SELECT id, session_id FROM messages WHERE id > ? AND id <= ?"
                                              f" AND {_TEXT_TURN}", (seen, max_id)) if r[1] in members]
            ids = old + array("q", new) if new else old
        with self._lock:
            current = self._cache.get(key)
            if current is None or current[1] < max_id:  # never replace a newer entry
                if current is None and len(self._cache) >= self._size:
                    self._cache.pop(next(iter(self._cache)))
                self._cache[key] = (ids, max_id, members, memo)
        return ids, memo


class SearchEngine:
    def __init__(self, home: Path) -> None:
        self.home = Path(home)
        self.profile = profile_name(self.home)
        self.scopes = ScopeCache(self.home)
        self.scope_messages = ScopeMessageIds()
        self._local = threading.local()
        self._gate = threading.BoundedSemaphore(MAX_CONCURRENT)
        self._pool: list[sqlite3.Connection] = []
        self._pool_lock = threading.Lock()

    # -- plumbing -----------------------------------------------------------------------
    def connection(self) -> sqlite3.Connection:
        """The read-only connection leased to this thread (see :meth:`leased`)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            raise RuntimeError("SearchEngine.connection() outside engine.leased()")
        return conn

    @contextmanager
    def leased(self) -> Iterator[sqlite3.Connection]:
        """Lend this thread a pooled read-only connection for one operation (re-entrant).

        At most ``MAX_CONCURRENT`` operations run at once: on two cores more parallel searches only
        add memory (a connection and its page cache each) and tail latency, not throughput.
        """
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        with self._gate:
            with self._pool_lock:
                conn = self._pool.pop() if self._pool else None
            # Newer Hermes can keep sessions in PostgreSQL: state.db is then absent or stale, and
            # reading it would answer "nothing found" for history that exists. Checked on every
            # lease (config.yaml is cached by content), so a switch needs no restart.
            if problem := features.backend_problem(self.home):
                if conn is not None:
                    with self._pool_lock:
                        self._pool.append(conn)
                raise SearchError(problem, "backend_unsupported")
            if conn is None:
                try:
                    conn = hermes_db.connect_state(self.home)
                except hermes_db.NoDatabase:
                    raise SearchError("session database not found", "no_db") from None
            self._local.conn = conn
            try:
                try:
                    forgotten.prepare(conn, self.home)  # what was forgotten since the last lease
                except hermes_db.Unavailable as exc:
                    log.warning("project-history-recall: %s (%s)", exc, exc.detail)
                    raise SearchError(str(exc), exc.code) from None
                yield conn
            finally:
                self._local.conn = None
                with self._pool_lock:
                    self._pool.append(conn)

    def scope_map(self) -> ScopeMap:
        with self.leased() as conn:
            return self._scope_map(conn)

    def _scope_map(self, conn: sqlite3.Connection) -> ScopeMap:
        try:
            return self.scopes.get(conn)
        except hermes_db.Unavailable as exc:
            log.warning("project-history-recall: %s (%s)", exc, exc.detail)
            raise SearchError(str(exc), exc.code) from None
        except sqlite3.OperationalError:
            # Another Hermes component can create state.db before SessionDB adds its tables.
            if not hermes_db.has_sessions_table(conn):
                raise SearchError("session database not found", "no_db") from None
            raise

    def scope_for(self, *, project: str | None = None, session_id: str | None = None, chat: str | None = None,
                  session_key: str | None = None, platform: str | None = None) -> Scope:
        """The request's :class:`Scope`, read from one scope map: the one scope path of every surface."""
        return self.scope_in(self.scope_map(), project=project, session_id=session_id, chat=chat,
                             session_key=session_key, platform=platform)

    def scope_in(self, smap: ScopeMap, *, project: str | None = None, session_id: str | None = None,
                 chat: str | None = None, session_key: str | None = None, platform: str | None = None) -> Scope:
        """A project's sessions (``project``), a chat's (``chat``: its bound project, or a
        ``chat_unbound`` refusal), or those a session may search (``session_id``; the current
        conversation is never searched). A chat *session* gets its chat's bound project whatever its
        own cwd says (``chat_rule``); ``session_key`` and ``platform`` are the live turn's hints for
        a session whose row is not written yet. A non-chat session without a recorded place gets
        ``place=None``."""
        if chat is not None:
            place = self._bound_place(smap, Origin(True, chat))
            return Scope(smap, place, self._searchable_in(smap, place, ()), chat=True)
        if project is not None:
            found = hermes_db.find_project(smap.projects, project)
            if found is None or found.get("archived"):
                raise SearchError(f"project not found: {project}", "unknown_project")
            place = {"kind": "explicit", "id": found["id"], "name": found["name"]}
            return Scope(smap, place, self._searchable_in(smap, place, ()))
        if not session_id:
            raise SearchError("no scope: give a project or a session", "bad_request")
        origin = smap.origin(session_id, session_key=session_key, platform=platform)
        if origin.chat:
            place = self._bound_place(smap, origin)
        elif self._has_place(smap, session_id):
            place = smap.place(session_id) or {"kind": "home"}
        else:
            return Scope(smap, None, [], current=session_id)
        return Scope(smap, place, self._searchable_in(smap, place, smap.conversation(session_id)),
                     chat=origin.chat, current=session_id)

    def _bound_place(self, smap: ScopeMap, origin: Origin) -> dict[str, Any]:
        check_recall_on(self.home, origin.name)  # an admin's /recall-off closes the chat first
        found, reason = bound_project(origin, smap.bound, smap.projects)
        if found is None:
            raise SearchError(refusal(reason), CHAT_UNBOUND)
        return {"kind": "explicit", "id": found["id"], "name": found["name"]}

    @staticmethod
    def _searchable_in(smap: ScopeMap, place: dict[str, Any], exclude: Sequence[str]) -> list[str]:
        excluded = set(exclude)
        return [sid for sid in smap.sessions_in(place) if sid not in excluded
                and not (smap.rows.get(sid) or {}).get("archived")
                and (smap.rows.get(sid) or {}).get("source") not in ("subagent", "tool")]

    @staticmethod
    def _has_place(smap: ScopeMap, session_id: str) -> bool:
        """Whether a non-chat session has a place to search from: a recorded cwd or git root."""
        from ..scope.attribution import effective_place

        row = effective_place(session_id, smap.rows)
        return bool((row.get("cwd") or "").strip() or (row.get("git_repo_root") or "").strip())

    # -- ranking ------------------------------------------------------------------------
    def rank(self, pq: ParsedQuery, mode: str, scope: Scope,
             req: SearchRequest) -> tuple[list[dict[str, Any]], str | None]:
        ranked, outcome = self._rank(pq, mode, scope, req, concepts=translated(pq, mode).concepts)
        return ranked, outcome.status if outcome else None

    def _rank(self, pq: ParsedQuery, mode: str, scope: Scope, req: SearchRequest,
              fetched: dict[int, dict[str, Any]] | None = None,
              concepts: Sequence[Concept] = (), conversations: list[tuple[list[str], float]] | None = None,
              coverage: list[float | None] | None = None) -> tuple[list[dict[str, Any]], SemanticOutcome | None]:
        """Ranked message hits ``{message_id, session_id, score_source}`` and the semantic status.
        Every message read on the way is added to ``fetched`` for the caller, so none is read twice.
        ``concepts``: the query's Chinese words with their English translations, searched as a
        keyword list of their own (translate.py). ``conversations`` receives the lexical
        conversation lists (conversations.py) with their weights, in the modes that use words;
        ``coverage`` the share of the question the scope holds (relevance.scope_terms)."""
        fetched = {} if fetched is None else fetched
        place, ids = scope.place, scope.session_ids
        filters = Filters(ids, after=req.after, before=req.before)
        keyword = self._keyword(pq, filters, scope)
        kw: list[Hit] = keyword.hits if mode in ("keyword", "hybrid") else []
        english = english_query(pq, concepts) if mode != "semantic" else None
        status = None
        outcome: SemanticOutcome | None = None
        sem: list[tuple[int, str]] = []
        pending: Future[SemanticOutcome] | None = None
        if mode in ("semantic", "hybrid"):
            projects = [place["id"]] if place["kind"] == "explicit" else [place["kind"]]
            args = (self.home, semantic_text(pq.text, keyword.common_words), ids, projects, self.profile)
            if english:  # the model and the vector scan run outside the GIL: overlap the translated list
                pending = _side_pool().submit(_semantic, *args)
            else:
                outcome = _semantic(*args)
        translated_kw = self._keyword(english, filters, scope) if english else None
        tr: list[Hit] = translated_kw.hits if translated_kw else []
        if pending is not None:
            outcome = pending.result()
        if outcome is not None:
            status = outcome.status
            sem = [(mid, sid) for mid, sid, _ in outcome.hits]
            if req.after is not None or req.before is not None:
                sem = self._in_time_range(sem, req)
            if not sem and mode == "semantic" and status not in ("ready", "partial", "indexing"):
                # The seed's failure table: keyword results still come back.
                kw = keyword.hits
        session_of = {h.message_id: h.session_id for h in [*kw, *tr]} | dict(sem)
        fetched |= self._messages([mid for mid in session_of if mid not in fetched])
        kw, tr, sem, alias = _one_per_turn(kw, tr, sem, fetched, scope.smap.root_of)
        kw_ids = {h.message_id for h in [*kw, *tr]}
        sem_ids = {mid for mid, _ in sem}
        cosine = {alias.get(mid, mid): score for mid, _, score in outcome.hits
                  if alias.get(mid, mid) in sem_ids} if outcome else {}
        weights = None
        if (kw and sem) or tr:
            texts = fetched  # every candidate's text was read above
            # The translated list counts by the English words it found (in Chinese history it
            # holds the few messages with a name or an English word, and must not count fully).
            weights = [keyword_list_weight([texts[h.message_id]["text"] for h in kw if h.message_id in texts],
                                           pq.highlight_terms()),
                       keyword_list_weight([texts[h.message_id]["text"] for h in tr if h.message_id in texts],
                                           (), concepts=[c.english for c in concepts]),
                       1.0]
        fused = rrf([[h.message_id for h in kw], [h.message_id for h in tr], [mid for mid, _ in sem]],
                    k=RANKING.rrf_k, weights=weights)
        if coverage is not None:
            coverage.append(self._coverage(keyword, pq, tr, concepts, fetched))
        if conversations is not None and mode != "semantic":
            smap = scope.smap
            n = len({smap.root_of.get(s, s) for s in ids})
            for result, weight in ((keyword if kw else None, weights[0] if weights else 1.0),
                                   (translated_kw, weights[1] if weights else 1.0)):
                if result is not None and result.docs and weight > 0:
                    conversations.append((lexical_order(result.docs, result.terms, smap.root_of, n), weight))
        ranked = [{
            "message_id": mid,
            "session_id": session_of[mid],
            "score_source": _source(mid in kw_ids, mid in cosine),
            "cosine": cosine.get(mid),
            "score": score,
        } for mid, score in fused]
        # The questions among the top hits are told by their text: read once, kept in ``fetched``.
        top = ranked[:RANKING.expand_top]
        fetched |= self._messages([h["message_id"] for h in top if h["message_id"] not in fetched])
        ranked = with_replies(self.connection(), ranked, {mid: m["text"] for mid, m in fetched.items()})
        for hit in ranked:  # a pulled-in reply is judged by its own meaning where it has a score
            if "reply_to" in hit:
                hit["cosine"] = cosine.get(hit["message_id"], hit["cosine"])
        return ranked, outcome

    def _coverage(self, keyword: KeywordResult, pq: ParsedQuery, tr: Sequence[Hit], concepts: Sequence[Concept],
                  fetched: dict[int, dict[str, Any]] | None) -> float | None:
        """How much of the question the scope holds at all (relevance.scope_terms): its words in
        the messages keyword search read, or for a Chinese question over English history, its
        words' translations in the translated list's hits — times the share of the Latin-script
        words it names (mostly names: "Gina 工作室 开业") that the scope holds. A dictionary finds
        "studio" and "opening" in any chat about life; a name the project never mentions says
        the question is about someone else's (LoCoMo dev, Chinese questions over English
        history: 68 of 72 asked in the wrong project name someone it lacks, 2 of 72 in the right
        one; benchmarks/README.md, "Relevance")."""
        if pq.cjk and not concepts:
            return None  # Chinese words over history that may be English: the words cannot tell
        found = scope_terms(keyword)
        if concepts and tr:
            texts = fetched if fetched is not None else {}
            missing = [h.message_id for h in tr if h.message_id not in texts]
            if missing:
                texts = {**texts, **self._messages(missing)}
            joined = "\n".join(texts[h.message_id]["text"] for h in tr if h.message_id in texts)
            found = max(found, translated_coverage(joined, [c.english for c in concepts])
                        * scope_terms(keyword, names=True))
        return found

    def _keyword(self, pq: ParsedQuery, filters: Filters, scope: Scope) -> KeywordResult:
        conn = self.connection()
        max_id = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
        scope_ids, memo = self.scope_messages.scope(conn, scope.place_sessions, max_id)
        return keyword_search(conn, pq, filters, scope_ids=scope_ids, limit=RANKING.candidates,
                              cache=memo)

    @staticmethod
    def _relevant(ranked: list[dict[str, Any]], messages: dict[int, dict[str, Any]], pq: ParsedQuery,
                  baselines: dict[str, float], concepts: Sequence[Concept] = (),
                  coverage: float | None = None) -> list[dict[str, Any]]:
        """Ranked hits with their relevance; hits below the floor are dropped, so ``limit`` is a
        maximum: a query with nothing related in the project gets nothing back. ``coverage``: the
        share of the question the scope holds at all, which caps how related any hit can be."""
        words = pq.highlight_terms()
        script = script_of(pq.text)
        forms = [c.forms for c in concepts]
        out = []
        for hit in ranked:
            message = messages.get(hit["message_id"])
            relevance = judge(hit.get("cosine"), baselines, message["text"], words, script,
                              keyword_hit=hit["score_source"] != "semantic", concepts=forms,
                              coverage=coverage) if message else None
            if relevance is not None:
                out.append({**hit, "relevance": relevance})
        return out

    def _in_time_range(self, hits: list[tuple[int, str]], req: SearchRequest) -> list[tuple[int, str]]:
        if not hits:
            return hits
        rows = self.connection().execute(
            "SELECT id, timestamp FROM messages WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps([mid for mid, _ in hits]),)).fetchall()
        ts = {r[0]: r[1] or 0 for r in rows}
        return [(mid, sid) for mid, sid in hits
                if (req.after is None or ts.get(mid, 0) >= req.after)
                and (req.before is None or ts.get(mid, 0) < req.before)]

    def _messages(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        rows = self.connection().execute(
            "SELECT id, session_id, role, content, timestamp FROM messages"
            " WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(list(ids)),)).fetchall()
        return {r["id"]: {"role": r["role"], "text": message_text(r["content"]),
                          "timestamp": r["timestamp"], "session_id": r["session_id"]} for r in rows}

    # -- public -------------------------------------------------------------------------
    def rank_messages(self, query: str, *, mode: str = "hybrid", project: str | None = None,
                      session_id: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        with self.leased():
            return self._rank_messages(query, mode, project, session_id, limit)

    def _rank_messages(self, query: str, mode: str, project: str | None, session_id: str | None,
                       limit: int | None) -> list[dict[str, Any]]:
        scope = self.scope_for(project=project, session_id=session_id)
        if scope.place is None:
            return []
        ranked, _ = self.rank(parse_query(query), mode, scope, SearchRequest(query=query, mode=mode))
        return ranked[:RANKING.candidates if limit is None else limit]

    def search(self, req: SearchRequest, *, project: str | None = None, session_id: str | None = None,
               chat: str | None = None, session_key: str | None = None, platform: str | None = None,
               scope: Scope | None = None) -> dict[str, Any]:
        """The tool's result object (seed §4.5), in ``scope`` when the surface resolved it already,
        else in the one ``project``/``chat``/``session_id`` names. Raises ``SearchError`` for caller
        mistakes, a refused chat (``chat_unbound``) and unreadable stores (``unavailable``)."""
        try:
            pq = parse_query(req.query)
        except QueryError as exc:
            raise SearchError(str(exc), exc.code) from None
        with self.leased():
            if scope is None:
                scope = self.scope_for(project=project, session_id=session_id, chat=chat,
                                       session_key=session_key, platform=platform)
            return self._search(req, pq, scope)

    def _search(self, req: SearchRequest, pq: ParsedQuery, scope: Scope) -> dict[str, Any]:
        smap, place, ids = scope.smap, scope.place, scope.session_ids
        if place is None:
            return {"success": True, "mode": req.mode, "project": {"kind": "home"}, "results": [],
                    "message": NO_CONTEXT, "sessions_in_scope": 0}
        in_scope = len({smap.root_of.get(s, s) for s in ids}) + (1 if scope.current else 0)
        base = {"success": True, "mode": req.mode, "project": public_place(place, smap.projects)}
        if not ids:
            return {**base, "results": [], "message": NO_OTHERS if scope.current else "No sessions in this project",
                    "sessions_in_scope": in_scope}
        messages: dict[int, dict[str, Any]] = {}
        translation = translated(pq, req.mode)
        lists: list[tuple[list[str], float]] = []
        coverage: list[float | None] = []
        ranked, outcome = self._rank(pq, req.mode, scope, req, messages, translation.concepts, lists, coverage)
        status = outcome.status if outcome else None
        messages |= self._messages([h["message_id"] for h in ranked if h["message_id"] not in messages])
        relevant = self._relevant(ranked, messages, pq, outcome.baselines if outcome else {}, translation.concepts,
                                  coverage[0] if coverage else None)
        if period := named_period(pq.text):  # a date in the query: conversations held then
            order = conversation_order(relevant, smap.root_of)
            when = {root: (messages.get(hit["message_id"]) or {}).get("timestamp") for root, hit in order.items()}
            lists.append((in_period(list(order), when, period), 1.0))
        best = group_by_conversation(relevant, smap.root_of, req.limit, lists)
        terms = [*pq.highlight_terms(), *translation.english]
        titles = hermes_db.session_titles(
            self.connection(), sorted({smap.root_of.get(h["session_id"], h["session_id"]) for h in best}
                                      | {h["session_id"] for h in best}))
        results = []
        for hit in best:
            message = messages.get(hit["message_id"])
            if message is None:  # deleted between ranking and fetching
                continue
            root = smap.root_of.get(hit["session_id"], hit["session_id"])
            title = titles.get(root) or titles.get(hit["session_id"])
            asking = asks(message["text"])
            answer = reply_to(self.connection(), hit["session_id"], hit["message_id"]) if asking else None
            shown = {hit["message_id"], answer["message_id"] if answer else None}
            more = [{**messages[h["message_id"]], "message_id": h["message_id"]}
                    for h in relevant[:req.limit] if smap.root_of.get(h["session_id"], h["session_id"]) == root
                    and h["message_id"] not in shown and h["message_id"] in messages][:RANKING.more_per_row]
            results.append(result_row(hit, message, title, terms, answer=answer, more=more))
        out = {**base, "results": results, "sessions_in_scope": in_scope}
        if notice := pq.notice(req.mode):  # an over-long query: say which part was searched
            out["notice"] = notice
        if status is not None:
            out["semantic_status"] = status
        if translation.detail:  # the dictionary's package is missing: say so and how to fix it
            out["translation_detail"] = translation.detail
        if status == "unavailable" and outcome and outcome.detail:
            out["semantic_detail"] = outcome.detail  # e.g. which package is missing and how to install it
        if status == "consent_required":
            project_key = place.get("id") or place["kind"]
            out["consent"] = {
                "reason": outcome.detail if outcome else "",
                "ask_user": "Semantic search would send this project's history to a remote embedding "
                            "provider. Ask the user; only if they agree, run: "
                            f"hermes recall consent grant --projects {project_key}",
            }
        if not results:
            out["message"] = "No matching messages in this project"
        return out


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _side_pool() -> ThreadPoolExecutor:
    """Threads for the semantic half of a search while its thread does the keyword side."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=MAX_CONCURRENT, thread_name_prefix="recall-semantic")
        return _pool


@dataclass(frozen=True)
class Translation:
    concepts: tuple[Concept, ...] = ()
    detail: str = ""  # why there are none although the query has Chinese words

    @property
    def english(self) -> list[str]:
        return list(dict.fromkeys(w for c in self.concepts for w in c.english))


def translated(pq: ParsedQuery, mode: str) -> Translation:
    """The query's Chinese words with their English translations, for the keyword side of
    ``keyword`` and ``hybrid`` (``semantic`` bridges languages by meaning alone)."""
    if mode == "semantic" or not pq.cjk:
        return Translation()
    try:
        return Translation(translate(pq))
    except TranslationUnavailable as exc:
        return Translation(detail=str(exc))


_engines: dict[str, SearchEngine] = {}
_engines_lock = threading.Lock()


def engine_for(home: Path) -> SearchEngine:
    """The engine of the profile at ``home`` (its profile name comes from the home, profile.py)."""
    key = str(Path(home).resolve())
    with _engines_lock:
        if key not in _engines:
            _engines[key] = SearchEngine(Path(home))
        return _engines[key]


def _one_per_turn(kw: list[Hit], tr: list[Hit], sem: list[tuple[int, str]], texts: Mapping[int, Mapping[str, Any]],
                  root_of: Mapping[str, str]) -> tuple[list[Hit], list[Hit], list[tuple[int, str]], dict[int, int]]:
    """The three lists with each turn once. Hermes' in-place compaction keeps the compacted turns
    and writes copies of the last ones as the live rows: the same words twice in one conversation,
    which took two places in every list and pushed the next turn down (agent world of
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
                rep = canon.setdefault((root_of.get(message["session_id"], message["session_id"]),
                                        message["text"].strip()), mid)
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


def _source(in_keyword: bool, in_semantic: bool) -> str:
    return "both" if in_keyword and in_semantic else ("keyword" if in_keyword else "semantic")
