"""What went wrong with a file recall reads or writes: which file, what is wrong, what fixes it.

Every known fault of a file — the disk is full, the profile's folder is read-only, the file is
damaged, missing where the profile's ledger says it should be (``ledger.py``), locked — becomes a
:class:`StoreFault`: a ``hermes_db.Unavailable`` (code ``unavailable``: the recall API answers 503,
the CLI an ``error:`` line and exit 1) whose sentence names the file and the cause and never a path
(a bot may show it to a group), with a ``recovery`` the operator can run. SQLite and the OS say
"disk I/O error" or "unable to open database file" for several of these; the file system is asked
(``os.statvfs``) which one it is.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import RecallError

FULL, READ_ONLY, DAMAGED, MISSING, EMPTY, BEHIND, BUSY, UNREADABLE = (
    "full", "read_only", "damaged", "missing", "empty", "behind", "busy", "unreadable")

# What each file is, in the words a sentence about it uses.
WHAT = {
    "forgotten.db": "the record of forgotten history",
    "bindings.db": "the chat bindings",
    "embeddings.db": "the semantic index",
    "ledger.json": "the store ledger",
    "consent.json": "the consent record",
    "projects.db": "the project list",
    "state.db": "the session database",
    "moves": "the move journal",
    "locks": "the chat locks",
    "index.lock": "the index run's lock",
    "index.run.json": "the index run's note",
}

# How the operator gets a damaged, missing or older file back. Recall's own privacy stores: a backup,
# or an explicit start over (``hermes recall repair``); the index: rebuilt from history.
_REPAIR = ("restore {file} from a backup of the profile's project-history-recall folder, or run "
           "`hermes recall repair {file} --apply` to keep what can still be read and start over ({loses})")
_LOSES = {
    "forgotten.db": "turns it no longer records become searchable again",
    "bindings.db": "chats it no longer records must be linked again with /move",
    "ledger.json": "it is rebuilt from the stores as they are",
}
_RESTORE = {
    **{file: _REPAIR.format(file=file, loses=loses) for file, loses in _LOSES.items()},
    "embeddings.db": "run `hermes recall index --rebuild` (moves the damaged index aside and builds it again; "
                     "keyword search works meanwhile)",
    "consent.json": "run `hermes recall consent grant` again (until then nothing is sent to the provider)",
    "projects.db": "projects.db is Hermes' own file: restore it from a backup (recall only reads it)",
    "state.db": "state.db is Hermes' own file: restore it from a backup (recall only reads it)",
    "moves": "check the project-history-recall/moves folder of the profile",
}
_CAUSE = {
    FULL: "the disk is full",
    READ_ONLY: "the profile's folder is read-only",
    BUSY: "another process holds it locked",
}
_RECOVERY = {
    FULL: "free space on the disk that holds this Hermes profile, then try again (nothing was half-written)",
    READ_ONLY: "make the profile's folder writable for the user running Hermes (remount it read-write or fix "
               "its permissions), then try again",
    BUSY: "try again in a moment; if it stays locked, stop the process that holds it",
}


class Unavailable(RecallError):
    """A database exists but cannot be read (locked, corrupt, unreadable). Never "empty": an
    unreadable projects.db read as "no projects" would widen every scope (fail closed).
    ``hermes_db.Unavailable`` is this class."""

    code = "unavailable"

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message, detail=detail)


class StoreFault(Unavailable):
    """A file recall needs cannot be used: ``file`` (a name, never a path), ``kind`` (one of the
    constants above; also its ``reason``, so a chat can tell "try again" from "ask the operator"),
    ``recovery`` (what the operator runs or does; no path either)."""

    def __init__(self, file: str, kind: str, message: str, recovery: str, detail: str = "") -> None:
        super().__init__(message, detail)
        self.file, self.kind, self.recovery = file, kind, recovery
        self.reason = kind

    def as_dict(self) -> dict[str, str]:
        """The status object's entry for this fault (``GET /status``: chat admins may see it)."""
        return {"file": self.file, "problem": self.kind, "error": str(self), "recovery": self.recovery}


def what(file: str) -> str:
    return WHAT.get(file, file)


def restore(file: str) -> str:
    return _RESTORE.get(file, f"restore {file} from a backup")


def fault(file: str, kind: str, cause: str, *, detail: str = "", action: str = "cannot be used") -> StoreFault:
    """A fault of ``file``: "<what> (<file>) <action>: <cause>", with the recovery of its kind."""
    recovery = _RECOVERY.get(kind) or restore(file)
    return StoreFault(file, kind, f"{what(file)} ({file}) {action}: {cause}", recovery, detail)


