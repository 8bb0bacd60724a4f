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
from collections.abc import Iterable, Mapping, Sequence
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
# The same rows for many questions at once ([session id, message id] pairs), each within its next
# ``_WINDOW`` ids of the table. The window must not exceed ``answer_lookahead``; an answer mostly
# comes next or a few rows on (the 200k synthetic profile: 577 of 654 next, the rest within 7).
# ``+m.session_id``: with the session's index SQLite reads and sorts all its later rows per question;
# the id range reads 16 rows (600 questions in batches of 15: 54 ms, one by one 168 ms; 2 fell back).
_WINDOW = 16
_WINDOW_ROWS = ("SELECT q.key, m.id, m.role, m.content, m.tool_calls FROM json_each(?) AS q CROSS JOIN messages m"
                " WHERE m.id > json_extract(q.value, '$[1]') AND m.id <= json_extract(q.value, '$[1]') + ?"
                " AND +m.session_id = json_extract(q.value, '$[0]')"
                f" AND (m.active = 1 OR m.compacted = 1) AND {NOT_FORGOTTEN_SQL}{{newer}} ORDER BY q.key, m.id")


def asks(text: str) -> bool:
    return any(q in text for q in _QUESTION_MARKS)


def reply_to(conn: sqlite3.Connection, session_id: str, message_id: int) -> dict[str, Any] | None:
    """The turn that answered ``message_id`` (``{message_id, role, text}``), if any.

    The next user or assistant row with text, where Hermes' machinery is passed over: ``tool`` rows,
    tool-call turns without text, compaction summaries, and an assistant's "let me check" that
    carries ``tool_calls`` when the same run of assistant turns ends with a plain answer before the
    next user turn (the text the person read)."""
    sql = _NEXT_ROWS.format(newer=newer_clauses(conn, ("messages",)))
    return _answer(conn.execute(sql, (session_id, message_id, RANKING.answer_lookahead)))[1]


def replies_to(conn: sqlite3.Connection, asking: Sequence[tuple[str, int]]) -> dict[int, dict[str, Any] | None]:
    """:func:`reply_to` of each (session id, message id), in one statement for most: each question's
    next ``_WINDOW`` rows of the whole table (a rowid range: no sort of the session's rows), of which
    its session's are read. Where they do not settle the answer, :func:`reply_to` asks again
    (answers after a long run of tool rows, or other sessions' rows between). Looked up one by
    one, a search's ~15 asking hits cost a statement each, sorting each session's later rows."""
    if not asking:
        return {}
    sql = _WINDOW_ROWS.format(newer=newer_clauses(conn, ("messages",)))
    window: dict[int, list[tuple]] = {}
    for key, *row in conn.execute(sql, (json.dumps(list(asking)), _WINDOW)):
        window.setdefault(key, []).append(tuple(row))
    out: dict[int, dict[str, Any] | None] = {}
    for i, (session_id, message_id) in enumerate(asking):
        # The window holds every row of the session up to its end, and no more than the
        # lookahead: an answer settled there is the one reply_to finds.
        settled, turn = _answer(window.get(i, ()))
        out[message_id] = turn if settled else reply_to(conn, session_id, message_id)
    return out


def _answer(rows: Iterable[Sequence[Any]]) -> tuple[bool, dict[str, Any] | None]:
    """(settled, the answer) over a question's next rows of its session in id order: not settled
    when the rows ran out before anything decided (later rows may answer)."""
    first_call: dict[str, Any] | None = None
    for mid, role, content, tool_calls in rows:
        if role not in ("user", "assistant"):
            continue
        text = message_text(content)
        if role == "user" and first_call is not None:
            return True, first_call  # the agent's run ended with a tool-call turn: that is what it said
        if not text.strip() or is_summary_text(text):
            continue
        turn = {"message_id": mid, "role": role, "text": text}
        if role == "assistant" and _has_calls(tool_calls):
            first_call = first_call or turn
            continue
        return True, turn
    return False, first_call


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
    # Every asking hit's answer at once; those the loop below does not reach (placed as another
    # question's answer) are kept too: the result rows may show them.
    answers = replies_to(conn, list(dict.fromkeys((h.session_id, h.message_id) for h in head
                                                  if h.message_id in asking)))
    out: list[RankedHit] = []
    placed: set[int] = set()
    for hit in head:
        if hit.message_id in placed:
            continue
        out.append(hit)
        placed.add(hit.message_id)
        if hit.message_id not in asking:
            continue
        reply = answers[hit.message_id]
        if reply and reply["message_id"] not in placed:  # moved up next to its question if ranked lower
            placed.add(reply["message_id"])
            out.append(replace(hit, message_id=reply["message_id"], reply_to=hit.message_id))
    return out + [h for h in ranked[RANKING.expand_top:] if h.message_id not in placed], answers
