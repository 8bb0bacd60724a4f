"""Which of the profile's own files are in trouble, and ``hermes recall repair`` — the operator's
explicit word that a privacy store may start over.

A missing, emptied, older or damaged forgotten.db or bindings.db fails closed (``stores/ledger.py``):
every search answers 503 until the file is restored from a backup or the operator runs
``hermes recall repair FILE --apply``, which keeps every row SQLite can still read (a damaged file
is moved aside, its readable rows copied into a new store) and tells the ledger to expect what is
there now. Without ``--apply`` it only says what it would do, like ``hermes recall forget``.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

from ..console import EXIT_FAILED, fail
from ..host.profile import current_profile, profile_at
from ..stores import faults, hermes_db, ledger

REPAIRABLE = ("forgotten.db", "bindings.db", "ledger.json")
_CANNOT = (faults.FULL, faults.READ_ONLY, faults.BUSY)  # the disk or a process, not the file: fix that first


def store_problems(home: Path) -> list[faults.StoreFault]:
    """Every file of recall's own that cannot be used now, each with its recovery."""
    try:
        ledger.expected(home)
    except faults.StoreFault as exc:
        return [exc]  # every store is vouched for by it: this one first
    problems: list[faults.StoreFault] = []
    for file in ledger.SPECS:
        try:
            ledger.vouch(home, file)
        except faults.StoreFault as exc:
            problems.append(exc)
    from ..embedding import damage  # numpy-free, like this module

    known = damage.seen(profile_at(home).embeddings_db)
    if known:
        problems.append(faults.StoreFault("embeddings.db", faults.DAMAGED, known, faults.restore("embeddings.db")))
    return problems


def plan(home: Path, file: str) -> dict[str, Any]:
    """What ``repair`` finds and would do (nothing is changed)."""
    if file == ledger.LEDGER_FILE:
        try:
            ledger.expected(home)
            return {"file": file, "problem": None, "action": "none"}
        except faults.StoreFault as exc:
            return {"file": file, "problem": exc.kind, "error": str(exc), "action": "rebuild"}
    try:
        held = ledger.vouch(home, file)
    except faults.StoreFault as exc:
        if exc.file != file:  # the ledger itself
            return {"file": file, "problem": exc.kind, "error": str(exc), "action": "none",
                    "next": f"repair {exc.file} first: {exc.recovery}"}
        if exc.kind in _CANNOT:
            return {"file": file, "problem": exc.kind, "error": str(exc), "action": "none", "next": exc.recovery}
        action = "salvage" if exc.kind in (faults.DAMAGED, faults.UNREADABLE) else "accept"
        return {"file": file, "problem": exc.kind, "error": str(exc), "action": action,
                "expected": (ledger.expected(home).get(file) or {}).get("rows", 0)}
    return {"file": file, "problem": None, "action": "none", "rows": None if held is None else held.rows}


def repair(home: Path, file: str) -> dict[str, Any]:
    """Do what :func:`plan` says: salvage a damaged store into a new one, or accept a missing,
    empty or older one as it is; the ledger then expects what the store holds."""
    found = plan(home, file)
    if found["action"] == "rebuild":
        return {**found, "applied": True, "ledger": ledger.rebuild(home)}
    if found["action"] == "none":
        return {**found, "applied": False}
    path = ledger.store_file(home, file)
    copied: dict[str, int] = {}
    aside = None
    if found["action"] == "salvage":
        with faults.guard(path):
            aside = faults.move_aside(path)
            ledger.start_over(home, file)  # nothing there now: the new store may be created
            copied = _salvage(aside, _open_new(home, file))
    held = ledger.start_over(home, file)
    return {**found, "applied": True, "aside": aside.name if aside else None, "copied": copied,
            "rows": 0 if held is None else held.rows}


def _open_new(home: Path, file: str) -> sqlite3.Connection:
    from ..stores import bindings, forgotten

    return (forgotten.connect if file == forgotten.STORE else bindings.connect)(home)


