"""A question's answer is usually the next turn, not the question itself.

Measured on LoCoMo: 60% of evidence turns follow a turn with a question mark, and a query
matches the question's words ("how did they handle the accident?") far better than the
answer's ("they were scared but…"). So after ranking, each hit that asks something is followed
by the turn that answers it.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from .messages import message_text

EXPAND_TOP = 30
_QUESTION_MARKS = ("?", "？")


def with_replies(conn: sqlite3.Connection, ranked: list[dict[str, Any]]) -> list[dict[str, Any]]:
    head = ranked[:EXPAND_TOP]
    if not head:
        return ranked
    rows = conn.execute("SELECT id, content FROM messages WHERE id IN (SELECT value FROM json_each(?))",
                        (json.dumps([h["message_id"] for h in head]),)).fetchall()
    asks = {r[0] for r in rows if any(q in message_text(r[1]) for q in _QUESTION_MARKS)}
    out: list[dict[str, Any]] = []
    placed: set[int] = set()
    for hit in head:
        if hit["message_id"] in placed:
            continue
        out.append(hit)
        placed.add(hit["message_id"])
        if hit["message_id"] not in asks:
            continue
        reply = conn.execute(
            "SELECT id FROM messages WHERE session_id = ? AND id > ? AND role IN ('user', 'assistant')"
            " AND (active = 1 OR compacted = 1) ORDER BY id LIMIT 1",
            (hit["session_id"], hit["message_id"])).fetchone()
        if reply and reply[0] not in placed:  # moved up next to its question if ranked lower
            placed.add(reply[0])
            out.append({**hit, "message_id": reply[0]})
    return out + [h for h in ranked[EXPAND_TOP:] if h["message_id"] not in placed]
