"""A question's answer is usually the next turn, not the question itself.

Measured on LoCoMo: 60% of evidence turns follow a turn with a question mark, and a query
matches the question's words ("how did they handle the accident?") far better than the
answer's ("they were scared but…"). So after ranking, each hit that asks something is followed
by the turn that answers it, and a result whose message asks something shows that answer too.
In an agent's transcript the answer is the first turn with text after the tool calls, never a
tool-call turn or a tool result (``reply_to``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..stores.messages import NOT_FORGOTTEN_SQL, is_summary_text, message_text, newer_clauses
from .records import RankedHit
from .settings import RANKING

_QUESTION_MARKS = ("?", "？")
# A forgotten turn is never anyone's answer (the connection is prepared: stores/forgotten.py), nor
# a row newer Hermes marks as scaffolding or a compression summary ({newer}: newer_clauses).
_NEXT_ROWS = ("SELECT m.id, m.role, m.content, m.tool_calls FROM messages m WHERE m.session_id = ? AND m.id > ?"
              f" AND (m.active = 1 OR m.compacted = 1) AND {NOT_FORGOTTEN_SQL}{{newer}} ORDER BY m.id LIMIT ?")


def asks(text: str) -> bool:
    return any(q in text for q in _QUESTION_MARKS)


def reply_to(conn: sqlite3.Connection, session_id: str, message_id: int) -> dict[str, Any] | None:
    """The turn that answered ``message_id`` (``{message_id, role, text}``), if any.

    The next user or assistant row with text, where Hermes' machinery is passed over: ``tool`` rows,
    tool-call turns without text, compaction summaries, and an assistant's "let me check" that
    carries ``tool_calls`` when the same run of assistant turns ends with a plain answer before the
    next user turn (the text the person read)."""
    first_call: dict[str, Any] | None = None
    sql = _NEXT_ROWS.format(newer=newer_clauses(conn, ("messages",)))
    for mid, role, content, tool_calls in conn.execute(sql, (session_id, message_id, RANKING.answer_lookahead)):
        if role not in ("user", "assistant"):
            continue
        text = message_text(content)
        if role == "user" and first_call is not None:
            break  # the agent's run ended with a tool-call turn: that is what it said
        if not text.strip() or is_summary_text(text):
            continue
        turn = {"message_id": mid, "role": role, "text": text}
        if role == "assistant" and _has_calls(tool_calls):
            first_call = first_call or turn
            continue
        return turn
    return first_call


def _has_calls(tool_calls: str | None) -> bool:
    return bool(tool_calls) and tool_calls.strip() not in ("", "[]", "null")


def with_replies(conn: sqlite3.Connection, ranked: list[RankedHit],
                 texts: Mapping[int, str] | None = None) -> tuple[list[RankedHit], dict[int, dict[str, Any] | None]]:
    """Each of the top hits that asks something, followed by the turn that answered it; and the
    answer looked up for each of them (message id → ``reply_to``), kept so that no hit's answer is
    looked up twice. ``texts``: the hits' texts the caller read already (message id → text); only
    the others are read here."""
    head = ranked[:RANKING.expand_top]
    if not head:
        return ranked, {}
    known = dict(texts or {})
    missing = [h.message_id for h in head if h.message_id not in known]
    if missing:
        rows = conn.execute("SELECT id, content FROM messages WHERE id IN (SELECT value FROM json_each(?))",
                            (json.dumps(missing),)).fetchall()
        known |= {r[0]: message_text(r[1]) for r in rows}
    asking = {h.message_id for h in head if asks(known.get(h.message_id, ""))}
    out: list[RankedHit] = []
    answers: dict[int, dict[str, Any] | None] = {}
    placed: set[int] = set()
    for hit in head:
        if hit.message_id in placed:
            continue
        out.append(hit)
        placed.add(hit.message_id)
        if hit.message_id not in asking:
            continue
        reply = answers[hit.message_id] = reply_to(conn, hit.session_id, hit.message_id)
        if reply and reply["message_id"] not in placed:  # moved up next to its question if ranked lower
            placed.add(reply["message_id"])
            out.append(replace(hit, message_id=reply["message_id"], reply_to=hit.message_id))
    return out + [h for h in ranked[RANKING.expand_top:] if h.message_id not in placed], answers
