"""Which rows a forget takes: the turns it names, and every row that is one of those turns.

A forget names turns (``scope/speakers.py``: chat, author, role, words); the rules apply to every
copy wherever and whenever it appears (``stores/rule_view.py``). A plan therefore reads the rows of
every conversation family the named turns' chats and families hold — in id order, so each copy is
attributed to its original — chooses the named turns, and counts every row still in recall that is
one of them: what the receipt says is exactly what leaves recall now.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from ..scope import rule_view, speakers
from ..scope.speakers import Attributor, Said
from ..stores.messages import eligible_sql, is_summary_text, message_text


@dataclass(frozen=True)
class Row:
    id: int
    session: str
    said: Said
    ok: bool  # in recall now (eligible, not out already)


def scan(conn: sqlite3.Connection, smap: Any, sessions: Iterable[str]) -> list[Row]:
    """Every turn row of the families of ``sessions`` and of the chats they belong to, attributed."""
    facts = speakers.session_facts(smap.rows, smap.recorded)
    sessions = [sid for sid in sessions if sid in facts]
    chats = {facts[sid].chat for sid in sessions if facts[sid].chat and not facts[sid].operator}
    families = {facts[sid].family for sid in sessions} | {f.family for f in facts.values() if f.chat in chats}
    wanted = sorted(sid for sid, f in facts.items() if f.family in families)
    select, where = rule_view.row_sql(conn)
    rows = conn.execute(f"SELECT {select}, ({eligible_sql(conn)}) AS ok FROM messages m"
                        " JOIN sessions s ON s.id = m.session_id"
                        f" WHERE m.session_id IN (SELECT value FROM json_each(?)) AND {where} ORDER BY m.id",
                        (json.dumps(wanted),)).fetchall()
    attributor = Attributor(facts)
    out = []
    for mid, sid, role, content, ts, summary, ok in rows:
        text = message_text(content)
        if summary or is_summary_text(text):
            continue
        said = attributor.said(sid, role, text, ts)
        if said is not None:
            out.append(Row(mid, sid, said, bool(ok)))
    return out


def in_range(ts: float | None, after: float | None, before: float | None) -> bool:
    ts = ts or 0.0
    return (after is None or ts >= after) and (before is None or ts < before)


def every_turn(rows: Iterable[Row], sessions: Collection[str], after: float | None = None,
               before: float | None = None) -> list[Row]:
    """The turns of ``sessions`` still in recall, said (their original) in the span."""
    return [r for r in rows if r.session in sessions and r.ok and in_range(r.said.when, after, before)]


def members_turns(rows: Iterable[Row], chat: str, member: str, *, after: float | None = None,
                  before: float | None = None, only: int | None = None) -> list[Row]:
    """The member's own turns in the chat (said in the span, or the exchange holding message
    ``only``) and the agent's turns answering them, up to the next user turn of the session."""
    chosen: list[Row] = []
    exchange: list[Row] = []
    taking, session = False, None
    ordered = sorted((r for r in rows if r.said.anchor == chat), key=lambda r: (r.session, r.id))
    for row in [*ordered, None]:  # None closes the last exchange
        if row is None or row.said.role == "user" or row.session != session:
            if exchange and (only is None or any(e.id == only for e in exchange)):
                chosen += exchange
            exchange, session = [], row.session if row else None
            taking = row is not None and row.said.role == "user" and row.said.author == member and (
                only is not None or in_range(row.said.when, after, before))
        if taking and row is not None and row.ok:
            exchange.append(row)
    if only is not None and not any(c.id == only for c in chosen):
        return []
    return chosen


def same_turns(rows: Iterable[Row], chosen: Iterable[Row]) -> list[Row]:
    """Every row still in recall that is one of the ``chosen`` turns (``rule_view`` rule 2)."""
    keys: dict[tuple[str, str, str], set[str]] = {}
    for row in chosen:
        keys.setdefault((row.said.anchor, row.said.role, row.said.digest), set()).add(row.said.author)
    out = []
    for row in rows:
        authors = keys.get((row.said.anchor, row.said.role, row.said.digest))
        if row.ok and authors and (row.said.author in authors or row.said.author == ""):
            out.append(row)
    return out


def unattributed(rows: Iterable[Row], chat: str) -> int:
    """How many sessions of the chat hold user turns in recall whose author cannot be told (a
    shared group session without the bridge's sender tag)."""
    return len({r.session for r in rows if r.ok and r.said.anchor == chat and r.said.role == "user"
                and r.said.author == ""})
