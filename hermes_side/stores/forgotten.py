"""The plugin-owned record of what was taken out of recall: ``<plugin dir>/forgotten.db``.

Hermes' ``messages`` table is never written: forgetting is recall's own record, applied by the one
eligibility predicate every reader uses (``messages.ELIGIBLE_MESSAGE_SQL`` refers to the per-connection
table ``temp.recall_forgotten`` that :func:`prepare` fills from this store). A connection that was
not prepared fails with "no such table" — it can never silently show a forgotten turn.

Tables (numbered, append-only migrations, ``stores/migrations.py`` like bindings.db and embeddings.db):

- ``forgotten``: message ids taken out of recall, each with the receipt that took it.
- ``rules``: spans that keep *future* turns out as well — a member's opt-out (``optout``) and a
  chat's recall switched off (``off``). A rule names its sessions by the bridge's session-id
  patterns (GLOB, computed by ``actions/forget.py`` from ``scope/chats.py``), by the sessions the
  first-turn hook recorded for the chat (``off`` only) and their compression/branch children,
  and covers their messages whose timestamp lies in ``[since, until)``.
- ``receipts``: the audit trail — receipt id, when, who, which scope (ids and dates, never
  content) and the counts. ``hermes recall forget --log`` prints it.
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
from .bindings import sessions_for_chat
from .messages import FORGOTTEN_TABLE
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


@dataclass(frozen=True)
class Record:
    fingerprint: tuple
    message_ids: frozenset[int] = frozenset()
    rules: tuple[Rule, ...] = ()

    def off_chats(self) -> frozenset[str]:
        return frozenset(r.chat for r in self.rules if r.kind == "off" and r.until is None)

    def opted_out(self, chat: str) -> frozenset[str]:
        return frozenset(r.user_id for r in self.rules if r.kind == "optout" and r.chat == chat and r.until is None)


_cache: dict[str, Record] = {}
_cache_lock = threading.Lock()


def load(home: Path) -> Record:
    """The record of ``home`` (cached until the file changes). No store yet: nothing forgotten.
    Unreadable: ``Unavailable`` — never "nothing forgotten", which would show forgotten turns."""
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
                if conn.execute("PRAGMA user_version").fetchone()[0] < 1:
                    record = Record(fp)
                else:
                    ids = frozenset(r[0] for r in conn.execute("SELECT message_id FROM forgotten"))
                    rules = tuple(Rule(r["kind"], r["chat"], r["user_id"], tuple(json.loads(r["patterns"])),
                                       r["since"], r["until"])
                                  for r in conn.execute("SELECT * FROM rules ORDER BY id"))
                    record = Record(fp, ids, rules)
            finally:
                conn.close()
        except hermes_db.NoDatabase:
            record = Record(fp)
        except (sqlite3.DatabaseError, OSError, ValueError) as exc:
            raise faults.of(path, exc, writing=False) from None
    with _cache_lock:
        _cache[key] = record
    return record


def connect_state(home: Path, *, rows: bool = True) -> sqlite3.Connection:
    """``state.db`` read-only (``hermes_db.connect_state``), prepared: every history reader's way in.
    A connection kept open across requests is prepared again before each use (``SearchEngine.leased``)."""
    conn = hermes_db.connect_state(home, rows=rows)
    try:
        prepare(conn, Path(home))
    except BaseException:
        conn.close()
        raise
    return conn


def prepare(conn: sqlite3.Connection, home: Path) -> None:
    """Fill ``temp.recall_forgotten`` of a read-only state.db connection with every message id
    that is forgotten now: the recorded ids and the messages the rules cover. Cheap when nothing
    changed (one stat and one tiny query; with rules one more for the newest message id)."""
    record = load(home)
    if record.rules and not hermes_db.has_sessions_table(conn):
        record = Record(record.fingerprint, record.message_ids)  # a state.db without tables yet: no turns
    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {FORGOTTEN_TABLE} (id INTEGER PRIMARY KEY)")
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS recall_forgotten_key (k TEXT)")
    newest = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0] if record.rules else 0
    sessions_seen = _sessions_version(conn) if record.rules else ""
    key = json.dumps([list(record.fingerprint), newest, sessions_seen])
    row = conn.execute("SELECT k FROM recall_forgotten_key").fetchone()
    if row is not None and row[0] == key:
        return
    ids = set(record.message_ids)
    if record.rules:
        ids |= _rule_ids(conn, home, record.rules)
    try:
        conn.execute(f"DELETE FROM {FORGOTTEN_TABLE}")
        conn.executemany(f"INSERT OR IGNORE INTO {FORGOTTEN_TABLE} (id) VALUES (?)", ((i,) for i in ids))
        conn.execute("DELETE FROM temp.recall_forgotten_key")
        conn.execute("INSERT INTO temp.recall_forgotten_key (k) VALUES (?)", (key,))
        conn.commit()  # the temp writes opened a transaction: never hold a read snapshot of state.db
    except BaseException:
        conn.rollback()
        raise


def _sessions_version(conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT count(*), coalesce(max(rowid), 0) FROM sessions").fetchone()
    return f"{row[0]}:{row[1]}"


def rule_sessions(conn: sqlite3.Connection, home: Path, rule: Rule) -> set[str]:
    """The sessions a rule covers: bridge ids matching its patterns, the chat's recorded sessions
    (``off`` only: a member's turns in a shared session cannot be told apart), and their children."""
    found: set[str] = set()
    for pattern in rule.patterns:
        found |= {r[0] for r in conn.execute("SELECT id FROM sessions WHERE id GLOB ?", (pattern,))}
    if rule.kind == "off":
        found |= set(sessions_for_chat(home, rule.chat))
    return _with_children(conn, found)


def _with_children(conn: sqlite3.Connection, roots: Iterable[str]) -> set[str]:
    roots = sorted(set(roots))
    if not roots:
        return set()
    rows = conn.execute(
        "WITH RECURSIVE tree(id) AS (SELECT value FROM json_each(?)"
        " UNION SELECT s.id FROM sessions s JOIN tree t ON s.parent_session_id = t.id) SELECT id FROM tree",
        (json.dumps(roots),)).fetchall()
    return {r[0] for r in rows}


def _rule_ids(conn: sqlite3.Connection, home: Path, rules: Sequence[Rule]) -> set[int]:
    ids: set[int] = set()
    for rule in rules:
        sessions = rule_sessions(conn, home, rule)
        if not sessions:
            continue
        rows = conn.execute(
            "SELECT id FROM messages WHERE session_id IN (SELECT value FROM json_each(?))"
            " AND coalesce(timestamp, 0) >= ? AND (? IS NULL OR coalesce(timestamp, 0) < ?)",
            (json.dumps(sorted(sessions)), rule.since, rule.until, rule.until)).fetchall()
        ids.update(r[0] for r in rows)
    return ids


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


def _audit(conn: sqlite3.Connection, entry: Entry, now: float) -> None:
    conn.execute("INSERT INTO receipts (receipt, at, actor, surface, action, scope, user_turns, replies, sessions,"
                 " copies) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 (entry.receipt, now, entry.actor[:200], entry.surface, entry.action,
                  json.dumps(entry.scope, ensure_ascii=False, sort_keys=True), entry.user_turns, entry.replies,
                  entry.sessions, entry.copies))


def forget_messages(home: Path, messages: Sequence[tuple[int, str]], entry: Entry) -> str:
    """Record ``(message_id, session_id)`` pairs as forgotten under a new receipt; returns it."""
    now = time.time()
    with faults.guard(store_path(home)), closing(connect(home)) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("INSERT OR IGNORE INTO forgotten (message_id, session_id, receipt, forgotten_at)"
                             " VALUES (?, ?, ?, ?)", ((mid, sid, entry.receipt, now) for mid, sid in messages))
            _audit(conn, entry, now)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    ledger.note(home, STORE)
    return entry.receipt


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
