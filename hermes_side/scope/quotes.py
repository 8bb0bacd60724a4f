"""Quotes of a member's words inside another member's turn, hidden when their author takes them out.

The NoneBot bridge (nonebot-plugin-hermes ``handlers/message.py``, ``core/prompt_builder.py``)
writes other members' words into the *asker's* turn: a replied-to message as a ``(引用: …)``
prefix, and the group's last lines as a ``<recent_messages>`` block, one
``[user=Nick id=ID]: text`` line each. A member's ``/forget`` and an opt-out take their own turns
out (``rule_view.py``), but their words would live on in those quotes. So, wherever recall shows a
turn's text (search results, opened windows), a quote follows its author (``rule_view.Quotes``):

- a ``<recent_messages>`` line names its author: it is replaced by :data:`HIDDEN` when that member
  took those words out of the chat (or they were a turn whose author cannot be told), or was opted
  out when the quoting turn was said;
- a reply quote names no author: it is replaced when its words are words of the chat taken out of
  recall and no turn of the chat still in recall says them — someone else's forget of the same
  words leaves the original author's words quoted.

The asker's own words around the quotes stay.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from . import rule_view
from .rule_view import QUOTE_MARKERS, Quotes
from .speakers import words

HIDDEN = "[hidden: its author took it out of recall]"
REPLY_OPEN = "(引用: "
RECENT = re.compile(r"(<recent_messages>\n)(?P<body>.*?)(\n</recent_messages>)", re.S)
LINE = re.compile(r"^(?P<head>(?:\[m:\d+\] )?(?:\[bot\] )?\[user=(?:[^\]]*? id=)?(?P<uid>[^\]\s]+)\]: )(?P<text>.*)$")
MARKERS = QUOTE_MARKERS
__all__ = ["HIDDEN", "hide", "hide_one", "hide_text", "words"]


def hide_text(text: str, rules: Quotes, when: float | None) -> str:
    """``text`` with the quotes ``rules`` hide replaced; ``when``: the quoting turn's time. Pure."""
    if not any(marker in text for marker in MARKERS):
        return text

    def line(raw: str) -> str:
        found = LINE.match(raw)
        if found is None:
            return raw
        if rules.line_hidden(found.group("uid"), " ".join(found.group("text").split()), when):
            return found.group("head") + HIDDEN
        return raw

    def block(match: re.Match[str]) -> str:
        body = "\n".join(line(raw) for raw in match.group("body").split("\n"))
        return match.group(1) + body + match.group(3)

    return RECENT.sub(block, _hide_replies(text, rules))


def _hide_replies(text: str, rules: Quotes) -> str:
    """Each ``(引用: Q) `` whose Q is hidden words. Q may hold ``) `` itself, so every closing place
    is tried, shortest first."""
    out, at = [], 0
    while (start := text.find(REPLY_OPEN, at)) >= 0:
        body = start + len(REPLY_OPEN)
        end = body
        while (end := text.find(")", end)) >= 0:
            if text[end + 1:end + 2] in (" ", "\n", "") and rules.reply_hidden(" ".join(text[body:end].split())):
                break
            end += 1
        if end < 0:
            out.append(text[at:body])
            at = body
            continue
        out.append(text[at:body] + HIDDEN)
        at = end
    return "".join(out) + text[at:]


def hide(conn: Any, home: Path, scope_map: Callable[[], Any], messages: Mapping[int, dict[str, Any]]) -> None:
    """Hide the quotes in ``messages`` (id → ``{"session_id", "text", …}``, changed in place) whose
    authors took their words out of the chat the message was said in. ``scope_map`` gives the scope
    map (whose ``origins`` name each chat session's chat), asked only when a text quotes."""
    quoting = {mid: m for mid, m in messages.items() if any(marker in m.get("text", "") for marker in MARKERS)}
    if not quoting:
        return
    view = rule_view.view_of(conn, home)
    if view is None or not view.quotes:
        return
    smap = scope_map()
    for mid, message in quoting.items():
        origin = smap.origins.get(message["session_id"])
        rules = view.quotes.get(origin.name) if origin is not None and origin.name else None
        if rules is not None:
            message["text"] = hide_text(message["text"], rules, view.quoting.get(mid))


def hide_one(conn: Any, home: Path, scope_map: Callable[[], Any], session_id: str, text: str) -> str:
    """:func:`hide` for one text of ``session_id`` (its time unknown: any opt-out of a quoted member counts)."""
    view = {"session_id": session_id, "text": text}
    hide(conn, home, scope_map, {0: view})
    return view["text"]
