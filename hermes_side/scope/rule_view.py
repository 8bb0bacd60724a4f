"""What the rules of ``forgotten.db`` hide, applied to what was said (``scope/speakers.py``), kept
current as Hermes writes — the message ids :func:`prepare` puts into every reader's
``temp.recall_forgotten`` (every history reader's connection is prepared: :func:`connect_state`,
``SearchEngine.leased``), and what ``scope/quotes.py`` needs to hide quotes.

A row is out of recall when

1. its id was forgotten (receipts before rules named turns, and the rows a receipt named), or
2. it is a turn a forget named — same anchor, role and words, and the same author (a row whose
   author cannot be told matches any author: fail closed), wherever and whenever the copy appears, or
3. the turn was said (its original's time) inside an ``off`` span of its chat, or inside an
   ``optout`` span of its author in that chat (a turn whose author cannot be told counts as the
   opted-out member's: in a shared session without the bridge's sender tag nobody can tell), or
4. it is a chat's turn copied into a session of the operator's own (a ``/branch`` of the chat):
   the chat's recall has the original; the operator's own turns after it are theirs.

Only the sessions a rule can reach are read: the chats with rules, the families (every parent
link) with rules or with an operator's branch of a chat, whole. A view is built once per change of
the rules, the bindings or the sessions' lineage, and extended row by row as messages arrive.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from ..host.features import columns
from ..stores import bindings, forgotten, hermes_db
from ..stores.messages import FORGOTTEN_TABLE, is_summary_text, message_text
from . import speakers
from .speakers import Attributor, Said, SessionFacts

_serials = itertools.count(1)
QUOTE_MARKERS = ("(引用: ", "<recent_messages>")


class RuleSet(Protocol):
    """What ``forgotten.Record`` offers a view."""

    fingerprint: tuple
    message_ids: frozenset[int]
    id_sessions: frozenset[str]
    turns: frozenset[tuple[str, str, str, str]]
    rules: tuple[Any, ...]


@dataclass
class Quotes:
    """A chat's words for hiding quotes: of its hidden user turns (digest → authors) and of its
    user turns still in recall; with the chat's opt-out spans per member."""

    out: dict[int, set[str]] = field(default_factory=dict)  # by the words' in-process hash
    kept: set[int] = field(default_factory=set)
    optouts: dict[str, list[tuple[float, float | None]]] = field(default_factory=dict)

    def reply_hidden(self, words: str) -> bool:
        """A reply quote names no author: hidden when its words are hidden words of the chat and no
        turn of the chat still in recall says them (then it may be that author's, who kept them)."""
        found = hash(words)
        return found in self.out and found not in self.kept

    def line_hidden(self, member: str, words: str, when: float | None) -> bool:
        """A ``<recent_messages>`` line names its author: hidden when that author (or a turn whose
        author cannot be told) took those words out, or the author was opted out when it was said
        (``when`` unknown: at any time)."""
        authors = self.out.get(hash(words), set())
        if member in authors or "" in authors:
            return True
        return any(when is None or (since <= when and (until is None or when < until))
                   for since, until in self.optouts.get(member, ()))


