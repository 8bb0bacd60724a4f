"""One index run at a time per HERMES_HOME, visible to every process.

An OS file lock (flock / msvcrt) rather than a row in SQLite: the kernel drops it when the
holder dies, so a killed ``hermes recall index`` never leaves a stale "indexing" status behind.
The holder also writes ``index.run.json`` (pid, fingerprint, sessions) so a search can tell
whether the run covers the sessions it is looking at.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

from ..host.profile import profile_at

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]
    import msvcrt

LOCK_FILE = "index.lock"
INFO_FILE = "index.run.json"


class RunBusy(RuntimeError):
    """Another index run holds the lock."""


def _lock(fh, exclusive: bool) -> bool:
    try:
        if fcntl is not None:
            fcntl.flock(fh.fileno(), (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        else:
            msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
    except OSError:
        return False
    return True


def _unlock(fh) -> None:
    with suppress(OSError):
        if fcntl is not None:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        else:
            msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)


@contextmanager
def hold_run(home: Path, fingerprint: str, session_ids: Sequence[str] | None, wait: float = 1.0) -> Iterator[None]:
    """Hold the index lock for the duration; raises :class:`RunBusy` if another run has it.
    ``wait`` rides out a concurrent status probe, which holds a shared lock for microseconds."""
    directory = profile_at(home).plugin_dir
    directory.mkdir(parents=True, exist_ok=True)
    fh = open(directory / LOCK_FILE, "a+b")  # noqa: SIM115 - held across the yield
    try:
        deadline = time.monotonic() + wait
        while not _lock(fh, exclusive=True):
            if time.monotonic() >= deadline:
                raise RunBusy("another index run is in progress")
            time.sleep(0.05)
        info = {"pid": os.getpid(), "fingerprint": fingerprint, "started_at": time.time(),
                "sessions": None if session_ids is None else sorted(session_ids)}
        (directory / INFO_FILE).write_text(json.dumps(info), encoding="utf-8")
        try:
            yield
        finally:
            with suppress(OSError):
                (directory / INFO_FILE).unlink()
            _unlock(fh)
    finally:
        fh.close()


def current_run(home: Path) -> dict | None:
    """Info of the run in progress (any process), or None."""
    directory = profile_at(home).plugin_dir
    path = directory / LOCK_FILE
    if not path.exists():
        return None
    with open(path, "a+b") as fh:
        if _lock(fh, exclusive=False):
            _unlock(fh)
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
