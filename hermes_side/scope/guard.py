"""Close the other door: Hermes' built-in ``session_search`` in chat sessions.

In 0.19.0 ``session_search`` searches every session of the profile (upstream issue #87779), so a
group's agent could read every other chat. With this plugin loaded, a ``pre_tool_call`` hook
blocks it in chat sessions (``chat_scope``) and points the agent at ``project_history_search``.
CLI/TUI/desktop sessions keep it. The operator can turn the block off in config.yaml::

    plugins:
      project-history-recall:
        block_session_search: false

The hook fails closed: if it cannot tell what kind of session is asking, it blocks.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from ..host.config import plugin_enabled, plugin_section, read_config
from ..host.profile import PLUGIN_KEY
from ..stores import hermes_db
from .chat_rule import origin_of

log = logging.getLogger(__name__)

SWITCH = "block_session_search"
TOOL = "session_search"
BLOCKED = ("session_search is not available in group and chat conversations: it would search every "
           "chat of this assistant. Use project_history_search instead; it searches this chat's project.")


def block_enabled(home: Path) -> bool:
    """The operator's switch; anything but an explicit ``false`` (or an unreadable file) blocks."""
    try:
        value = plugin_section(home, SWITCH)
    except Exception:  # a broken config.yaml must not reopen the door
        return True
    return value is not False


def door_status(home: Path) -> dict[str, Any]:
    """For ``hermes recall status``: is ``session_search`` blocked in chat sessions?"""
    try:
        read_config(home)
    except Exception as exc:
        return {"blocked_in_chats": True, "reason": f"{exc}; blocking"}
    if not plugin_enabled(home):
        return {"blocked_in_chats": False,
                "reason": "plugin not enabled in this profile: Hermes' session_search reads every chat"}
    if not block_enabled(home):
        return {"blocked_in_chats": False,
                "reason": f"turned off (plugins.{PLUGIN_KEY}.{SWITCH}: false): session_search reads every chat"}
    return {"blocked_in_chats": True, "reason": "chat sessions get project_history_search only"}


def is_chat_session(home: Path, session_id: str, session_key: str | None, platform: str | None) -> bool:
    rows: dict[str, dict[str, Any]] = {}
    if session_id:
        try:
            conn = hermes_db.connect_state(home)
        except hermes_db.NoDatabase:
            conn = None
        if conn is not None:
            try:
                rows = hermes_db.session_chain(conn, session_id)
            finally:
                conn.close()
    return origin_of(session_id, rows, {}, session_key=session_key, platform=platform).chat


def on_pre_tool_call(tool_name: str = "", session_id: str = "", **kwargs: Any) -> dict[str, str] | None:
    if tool_name != TOOL:
        return None
    try:
        from gateway.session_context import get_session_env

        from ..host.profile import current_profile

        home = current_profile().home
        if not block_enabled(home):
            return None
        chat = is_chat_session(home, str(session_id or get_session_env("HERMES_SESSION_ID") or ""),
                               get_session_env("HERMES_SESSION_KEY") or None,
                               get_session_env("HERMES_SESSION_PLATFORM") or None)
    except Exception:  # Hermes treats a raising hook as "no block": decide here, closed
        log.warning("project-history-recall: could not classify session %s; blocking session_search",
                    session_id, exc_info=True)
        chat = True
    return {"action": "block", "message": BLOCKED} if chat else None
