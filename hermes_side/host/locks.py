"""OS file locks (flock, msvcrt on Windows): the one lock helper of the plugin.

A lock file rather than a row in SQLite: the kernel drops the lock when its holder dies, so a
killed index run or a crashed API never leaves a stale "busy" behind.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]
    import msvcrt


def try_lock(fh: IO[bytes], *, exclusive: bool = True) -> bool:
    """Take the lock without waiting; False when another holder has it. (msvcrt has no shared
    locks: on Windows every lock is exclusive.)"""
    try:
        if fcntl is not None:
            fcntl.flock(fh.fileno(), (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        else:
            msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
    except OSError:
        return False
    return True


def unlock(fh: IO[bytes]) -> None:
    with suppress(OSError):
        if fcntl is not None:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        else:
            msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)


@contextmanager
def hold(path: Path, *, wait: float, busy: Exception, poll: float = 0.05) -> Iterator[None]:
    """Hold the exclusive lock on ``path`` for the duration, waiting up to ``wait`` seconds for
    another holder; after that, raise ``busy``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as fh:
        deadline = time.monotonic() + wait
        while not try_lock(fh):
            if time.monotonic() >= deadline:
                raise busy
            time.sleep(poll)
        try:
            yield
        finally:
            unlock(fh)


def is_held(path: Path) -> bool:
    """Does any process (this one included) hold the lock on ``path`` right now?"""
    if not path.exists():
        return False
    # Read-only: asking must work on a read-only profile too (flock needs no write access).
    with open(path, "rb" if fcntl is not None else "a+b") as fh:
        if try_lock(fh, exclusive=False):
            unlock(fh)
            return False
    return True
