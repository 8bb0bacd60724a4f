"""Moves that survive a kill: a journal of every move in progress, finished by the next call.

A move writes many sessions, one ``update_session_cwd`` at a time, and a chat's binding after
them. A process killed half-way (SIGKILL, power loss) used to leave part of the conversation in the
old place and the chat bound to the old project until someone moved it again. Now the plan — every
session with its old place, the target folder and git columns, the chat and the project it is to
be bound to — is written to ``<plugin dir>/moves/<id>.json`` before the first write and removed
after the last. The mover holds the OS lock of the journal file for the whole move, which the kernel
drops when it dies; :func:`finish_interrupted` (run when the recall API starts and before
every move or placement) takes each journal whose lock is free and completes it: every session
written to the target (the writes are idempotent) and the chat bound — or, when the target folder
is gone, every session that had a cwd put back where it was. Writes go through Hermes'
``update_session_cwd`` only, like every move.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..host import locks
from ..host.profile import profile_at
from ..stores import faults

log = logging.getLogger(__name__)


def journal_dir(home: Path) -> Path:
    return profile_at(home).plugin_dir / "moves"


class Journal:
    """One move in progress: its file exists, and its lock is held, until :meth:`close`."""

    def __init__(self, home: Path, plan: dict[str, Any]) -> None:
        folder = journal_dir(home)
        with faults.guard(folder):  # a full disk or a read-only profile: nothing is moved
            self._open(folder, plan)

    def _open(self, folder: Path, plan: dict[str, Any]) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{uuid.uuid4().hex}.json"
        self._fh = open(self.path, "x+b")  # noqa: SIM115 — held open (and locked) for the whole move
        try:
            if not locks.try_lock(self._fh):
                raise OSError(f"cannot lock the move journal {self.path}")
            self._fh.write(json.dumps(plan).encode())
            self._fh.flush()
            os.fsync(self._fh.fileno())
            _sync_folder(folder)  # the journal must be on disk before the first session is written
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        """The move finished, or its mover rolled it back: nothing is left to recover."""
        self.path.unlink(missing_ok=True)  # before unlocking: a recoverer that waited sees no file
        self.close()

    def close(self) -> None:
        if not self._fh.closed:
            locks.unlock(self._fh)
            self._fh.close()


def _sync_folder(folder: Path) -> None:
    if hasattr(os, "O_DIRECTORY"):  # POSIX: a new file's name survives a crash once its folder is synced
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def interrupted(home: Path) -> Iterator[tuple[dict[str, Any], Callable[[], None]]]:
    """``(plan, discard)`` for every journal whose mover is gone, its lock held while the caller
    finishes it. A journal whose mover is alive (locked) is skipped; one that cannot be parsed was
    cut off while being written — before any session was touched — and is simply removed."""
    folder = journal_dir(home)
    if not folder.is_dir():
        return
    for path in sorted(folder.glob("*.json")):
        try:
            fh = open(path, "rb")  # noqa: SIM115
        except FileNotFoundError:
            continue  # finished while we looked
        with fh:
            if not locks.try_lock(fh):
                continue  # its mover is still at work
            try:
                if not path.exists():
                    continue
                try:
                    plan = json.loads(fh.read() or b"null")
                except ValueError:
                    plan = None
                if not isinstance(plan, dict):
                    log.warning("project-history-recall: removed an incomplete move journal %s", path.name)
                    path.unlink(missing_ok=True)
                    continue
                yield plan, lambda p=path: p.unlink(missing_ok=True)
            finally:
                locks.unlock(fh)
