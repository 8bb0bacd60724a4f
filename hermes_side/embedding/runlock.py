"""One index run at a time per HERMES_HOME, visible to every process.

An OS file lock (``host/locks.py``): the kernel drops it when the holder dies, so a killed
``hermes recall index`` never leaves a stale "indexing" status behind. The holder also writes
``index.run.json`` (pid, fingerprint, sessions) so a search can tell whether the run covers the
sessions it is looking at.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

from ..host import locks
from ..host.profile import profile_at

LOCK_FILE = "index.lock"
INFO_FILE = "index.run.json"


class RunBusy(RuntimeError):
    """Another index run holds the lock."""


@contextmanager
def hold_run(home: Path, fingerprint: str, session_ids: Sequence[str] | None, wait: float = 1.0) -> Iterator[None]:
    """Hold the index lock for the duration; raises :class:`RunBusy` if another run has it.
    ``wait`` rides out a concurrent status probe, which holds a shared lock for microseconds."""
    directory = profile_at(home).plugin_dir
    with locks.hold(directory / LOCK_FILE, wait=wait, busy=RunBusy("another index run is in progress")):
        info = {"pid": os.getpid(), "fingerprint": fingerprint, "started_at": time.time(),
                "sessions": None if session_ids is None else sorted(session_ids)}
        (directory / INFO_FILE).write_text(json.dumps(info), encoding="utf-8")
        try:
            yield
        finally:
            with suppress(OSError):
                (directory / INFO_FILE).unlink()


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
