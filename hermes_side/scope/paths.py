"""Path identity for attribution: two spellings are one folder only when the operating system
would resolve them to the same folder. Pure and lexical (attribution never touches the disk).

- A **Windows path** is one a Windows machine writes: a drive (``C:\\…``, ``C:/…``) or a leading
  backslash (UNC ``\\\\srv\\share\\…``). It is normalised like ``ntpath.normpath`` (either
  separator, ``.``, ``..`` — never above the drive or the share) and compared case-insensitively,
  as NTFS does, on every host (a state.db written on Windows can be read anywhere).
- Every other path is **POSIX**: normalised like ``posixpath.normpath`` (``.``, ``..``, repeated
  slashes; a leading ``//`` is ``/``, as Linux and macOS resolve it), only ``/`` separates (a
  backslash is part of a name there) and case always counts.
- A path that does not name a folder by itself — relative (``work/alpha``), drive-relative
  (``C:alpha``) or root-relative (``\\Users\\…``, whose drive is the current one) — matches nothing.

Parity with Hermes' desktop project tree (``tui_gateway/project_tree.py``, ``_comparison_segments``):
separators and trailing slashes never matter, Windows paths compare case-insensitively, POSIX paths
do not, and an auto project's key is the segments joined by ``/``. Where we differ on purpose,
each time because Hermes' rule files a folder in a project it is not in:
``..`` and ``.`` are resolved (Hermes compares them as names, so ``<work>/alpha/../vault`` is in
Alpha there); ``//srv/share`` with forward slashes is POSIX (Hermes takes it for UNC and
case-folds it, so ``//<work>/ALPHA`` is in Alpha there); a POSIX backslash is a character, not a
separator; a relative path matches nothing (Hermes drops the leading ``/``, so ``work/alpha`` is
``/work/alpha`` there); and names are not NFC-normalised (Hermes 0.22 does: on Linux an NFC and an
NFD name are two different folders — on macOS an NFD spelling then files into Home, erring closed).
Symbolic links are not followed (no I/O): ``<link>/..`` is the folder holding the link.
"""

from __future__ import annotations

import ntpath
import posixpath
import re

_DRIVE = re.compile(r"^[A-Za-z]:[/\\]")


def is_windows_path(path: str | None) -> bool:
    value = path or ""
    return bool(_DRIVE.match(value)) or value.startswith("\\")


def _windows_segments(path: str) -> list[str]:
    drive, rest = ntpath.splitdrive(ntpath.normpath(path))
    unc = drive.startswith("\\\\")
    if not (unc or (drive and rest.startswith("\\"))):
        return []  # root-relative or drive-relative: the drive is whatever is current
    parts = [*drive.split("\\"), *rest.split("\\")] if unc else [drive, *rest.split("\\")]
    return [s.casefold() for s in parts if s]


def _posix_segments(path: str) -> list[str]:
    if not path.startswith("/"):
        return []
    return [s for s in posixpath.normpath(path).split("/") if s]


# Leads a Windows path's segments: no POSIX name can be "/", so a POSIX spelling never matches a
# Windows folder (``/c:/users/bob`` is not ``C:\\Users\\Bob``, ``//srv/share`` is not ``\\\\srv\\share``).
WINDOWS = "/"


def comparison_segments(path: str | None) -> list[str]:
    """The folder's segments as the OS resolves them (a Windows path's led by :data:`WINDOWS`);
    ``[]`` when the path names no folder."""
    value = path or ""
    if not is_windows_path(value):
        return _posix_segments(value)
    segs = _windows_segments(value)
    return [WINDOWS, *segs] if segs else []


def path_key(path: str | None) -> str:
    """Hermes' display key: ``/Users/Bob/Repo/`` → ``Users/Bob/Repo``, ``C:\\A\\..\\B`` →
    ``c:/b``; ``""`` for a path that names no folder. Compare folders with
    :func:`comparison_segments`, which also tells the two kinds of path apart."""
    return "/".join(s for s in comparison_segments(path) if s != WINDOWS)


def is_within(path: str | None, ancestor: str | None) -> bool:
    """True when ``path`` is ``ancestor`` or lies below it (segment-wise, not string prefix)."""
    inner, outer = comparison_segments(path), comparison_segments(ancestor)
    return bool(outer) and inner[: len(outer)] == outer
