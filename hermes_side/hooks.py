"""Hermes hooks: place a chat's new sessions in its project; keep the chat tool policy (guard.py).

The session row does not exist yet at ``on_session_start`` (hermes-facts §3), so placement runs at
``pre_llm_call``. It must return ``None`` — anything else is injected into the user's message.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .scope.guard import on_pre_tool_call

log = logging.getLogger(__name__)

# Sessions placed (or found to need no placement) in this process; the hook fires on every
# turn. A failed placement, or a chat not bound yet, is not remembered: the next turn tries again.
_placed: set[tuple[str, str]] = set()
_placed_lock = threading.Lock()


def _session_key() -> str:
    try:
        from gateway.session_context import get_session_env

        return get_session_env("HERMES_SESSION_KEY") or ""
    except ImportError:
        return ""


def on_pre_llm_call(session_id: str = "", **kwargs: Any) -> None:
    if not session_id:
        return None
    try:
        from .actions.chat_service import place_new_session
        from .host.profile import current_profile  # the one profile seam (hermes -p, gateway overrides)

        home = Path(current_profile().home)
        key = (str(home), session_id)
        with _placed_lock:
            if key in _placed:
                return None
        if place_new_session(home, session_id, _session_key()):
            with _placed_lock:
                _placed.add(key)
    except Exception:  # a hook must never break the user's turn; the next turn retries
        log.warning("project-history-recall: placing session %s failed; retrying next turn", session_id,
                    exc_info=True)
    return None


HOOKS: tuple[tuple[str, Callable[..., Any]], ...] = (
    ("pre_llm_call", on_pre_llm_call),
    ("pre_tool_call", on_pre_tool_call),
)
