"""Validate tool/API arguments into a search request. Pure; errors are data, never exceptions."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import datetime, tzinfo

from ..errors import RecallError
from .query import MAX_QUERY_CHARS

# The bot validates with the same values (tests/nonebot/test_shared_constants.py holds them equal).
MODES = ("hybrid", "keyword", "semantic")
DEFAULT_MODE = MODES[0]
MIN_LIMIT, DEFAULT_LIMIT, MAX_LIMIT = 1, 3, 10
_BAD_LIMIT = f"'limit' must be a number from {MIN_LIMIT} to {MAX_LIMIT}"
_RELATIVE = re.compile(r"^\s*(\d{1,5})\s*([hdwm])\s*$", re.IGNORECASE)
_UNIT_SECONDS = {"h": 3600, "d": 86400, "w": 7 * 86400, "m": 30 * 86400}


class RequestError(RecallError, ValueError):
    """Arguments that do not make a request; the message says which and how to fix it."""


@dataclass(frozen=True)
class SearchRequest:
    query: str
    mode: str = "hybrid"
    limit: int = DEFAULT_LIMIT
    after: float | None = None
    before: float | None = None


def parse_time(value: object, name: str, now: float, zone: tzinfo | None = None) -> float | None:
    """``None``/"" → no bound; ``7d``/``24h``/``2w``/``3m`` → that long ago; else an ISO date or
    datetime, read in ``zone`` (the profile's calendar, host/clock.py; None: the machine's local
    time) unless it gives its own offset."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise RequestError(f"'{name}' must be a string like '2026-09-01' or '7d'")
    rel = _RELATIVE.match(value)
    if rel:
        return now - int(rel.group(1)) * _UNIT_SECONDS[rel.group(2).lower()]
    try:
        at = datetime.fromisoformat(value.strip())
        return (at if at.tzinfo is not None else at.replace(tzinfo=zone)).timestamp()
    except (ValueError, OverflowError, OSError):
        raise RequestError(f"'{name}' is not a date: {value[:40]!r} (use '2026-09-01', "
                           "'2026-09-01T14:30' or a span like '7d' / '24h')") from None


def coerce_limit(value: object) -> int:
    if value is None:
        return DEFAULT_LIMIT
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise RequestError(_BAD_LIMIT)
    try:
        number = int(float(value))
    except (TypeError, ValueError, OverflowError):
        raise RequestError(_BAD_LIMIT) from None
    return max(MIN_LIMIT, min(MAX_LIMIT, number))


def parse_search_args(args: object, *, allowed_extra: tuple[str, ...] = (),
                      now: float | None = None, zone: tzinfo | None = None) -> SearchRequest:
    if not isinstance(args, dict):
        raise RequestError("arguments must be a JSON object")
    known = {"query", "mode", "limit", "after", "before", *allowed_extra}
    unknown = sorted(str(k) for k in args if k not in known)
    if unknown:
        raise RequestError(f"unknown argument(s): {', '.join(unknown)[:200]}")
    query = args.get("query")
    if not isinstance(query, str):
        raise RequestError("'query' is required and must be a string")
    if len(query) > MAX_QUERY_CHARS:
        raise RequestError(f"query is too long ({len(query)} characters; the limit is {MAX_QUERY_CHARS})",
                           code="query_too_long")
    if not query.strip() or not query.replace("\x00", "").strip():
        raise RequestError("'query' is empty — say what to look for")
    mode = args.get("mode") or DEFAULT_MODE
    if mode not in MODES:
        raise RequestError(f"'mode' must be one of {', '.join(MODES)}")
    now = time.time() if now is None else now
    after = parse_time(args.get("after"), "after", now, zone)
    before = parse_time(args.get("before"), "before", now, zone)
    if after is not None and before is not None and after >= before:
        raise RequestError("'after' must be earlier than 'before'")
    return SearchRequest(query=query, mode=mode, limit=coerce_limit(args.get("limit")), after=after, before=before)

