"""The ``pre_tool_call`` guard: in a chat session, only the tools of the chat tool policy run.

Hermes asks every plugin's ``pre_tool_call`` hook before any tool runs — registry tools and the
agent-loop ones (``session_search``, ``memory``, ``delegate_task``, ``todo``, ``clarify``) alike
(``hermes_cli.plugins.resolve_pre_tool_block``). This hook answers ``{"action": "block",
"message": <one sentence>}`` for a tool :mod:`tool_policy` does not allow in a chat session
(``chat_rule``: api_server, messaging platforms, their subagents and compression children), and
``None`` otherwise; CLI/TUI/desktop sessions keep every tool.

It fails closed: Hermes treats a hook that raises as "no block", so every error here is caught
and answered with a block; a session whose row does not exist and that carries no hint of where
it comes from is treated as a chat; a config.yaml that does not parse means the default policy.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from ..host import features, held, rewriters
from ..host.config import ConfigError, read_config
from ..stores import hermes_db
from . import tool_policy
from .chat_rule import OPERATOR_SOURCES, origin_of

log = logging.getLogger(__name__)

UNCLASSIFIED = ("{tool} is not available in group and private chats: this conversation could not be "
                "identified, and the tool could read other chats' history.")


def config_or_error(home: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(the profile's config.yaml, None) — ``{}`` when there is none — or (None, why) when it
    cannot be read or parsed: then Hermes itself loads no plugins from it (hermes_cli.plugins)."""
    try:
        return read_config(home), None
    except ConfigError as exc:
        return None, str(exc)


def chat_policy(home: Path) -> tuple[tool_policy.Settings, held.PrivateUrls]:
    """(the operator's switches, private addresses as the file and the running Hermes have them)
    for the profile at ``home``; a config that cannot be read gives the default, closed policy."""
    config, _error = config_or_error(home)
    return tool_policy.settings_from(config), held.private_urls(home, config)


def is_chat_session(home: Path, session_id: str, session_key: str | None, platform: str | None) -> bool:
    """Whether the session is a chat session; with no row and no hint at all, it is (fail closed).

    Operator sessions always have their row by the time a tool runs (Hermes creates it before the
    first model call) — a missing row with no session key and no operator platform is a chat's
    gateway turn racing its own row, a row Hermes failed to write, or a caller naming no session.
    """
    rows: dict[str, dict[str, Any]] = {}
    # Where Hermes keeps the sessions elsewhere (features.backend_problem), state.db is not where
    # this session's row is: only the hints count.
    if session_id and features.backend_problem(home) is None:
        try:
            conn = hermes_db.connect_state(home)
        except hermes_db.NoDatabase:
            conn = None
        if conn is not None:
            try:
                rows = hermes_db.session_chain(conn, session_id)
            finally:
                conn.close()
    origin = origin_of(session_id, rows, {}, session_key=session_key, platform=platform)
    if origin.chat:
        return True
    if session_id in rows:
        return False  # the row says operator
    return not (platform and platform.strip().lower() in OPERATOR_SOURCES)


def _url_check() -> tool_policy.tool_arguments.UrlCheck | None:
    """Hermes' own private-address check (tools/url_safety.py) where the fetch behind it checks
    every redirect too (host/features.redirects_checked); None otherwise (then an image source
    must be a data: image)."""
    if not features.redirects_checked():
        return None
    try:
        from tools.url_safety import is_safe_url
    except ImportError:
        return None
    return is_safe_url


def verdict(tool: str, args: Any, home: Path) -> str | None:
    """The block message for ``tool`` with ``args`` if it were called from a chat, or None."""
    settings, private = chat_policy(home)
    message = tool_policy.decide(tool, args, settings, private_urls=private.allowed, url_check=_url_check(),
                                 private_why=private.why)
    if message is None:  # allowed as judged: unless something can change the arguments after us
        message = tool_policy.rewritable(tool, settings, lambda: rewriters.argument_rewriters(on_pre_tool_call))
    return message


def on_pre_tool_call(tool_name: str = "", args: Any = None, session_id: str = "",
                     **kwargs: Any) -> dict[str, str] | None:
    tool = str(tool_name or "")
    try:
        from gateway.session_context import get_session_env

        from ..host.profile import current_profile

        home = current_profile().home
        message = verdict(tool, args, home)
        if message is None:
            return None
        # A Hermes lacking what telling chats apart needs (host/features.py: the block directive,
        # the session rows …): the restricted tool is blocked in every session. Session rows in a
        # backend recall cannot read are not such a gap: the turn's hints still tell sessions apart,
        # and a session without row or hint is a chat (status says so: features.guard_blind).
        if gaps := features.seal_gaps(home):
            return {"action": "block", "message": f"{message} (this Hermes lacks: {'; '.join(gaps)})"}
        chat = is_chat_session(home, str(session_id or get_session_env("HERMES_SESSION_ID") or ""),
                               get_session_env("HERMES_SESSION_KEY") or None,
                               get_session_env("HERMES_SESSION_PLATFORM") or None)
    except Exception:  # Hermes treats a raising hook as "no block": decide here, closed
        log.warning("project-history-recall: could not check tool %s for session %s; blocking", tool,
                    session_id, exc_info=True)
        return {"action": "block", "message": UNCLASSIFIED.format(tool=tool or "this tool")}
    return {"action": "block", "message": message} if chat else None