class View:
    """The hidden ids (an append-only log, so a prepared connection adds only what is new) and
    the quote words, at one rule set and one lineage of sessions."""

    def __init__(self, record: RuleSet, facts: Mapping[str, SessionFacts]) -> None:
        self.serial = next(_serials)
        self.facts = dict(facts)
        self.derived: list[tuple[str, str, str, str]] = []  # the turns forgotten ids name (1.), found reading
        self.quotes: dict[str, Quotes] = {}
        self._take(record)
        self.relevant = self._relevant()
        self.attributor = Attributor(self.facts, lambda anchor, role: (anchor, role) in self.keyed)
        self.lineage: tuple = ()
        self.last_id = 0
        self.log: list[int] = sorted(record.message_ids)  # 1., also where the row is no turn (any more)
        self.hidden: set[int] = set(self.log)
        self.quoting: dict[int, float] = {}  # a turn holding quotes → its original's time

    def _take(self, record: RuleSet) -> None:
        """The rules of ``record``, indexed for judging rows."""
        self.rules = rules_of(record)
        self.legacy, self.id_sessions = record.message_ids, record.id_sessions
        self.keys: dict[tuple[str, str, str], set[str]] = {}
        for anchor, author, role, digest in [*record.turns, *self.derived]:
            self.keys.setdefault((anchor, role, digest), set()).add(author)
        self.keyed = {(anchor, role) for anchor, role, _ in self.keys}  # where a row's digest can matter
        self.spans: dict[str, list[Any]] = {}
        for rule in record.rules:
            self.spans.setdefault(rule.chat, []).append(rule)
        self.chats = set(self.spans) | {a for a, *_ in record.turns if not a.startswith("family:")}
        self.families = {a.removeprefix("family:") for a, *_ in record.turns if a.startswith("family:")}
        for chat, rules in self.spans.items():
            optouts: dict[str, list[tuple[float, float | None]]] = {}
            for rule in rules:
                if rule.kind == "optout":
                    optouts.setdefault(rule.user_id, []).append((rule.since, rule.until))
            self.quotes.setdefault(chat, Quotes()).optouts = optouts

    def absorb(self, conn: sqlite3.Connection, record: RuleSet) -> bool:
        """Take rules added since this view was built without reading all history again: a forget
        in a chat or family that has rules already re-reads that chat only; a span starts now, so
        no row said before changes. False when the rules changed otherwise (build a new view)."""
        ids, spans, turns = self.rules
        if not (ids <= record.message_ids and turns <= record.turns and len(spans) <= len(record.rules)
                and all(a == b or (a.until is None and a == replace(b, until=None))
                        for a, b in zip(spans, record.rules, strict=False))):
            return False
        anchors = {a for a, *_ in record.turns - turns}
        chats, families, relevant = set(self.chats), set(self.families), self.relevant
        self._take(record)
        if self.chats - chats or self.families - families or self._relevant() - relevant:
            return False  # history this view never read now matters
        for mid in sorted(record.message_ids - ids):
            if mid not in self.hidden:
                self.hidden.add(mid)
                self.log.append(mid)
        self._rejudge(conn, anchors)
        return True

    def _rejudge(self, conn: sqlite3.Connection, anchors: set[str]) -> None:
        """Judge again every row read so far of the chats and families ``anchors`` name."""
        fams = {f.family for f in self.facts.values() if speakers.anchor_of(f) in anchors}
        sessions = sorted(sid for sid in self.relevant if self.facts[sid].family in fams)
        if not sessions:
            return
        for chat in anchors & self.chats:
            self.quotes.setdefault(chat, Quotes()).out.clear()
            self.quotes[chat].kept.clear()
        select, where = row_sql(conn)
        rows = conn.execute(f"SELECT {select} FROM messages m WHERE m.id <= ? AND {where}"
                            " AND m.session_id IN (SELECT value FROM json_each(?))",
                            (self.last_id, json.dumps(sessions))).fetchall()
        for mid, sid, role, content, _ts, summary in rows:
            text = message_text(content)
            facts = self.facts[sid]
            original = self.attributor.originals.get((facts.family, role, hash(text.strip())))
            if summary or original is None or is_summary_text(text):
                continue
            said = original._replace(digest=speakers.digest(text))
            out = mid in self.hidden or self.judge(said, facts)
            if out and mid not in self.hidden:
                self.hidden.add(mid)
                self.log.append(mid)
            if role == "user" and not facts.operator and said.anchor in anchors & self.chats:
                self._words(said, text, out, mid)

    # -- which sessions a rule can reach ----------------------------------------------------------
    def _relevant(self) -> set[str]:
        families = set(self.families)
        families |= {f.family for f in self.facts.values() if f.chat in self.chats or f.copied_from is not None}
        families |= {self.facts[sid].family for sid in self.id_sessions if sid in self.facts}
        return {sid for sid, f in self.facts.items() if f.family in families}

    def extend(self, facts: Mapping[str, SessionFacts]) -> bool:
        """Take new sessions in. False when that cannot be done row by row — a known session's facts
        changed or went, or a known session now matters whose rows were never read (a new branch of
        a chat without rules): then build a new view."""
        if self.facts.keys() - facts.keys() or any(self.facts[sid] != facts[sid] for sid in self.facts):
            return False
        before, known = self.relevant, set(self.facts)
        self.facts = dict(facts)
        self.attributor.facts = self.facts
        self.relevant = self._relevant()
        return not (self.relevant - before) & known

    # -- judging rows -----------------------------------------------------------------------------
    def feed(self, rows: Iterable[Sequence[Any]]) -> None:
        """Rows ``(id, session_id, role, content, timestamp, summary)`` in id order, newer than
        any fed before. Two passes: the turns named by forgotten ids (1.) are keys of their own."""
        said: list[tuple[int, str, Said, str]] = []
        for mid, sid, role, content, ts, summary in rows:
            self.last_id = max(self.last_id, mid)
            text = message_text(content)
            if summary or is_summary_text(text):
                continue
            found = self.attributor.said(sid, role, text, ts, keyed=mid in self.legacy)
            if found is not None:
                said.append((mid, sid, found, text))
                if mid in self.legacy:
                    self.derived.append(found.key)
                    self.keys.setdefault((found.anchor, found.role, found.digest), set()).add(found.author)
                    self.keyed.add((found.anchor, found.role))
        for mid, sid, found, text in said:
            facts = self.facts[sid]
            if not found.digest and (found.anchor, found.role) in self.keyed:  # a legacy id's key, found later
                found = found._replace(digest=speakers.digest(text))
            out = mid in self.legacy or self.judge(found, facts)
            if out and mid not in self.hidden:
                self.hidden.add(mid)
                self.log.append(mid)
            if found.role == "user" and not facts.operator and not found.anchor.startswith("family:"):
                self._words(found, text, out, mid)

    def judge(self, said: Said, facts: SessionFacts) -> bool:
        if facts.operator and not said.anchor.startswith("family:"):
            return True  # 4.
        authors = self.keys.get((said.anchor, said.role, said.digest))
        if authors and (said.author in authors or said.author == ""):
            return True  # 2.
        for rule in self.spans.get(said.anchor, ()):
            if rule.kind == "optout" and said.author not in (rule.user_id, ""):
                continue
            if rule.since <= said.when and (rule.until is None or said.when < rule.until):
                return True  # 3.
        return False

    def _words(self, said: Said, text: str, out: bool, mid: int) -> None:
        quotes = self.quotes.setdefault(said.anchor, Quotes())
        own = hash(speakers.words(text))
        if out:
            quotes.out.setdefault(own, set()).add(said.author)
        else:
            quotes.kept.add(own)
        if any(marker in text for marker in QUOTE_MARKERS):
            self.quoting[mid] = said.when


