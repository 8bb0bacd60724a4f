"""What the profile's privacy stores must hold: ``<plugin dir>/ledger.json``.

A missing store is not an empty one. Deleting forgotten.db, or a backup that skipped it, used to
bring every forgotten turn back without a word; a lost bindings.db let a bot's configured initial
project re-bind a group an admin had moved away. So each privacy store is vouched for by a record
kept *beside* it: whether it ever held anything, and a count that only grows while the store lives
(forgotten.db's audit trail of receipts, bindings.db's sessions seen per chat). A store that is
missing, empty or holds fewer than the ledger says fails closed (``faults.StoreFault``) until it
is restored or the operator starts over (``hermes recall repair``).

Why a file of its own and not a table in bindings.db: a table there could vouch for forgotten.db
but not for bindings.db itself, and it would be lost with bindings.db — while the bot re-binds the
groups it was configured with and forgotten turns come back in them. ledger.json is replaced
atomically (never half-written, no WAL, so a copy taken while the server runs is whole), survives
the loss or an older copy of either store, and when it is lost itself it is rebuilt from the stores
as they are (an upgrade starts that way). What it cannot see: the whole plugin folder lost or
restored from one older backup (ledger and stores agree); that needs a record outside recall's
folder, which recall does not write.

The ledger never claims more than a store holds: a writer notes its store *after* committing, and
readers raise the ledger to what they find (so a note lost to a kill or a full disk is made up).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..host import locks
from ..host.files import write_atomic
from ..host.profile import profile_at
from . import faults, hermes_db

log = logging.getLogger(__name__)

LEDGER_FILE = "ledger.json"


@dataclass(frozen=True)
class Spec:
    rows_sql: str  # a count that only grows while the store lives
    unit: str  # what it counts, for the sentence
    any_sql: str  # whether it holds anything the ledger must vouch for


SPECS = {
    # forgotten.py's audit trail: one receipt per forget, opt-out/in and recall-off/on, never deleted.
    "forgotten.db": Spec("SELECT count(*) FROM receipts", "receipt(s)", "SELECT count(*) FROM receipts"),
    # bindings.py: a binding can be cleared (the store is then rightly empty), a chat's recorded
    # session never is; a store that was ever written keeps its tables.
    "bindings.db": Spec("SELECT count(*) FROM chat_sessions", "recorded chat session(s)",
                        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'bindings'"),
}


@dataclass(frozen=True)
class Held:
    rows: int
    anything: bool


def ledger_path(home: Path) -> Path:
    return profile_at(home).plugin_dir / LEDGER_FILE


def store_file(home: Path, file: str) -> Path:
    return profile_at(home).plugin_dir / file


def held(path: Path, spec: Spec) -> Held | None:
    """What the store at ``path`` holds; None when it is missing, 0 bytes or has no tables yet.
    Unreadable: its :class:`faults.StoreFault`."""
    if not path.exists():
        return None
    with faults.guard(path, writing=False):
        conn = hermes_db.connect_ro(path, rows=False)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables:
                return None
            try:
                return Held(conn.execute(spec.rows_sql).fetchone()[0], conn.execute(spec.any_sql).fetchone()[0] > 0)
            except sqlite3.OperationalError as exc:
                if "no such table" not in str(exc):
                    raise
                return Held(0, False)  # a store made before the counted table existed
        finally:
            conn.close()


def expected(home: Path) -> dict[str, dict[str, Any]]:
    """The ledger's entries by store file; none without a ledger. A ledger that cannot be parsed
    fails closed: it is the only witness that a missing store existed."""
    path = ledger_path(home)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise faults.of(path, exc, writing=False) from None
    try:
        stores = json.loads(text)["stores"]
        if not isinstance(stores, dict):
            raise ValueError("stores is not an object")
    except (ValueError, KeyError, TypeError) as exc:
        raise faults.fault(LEDGER_FILE, faults.DAMAGED, f"the file is damaged ({exc})", detail=str(path),
                           action="cannot be read") from None
    return stores


def vouch(home: Path, file: str) -> Held | None:
    """Check the store ``file`` against the ledger: what it holds (None: nothing yet), or its
    :class:`faults.StoreFault` when it is damaged, missing, empty or older than the ledger says."""
    spec, path = SPECS[file], store_file(home, file)
    now = held(path, spec)
    want = expected(home).get(file) or {}
    rows, anything = int(want.get("rows", 0)), bool(want.get("held"))
    if anything and (now is None or not now.anything):
        state = faults.MISSING if not path.exists() else faults.EMPTY
        said = f"{rows} {spec.unit}" if rows else "its records"
        raise faults.fault(file, state, f"the file is {'missing' if state == faults.MISSING else 'empty'}, but "
                           f"this profile's ledger says it held {said}", detail=str(path), action="cannot be used")
    if now is not None and now.rows < rows:
        raise faults.fault(file, faults.BEHIND, f"it holds {now.rows} of the {rows} {spec.unit} this profile "
                           "wrote (an older or partial copy)", detail=str(path), action="cannot be used")
    if now is not None and (now.rows > rows or now.anything > anything):
        _update(home, file, now, best_effort=True)  # a note lost to a kill, or a store from before the ledger
    return now


def note(home: Path, file: str) -> None:
    """After a write to ``file`` committed: the ledger now expects at least what it holds. Best
    effort — the write itself succeeded; a note lost here is made up by the next reader."""
    try:
        now = held(store_file(home, file), SPECS[file])
    except faults.StoreFault as exc:
        log.warning("project-history-recall: %s (%s)", exc, exc.detail)
        return
    if now is not None:
        _update(home, file, now, best_effort=True)


def start_over(home: Path, file: str) -> Held | None:
    """The operator accepted ``file`` as it is now (``hermes recall repair``): the ledger expects
    what it holds, nothing more."""
    now = held(store_file(home, file), SPECS[file])
    _update(home, file, now, best_effort=False, lower=True)
    return now


def rebuild(home: Path) -> dict[str, dict[str, Any]]:
    """A new ledger from the stores as they are (``hermes recall repair ledger.json``)."""
    stores = {}
    for file, spec in SPECS.items():
        now = held(store_file(home, file), spec)
        if now is not None and now.anything:
            stores[file] = _entry(now)
    with _locked(home):
        _write(home, stores)
    return stores


def _entry(now: Held) -> dict[str, Any]:
    return {"held": now.anything, "rows": now.rows, "at": time.time()}


def _update(home: Path, file: str, now: Held | None, *, best_effort: bool, lower: bool = False) -> None:
    """Raise the entry of ``file`` to ``now`` (``lower``: set it to ``now``, removed for None), under
    the ledger's lock; entries only grow otherwise, so concurrent writers never lose a count."""
    try:
        with _locked(home):
            stores = expected(home)
            old = stores.get(file) or {}
            if lower:
                stores.pop(file, None)
                if now is not None and now.anything:
                    stores[file] = _entry(now)
            elif now is not None and (now.rows > int(old.get("rows", 0)) or now.anything > bool(old.get("held"))):
                stores[file] = {**_entry(now), "rows": max(now.rows, int(old.get("rows", 0))),
                                "held": now.anything or bool(old.get("held"))}
            else:
                return
            _write(home, stores)
    except (faults.StoreFault, OSError, TimeoutError) as exc:
        if not best_effort:
            raise
        log.warning("project-history-recall: the store ledger was not updated (%s)", exc)


def _locked(home: Path):
    folder = profile_at(home).plugin_dir
    return locks.hold(folder / "locks" / "ledger.lock", wait=10.0, busy=TimeoutError("the store ledger is busy"))


def _write(home: Path, stores: dict[str, dict[str, Any]]) -> None:
    path = ledger_path(home)
    with faults.guard(path):
        write_atomic(path, json.dumps({"version": 1, "stores": stores}, indent=1, sort_keys=True))
