"""The agent tools: schemas (seed §3.4, §4.1) and handlers that never raise."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from .actions.move import finish_interrupted, move_sessions
from .errors import RecallError
from .host import clock
from .host.profile import current_profile
from .search.chat_facing import chat_facing
from .search.engine import NO_CONTEXT, Scope, SearchEngine, engine_for
from .search.request import parse_search_args

log = logging.getLogger(__name__)
TOOLSET = "project_history"
ADMIN_ONLY = "only an admin can move this chat (/move in the group)"

SEARCH_SCHEMA: dict[str, Any] = {
    "name": "project_history_search",
    "description": (
        # The first sentence is the line Hermes' Tool Search lists (0.22+, where plugin tools are
        # found through tool_search): its words are what a model's plain query matches.
        "Search past conversations in the SAME project as this one (chat history). "
        "Find what was decided, discussed or done before: returns actual messages from other sessions, "
        "with links. Use when the user asks about prior work on this codebase: "
        "'what did we decide about X', 'where did we leave Y'. "
        "Modes: 'hybrid' (default, keyword + semantic), 'keyword' "
        "(exact terms), 'semantic' (similar meaning). Works in Chinese and English (搜索历史对话)."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string",
                      "description": ("Search query. Keywords, phrases, or natural language. A day it "
                                      "names ('yesterday', 'last week', '5月3日', '昨天') finds what was "
                                      "said then, on the user's calendar.")},
            "mode": {
                "type": "string", "enum": ["hybrid", "keyword", "semantic"], "default": "hybrid",
                "description": (
                    "'hybrid' (default): keyword + semantic combined. "
                    "'keyword': exact terms only. 'semantic': similar meaning only. "
                    "Use 'keyword' for code symbols/error codes; 'semantic' for "
                    "'how did we handle X' when exact words differ."
                ),
            },
            "limit": {"type": "integer", "default": 3,
                      "description": "Max sessions to return (default 3, max 10)."},
            "after": {"type": "string",
                      "description": "Only messages after this: ISO date ('2026-09-01') or a span ('7d', '24h')."},
            "before": {"type": "string",
                       "description": "Only messages before this: ISO date or a span ('30d')."},
        },
        "required": ["query"],
    },
}

MOVE_SCHEMA: dict[str, Any] = {
    "name": "project_session_move",
    "description": (
        "Move this conversation to a different project. The working directory "
        "switches to the target project's folder, and future history searches "
        "will look in the new project. Use when the user says 'move this to X' "
        "or 'this belongs to project Y'."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "project_id": {
                "type": "string",
                "description": (
                    "Target project ID (e.g. 'p_abc123') or slug. Use '' to remove from "
                    "any project (moves to Home). The conversation's working "
                    "directory changes to the project's primary folder."
                ),
            },
        },
        "required": ["project_id"],
    },
}


def _json(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _error(message: str, code: str) -> str:
    return _json({"success": False, "error": message, "code": code})


def _hermes_home() -> Path:
    return current_profile().home


def _current_session(kwargs: dict[str, Any]) -> str:
    sid = kwargs.get("session_id") or ""
    if not sid:
        try:
            from gateway.session_context import get_session_env

            sid = get_session_env("HERMES_SESSION_ID") or ""
        except ImportError:
            sid = ""
    return str(sid)


def _turn_hints() -> dict[str, str | None]:
    """The live turn's session key and platform (set by the gateway and the api_server)."""
    try:
        from gateway.session_context import get_session_env
    except ImportError:
        return {"session_key": None, "platform": None}
    # The gateway binds HERMES_SESSION_PLATFORM; newer CLI/TUI/desktop turns bind only
    # HERMES_SESSION_SOURCE (gateway/session_context.py), so both name the surface.
    return {"session_key": get_session_env("HERMES_SESSION_KEY") or None,
            "platform": (get_session_env("HERMES_SESSION_PLATFORM")
                         or get_session_env("HERMES_SESSION_SOURCE") or None)}


def _chat_safe(scope: Scope, result: dict[str, Any]) -> dict[str, Any]:
    """What the agent reads in a group it may repeat there: in a chat session, the chat-facing
    form the recall API gives a chat (no server folder, no consent command or provider URL, no
    install command with Hermes' Python path); operator sessions get everything."""
    return chat_facing(result) if scope.chat else result


def _scope_of(engine: SearchEngine, session_id: str) -> Scope:
    """The calling session's scope, resolved once for the whole call (tools.py is the edge)."""
    return engine.scope_for(session_id=session_id, **_turn_hints())


