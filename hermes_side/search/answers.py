"""A question's answer is usually the next turn, not the question itself.

Measured on LoCoMo: 60% of evidence turns follow a turn with a question mark, and a query
matches the question's words ("how did they handle the accident?") far better than the
answer's ("they were scared but…"). So after ranking, each hit that asks something is followed
by the turn that answers it, and a result whose message asks something shows that answer too.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ..stores.messages import NOT_FORGOTTEN_SQL, message_text

EXPAND_TOP = 30
_QUESTION_MARKS = ("?", "？")
# A forgotten turn is never anyone's answer (the connection is prepared: stores/forgotten.py).
_NEXT_TURN = ("SELECT m.id, m.role, m.content FROM messages m WHERE m.session_id = ? AND m.id > ?"
              " AND m.role IN ('user', 'assistant') AND (m.active = 1 OR m.compacted = 1)"
              f" AND {NOT_FORGOTTEN_SQL} ORDER BY m.id LIMIT 1")


def asks(text: str) -> bool:
    return any(q in text for q in _QUESTION_MARKS)


def reply_to(conn: sqlite3.Connection, session_id: str, message_id: int) -> dict[str, Any] | None:
    """The turn after ``message_id`` in its session (``{message_id, role, text}``), if any."""
    row = conn.execute(_NEXT_TURN, (session_id, message_id)).fetchone()
    if row is None:
        return None
    return {"message_id": row[0], "role": row[1], "text": message_text(row[2])}


def with_replies(conn: sqlite3.Connection, ranked: list[dict[str, Any]]) -> list[dict[str, Any]]:
    head = ranked[:EXPAND_TOP]
    if not head:
        return ranked
    rows = conn.execute("SELECT id, content FROM messages WHERE id IN (SELECT value FROM json_each(?))",
                        (json.dumps([h["message_id"] for h in head]),)).fetchall()
    asking = {r[0] for r in rows if asks(message_text(r[1]))}
    out: list[dict[str, Any]] = []
    placed: set[int] = set()
    for hit in head:
        if hit["message_id"] in placed:
            continue
        out.append(hit)
        placed.add(hit["message_id"])
        if hit["message_id"] not in asking:
            continue
        reply = reply_to(conn, hit["session_id"], hit["message_id"])
        if reply and reply["message_id"] not in placed:  # moved up next to its question if ranked lower
            placed.add(reply["message_id"])
            out.append({**hit, "message_id": reply["message_id"], "reply_to": hit["message_id"]})
    return out + [h for h in ranked[EXPAND_TOP:] if h["message_id"] not in placed]
