"""Which project a session belongs to — the seed's ``resolve_project``, pure, no I/O.

Rules (seed §3.1, corrected by architecture.md):
1. A session with no cwd of its own takes its compression ancestor's place (rotated
   children are created with NULL cwd) — see :func:`effective_place`.
2. A recorded ``git_repo_root`` only counts when the cwd lies inside it: Hermes 0.19.0's
   ``update_session_cwd`` never clears a stale root after a move.
3. The caller may supply ``probed_repo_root`` (git's common root for the cwd, so linked
   worktrees fold into their main repo); it also confirms a recorded root the cwd is not inside.
4. The cwd and the root are matched against every non-archived project's folders; the deepest
   folder wins, ties keep the first project → ``explicit``. Else a root → ``auto``. Else ``home``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .paths import comparison_segments, is_within, path_key

Project = Mapping[str, Any]
SessionRow = Mapping[str, Any]


class FolderIndex:
    """Normalised folder → (project, depth); a lookup walks a path's ancestors, longest first."""

    def __init__(self, projects: Iterable[Project]) -> None:
        self._by_key: dict[str, tuple[Project, int]] = {}
        for project in projects:
            if project.get("archived"):
                continue
            for folder in project.get("folders") or []:
                path = folder.get("path") if isinstance(folder, Mapping) else folder
                segs = comparison_segments(path)
                if not segs:
                    continue
                key = "/".join(segs)
                if key not in self._by_key or len(segs) > self._by_key[key][1]:
                    self._by_key[key] = (project, len(segs))

    def match(self, path: str | None) -> tuple[Project | None, int]:
        segs = comparison_segments(path)
        for end in range(len(segs), 0, -1):
            hit = self._by_key.get("/".join(segs[:end]))
            if hit:
                return hit
        return None, -1


def effective_root(row: SessionRow) -> str | None:
    """The git root that really describes where this session is (rules 2 and 3).

    ``probed_repo_root`` is git's live answer for the cwd, so it always counts (a linked worktree
    beside its repo has a common root its cwd is not inside). A recorded root counts while the
    cwd lies inside it, or when git confirms it.
    """
    recorded, probed = _named(row.get("git_repo_root")), _named(row.get("probed_repo_root"))
    written = row.get("cwd")
    no_cwd = not (isinstance(written, str) and written.strip())  # a cwd naming no folder is still one
    same = probed and comparison_segments(probed) == comparison_segments(recorded)
    if recorded and (no_cwd or is_within(written, recorded) or same):
        return recorded
    return probed or None


def _named(path: object) -> str | None:
    """A recorded path that names a folder, as written (whitespace is part of a POSIX name, so it
    is not stripped: ``/work/alpha `` is another folder than ``/work/alpha``); None otherwise."""
    return path if isinstance(path, str) and path_key(path) else None


def resolve_project(
    session_row: SessionRow,
    projects: Iterable[Project] | FolderIndex,
) -> dict[str, Any]:
    """Return ``{"kind": "explicit", "id", "name"}``, ``{"kind": "auto", "key", "root"}`` or ``{"kind": "home"}``."""
    index = projects if isinstance(projects, FolderIndex) else FolderIndex(projects)
    cwd = _named(session_row.get("cwd"))
    root = effective_root(session_row)
    best, best_depth = None, -1
    for candidate in (cwd, root):
        if candidate:
            project, depth = index.match(candidate)
            if project is not None and depth > best_depth:
                best, best_depth = project, depth
    if best is not None:
        return {"kind": "explicit", "id": best["id"], "name": best.get("name") or best["id"]}
    if root:
        return {"kind": "auto", "key": path_key(root), "root": root}
    return {"kind": "home"}


def identity(place: Mapping[str, Any]) -> tuple[str, str]:
    """Hashable identity of a resolved place; two sessions share a scope iff these are equal."""
    kind = place["kind"]
    if kind == "explicit":
        return ("explicit", place["id"])
    if kind == "auto":  # by the root's segments: a POSIX and a Windows root never share a key
        return ("auto", "/".join(comparison_segments(place.get("root"))) or place["key"])
    return ("home", "")


def effective_place(session_id: str, rows: Mapping[str, SessionRow]) -> SessionRow:
    """The row whose cwd/root describe ``session_id``: itself, or the nearest ancestor with a cwd.

    Rotated compression children (and legacy children) carry NULL cwd and git columns; they are
    part of their ancestor's conversation and live where it lives.
    """
    seen: set[str] = set()
    current = rows.get(session_id)
    while current is not None and current["id"] not in seen:
        if (current.get("cwd") or "").strip() or (current.get("git_repo_root") or "").strip():
            return current
        seen.add(current["id"])
        parent = current.get("parent_session_id")
        current = rows.get(parent) if parent else None
    return rows.get(session_id) or {"id": session_id}