def handle_search(args: dict[str, Any], **kwargs: Any) -> str:
    try:
        req = parse_search_args(args, zone=clock.zone(_hermes_home()))
        session_id = _current_session(kwargs)
        if not session_id:
            return _json({"success": True, "mode": req.mode, "results": [], "message": NO_CONTEXT,
                          "sessions_in_scope": 0})
        engine = engine_for(_hermes_home())
        with engine.leased():
            scope = _scope_of(engine, session_id)
            return _json(_chat_safe(scope, engine.search(req, scope=scope)))
    except RecallError as exc:
        return _error(str(exc), exc.code)
    except Exception as exc:  # the agent must get an answer, not a traceback
        log.exception("project_history_search failed")
        return _error(f"search failed: {type(exc).__name__}", "internal")


def handle_move(args: dict[str, Any], **kwargs: Any) -> str:
    operator = False
    try:
        if not isinstance(args, dict):
            return _error("arguments must be a JSON object", "bad_request")
        unknown = sorted(str(k) for k in args if k != "project_id")
        if unknown:
            return _error(f"unknown argument(s): {', '.join(unknown)[:200]}", "bad_request")
        project_id = args.get("project_id")
        if not isinstance(project_id, str):
            return _error("'project_id' is required and must be a string ('' moves to Home)", "bad_request")
        session_id = _current_session(kwargs)
        if not session_id:
            return _error("no current session to move", "no_session")
        home = _hermes_home()
        engine = engine_for(home)
        # A chat's place is its binding, which only an admin changes (/move in the group): an
        # agent anyone in the group can talk to must not be able to walk the chat elsewhere.
        if engine.scope_map().origin(session_id, **_turn_hints()).chat:
            return _error(ADMIN_ONLY, "admin_only")
        operator = True  # past the check: a failure from here on may name the folder it concerns
        finish_interrupted(home)  # a move killed half-way is finished before the next one
        result = move_sessions(home, [session_id], project_id.strip())
        engine.scopes.invalidate()
        return _json(result)
    except RecallError as exc:
        # Before the check (an unreadable projects.db fails the scope map) it may be a chat's
        # session: the sentence only, which names the file and never a path.
        detailed = operator and exc.detail
        return _error(f"{exc}: {exc.detail}" if detailed else str(exc), exc.code)
    except Exception as exc:
        log.exception("project_session_move failed")
        return _error(f"move failed: {type(exc).__name__}", "internal")


def check_available() -> bool:
    """Seed §6: register whenever the profile home exists; failures are reported per call."""
    try:
        return _hermes_home().exists()
    except Exception:
        return False


OPEN_SCHEMA: dict[str, Any] = {
    "name": "project_history_open",
    "description": (
        "Read the turns around one result of project_history_search: the messages just before "
        "and after it in that past conversation, with roles and times. Use when a snippet is "
        "not enough to answer. Only works for results of this project's history."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "message_id": {"type": "integer",
                           "description": "The 'message_id' of a project_history_search result."},
            "before": {"type": "integer", "default": 3, "description": "Turns before it (0-10, default 3)."},
            "after": {"type": "integer", "default": 3, "description": "Turns after it (0-10, default 3)."},
            "offset": {"type": "integer", "default": 0,
                       "description": "Read on in a cut turn: give that turn's read_on message_id and offset "
                                      "(with before=0, after=0) to get its text from that character."},
        },
        "required": ["message_id"],
    },
}


def handle_open(args: dict[str, Any], **kwargs: Any) -> str:
    """Sealed exactly like ``handle_search``: the scope is the calling session's project."""
    from .search.context import open_context, parse_context_args

    try:
        req = parse_context_args(args)
        session_id = _current_session(kwargs)
        if not session_id:
            return _error(f"message not found ({NO_CONTEXT})", "not_found")
        engine = engine_for(_hermes_home())
        with engine.leased():
            scope = _scope_of(engine, session_id)
            return _json(_chat_safe(scope, open_context(engine, req, scope=scope)))
    except RecallError as exc:
        return _error(str(exc), exc.code)
    except Exception as exc:  # the agent must get an answer, not a traceback
        log.exception("project_history_open failed")
        return _error(f"open failed: {type(exc).__name__}", "internal")


TOOLS = (
    (SEARCH_SCHEMA, handle_search, "🔎"),
    (MOVE_SCHEMA, handle_move, "📁"),
    (OPEN_SCHEMA, handle_open, "📖"),
)
