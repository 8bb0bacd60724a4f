"""Results sized for Hermes' preview: every result fits the smallest budget Hermes gives a tool.

Hermes stores a tool result over its threshold and shows the model only its first 1,500
characters (``tools/tool_result_storage.py``, 0.19 and 0.22 alike). The threshold comes from the
model's context window (``tools/budget_config.py::budget_for_context_window``): 15 % of it at 4
characters a token, never under 8,000 nor over 100,000 characters; a turn's results together may
use 30 %, never under 16,000 — past that the largest are stored too.

So a result of ours is at most :data:`RESULT_CHARS` = 8,000 characters, Hermes' floor: the
threshold of the smallest model Hermes admits, so no result of ours is ever stored on its own, on
any model. Two fit the smallest turn budget; on a 16k-token model (threshold 9,600, turn 19,200) a
search and an opened window share a turn with ~3,000 characters of other tools' output unstored.
And whatever happens to a result, its first characters are the quoted-data note and where the
words came from (``quoted.mark`` puts them first), far inside the 1,500 a preview shows.

A search sheds its last rows' extra snippets, then its last rows, and says how many it left out;
an opened window shares the budget among its turns' texts (:func:`text_caps`), each cut marked
with where to read on. Pure.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

RESULT_CHARS = 8_000  # tools/budget_config.py _MIN_RESULT_SIZE_CHARS (0.19 and 0.22)
PREVIEW_CHARS = 1_500  # tools/budget_config.py DEFAULT_PREVIEW_SIZE_CHARS
EXTRAS = ("more", "answer")  # a row's optional snippets, shed before the row itself


def json_size(result: Any) -> int:
    """Characters of ``result`` as the tools return it (compact JSON, non-ASCII kept)."""
    return len(json.dumps(result, ensure_ascii=False))


def fit_rows(result: dict[str, Any], budget: int = RESULT_CHARS) -> dict[str, Any]:
    """``result`` with its last rows' extras, then its last rows, left out until it fits (in place)."""
    rows = result.get("results")
    if not isinstance(rows, list) or json_size(result) <= budget:
        return result
    left_out = 0
    while json_size(result) > budget and rows:
        spare = next((r for r in reversed(rows) if isinstance(r, dict) and any(k in r for k in EXTRAS)), None)
        if spare is not None:
            spare.pop(next(k for k in EXTRAS if k in spare))
            continue
        rows.pop()
        left_out += 1
        result["left_out"] = (f"{left_out} more result{'s' if left_out > 1 else ''} left out to keep this "
                              "answer short; ask with a lower limit or a narrower query to see them")
    return result


def text_caps(lengths: Sequence[int], hit: int, available: int) -> list[int | None]:
    """How many characters of each text to show so that together they take at most ``available``
    (None: the whole text). The hit — the reason the window was opened — gets up to a third first
    and whatever the others leave; the others share the rest evenly, short ones whole."""
    if sum(lengths) <= available:
        return [None] * len(lengths)
    available = max(available, 0)
    others = [n for i, n in enumerate(lengths) if i != hit]
    reserved = min(lengths[hit], available // 3) if 0 <= hit < len(lengths) else 0
    cap = _level(others, available - reserved)
    used = sum(min(n, cap) for n in others)
    hit_cap = min(lengths[hit], available - used) if 0 <= hit < len(lengths) else 0
    return [(hit_cap if i == hit else cap) if (hit_cap if i == hit else cap) < n else None
            for i, n in enumerate(lengths)]


def _level(lengths: Sequence[int], available: int) -> int:
    """The largest cap c with sum(min(n, c)) <= available (water-filling)."""
    remaining, ordered = max(available, 0), sorted(lengths)
    for i, n in enumerate(ordered):
        share = remaining // (len(ordered) - i)
        if n > share:
            return share
        remaining -= n
    return ordered[-1] if ordered else 0