# -- preparing a reader's connection --------------------------------------------------------------
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
    out of recall now (``rule_view``). Cheap when nothing changed (a stat and two tiny queries);
    after a write, only the new rows are judged and only the new ids added."""
    record = forgotten.load(home)
    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {FORGOTTEN_TABLE} (id INTEGER PRIMARY KEY)")
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS recall_forgotten_key (k TEXT)")
    if hermes_db.has_sessions_table(conn):
        view = current(conn, Path(home), record)
        serial, ids = view.serial, view.log
    else:  # a state.db without tables yet: no turns, only the recorded ids
        serial, ids = 0, sorted(record.message_ids)
    row = conn.execute("SELECT k FROM recall_forgotten_key").fetchone()
    done = json.loads(row[0]) if row is not None else None
    if done == [serial, len(ids)]:
        return
    try:
        if done is None or done[0] != serial or done[1] > len(ids):
            conn.execute(f"DELETE FROM {FORGOTTEN_TABLE}")
            done = [serial, 0]
        conn.executemany(f"INSERT OR IGNORE INTO {FORGOTTEN_TABLE} (id) VALUES (?)", ((i,) for i in ids[done[1]:]))
        conn.execute("DELETE FROM temp.recall_forgotten_key")
        conn.execute("INSERT INTO temp.recall_forgotten_key (k) VALUES (?)", (json.dumps([serial, len(ids)]),))
        conn.commit()  # the temp writes opened a transaction: never hold a read snapshot of state.db
    except BaseException:
        conn.rollback()
        raise


def view_of(conn: sqlite3.Connection, home: Path) -> View | None:
    """The rule view ``conn`` was last prepared with (for hiding quotes), or None."""
    return current(conn, Path(home), forgotten.load(home)) if hermes_db.has_sessions_table(conn) else None


# -- the views of a process, one per state.db --------------------------------------------------------
_views: dict[str, View] = {}
_lock = threading.Lock()


def sessions_key(conn: sqlite3.Connection) -> tuple:
    """Changes when a session is added or removed, or a parent link or end reason changes — what
    ``session_facts`` reads (a full ``sessions_fingerprint`` costs a string per session)."""
    return tuple(conn.execute("SELECT count(*), coalesce(max(rowid), 0), total(length(end_reason)),"
                              " total(length(parent_session_id)) FROM sessions").fetchone())


def current(conn: sqlite3.Connection, home: Path, record: RuleSet) -> View:
    """The view of ``home``'s rules over what ``conn`` sees now: extended by new sessions, new
    rules and new rows where it can be, built anew where it cannot."""
    key = str(hermes_db.state_db_path(home))
    newest = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
    lineage = (sessions_key(conn), bindings.fingerprint(home))
    with _lock:
        view = _views.get(key)
        if view is not None and newest < view.last_id:
            view = None  # another state.db at this path (restored from a backup): read it afresh
        rules = rules_of(record)
        if view is not None and view.lineage != lineage and not view.extend(_facts(conn, home)):
            view = None
        if view is not None and view.rules != rules and not view.absorb(conn, record):
            view = None
        if view is not None:
            # Hold the record's own sets: a receipt marked done re-reads the file into equal but new
            # sets, and comparing 10,000 turns by value cost every prepare ~4 ms (issue 34 §6).
            view.rules = rules
        if view is None:
            view = View(record, _facts(conn, home))
            _views[key] = view
        view.lineage = lineage
        if newest > view.last_id:
            view.feed(_rows(conn, view, newest))
            view.last_id = max(view.last_id, newest)
        return view


def rules_of(record: RuleSet) -> tuple:
    """What a view depends on: the rules, not the file (a receipt marked done changes the file only)."""
    return (record.message_ids, record.rules, record.turns)


def forget_views() -> None:
    """Drop every view (a restart, in tests and benchmarks)."""
    with _lock:
        _views.clear()


def _facts(conn: sqlite3.Connection, home: Path) -> dict[str, SessionFacts]:
    _bound, recorded = bindings.load_all(home)
    return speakers.session_facts(hermes_db.load_session_rows(conn), recorded)


def row_sql(conn: sqlite3.Connection, alias: str = "m") -> tuple[str, str]:
    """``SELECT`` list and condition of the rows :meth:`View.feed` takes, over ``messages {alias}``:
    user and assistant rows that are no summary or scaffolding (newer Hermes marks them)."""
    have = columns(conn, "messages")
    flag = f"coalesce({alias}._compressed_summary, 0)" if "_compressed_summary" in have else "0"
    scaffold = f" AND coalesce({alias}.display_kind, '') != 'hidden'" if "display_kind" in have else ""
    return (f"{alias}.id, {alias}.session_id, {alias}.role, {alias}.content, {alias}.timestamp, {flag}",
            f"{alias}.role IN ('user', 'assistant'){scaffold}")


def _rows(conn: sqlite3.Connection, view: View, newest: int) -> list[tuple]:
    """The rows of the view's sessions after ``view.last_id`` up to ``newest``, in id order."""
    if not view.relevant:
        return []
    select, where = row_sql(conn)
    sql = (f"SELECT {select} FROM messages m WHERE m.id > ? AND m.id <= ? AND {where}"
           " AND m.session_id IN (SELECT value FROM json_each(?))")
    rows = conn.execute(sql, (view.last_id, newest, json.dumps(sorted(view.relevant)))).fetchall()
    return sorted((tuple(r) for r in rows), key=lambda r: r[0])
