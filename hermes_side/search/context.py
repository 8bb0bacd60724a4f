"""Open a search hit: the turns around one message, inside the same sealed scope as the search.

Shared by the recall API (``POST /context``, scope = the chat's bound project) and the agent tool
``project_history_open`` (scope = the calling session's project, exactly like
``project_history_search``). The scope comes from ``SearchEngine.scope_for``, so whatever rule
seals a search seals an open too. A message outside that scope answers ``not_found`` — the same
answer as a message that does not exist, so nothing about other projects can be probed.

A window fits Hermes' result budget (``fit.py``): its turns share the characters left after the
note, the origin and the rest of the window, the hit first. A cut turn says so (``"truncated":
true``) and where to read on (``"read_on": {"message_id", "offset"}``: open that message alone
from that character, ``offset`` being this module's one extra argument).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any

from ..host import clock
from ..scope import quotes
from ..stores import hermes_db
from ..stores.messages import MESSAGES_FROM, eligible_sql, message_text
from . import fit, quoted
from .engine import NO_CONTEXT, SearchEngine
from .reader import Scope, SearchError, public_place
from .request import RequestError
from .results import format_when

DEFAULT_TURNS, MAX_TURNS = 3, 10
NOT_FOUND = "message not found in this project"
MAX_MESSAGE_ID = 2**63 - 1  # SQLite's INTEGER: a larger id cannot exist and cannot even be bound
MAX_OFFSET = 10**9


@dataclass(frozen=True)
class ContextRequest:
    message_id: int
    before: int = DEFAULT_TURNS
    after: int = DEFAULT_TURNS
    offset: int = 0  # the character of the hit's text to start at (reading on after a cut)


def _count(value: object, name: str) -> int:
    if value is None:
        return DEFAULT_TURNS
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"'{name}' must be a whole number from 0 to {MAX_TURNS}")
    if not 0 <= value <= MAX_TURNS:
        raise RequestError(f"'{name}' must be a whole number from 0 to {MAX_TURNS}")
    return value


def parse_context_args(args: object, *, allowed_extra: tuple[str, ...] = ()) -> ContextRequest:
    """Validate ``{"message_id": int, "before": 0..10, "after": 0..10, "offset": int >= 0}``;
    errors are ``RequestError``."""
    if not isinstance(args, dict):
        raise RequestError("arguments must be a JSON object")
    unknown = sorted(str(k) for k in args if k not in {"message_id", "before", "after", "offset", *allowed_extra})
    if unknown:
        raise RequestError(f"unknown argument(s): {', '.join(unknown)[:200]}")
    mid = args.get("message_id")
    if isinstance(mid, str) and mid.strip().isdigit() and len(mid.strip()) <= 19:
        mid = int(mid.strip())  # models often quote numbers
    if isinstance(mid, bool) or not isinstance(mid, int) or not 0 < mid <= MAX_MESSAGE_ID:
        raise RequestError("'message_id' is required: the message_id of a search result")
    offset = args.get("offset")
    if offset is not None and (isinstance(offset, bool) or not isinstance(offset, int)
                               or not 0 <= offset <= MAX_OFFSET):
        raise RequestError("'offset' must be a whole number from 0: a cut turn's read_on offset")
    return ContextRequest(mid, _count(args.get("before"), "before"), _count(args.get("after"), "after"),
                          offset or 0)


def _turn(row: Any, hit_id: int, text: str, zone: tzinfo | None) -> dict[str, Any]:
    return {"message_id": row["id"], "role": row["role"], "text": text,
            "when": format_when(row["timestamp"], zone), "timestamp": row["timestamp"], "hit": row["id"] == hit_id}


def _read_on(turn: dict[str, Any], start: int, shown: int) -> None:
    turn["truncated"] = True
    turn["read_on"] = {"message_id": turn["message_id"], "offset": start + shown}


def fit_window(result: dict[str, Any], budget: int = fit.RESULT_CHARS) -> dict[str, Any]:
    """Cut the turns' texts of a marked window so that the whole result fits ``budget`` (in place)."""
    turns = result["turns"]
    full = [t["text"] for t in turns]
    start = int(result.get("offset") or 0)
    hit = next((i for i, t in enumerate(turns) if t["hit"]), -1)
    for t in turns:  # the window without its texts, every turn marked as cut: what the texts share
        t["text"] = "…"
        _read_on(t, MAX_OFFSET, 0)
    spare = budget - fit.json_size(result)
    for _ in range(4):  # JSON escapes (newlines, quotes) make a text cost more than its length
        caps = fit.text_caps([len(text) for text in full], hit, spare)
        for i, (t, text, cap) in enumerate(zip(turns, full, caps, strict=True)):
            t.pop("truncated", None), t.pop("read_on", None)
            t["text"] = text if cap is None else text[:cap] + "…"
            if cap is not None:
                _read_on(t, start if i == hit else 0, cap)
        over = fit.json_size(result) - budget
        if over <= 0:
            return result
        spare -= over
    return result


