"""A damaged embeddings.db, once any reader meets the damage, is damaged for every reader.

SQLite notices damage only in the pages a query reads. ``/status`` (which counts every chunk) said
"unavailable" while a search, reading only its scope's chunks, answered ``semantic_status: "ready"``
from a file whose ``integrity_check`` failed. Now whoever meets the damage — status (which also runs
``PRAGMA quick_check``), a search, the indexer — writes ``embeddings.db.damaged`` beside the file,
naming the file it saw (device and inode) and what SQLite said, and every search and status honour
it: semantic answers ``unavailable`` with the recovery, keyword answers as always. It lapses when
the file is another one (``hermes recall index --rebuild`` moves the damaged one aside) or when a
quick_check of the same file passes again.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path

from ..stores import hermes_db
from ..stores.faults import is_corruption

log = logging.getLogger(__name__)

SUFFIX = ".damaged"
REBUILD = "run `hermes recall index --rebuild` (moves it aside and builds it again; keyword search works meanwhile)"

_checked: dict[str, tuple[tuple, str | None]] = {}  # path -> (file fingerprint, damage or None)
_lock = threading.Lock()


def marker(db: Path) -> Path:
    return Path(db).with_name(Path(db).name + SUFFIX)


def sentence(what: str) -> str:
    """The one sentence every surface gives for a damaged index: the file, what SQLite said, the fix."""
    return f"embeddings.db is damaged ({what}); {REBUILD}"


def identity(db: Path) -> tuple[int, int] | None:
    """Which file is at ``db`` now (device, inode): a rebuilt or restored index is another file."""
    try:
        st = os.stat(db)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def record(db: Path, what: str) -> str:
    """Note that ``db`` is damaged (best effort: a read-only or full disk keeps the note in memory
    only). Returns the sentence to show."""
    text = sentence(what)
    file = identity(db)
    with _lock:
        _checked[str(db)] = (_fingerprint(db), text)
    if file is not None:
        try:
            marker(db).write_text(json.dumps({"file": list(file), "damage": what, "at": time.time()}),
                                  encoding="utf-8")
        except OSError as exc:
            log.warning("project-history-recall: could not note the damaged index (%s)", exc)
    log.warning("project-history-recall: %s", text)
    return text


def seen(db: Path) -> str | None:
    """The sentence for ``db`` when a reader met damage in this very file, else None. One stat
    when there is no note (every search asks)."""
    try:
        note = json.loads(marker(db).read_text(encoding="utf-8"))
    except FileNotFoundError:
        with _lock:
            remembered = _checked.get(str(db))
        return remembered[1] if remembered and remembered[0] == _fingerprint(db) else None
    except (OSError, ValueError):
        return None
    if not isinstance(note, dict) or tuple(note.get("file") or ()) != identity(db):
        return None  # another file now (rebuilt, restored, deleted)
    return sentence(str(note.get("damage", "integrity check failed")))


def clear(db: Path) -> None:
    with _lock:
        _checked.pop(str(db), None)
    try:
        marker(db).unlink(missing_ok=True)
    except OSError as exc:
        log.warning("project-history-recall: could not remove %s (%s)", marker(db).name, exc)


def check(db: Path) -> str | None:
    """``PRAGMA quick_check`` of ``db`` (once per version of the file per process): the damage
    sentence, recorded for every reader, or None (and an old note lapses)."""
    if not Path(db).exists():
        return None
    fp = _fingerprint(db)
    with _lock:
        cached = _checked.get(str(db))
    if cached is not None and cached[0] == fp:
        return cached[1]
    try:
        conn = hermes_db.connect_ro(db, rows=False)
        try:
            result = conn.execute("PRAGMA quick_check").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        if not is_corruption(exc):
            return None  # locked, or the disk: not damage; the caller meets it when reading
        result = str(exc)
    if result == "ok":
        clear(db)
        with _lock:
            _checked[str(db)] = (fp, None)
        return None
    return record(db, result.splitlines()[0][:200])


def confirm(db: Path, exc: BaseException) -> str | None:
    """An error met while reading the index and history together: the damage sentence when it is
    embeddings.db that is damaged (checked, not guessed: the error may be state.db's), else None."""
    if not is_corruption(exc):
        return None
    with _lock:
        _checked.pop(str(db), None)
    return check(db)


def _fingerprint(db: Path) -> tuple:
    return hermes_db.file_fingerprint(Path(db))
