"""Path identity rules, the same as Hermes' desktop project tree (``tui_gateway/project_tree.py``).

Windows-looking paths compare case-insensitively on every host (a state.db written on Windows
can be read anywhere); POSIX paths stay case-sensitive. Separators and trailing slashes never
matter. Pure functions only.
"""

from __future__ import annotations

import re

_WINDOWS_PATH = re.compile(r"^[A-Za-z]:[/\\]")


def segments(path: str | None) -> list[str]:
    return [s for s in re.split(r"[/\\]", (path or "").rstrip("/\\")) if s]


def is_windows_path(path: str | None) -> bool:
    value = (path or "").strip()
    return bool(_WINDOWS_PATH.match(value)) or value.startswith(("\\", "//"))


def comparison_segments(path: str | None) -> list[str]:
    segs = segments(path)
    return [s.casefold() for s in segs] if is_windows_path(path) else segs


def path_key(path: str | None) -> str:
    """Canonical comparison key: ``/Users/Bob/Repo/`` → ``Users/Bob/Repo``, ``C:\\A`` → ``c:/a``."""
    return "/".join(comparison_segments(path))


def is_within(path: str | None, ancestor: str | None) -> bool:
    """True when ``path`` is ``ancestor`` or lies below it (segment-wise, not string prefix)."""
    inner, outer = comparison_segments(path), comparison_segments(ancestor)
    return bool(outer) and inner[: len(outer)] == outer
