"""Project scopes: every session of the profile attributed once, cached until something changes.

A scope is the set of sessions whose conversation resolves to the same place (explicit project,
auto repo, or Home). Attribution runs per distinct (cwd, root) pair, not per session, and the
whole map is rebuilt only when the sessions fingerprint, projects.db or the chat bindings change
(new sessions, moves, archive flags, project edits, /move) — not on every query.

Chat sessions (``chat_scope``) are members of one scope at most: the explicit project their chat
is bound to, and only once they were placed there. Home and auto repos never hold chat history.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..stores import bindings, hermes_db
from . import attribution
from .chat_rule import OPERATOR, Origin, origin_of
from .lineage import conversation_root

Probe = Callable[[str], str]


def git_common_root(cwd: str) -> str:
    """Git's common repo root for ``cwd`` (linked worktrees fold into the main repo), or ``""``."""
    if not cwd or not os.path.isdir(cwd):
        return ""
    from tui_gateway import git_probe

    return git_probe.common_repo_root(cwd) or ""


@dataclass
class ScopeMap:
    rows: dict[str, dict[str, Any]]
    projects: list[dict[str, Any]]
    place_of: dict[str, dict[str, Any]]  # session id → resolved place
    root_of: dict[str, str]  # session id → conversation root id
    members: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # identity → session ids
    conversations: dict[str, list[str]] = field(default_factory=dict)  # root → session ids
    origins: dict[str, Origin] = field(default_factory=dict)  # chat sessions only
    bound: dict[str, str | None] = field(default_factory=dict)  # chat → project id (None: Home)
    recorded: dict[str, str] = field(default_factory=dict)  # session id → chat, as the hook saw it
    # The operator's sessions made from a chat's conversation (``Origin.copied``) → that chat:
    # where their place is, but never in a chat's recall (issue 34 §3).
    copied: dict[str, str | None] = field(default_factory=dict)

    def place(self, session_id: str) -> dict[str, Any] | None:
        return self.place_of.get(session_id)

    def sessions_in(self, place: dict[str, Any], *, chat: bool = False) -> list[str]:
        """The sessions of ``place``; for a chat's search (``chat``) without the operator's own
        sessions made from a chat's conversation."""
        found = self.members.get(attribution.identity(place), [])
        return [sid for sid in found if sid not in self.copied] if chat and self.copied else found

    def conversation(self, session_id: str) -> list[str]:
        return self.conversations.get(self.root_of.get(session_id, session_id)) or [session_id]

    def origin(self, session_id: str, *, session_key: str | None = None, platform: str | None = None) -> Origin:
        """Chat or operator session (``chat_scope.origin_of``); hints only count without a row."""
        if session_id in self.rows:
            return self.origins.get(session_id, OPERATOR)
        return origin_of(session_id, self.rows, self.recorded, session_key=session_key, platform=platform)


def _member_of(place: dict[str, Any], origin: Origin, bound: dict[str, str | None]) -> bool:
    """An operator session is where its cwd says; a chat session only in its chat's project."""
    if not origin.chat:
        return True
    return place["kind"] == "explicit" and origin.name is not None and bound.get(origin.name) == place["id"]


