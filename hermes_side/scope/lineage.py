"""Conversations: a compression lineage (root → rotated children) is one conversation. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def conversation_root(session_id: str, rows: Mapping[str, Mapping[str, Any]]) -> str:
    """Walk up parent links that are compression rotations; branches and delegates stay separate."""
    seen = {session_id}
    current = session_id
    while True:
        row = rows.get(current)
        parent_id = row.get("parent_session_id") if row else None
        parent = rows.get(parent_id) if parent_id else None
        if parent is None or parent_id in seen or parent.get("end_reason") != "compression":
            return current
        seen.add(parent_id)
        current = parent_id