def _salvage(old: Path, new: sqlite3.Connection) -> dict[str, int]:
    """Copy every row SQLite can still read from ``old`` into ``new`` (same tables, same columns),
    table by table; a table whose pages are damaged gives the rows before the damage."""
    copied: dict[str, int] = {}
    with closing(new):
        tables = [r[0] for r in new.execute("SELECT name FROM sqlite_master WHERE type = 'table'"
                                            " AND name NOT LIKE 'sqlite_%'")]
        try:
            src = hermes_db.connect_ro(old, rows=False)
        except (sqlite3.Error, hermes_db.NoDatabase):
            return copied
        with closing(src):
            for table in tables:
                copied[table] = _copy_table(src, new, table)
    return copied


def _copy_table(src: sqlite3.Connection, new: sqlite3.Connection, table: str) -> int:
    cols = [r[1] for r in new.execute(f"PRAGMA table_info({table})")]
    count = 0
    try:
        have = {r[1] for r in src.execute(f"PRAGMA table_info({table})")}
        common = [c for c in cols if c in have]
        if not common:
            return 0
        names = ", ".join(common)
        cursor = src.execute(f"SELECT {names} FROM {table}")
        while rows := cursor.fetchmany(500):
            new.executemany(f"INSERT OR IGNORE INTO {table} ({names}) VALUES ({', '.join('?' * len(common))})", rows)
            count += len(rows)
    except sqlite3.DatabaseError:
        pass  # the rows up to the damage are kept
    return count


# -- hermes recall repair ----------------------------------------------------------------------

def setup_repair(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", choices=REPAIRABLE,
                   help="the store to put back in service (without it: what is wrong, and the fix of each)")
    p.add_argument("--apply", action="store_true", help="really do it (without it: say what would be done)")
    p.add_argument("--json", action="store_true", help="print the result object")


def run_repair(args: argparse.Namespace) -> None:
    home = current_profile().home
    if not args.file:
        problems = [p.as_dict() for p in store_problems(home)]
        print(json.dumps(problems, indent=2) if args.json else render_problems(problems, home))
        if problems:
            sys.exit(EXIT_FAILED)
        return
    result = repair(home, args.file) if args.apply else {**plan(home, args.file), "applied": False}
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else render(result))
    if result.get("next"):
        fail(result["next"], EXIT_FAILED)


def render_problems(problems: list[dict[str, str]], home: Path) -> str:
    if not problems:
        return "Every store of recall's own can be used (forgotten.db, bindings.db, embeddings.db, ledger.json)."
    lines = [f"Folder: {profile_at(home).plugin_dir}"]
    for p in problems:
        lines += [f"{p['file']}: {p['error']}", f"  fix: {p['recovery']}"]
    return "\n".join(lines)


def render(result: dict[str, Any]) -> str:
    file = result["file"]
    if result.get("problem") is None:
        return f"{file} can be used; nothing to repair."
    if not result["applied"]:
        what = {"salvage": f"move {file} aside and keep every row that can still be read in a new {file}",
                "accept": {faults.MISSING: f"start over without {file} (the next change creates a new one)",
                           faults.EMPTY: f"start over with the empty {file}"}.get(result["problem"],
                                                                                 f"accept the older {file} as it is"),
                "rebuild": f"rebuild {file} from the stores as they are"}.get(result["action"])
        head = f"{result['error']}."
        return head if what is None else (f"{head}\nWith --apply, repair would {what}; the ledger then expects "
                                          "only that.")
    if result["action"] == "rebuild":
        return f"Rebuilt {file} from the stores as they are."
    kept = ", ".join(f"{n} {t}" for t, n in result.get("copied", {}).items()) or "nothing"
    lines = [f"Repaired {file}: it now holds {result['rows']} of the {result.get('expected', 0)} counted "
             f"{ledger.SPECS[file].unit} the ledger expected."]
    if result.get("aside"):
        lines.append(f"  the damaged file was kept as {result['aside']}; rows copied: {kept}")
    lines.append("  recall works again; what the store no longer records is no longer applied.")
    return "\n".join(lines)
