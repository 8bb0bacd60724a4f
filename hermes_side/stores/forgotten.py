"""The plugin-owned record of what was taken out of recall: ``<plugin dir>/forgotten.db``.

Hermes' ``messages`` table is never written: forgetting is recall's own record, applied at read
time by the one eligibility predicate every reader uses (``messages.ELIGIBLE_MESSAGE_SQL`` refers
to the per-connection table ``temp.recall_forgotten`` that ``scope/rule_view.prepare`` fills from
:func:`load`, the one reader of this store). A connection that was not prepared fails with "no such
table" — it can never silently show a forgotten turn.

The rules belong to what was said, not to rows (``scope/speakers.py``, ``stores/rule_view.py``):
Hermes writes the same turn again under new ids and new times (compaction, rotation, ``/branch``,
an import), so a rule names the turn — its chat, its author, its role and its words — and a copy is
judged by its original's author and time. Tables (numbered, append-only migrations,
``stores/migrations.py`` like bindings.db and embeddings.db):

- ``forgotten_turns``: the turns a forget took out, by (anchor, author, role, digest of the words;
  never the words), each with its receipt. Every copy of such a turn is out wherever it appears.
- ``forgotten``: the message ids a receipt took out (before migration 3 the only record; their
  turns count as forgotten turns too, so an older store keeps every rule).
- ``rules``: spans that keep turns out by when they were said — a member's opt-out (``optout``) and a
  chat's recall switched off (``off``): the turns of that chat (and member) whose original was said
  in ``[since, until)``. ``patterns`` (the bridge's session ids) is kept for the record only.
- ``receipts``: the audit trail — receipt id, when, who, which scope (ids and dates, never
  content), the counts, and whether the index still held the turns' vectors when it was written
  (``index_pending``; ``purge_pending`` finishes it). ``hermes recall forget --log`` prints it.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..host.profile import profile_at
from . import faults, hermes_db, ledger
from .migrations import migrate

# Numbered, append-only (stores/migrations.py); never edit one that shipped, add the next.
_MIGRATIONS: tuple[str, ...] = (
    # 1: forgotten messages, future-turn rules, the audit trail
    """
    CREATE TABLE forgotten (
        message_id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        receipt TEXT NOT NULL,
        forgotten_at REAL NOT NULL
    );
    CREATE INDEX forgotten_by_receipt ON forgotten(receipt);
    CREATE TABLE rules (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('optout', 'off')),
        chat TEXT NOT NULL,
        user_id TEXT NOT NULL DEFAULT '',
        patterns TEXT NOT NULL,
        since REAL NOT NULL,
        until REAL,
        receipt TEXT NOT NULL
    );
    CREATE INDEX rules_by_chat ON rules(chat, kind, user_id);
    CREATE TABLE receipts (
        receipt TEXT PRIMARY KEY,
        at REAL NOT NULL,
        actor TEXT NOT NULL,
        surface TEXT NOT NULL,
        action TEXT NOT NULL,
        scope TEXT NOT NULL,
        user_turns INTEGER NOT NULL DEFAULT 0,
        replies INTEGER NOT NULL DEFAULT 0,
        sessions INTEGER NOT NULL DEFAULT 0
    );
    """,
    # 2: how many of a receipt's messages were copies Hermes keeps of the same turns
    "ALTER TABLE receipts ADD COLUMN copies INTEGER NOT NULL DEFAULT 0",
    # 3: rules that name what was said (issue 34), and receipts whose vectors are still at rest
    """
    CREATE TABLE forgotten_turns (
        anchor TEXT NOT NULL,
        author TEXT NOT NULL,
        role TEXT NOT NULL,
        digest TEXT NOT NULL,
        receipt TEXT NOT NULL,
        forgotten_at REAL NOT NULL,
        PRIMARY KEY (anchor, author, role, digest)
    ) WITHOUT ROWID;
    ALTER TABLE receipts ADD COLUMN index_pending INTEGER NOT NULL DEFAULT 0
    """,
)

STORE = "forgotten.db"


def store_path(home: Path) -> Path:
    return profile_at(home).forgotten_db


def connect(home: Path) -> sqlite3.Connection:
    """Open (creating and migrating) forgotten.db for writing."""
    ledger.vouch(home, STORE)  # never recreate a store the ledger says existed, nor write to an older copy
    path = store_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    try:
        migrate(conn, _MIGRATIONS)
    except BaseException:
        conn.close()
        raise
    return conn


def new_receipt() -> str:
    return "fg-" + secrets.token_hex(4)


# -- what is forgotten, as every reader sees it ---------------------------------------------------
@dataclass(frozen=True)
class Rule:
    kind: str
    chat: str
    user_id: str
    patterns: tuple[str, ...]
    since: float
    until: float | None


TurnKey = tuple[str, str, str, str]  # (anchor, author, role, digest): scope/speakers.Said.key


@dataclass(frozen=True)
class Record:
    fingerprint: tuple
    message_ids: frozenset[int] = frozenset()
    rules: tuple[Rule, ...] = ()
    turns: frozenset[TurnKey] = frozenset()
    id_sessions: frozenset[str] = frozenset()  # the sessions of ``message_ids``
    pending: tuple[str, ...] = ()  # receipts whose vectors may still be in embeddings.db

    def off_chats(self) -> frozenset[str]:
        return frozenset(r.chat for r in self.rules if r.kind == "off" and r.until is None)

    def opted_out(self, chat: str) -> frozenset[str]:
        return frozenset(r.user_id for r in self.rules if r.kind == "optout" and r.chat == chat and r.until is None)


_cache: dict[str, Record] = {}
_cache_lock = threading.Lock()


def load(home: Path) -> Record:
    """The record of ``home`` (cached until the file changes): the one reader of the store. No
    store yet: nothing forgotten. Unreadable: ``Unavailable`` — never "nothing forgotten", which
    would show forgotten turns."""
    path = store_path(home)
    fp = hermes_db.file_fingerprint(path)
    key = str(path)
    with _cache_lock:
        cached = _cache.get(key)
    if cached is not None and cached.fingerprint == fp and fp != (0, 0):  # no store: vouched for every time
        return cached
    ledger.vouch(home, STORE)  # missing, emptied or older than the ledger says: fails closed
    if not path.exists():
        record = Record(fp)
    else:
        try:
            conn = hermes_db.connect_ro(path)
            try:
                record = _read(conn, fp)
            finally:
                conn.close()
        except hermes_db.NoDatabase:
            record = Record(fp)
        except (sqlite3.DatabaseError, OSError, ValueError) as exc:
            raise faults.of(path, exc, writing=False) from None
    with _cache_lock:
        _cache[key] = record
    return record


def _read(conn: sqlite3.Connection, fp: tuple) -> Record:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version < 1:
        return Record(fp)
    ids = conn.execute("SELECT message_id, session_id FROM forgotten").fetchall()
    rules = tuple(Rule(r["kind"], r["chat"], r["user_id"], tuple(json.loads(r["patterns"])), r["since"], r["until"])
                  for r in conn.execute("SELECT * FROM rules ORDER BY id"))
    turns: frozenset[TurnKey] = frozenset()
    pending: tuple[str, ...] = ()
    if version >= 3:
        turns = frozenset(tuple(r) for r in conn.execute("SELECT anchor, author, role, digest FROM forgotten_turns"))
        pending = tuple(r[0] for r in conn.execute("SELECT receipt FROM receipts WHERE index_pending = 1"))
    return Record(fp, frozenset(r[0] for r in ids), rules, turns, frozenset(r[1] for r in ids), pending)


# -- writing ----------------------------------------------------------------------------------
@dataclass
class Entry:
    """One audit-trail row: who did what to which scope, with counts and no content."""

    actor: str
    surface: str  # "cli" | "api"
    action: str  # "forget" | "optout" | "optin" | "recall_off" | "recall_on"
    scope: dict[str, Any]
    user_turns: int = 0
    replies: int = 0
    sessions: int = 0
    copies: int = 0  # of the messages, copies of the same turns (compaction, rotation, branch)
    receipt: str = field(default_factory=new_receipt)


def _audit(conn: sqlite3.Connection, entry: Entry, now: float, *, pending: bool = False) -> None:
    conn.execute("INSERT INTO receipts (receipt, at, actor, surface, action, scope, user_turns, replies, sessions,"
                 " copies, index_pending) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 (entry.receipt, now, entry.actor[:200], entry.surface, entry.action,
                  json.dumps(entry.scope, ensure_ascii=False, sort_keys=True), entry.user_turns, entry.replies,
                  entry.sessions, entry.copies, int(pending)))


def forget_turns(home: Path, messages: Sequence[tuple[int, str]], turns: Iterable[TurnKey], entry: Entry) -> str:
    """Record the turns (every copy of them, wherever it appears) and the ``(message_id,
    session_id)`` pairs as forgotten under a new receipt; returns it. The receipt stays
    ``index_pending`` until :func:`index_purged` says their vectors are gone."""
    now = time.time()
    with faults.guard(store_path(home)), closing(connect(home)) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("INSERT OR IGNORE INTO forgotten (message_id, session_id, receipt, forgotten_at)"
                             " VALUES (?, ?, ?, ?)", ((mid, sid, entry.receipt, now) for mid, sid in messages))
            conn.executemany("INSERT OR IGNORE INTO forgotten_turns (anchor, author, role, digest, receipt,"
                             " forgotten_at) VALUES (?, ?, ?, ?, ?, ?)",
                             ((*key, entry.receipt, now) for key in sorted(set(turns))))
            _audit(conn, entry, now, pending=True)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    ledger.note(home, STORE)
    return entry.receipt


def forget_messages(home: Path, messages: Sequence[tuple[int, str]], entry: Entry) -> str:
    """:func:`forget_turns` by message ids alone (their turns are read from state.db when applied)."""
    return forget_turns(home, messages, (), entry)


def index_purged(home: Path, receipts: Sequence[str]) -> None:
    """The vectors of these receipts' turns are gone from embeddings.db."""
    if not receipts:
        return
    with closing(connect(home)) as conn:
        conn.execute("UPDATE receipts SET index_pending = 0 WHERE receipt IN (SELECT value FROM json_each(?))",
                     (json.dumps(list(receipts)),))