def build_scope_map(rows: dict[str, dict[str, Any]], projects: list[dict[str, Any]],
                    probe: Probe = git_common_root, bound: dict[str, str | None] | None = None,
                    recorded: dict[str, str] | None = None) -> ScopeMap:
    bound, recorded = bound or {}, recorded or {}
    index = attribution.FolderIndex(projects)
    origins: dict[str, Origin] = {}
    copied: dict[str, str | None] = {}
    memo: dict[tuple[str, str], dict[str, Any]] = {}
    place_of: dict[str, dict[str, Any]] = {}
    root_of: dict[str, str] = {}
    members: dict[tuple[str, str], list[str]] = {}
    conversations: dict[str, list[str]] = {}
    sources = {sid: attribution.effective_place(sid, rows) for sid in rows}  # a rotated child: its conversation's
    probed = _probe_all(sources.values(), index, probe)
    for sid in rows:
        root_id = conversation_root(sid, rows)
        root_of[sid] = root_id
        conversations.setdefault(root_id, []).append(sid)
        source = sources[sid]
        cwd = (source.get("cwd") or "").strip()
        key = (cwd, (source.get("git_repo_root") or "").strip())
        place = memo.get(key)
        if place is None:
            place = attribution.resolve_project(source, index)
            if cwd in probed and place["kind"] != "explicit" and attribution.effective_root(source) is None:
                place = attribution.resolve_project(dict(source, probed_repo_root=probed[cwd]), index)
            memo[key] = place
        place_of[sid] = place
        origin = origin_of(sid, rows, recorded)
        if origin.chat:
            origins[sid] = origin
        elif origin.copied:
            copied[sid] = origin.name
        if _member_of(place, origin, bound):
            members.setdefault(attribution.identity(place), []).append(sid)
    return ScopeMap(rows=rows, projects=projects, place_of=place_of, root_of=root_of, members=members,
                    conversations=conversations, origins=origins, bound=bound, recorded=recorded,
                    copied=copied)


_PROBES_AT_ONCE = 8  # git runs as a process each: waiting, not computing


def _probe_all(sources: Iterable[dict[str, Any]], index: attribution.FolderIndex, probe: Probe) -> dict[str, str]:
    """Git's answer for every folder whose sessions record no usable root (CLI and gateway rows
    never have one; a worktree's common root lies outside its cwd) and that no explicit project
    claims — asked side by side: one ``git`` process each, ~12 ms, 43 folders in a busy profile."""
    cwds: dict[str, None] = {}
    seen: set[tuple[str, str]] = set()
    for source in sources:
        cwd = (source.get("cwd") or "").strip()
        key = (cwd, (source.get("git_repo_root") or "").strip())
        if not cwd or cwd in cwds or key in seen:
            continue
        seen.add(key)
        claimed = attribution.resolve_project(source, index)["kind"] == "explicit"
        if not claimed and attribution.effective_root(source) is None:
            cwds[cwd] = None
    if len(cwds) < 2:
        return {cwd: probe(cwd) for cwd in cwds}
    with ThreadPoolExecutor(max_workers=min(_PROBES_AT_ONCE, len(cwds)), thread_name_prefix="recall-git") as pool:
        return dict(zip(cwds, pool.map(probe, cwds), strict=True))


class ScopeCache:
    """One per profile home; thread-safe; rebuilds only when a fingerprint moves."""

    def __init__(self, home: Path, probe: Probe = git_common_root) -> None:
        self.home = Path(home)
        self._probe = probe
        self._lock = threading.Lock()
        self._key: tuple = (None, None)
        self._map: ScopeMap | None = None
        self._seen: dict[int, int] = {}  # connection → data_version the map was checked at

    def get(self, conn) -> ScopeMap:
        """The current map. ``PRAGMA data_version`` skips even the fingerprint scan while nobody
        has written; after any write the exact fingerprint decides whether to rebuild."""
        version = hermes_db.data_version(conn)
        files_key = (hermes_db.projects_fingerprint(self.home), bindings.fingerprint(self.home))
        with self._lock:
            if self._map is not None and self._seen.get(id(conn)) == version and files_key == self._key[1]:
                return self._map
        key = (hermes_db.sessions_fingerprint(conn), files_key)
        with self._lock:
            if self._map is not None and key == self._key:
                self._seen[id(conn)] = version
                return self._map
        rows = hermes_db.load_session_rows(conn)
        # Either read raising ``Unavailable`` leaves the cache as it was: a failed read is never
        # remembered, the next call reads again.
        projects = hermes_db.load_projects(self.home)
        bound, recorded = bindings.load_all(self.home)
        built = build_scope_map(rows, projects, self._probe, bound, recorded)
        with self._lock:
            self._key, self._map = key, built
            self._seen = {id(conn): version}
        return built

    def invalidate(self) -> None:
        with self._lock:
            self._key, self._map, self._seen = (None, None), None, {}