_SELECT = f"SELECT m.id, m.session_id, m.role, m.content, m.timestamp {MESSAGES_FROM} WHERE "


def open_context(engine: SearchEngine, req: ContextRequest, *, project: str | None = None,
                 session_id: str | None = None, chat: str | None = None, session_key: str | None = None,
                 platform: str | None = None, scope: Scope | None = None) -> dict[str, Any]:
    """The hit and up to ``before``/``after`` turns of its conversation around it.

    ``scope`` (or ``project`` / ``chat`` / ``session_id``) is the scope exactly as for
    ``SearchEngine.search``. Raises ``SearchError`` (``not_found`` for anything outside the scope).
    """
    with engine.leased() as conn:
        if scope is None:
            scope = engine.scope_for(project=project, session_id=session_id, chat=chat,
                                     session_key=session_key, platform=platform)
        if scope.place is None:
            raise SearchError(f"{NOT_FOUND} ({NO_CONTEXT})", "not_found")
        smap, place, in_scope = scope.smap, scope.place, set(scope.session_ids)
        select = _SELECT + eligible_sql(conn)
        hit = conn.execute(select + " AND m.id = ?", (req.message_id,)).fetchone()
        if hit is None or hit["session_id"] not in in_scope:
            raise SearchError(NOT_FOUND, "not_found")
        # The conversation across compression rotations, but only the parts the scope may show.
        members = json.dumps([sid for sid in smap.conversation(hit["session_id"]) if sid in in_scope])
        # "+m.id" keeps SQLite on the per-session index instead of walking the whole table by id.
        where = " AND m.session_id IN (SELECT value FROM json_each(?))"
        earlier = conn.execute(select + where + " AND +m.id < ? ORDER BY m.id DESC LIMIT ?",
                               (members, hit["id"], req.before + 1)).fetchall()
        later = conn.execute(select + where + " AND +m.id > ? ORDER BY m.id LIMIT ?",
                             (members, hit["id"], req.after + 1)).fetchall()
        root = smap.root_of.get(hit["session_id"], hit["session_id"])
        titles = hermes_db.session_titles(conn, sorted({root, hit["session_id"]}))
        rows = [*reversed(earlier[:req.before]), hit, *later[:req.after]]
        texts = {r["id"]: {"session_id": r["session_id"], "text": message_text(r["content"])} for r in rows}
        quotes.hide(conn, engine.home, lambda: smap, texts)  # words their author took out, quoted by another
    for found in texts.values():
        found["text"] = found["text"].strip()
    texts[hit["id"]]["text"] = texts[hit["id"]]["text"][req.offset:]
    zone = clock.zone(engine.home)  # each turn's time on the profile's calendar, as a search row shows it
    return fit_window(quoted.mark({
        "success": True,
        "project": public_place(place, smap.projects),
        "session_id": hit["session_id"],
        "link": f"@session:{hit['session_id']}",
        "title": titles.get(root) or titles.get(hit["session_id"]) or "",
        "message_id": hit["id"],
        "turns": [_turn(r, hit["id"], texts[r["id"]]["text"], zone) for r in rows],
        "more_before": len(earlier) > req.before,
        "more_after": len(later) > req.after,
        **({"offset": req.offset} if req.offset else {}),
    }, smap))