def set_rule(home: Path, kind: str, chat: str, user_id: str, patterns: Sequence[str], active: bool,
             entry: Entry) -> bool:
    """Start (``active``) or end the open rule of (kind, chat, user). Returns whether anything
    changed; the audit trail records either way (an admin's repeated /recall-off is still asked)."""
    now = time.time()
    with faults.guard(store_path(home)), closing(connect(home)) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            open_rule = conn.execute("SELECT id FROM rules WHERE kind = ? AND chat = ? AND user_id = ?"
                                     " AND until IS NULL", (kind, chat, user_id)).fetchone()
            changed = False
            if active and open_rule is None:
                conn.execute("INSERT INTO rules (kind, chat, user_id, patterns, since, until, receipt)"
                             " VALUES (?, ?, ?, ?, ?, NULL, ?)",
                             (kind, chat, user_id, json.dumps(list(patterns)), now, entry.receipt))
                changed = True
            elif not active and open_rule is not None:
                conn.execute("UPDATE rules SET until = ? WHERE id = ?", (now, open_rule[0]))
                changed = True
            _audit(conn, entry, now)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    ledger.note(home, STORE)
    return changed


def audit_log(home: Path, limit: int = 200) -> list[dict[str, Any]]:
    """The newest receipts first (no store yet: none)."""
    ledger.vouch(home, STORE)
    path = store_path(home)
    if not path.exists():
        return []
    try:
        conn = hermes_db.connect_ro(path)
    except hermes_db.NoDatabase:
        return []
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] < 1:
            return []
        rows = conn.execute("SELECT * FROM receipts ORDER BY at DESC LIMIT ?", (limit,)).fetchall()
    finally:
        conn.close()
    return [{**dict(r), "scope": json.loads(r["scope"])} for r in rows]
