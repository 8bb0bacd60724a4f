"""Quotes of a member's words inside another member's turn, hidden when their author takes them out.

The NoneBot bridge (nonebot-plugin-hermes ``handlers/message.py``, ``core/prompt_builder.py``)
writes other members' words into the *asker's* turn: a replied-to message as a ``(引用: …)``
prefix, and the group's last lines as a ``<recent_messages>`` block, one
``[user=Nick id=ID]: text`` line each. A member's ``/forget`` takes out their own rows and an
opt-out keeps their future rows out (``forgotten.py``), but their words would live on in those
quotes. So, wherever recall shows a turn's text (search results, opened windows), a quote is
replaced by :data:`HIDDEN` when

- it is a ``<recent_messages>`` line of a member who is opted out in that chat now, or
- its words are the words of a user turn of that chat that is out of recall (forgotten, or said
  while opted out) — the only way a reply quote can be matched, as the bridge writes no author.

The asker's own words around the quotes stay. Forgotten rows are read from the connection's
``temp.recall_forgotten`` (``forgotten.prepare``), so this holds wherever that predicate holds.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from . import forgotten
from .messages import FORGOTTEN_TABLE, message_text

HIDDEN = "[hidden: its author took it out of recall]"
REPLY = re.compile(r"^\(引用: .*?\)(?= |$)", re.S)  # a turn's own reply prefix (the shortest reading)
REPLY_OPEN = "(引用: "
RECENT = re.compile(r"(<recent_messages>\n)(?P<body>.*?)(\n</recent_messages>)", re.S)
LINE = re.compile(r"^(?P<head>(?:\[m:\d+\] )?(?:\[bot\] )?\[user=(?:[^\]]*? id=)?(?P<uid>[^\]\s]+)\]: )(?P<text>.*)$")
MARKERS = ("(引用: ", "<recent_messages>")


CURRENT = re.compile(r"<current_message>\n(?:\[user=[^\]]*\]: )?(?P<text>.*?)\n</current_message>", re.S)


def words(text: str) -> str:
    """A turn's own words, as a quote of it reads: what the member typed — inside the bridge's
    ``<current_message>`` or after its ``<recent_messages>`` block — without their own reply
    prefix, spaces folded."""
    if current := CURRENT.search(text):
        text = current.group("text")
    elif "</recent_messages>" in text:
        text = text.rsplit("</recent_messages>", 1)[1]
    own = REPLY.sub("", text.strip(), count=1)
    return " ".join(own.split())


def hide_text(text: str, members: frozenset[str] | set[str], hidden: frozenset[str] | set[str]) -> str:
    """``text`` with the quotes of ``members`` (by id) and of ``hidden`` words replaced. Pure."""
    if not any(marker in text for marker in MARKERS):
        return text

    def line(raw: str) -> str:
        found = LINE.match(raw)
        if found is None:
            return raw
        if found.group("uid") in members or " ".join(found.group("text").split()) in hidden:
            return found.group("head") + HIDDEN
        return raw

    def block(match: re.Match[str]) -> str:
        body = "\n".join(line(raw) for raw in match.group("body").split("\n"))
        return match.group(1) + body + match.group(3)

    return RECENT.sub(block, _hide_replies(text, hidden))


def _hide_replies(text: str, hidden: frozenset[str] | set[str]) -> str:
    """Each ``(引用: Q) `` whose Q is hidden words. Q may hold ``) `` itself, so every closing place
    is tried, shortest first."""
    out, at = [], 0
    while (start := text.find(REPLY_OPEN, at)) >= 0:
        body = start + len(REPLY_OPEN)
        end = body
        while (end := text.find(")", end)) >= 0:
            if text[end + 1:end + 2] in (" ", "\n", "") and " ".join(text[body:end].split()) in hidden:
                break
            end += 1
        if end < 0:
            out.append(text[at:body])
            at = body
            continue
        out.append(text[at:body] + HIDDEN)
        at = end
    return "".join(out) + text[at:]


def _hidden_words(conn: sqlite3.Connection, sessions: list[str]) -> frozenset[str]:
    rows = conn.execute(
        f"SELECT content FROM messages WHERE id IN (SELECT id FROM {FORGOTTEN_TABLE}) AND role = 'user'"
        " AND session_id IN (SELECT value FROM json_each(?))", (json.dumps(sessions),)).fetchall()
    return frozenset(w for w in (words(message_text(r[0])) for r in rows) if w)


def hide(conn: sqlite3.Connection, home: Path, scope_map: Callable[[], Any],
         messages: Mapping[int, dict[str, Any]]) -> None:
    """Hide the quotes in ``messages`` (id → ``{"session_id", "text", …}``, changed in place) of
    members who took their words out of the chat the message was said in. ``scope_map`` gives the
    scope map (whose ``origins`` name each chat session's chat), asked only when a text quotes."""
    quoting = [m for m in messages.values() if any(marker in m.get("text", "") for marker in MARKERS)]
    if not quoting:
        return
    smap = scope_map()
    record = forgotten.load(home)
    by_chat: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
    for message in quoting:
        origin = smap.origins.get(message["session_id"])
        chat = origin.name if origin is not None else None
        if chat is None:
            continue
        if chat not in by_chat:
            sessions = [sid for sid, o in smap.origins.items() if o.name == chat]
            by_chat[chat] = (record.opted_out(chat), _hidden_words(conn, sessions))
        members, hidden = by_chat[chat]
        if members or hidden:
            message["text"] = hide_text(message["text"], members, hidden)


def hide_one(conn: sqlite3.Connection, home: Path, scope_map: Callable[[], Any], session_id: str,
             text: str) -> str:
    """:func:`hide` for one text of ``session_id``."""
    view = {"session_id": session_id, "text": text}
    hide(conn, home, scope_map, {0: view})
    return view["text"]
