"""The one reader of a profile's history: connection lease, scope map, :class:`Scope`, the scope's rows.

Search ranks over it and the actions (forget, move, status) read scopes through it, so a chat is
sealed to its project by one rule wherever history is read, and no action needs the ranker.
One reader per profile home (:func:`reader_for`), shared with that profile's search engine.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from array import array
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import RecallError
from ..host import features
from ..host.profile import profile_name
from ..scope import quotes, rule_view
from ..scope.chat_rule import CHAT_UNBOUND, RECALL_OFF, RECALL_OFF_TEXT, Origin, bound_project, refusal
from ..scope.scope_map import ScopeCache, ScopeMap
from ..stores import faults, forgotten, hermes_db
from ..stores.messages import MESSAGES_FROM, message_text, text_turn_sql
from .conversations import NamedTime
from .episodes import Timelines
from .keyword import Filters, ScopeMemo, ScopeRows
from .records import FieldMapping
from .settings import RANKING

log = logging.getLogger(__name__)

MAX_CONCURRENT = 4  # searches running at once per profile


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
        raise  # the store fault itself: it names the file and the recovery
    if off:
        raise SearchError(RECALL_OFF_TEXT, RECALL_OFF)


@dataclass(frozen=True)
class Place(FieldMapping):
    """Where a search looks: an explicit project (``id``, ``name``), an auto project by its root
    (``key``, ``root``) or the home. Read as a mapping too, as ``scope.attribution`` hands places
    around, so the scope map and a result's ``project`` take it as they are."""

    kind: str
    id: str | None = None
    name: str | None = None
    key: str | None = None
    root: str | None = None

    @classmethod
    def of(cls, place: Mapping[str, Any]) -> Place:
        return place if isinstance(place, Place) else cls(**{k: place[k] for k in cls._names() if k in place})


