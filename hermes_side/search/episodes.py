"""A conversation as a person remembers it: the turns of a session lineage between two pauses.

The NoneBot bridge keeps one Hermes session per member of a group (or one for the group) until
someone types ``/clear``, and Hermes 0.19 compacts it in place, so a group's session holds weeks of
talk: one "conversation" by session. A search grouped by session showed that whole history as one
row — "/recall 部署" in a group that discussed deploying on fifteen days got one row. Here a pause of
more than ``RANKING.conversation_pause`` in a lineage's turns starts another conversation, so each
discussion is a row of its own.

:class:`Timelines` keeps each session's spans of talk (its turns' times cut at such pauses) and
reads only the turns added since it last looked — a session is appended to, so a search in a busy
group reads a few rows, not the group's history. :class:`Episodes` is one search's view: each hit's
conversation key, the lineage's root where the lineage never paused (as before: a session without
a pause is one conversation), else the root and the start of the span the hit was said in.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from typing import Any

from .settings import RANKING

Span = tuple[float, float]  # first and last turn's time


def cut(times: Iterable[float], pause: float, spans: list[list[float]] | None = None) -> list[list[float]]:
    """``times`` (ascending) as spans of talk, a new span after a pause of more than ``pause``
    seconds; ``spans``: the spans before them, extended in place. Pure."""
    out = spans if spans is not None else []
    for t in times:
        if out and t - out[-1][1] <= pause:
            out[-1][1] = max(out[-1][1], t)
        else:
            out.append([t, t])
    return out


def parts(turns: Iterable[tuple[int, str, float | None]], pause: float) -> dict[int, int]:
    """Each turn (id, session, time) → the number of its part of its session among ``turns``: in
    time order, a new part after more than ``pause`` seconds without one of them (0: every turn is
    part 0; a turn without a time is part 0). Among a sample or a search's matches only — turns
    left out may fill a pause — so a part is never longer than the conversation it stands in. Pure."""
    if pause <= 0:
        return {}
    out: dict[int, int] = {}
    last: dict[str, tuple[float, int]] = {}
    for turn, session, t in sorted((x for x in turns if x[2] is not None), key=lambda x: x[2]):
        seen = last.get(session)
        n = 0 if seen is None else seen[1] + (t - seen[0] > pause)
        last[session] = (t, n)
        out[turn] = n
    return out


def merged(spans: Iterable[Span], pause: float) -> list[Span]:
    """The spans of several sessions of one lineage (a compaction's child, a branch) as one
    timeline: spans that overlap or stand within ``pause`` of each other are one. Pure."""
    out: list[list[float]] = []
    for start, end in sorted(spans):
        if out and start - out[-1][1] <= pause:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(s, e) for s, e in out]


class Timelines:
    """Each session's spans of talk, per profile, kept between searches (see the module's docstring).
    A turn deleted since (Hermes' rewind) may leave a pause where there is none now: that only
    splits a conversation in two, never joins two."""

    def __init__(self) -> None:
        # (session, pause) → (the last turn's time read, spans)
        self._spans: dict[tuple[str, float], tuple[float, list[list[float]]]] = {}
        self._lock = threading.Lock()

    def spans(self, conn: sqlite3.Connection, session_ids: Iterable[str], pause: float) -> dict[str, list[Span]]:
        """The spans of each of ``session_ids``, in one statement of a fixed shape: through Hermes'
        (session_id, timestamp) index, the turns after the last one read for each session, only."""
        with self._lock:
            known = {sid: self._spans.get((sid, pause), (None, [])) for sid in dict.fromkeys(session_ids)}
        if not known:
            return {}
        rows = conn.execute(
            "SELECT m.session_id, m.timestamp FROM json_each(?) j JOIN messages m"
            " ON m.session_id = json_extract(j.value, '$[0]')"
            " AND m.timestamp > coalesce(json_extract(j.value, '$[1]'), -1e18)"
            " ORDER BY m.session_id, m.timestamp",
            (json.dumps([[sid, seen] for sid, (seen, _) in known.items()]),)).fetchall()
        new: dict[str, list[float]] = {}
        for sid, t in rows:
            if t is not None:
                new.setdefault(sid, []).append(t)
        out: dict[str, list[Span]] = {}
        with self._lock:
            if len(self._spans) + len(known) > 100_000:  # a profile of that many sessions: start again
                self._spans.clear()
            for sid, (seen, spans) in known.items():
                spans = [list(x) for x in spans]
                if times := new.get(sid):
                    cut(times, pause, spans)
                    seen = times[-1]
                self._spans[(sid, pause)] = (seen, spans)
                out[sid] = [(a, b) for a, b in spans]
        return out


class Episodes:
    """One search's conversations: each hit's key (see the module's docstring). A lineage's spans
    are read the first time one of its turns asks for its key (from ``Timelines``, so mostly kept
    from the last search), within the search's lease of the profile's connection."""

    def __init__(self, conn: sqlite3.Connection, timelines: Timelines, root_of: Mapping[str, str],
                 session_ids: Iterable[str], texts: Mapping[int, Any]) -> None:
        self._conn, self._timelines, self._root_of, self._texts = conn, timelines, root_of, texts
        self._lineage: dict[str, list[str]] = {}
        for sid in session_ids:
            self._lineage.setdefault(root_of.get(sid, sid), []).append(sid)
        self._starts: dict[str, list[float]] = {}  # root → its spans' starts (none: one conversation)
        self._roots: dict[str, str] = {}  # each key given out → its lineage's root

    def root(self, session_id: str) -> str:
        return self._root_of.get(session_id, session_id)

    def read(self, session_ids: Iterable[str]) -> None:
        """Read the lineages of ``session_ids`` at once (one statement), before their keys are asked for."""
        pause = RANKING.conversation_pause
        wanted: dict[str, list[str]] = {}
        for sid in session_ids:
            root = self.root(sid)
            if root not in self._starts and root not in wanted:
                sessions = self._lineage.get(root, [])
                # the current session's lineage, which the scope leaves out: its own session
                wanted[root] = sessions if sid in sessions else [*sessions, sid]
        if not wanted:
            return
        if pause <= 0:
            self._starts.update(dict.fromkeys(wanted, []))
            return
        spans = self._timelines.spans(self._conn, (sid for sessions in wanted.values() for sid in sessions), pause)
        for root, sessions in wanted.items():
            found = merged((s for sid in sessions for s in spans.get(sid, ())), pause)
            self._starts[root] = [start for start, _ in found] if len(found) > 1 else []

    def at(self, session_id: str, timestamp: float | None) -> str:
        """The key of the conversation of ``session_id``'s lineage that a turn said at ``timestamp`` is in."""
        root = self.root(session_id)
        if timestamp is not None and root not in self._starts:
            self.read([session_id])
        starts = self._starts.get(root) if timestamp is not None else None
        i = max(0, bisect_right(starts, timestamp) - 1) if starts else 0
        key = root if i == 0 else f"{root}@{starts[i]:.0f}"
        self._roots[key] = root
        return key

    def of(self, session_id: str, message_id: int) -> str:
        """The key of the conversation a message read in this search (``texts``) is in."""
        return self.at(session_id, getattr(self._texts.get(message_id), "timestamp", None))

    def lineage(self, key: str) -> str:
        """The root of the lineage a key given out stands in."""
        return self._roots.get(key, key)

    def __call__(self, hit: Mapping[str, Any]) -> str:
        return self.of(hit["session_id"], hit["message_id"])

    def expand(self, order: Iterable[str], keys: Iterable[str]) -> list[str]:
        """A list of lineages' roots (the passage list ranks sessions) as conversation ``keys``: each
        root stands for its conversations among them, in the order ``keys`` gives."""
        by_root: dict[str, list[str]] = {}
        for key in keys:
            by_root.setdefault(self.lineage(key), []).append(key)
        return [key for root in order for key in by_root.get(root, ())]
