"""One index run at a time per HERMES_HOME, visible to every process — and an operator who asks
for a run while the background catch-up holds it takes over instead of being refused.

An OS file lock (``host/locks.py``): the kernel drops it when the holder dies, so a killed
``hermes recall index`` never leaves a stale "indexing" status behind. The holder also writes
``index.run.json`` (pid, kind, fingerprint, sessions, start, progress) so a search can tell whether
the run covers the sessions it is looking at, and a waiting operator what runs and how far it got.

A ``hermes recall index`` that finds the catch-up (``catchup.py``) running holds
``index.wanted.lock`` while it waits; the catch-up sees it after its current batch, stops there
(every batch it wrote is kept) and the operator's run, which does the same work and more, goes on.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import IO, Any

from ..host import locks
from ..host.files import write_atomic
from ..host.profile import profile_at
from ..stores import faults

LOCK_FILE = "index.lock"
INFO_FILE = "index.run.json"
WANTED_FILE = "index.wanted.lock"
CATCH_UP = "catch-up"
PUBLISH_EVERY = 1.0  # seconds between progress notes in index.run.json


class RunBusy(RuntimeError):
    """Another index run holds the lock."""


class Run:
    """The run this process holds: it publishes its progress for whoever waits (best effort)."""

    def __init__(self, path: Path, info: dict[str, Any]) -> None:
        self.path, self.info, self._last = path, info, 0.0

    def progress(self, done: int, total: int | None) -> None:
        now = time.monotonic()
        if now - self._last < PUBLISH_EVERY:
            return
        self._last = now
        self.info.update(done=done, total=total)
        with suppress(OSError):  # a full disk must not stop the run over its progress note
            _write_info(self.path, self.info)


@contextmanager
def hold_run(home: Path, fingerprint: str, session_ids: Sequence[str] | None, wait: float = 1.0,
             kind: str = "index") -> Iterator[Run]:
    """Hold the index lock for the duration; raises :class:`RunBusy` if another run has it.
    ``wait`` rides out a concurrent status probe, which holds a shared lock for microseconds.
    The lock file or the note that cannot be written (a full disk, a read-only profile) is a
    ``faults.StoreFault`` naming it, before anything is indexed."""
    directory = profile_at(home).plugin_dir
    info = {"pid": os.getpid(), "kind": kind, "fingerprint": fingerprint, "started_at": time.time(),
            "sessions": None if session_ids is None else sorted(session_ids), "done": 0, "total": None}
    with ExitStack() as stack:
        with faults.guard(directory / LOCK_FILE):
            stack.enter_context(locks.hold(directory / LOCK_FILE, wait=wait,
                                           busy=RunBusy("another index run is in progress")))
        with faults.guard(directory / INFO_FILE):
            _write_info(directory / INFO_FILE, info)
        try:
            yield Run(directory / INFO_FILE, info)
        finally:
            with suppress(OSError):
                (directory / INFO_FILE).unlink()


def _write_info(path: Path, info: dict[str, Any]) -> None:
    write_atomic(path, json.dumps(info))  # a reader never sees half a note


def current_run(home: Path) -> dict | None:
    """Info of the run in progress (any process), or None."""
    directory = profile_at(home).plugin_dir
    if not locks.is_held(directory / LOCK_FILE):
        return None
    try:
        return json.loads((directory / INFO_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"pid": None, "fingerprint": None, "sessions": None}


def run_covers(run: dict | None, fingerprint: str, session_ids: Sequence[str]) -> bool:
    if not run or run.get("fingerprint") not in (None, fingerprint):
        return False
    covered = run.get("sessions")
    return covered is None or bool(set(covered) & set(session_ids))


def describe(run: dict | None) -> str:
    """What runs, in the operator's words: who, since when, how far."""
    if not run:
        return "no index run"
    who = ("the background catch-up of a recall process" if run.get("kind") == CATCH_UP
           else "another `hermes recall index`")
    pid = f" (pid {run['pid']})" if run.get("pid") else ""
    since = f", running for {_duration(time.time() - run['started_at'])}" if run.get("started_at") else ""
    done, total = run.get("done") or 0, run.get("total")
    far = f", {done:,} of {total:,} messages" if total else (f", {done:,} messages so far" if done else "")
    return f"{who}{pid}{since}{far}"


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}m {seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def operator_waiting(home: Path) -> bool:
    """Does a ``hermes recall index`` wait for the lock (the catch-up then stops after its batch)?"""
    return locks.is_held(profile_at(home).plugin_dir / WANTED_FILE)


@contextmanager
def asking_turn(home: Path) -> Iterator[None]:
    """Say, for as long as this lasts, that an operator waits for the index lock. A second waiter
    finds the first one's note and simply waits too."""
    path = profile_at(home).plugin_dir / WANTED_FILE
    fh: IO[bytes] | None = None
    with suppress(OSError):
        fh = open(path, "a+b")  # noqa: SIM115 — held (and locked) while the operator waits
        if not locks.try_lock(fh):
            fh.close()
            fh = None
    try:
        yield
    finally:
        if fh is not None:
            locks.unlock(fh)
            fh.close()


def wait_for_turn(home: Path, timeout: float, on_wait: Callable[[dict], None], poll: float = 0.5) -> bool:
    """Wait until no index run holds the lock (True), calling ``on_wait`` with the holder's info
    on every poll; False after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while (run := current_run(home)) is not None:
        if time.monotonic() >= deadline:
            return False
        on_wait(run)
        time.sleep(poll)
    return True