def public_place(place: Place, projects: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The ``project`` object of a result: explicit projects also carry slug and folder."""
    if place.kind != "explicit":
        return dict(place)
    project = hermes_db.find_project(list(projects), place.id) or {}
    return {"kind": "explicit", "id": place.id, "name": place.name,
            "slug": project.get("slug"), "primary_path": project.get("primary_path")}


@dataclass(frozen=True)
class Scope:
    """Who asks and what they may read, resolved once at the edge of a surface (tool, API, CLI)
    and passed down, so no layer below works it out again: the scope map it was read from, whether
    the caller is a chat (sealed to its chat's project), the place, and the sessions to search."""

    smap: ScopeMap
    place: Place | None  # None: the calling session has no place to search from
    session_ids: list[str]  # searchable sessions of the place, the caller's conversation removed
    chat: bool = False
    current: str | None = None  # the calling session, for a scope resolved from one

    @property
    def place_sessions(self) -> list[str]:
        """Every session of the place (what the keyword side's scope statistics are kept for)."""
        return self.smap.sessions_in(self.place, chat=self.chat) if self.place else []

    @property
    def conversations(self) -> int:
        """How many conversations the searchable sessions make up."""
        return len({self.smap.root_of.get(s, s) for s in self.session_ids})

    def root(self, session_id: str) -> str:
        return self.smap.root_of.get(session_id, session_id)


# Only rows that can ever be a hit belong to a scope's ids: they are the denominator of every term's
# share and BM25 weight. Counting an agent's tool results and text-less tool-call rows made names
# fall under ``common_share`` (in a LoCoMo conversation written as agent transcripts, 72 of the first
# 120 questions kept a different set of common words), so semantic search stopped dropping them.
_TEXT_TURN = text_turn_sql("")


# The oldest and newest turn of a list of sessions, each looked up in Hermes' (session_id, timestamp)
# index: 3 ms over 1,158 sessions, where one min/max over their rows read all 200k of them (38 ms).
# Only times from 1970 to 2100 count: a session an importer wrote in milliseconds (year 55302)
# would make a day of any year thousands of reads.
_PLAUSIBLE = "timestamp BETWEEN 0 AND 4102444800"
_SCOPE_TIMES = ("SELECT min(first), max(last) FROM (SELECT"
                f" (SELECT min(timestamp) FROM messages WHERE session_id = j.value AND {_PLAUSIBLE}) AS first,"
                f" (SELECT max(timestamp) FROM messages WHERE session_id = j.value AND {_PLAUSIBLE}) AS last"
                " FROM json_each(?) AS j)")


class ScopeMessageIds:
    """Sorted ids of a scope's sessions' text turns (``text_turn_sql``), cached and extended as new
    messages arrive, with the keyword search's per-scope memo (id set, term statistics) beside them."""

    def __init__(self, size: int = 64) -> None:
        self._cache: dict[str, tuple[array, int, frozenset[str], ScopeMemo]] = {}
        self._size = size
        self._lock = threading.Lock()

    def get(self, conn: sqlite3.Connection, session_ids: Sequence[str], max_id: int) -> array:
        return self.scope(conn, session_ids, max_id).ids

    def scope(self, conn: sqlite3.Connection, session_ids: Sequence[str], max_id: int) -> ScopeRows:
        key = hashlib.blake2b("\n".join(sorted(session_ids)).encode("utf-8", "surrogatepass"),
                              digest_size=16).hexdigest()
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None and cached[1] >= max_id:
            # Another search already saw newer messages: this one must not see past its own max_id.
            ids = cached[0]
            return ScopeRows(ids if cached[1] == max_id else ids[: bisect_right(ids, max_id)], cached[3])
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
        return ScopeRows(ids, memo)


@dataclass(frozen=True)
class Message(FieldMapping):
    """One turn as search shows it: its text read once per search (``ProfileReader.messages``)."""

    role: str
    text: str
    timestamp: float | None
    session_id: str


class ProfileReader:
    """The profile's history as search and the actions read it (see the module's docstring)."""

    def __init__(self, home: Path) -> None:
        self.home = Path(home)
        self.profile = profile_name(self.home)
        self.scopes = ScopeCache(self.home)
        self.scope_messages = ScopeMessageIds()
        self.timelines = Timelines()  # each session's spans of talk (episodes.py), kept between searches
        self._local = threading.local()
        self._gate = threading.BoundedSemaphore(MAX_CONCURRENT)
        self._pool: list[sqlite3.Connection] = []
        self._beside: list[sqlite3.Connection] = []
        self._pool_lock = threading.Lock()

    # -- the connection lease ----------------------------------------------------------------
    def connection(self) -> sqlite3.Connection:
        """The read-only connection leased to this thread (see :meth:`leased`)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            raise RuntimeError("connection() outside leased()")
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
                    with faults.guard(hermes_db.state_db_path(self.home), writing=False):  # its first read
                        rule_view.prepare(conn, self.home)  # what was forgotten since the last lease
                except hermes_db.Unavailable as exc:
                    log.warning("project-history-recall: %s (%s)", exc, exc.detail)
                    raise  # the store fault itself: it names the file and the recovery
                yield conn
            finally:
                self._local.conn = None
                with self._pool_lock:
                    self._pool.append(conn)

    @contextmanager
    def beside(self) -> Iterator[sqlite3.Connection]:
        """A prepared read-only connection (plain tuples) for a thread that works for an operation
        already counted by :meth:`leased` (a search's semantic half): not gated again, and kept
        between searches — a new connection copies every id out of recall into its table again
        (10 ms at 10,000 forget rules), a kept one only what changed since its last use."""
        with self._pool_lock:
            conn = self._beside.pop() if self._beside else None
        if conn is None:
            conn = rule_view.connect_state(self.home, rows=False)
        else:
            try:
                rule_view.prepare(conn, self.home)
            except BaseException:
                conn.close()
                raise
        try:
            yield conn
        except BaseException:
            conn.close()  # an error mid-read: the next search starts from a fresh connection
            raise
        with self._pool_lock:
            self._beside.append(conn)

    # -- the scope map and a request's scope ---------------------------------------------------
    def scope_map(self) -> ScopeMap:
        with self.leased() as conn:
            try:
                return self.scopes.get(conn)
            except hermes_db.Unavailable as exc:
                log.warning("project-history-recall: %s (%s)", exc, exc.detail)
                raise  # the store fault itself: it names the file and the recovery
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
            return Scope(smap, place, _searchable_in(smap, place, (), chat=True), chat=True)
        if project is not None:
            found = hermes_db.find_project(smap.projects, project)
            if found is None or found.get("archived"):
                raise SearchError(f"project not found: {project}", "unknown_project")
            place = Place("explicit", found["id"], found["name"])
            return Scope(smap, place, _searchable_in(smap, place, ()))
        if not session_id:
            raise SearchError("no scope: give a project or a session", "bad_request")
        origin = smap.origin(session_id, session_key=session_key, platform=platform)
        if origin.chat:
            place = self._bound_place(smap, origin)
        elif _has_place(smap, session_id):
            place = Place.of(smap.place(session_id) or {"kind": "home"})
        else:
            return Scope(smap, None, [], current=session_id)
        return Scope(smap, place, _searchable_in(smap, place, smap.conversation(session_id), chat=origin.chat),
                     chat=origin.chat, current=session_id)

    def _bound_place(self, smap: ScopeMap, origin: Origin) -> Place:
        check_recall_on(self.home, origin.name)  # an admin's /recall-off closes the chat first
        found, reason = bound_project(origin, smap.bound, smap.projects)
        if found is None:  # the reason ("unset", "home", "archived", "missing") lets a chat say which
            raise SearchError(refusal(reason), CHAT_UNBOUND, reason=reason)
        return Place("explicit", found["id"], found["name"])

    # -- the scope's rows ---------------------------------------------------------------------
    def scope_rows(self, scope: Scope) -> ScopeRows:
        """The ids of every text turn of the scope's place up to now, with the keyword side's memo:
        read once per search (question.ask), so every stage of it sees the same rows."""
        conn = self.connection()
        max_id = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
        return self.scope_messages.scope(conn, scope.place_sessions, max_id)

    def messages(self, ids: Sequence[int]) -> dict[int, Message]:
        if not ids:
            return {}
        rows = self.connection().execute(
            "SELECT id, session_id, role, content, timestamp FROM messages"
            " WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(list(ids)),)).fetchall()
        texts = {r["id"]: {"session_id": r["session_id"], "text": message_text(r["content"])} for r in rows}
        # Another member's words quoted in a turn, which that member took out of recall (scope/quotes.py).
        quotes.hide(self.connection(), self.home, self.scope_map, texts)
        return {r["id"]: Message(r["role"], texts[r["id"]]["text"], r["timestamp"], r["session_id"]) for r in rows}

    def first_turns(self, filters: Filters, named: NamedTime, count: int = 1) -> list[tuple[str, list[int]]]:
        """The first ``count`` turns of each conversation held in the ``named`` time that search may
        show — the scope's sessions, the request's bounds and every read-time rule (``Filters.sql``:
        live, not forgotten, no summary) — as (session, message ids), oldest first. A conversation is
        a session's turns in that time cut at each pause of more than ``conversation_pause``
        (episodes.py): a group's session of weeks holds several in "上周". Read span by span through
        Hermes' (session_id, timestamp) index: a day of any year is that day in each year the scope
        spans (a 200k-message scope: ~10 ms, where testing every row's day took 450 ms)."""
        conn = self.connection()
        sessions = json.dumps(list(filters.session_ids))
        first, last = conn.execute(_SCOPE_TIMES, (sessions,)).fetchone()
        if first is None:
            return []
        where, params = filters.sql(conn)
        pause = RANKING.conversation_pause
        found: dict[tuple[str, int, float], list[tuple[float, int]]] = {}
        for start, end in named.spans(first, last):
            # Each turn's conversation within the span (a running count of the pauses before it in
            # its session), then the first ``count`` turns of each.
            rows = conn.execute(
                "SELECT session_id, id, ts, part FROM (SELECT *, row_number() OVER (PARTITION BY session_id, part"
                " ORDER BY ts, id) AS n FROM (SELECT *, sum(opens) OVER (PARTITION BY session_id ORDER BY ts, id)"
                " AS part FROM (SELECT m.session_id, m.id, m.timestamp AS ts, CASE WHEN ? > 0 AND m.timestamp -"
                " lag(m.timestamp) OVER (PARTITION BY m.session_id ORDER BY m.timestamp, m.id) > ? THEN 1 ELSE 0"
                f" END AS opens {MESSAGES_FROM} WHERE {where} AND m.timestamp BETWEEN ? AND ?)))"
                " WHERE n <= ?", (pause, pause, *params, start, end, count))
            for session, mid, ts, part in rows:
                found.setdefault((session, part, start), []).append((ts, mid))
        held = [(session, [mid for _, mid in sorted(turns)][:count]) for (session, *_), turns in found.items()]
        return sorted(held, key=lambda held: held[1][0])

    def timestamps(self, ids: Sequence[int]) -> dict[int, float]:
        rows = self.connection().execute(
            "SELECT id, timestamp FROM messages WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(ids)),)).fetchall()
        return {r[0]: r[1] or 0 for r in rows}


def _searchable_in(smap: ScopeMap, place: Place, exclude: Sequence[str], *, chat: bool = False) -> list[str]:
    excluded = set(exclude)
    return [sid for sid in smap.sessions_in(place, chat=chat) if sid not in excluded
            and not (smap.rows.get(sid) or {}).get("archived")
            and (smap.rows.get(sid) or {}).get("source") not in ("subagent", "tool")]


def _has_place(smap: ScopeMap, session_id: str) -> bool:
    """Whether a non-chat session has a place to search from: a recorded cwd or git root."""
    from ..scope.attribution import effective_place

    row = effective_place(session_id, smap.rows)
    return bool((row.get("cwd") or "").strip() or (row.get("git_repo_root") or "").strip())


_readers: dict[str, ProfileReader] = {}
_readers_lock = threading.Lock()


def reader_for(home: Path) -> ProfileReader:
    """The reader of the profile at ``home``, shared by its search engine and the actions."""
    key = str(Path(home).resolve())
    with _readers_lock:
        if key not in _readers:
            _readers[key] = ProfileReader(Path(home))
        return _readers[key]
