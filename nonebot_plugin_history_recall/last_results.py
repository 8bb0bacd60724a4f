"""Each group's last ``/recall`` result list, so ``/recall --open N`` can name a hit by its number.

Kept in one small JSON file in the plugin's localstore data dir (it survives bot restarts) and in
memory. Only ids are stored — the text stays on the Hermes side, and opening a hit asks
the API again, which checks the scope anew (a group moved to another project cannot open its old
hits). A write that fails is logged and costs only the ability to ``--open`` after a restart.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nonebot import logger

from .client import LOG_PREFIX
from .storage import data_file

FILE_NAME = "last_results.json"
# The oldest groups are forgotten first: the file is rewritten on every search, so it stays small
# (500 groups × 10 hits ≈ 30 KB).
MAX_CHATS = 500


@dataclass(frozen=True)
class Hit:
    message_id: int
    session_id: str


_cache: dict[str, dict[str, Any]] | None = None



def _load() -> dict[str, dict[str, Any]]:
    global _cache
    if _cache is None:
        path = data_file(FILE_NAME)
        try:
            raw = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        except (OSError, ValueError) as exc:
            logger.warning(f"{LOG_PREFIX} cannot read {path.name}, starting empty: {exc!r}")
            raw = {}
        _cache = raw if isinstance(raw, dict) else {}
    return _cache


def _save(entries: dict[str, dict[str, Any]]) -> None:
    path = data_file(FILE_NAME)
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(entries, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)  # atomic: a crash never leaves half a file
    except OSError as exc:
        logger.warning(f"{LOG_PREFIX} cannot write {path.name}; --open will not survive a restart: {exc!r}")


def remember(chat: str, results: Sequence[Mapping[str, Any]]) -> None:
    """Replace the chat's list with ``results`` (the API's result rows, in the order shown)."""
    entries = _load()
    hits = [
        {"message_id": r["message_id"], "session_id": str(r.get("session_id") or "")}
        for r in results
        if isinstance(r.get("message_id"), int) and not isinstance(r.get("message_id"), bool)
    ]
    entries.pop(chat, None)
    entries[chat] = {"at": time.time(), "results": hits}
    while len(entries) > MAX_CHATS:
        entries.pop(next(iter(entries)))  # insertion order = oldest first
    _save(entries)


def recall_hits(chat: str) -> list[Hit]:
    """The chat's last result list; empty when it never searched (or nothing matched)."""
    entry = _load().get(chat) or {}
    hits = []
    for row in entry.get("results") or []:
        if isinstance(row, dict) and isinstance(row.get("message_id"), int):
            hits.append(Hit(row["message_id"], str(row.get("session_id") or "")))
    return hits


def forget_cache() -> None:
    """Drop the in-memory copy (tests; the next call reads the file again)."""
    global _cache
    _cache = None