def kind_of(exc: BaseException, folder: Path | None = None) -> str:
    """The kind of a SQLite or OS error. Ambiguous ones ("disk I/O error", "unable to open") are
    told apart by asking the file system of ``folder`` whether it is full or mounted read-only."""
    for link in _chain(exc):
        if isinstance(link, OSError) and link.errno in (errno.ENOSPC, errno.EDQUOT):
            return FULL
        if isinstance(link, OSError) and link.errno == errno.EROFS:
            return READ_ONLY
        if isinstance(link, sqlite3.Error):
            name, text = getattr(link, "sqlite_errorname", "") or "", str(link).lower()
            if name == "SQLITE_FULL" or "disk is full" in text:
                return FULL
            if name.startswith("SQLITE_READONLY") or "readonly database" in text:
                return _disk(folder) or READ_ONLY
            if is_corruption(link):
                return DAMAGED
            if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "is locked" in text:
                return BUSY
    first = next(iter(_chain(exc)))
    if isinstance(first, OSError) and first.errno in (errno.EACCES, errno.EPERM):
        return _disk(folder) or READ_ONLY
    if isinstance(first, FileNotFoundError):
        return MISSING
    return _disk(folder) or UNREADABLE


def is_corruption(exc: BaseException) -> bool:
    """SQLite's "not a database" and "disk image is malformed" (not "locked" or "busy")."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc)
    return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "malformed" in text or "not a database" in text


def _chain(exc: BaseException) -> list[BaseException]:
    """The error and the ones it was raised while handling: a failed COMMIT's ROLLBACK may raise
    "no transaction is active" over the "database or disk is full" that matters."""
    out, seen = [], set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        out.append(link)
        link = link.__cause__ or link.__context__
    return out


# A disk with less than this left counts as full: SQLite needs a few pages for a journal or -shm.
_NEARLY_FULL = 256 * 1024


def _disk(folder: Path | None) -> str | None:
    """FULL or READ_ONLY when the file system holding ``folder`` is, else None."""
    if folder is None or not hasattr(os, "statvfs"):
        return None
    path = Path(folder)
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    if st.f_flag & getattr(os, "ST_RDONLY", 1):
        return READ_ONLY
    if st.f_bavail * st.f_frsize < _NEARLY_FULL:
        return FULL
    if not os.access(path, os.W_OK):
        return READ_ONLY
    return None


def of(path: Path, exc: BaseException, *, writing: bool) -> StoreFault:
    """The :class:`StoreFault` of an error met while reading or writing ``path``."""
    if isinstance(exc, StoreFault):
        return exc
    path = Path(path)
    kind = kind_of(exc, path.parent)
    action = "cannot be written" if writing else "cannot be read"
    if kind == DAMAGED:
        cause = f"the file is damaged ({exc})"
    elif kind == MISSING:
        cause = "the file is missing"
    else:  # an OSError's own text names the path: its strerror does not
        cause = _CAUSE.get(kind) or (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc))
    return fault(path.name, kind, cause, detail=f"{path}: {exc}", action=action)


@contextmanager
def guard(path: Path, *, writing: bool = True) -> Iterator[None]:
    """Turn a SQLite or OS error met while using ``path`` into its :class:`StoreFault`. Our own
    errors (already a sentence and a code) and a lock's wait running out (``TimeoutError``: busy,
    not broken) pass through."""
    try:
        yield
    except (RecallError, TimeoutError):
        raise
    except (sqlite3.Error, OSError) as exc:
        raise of(path, exc, writing=writing) from exc


def unattributed(exc: BaseException, home: Path) -> StoreFault:
    """The fault of an error that escaped every guard: named by the OS error's file when it has
    one, else as "a file of this profile", judged by the file system holding ``home``."""
    filename = getattr(exc, "filename", None)
    if isinstance(filename, str | os.PathLike) and filename:
        return of(Path(filename), exc, writing=True)
    kind = kind_of(exc, Path(home))
    cause = _CAUSE.get(kind) or f"{exc.__class__.__name__}"
    return StoreFault("", kind, f"a file of this Hermes profile cannot be used: {cause}",
                      _RECOVERY.get(kind, "see the recall API's log for the file and the error"), str(exc))


def move_aside(path: Path) -> Path:
    """Rename a damaged SQLite file (and its -wal/-shm) out of the way; returns its new name. Kept,
    not deleted: the operator may want to look at it, or salvage more than recall could."""
    aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    for suffix in ("-wal", "-shm", ""):
        src = path.with_name(path.name + suffix)
        if src.exists():
            os.replace(src, aside.with_name(aside.name + suffix))
    return aside
