"""A line of the group's buffer counts once: for the conversation that first stored it.

The NoneBot bridge writes the group's last lines before a member's turn (``<recent_messages>``, a
line each, ``[m:<id>] [user=Nick id=ID]: text``; the id is the bridge's own message-store key,
stable across turns and restarts) whatever their age: the first @ of the morning carries last
night's last lines, and a scene's first turn the end of the scene before. Counted there, last
night's words made this morning's conversation a match for them (FriendsQA: 153 of 1,014 turns
hold lines first stored more than an hour before; benchmarks/README.md, "Eleventh pass").

So a buffered line already stored in a turn more than ``conversation_pause`` earlier does not
count for the query's words in the later turn; the earlier turn still holds it. Only turns read
for the query are compared: a line holding a query word is read in both turns, or in neither.
A line without an ``[m:<id>]`` (the bridge writes none when it has no id) is never taken for
another: the same words can be said twice. Pure: texts and times come in as data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

BLOCK = "<recent_messages>"
LINE = re.compile(r"^\[m:\d+\] .*$", re.M)


def first_stored(turns: Iterable[tuple[str, float | None]]) -> dict[str, float]:
    """Each buffered line of ``turns`` (text, time) → the time of the earliest turn holding it."""
    first: dict[str, float] = {}
    for text, ts in turns:
        if ts is None or BLOCK not in text:
            continue
        for line in LINE.findall(text):
            if ts < first.get(line, float("inf")):
                first[line] = ts
    return first


def counted(text: str, ts: float | None, first: Mapping[str, float], pause: float) -> str:
    """``text`` without the buffered lines stored more than ``pause`` seconds before ``ts``
    (``text`` itself when it has none; ``pause`` 0: every line counts)."""
    if ts is None or pause <= 0 or BLOCK not in text:
        return text
    lines = text.split("\n")
    kept = [line for line in lines if not (line.startswith("[m:") and first.get(line, ts) < ts - pause)]
    return text if len(kept) == len(lines) else "\n".join(kept)
