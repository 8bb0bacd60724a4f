"""The one rule for chat sessions, used by every surface (agent tools, recall API, CLI, hooks).

A *chat session* is any session that did not start on the operator's own surfaces: api_server
sessions (the NoneBot bridge, any other client) and Hermes' messaging-gateway sessions. Its chat
(``{adapter}:{id}`` or ``{adapter}:private:{id}``, see ``chats.py``) may search exactly one
project: the one the chat is bound to. No binding, Home, an archived or a vanished project →
a refusal (``chat_unbound``), never Home, never an auto repo, never another chat's sessions.

Pure: callers pass the session rows, the bindings and the projects they already loaded.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..stores import hermes_db
from .chats import chat_from_row, chat_from_session_id, chat_from_session_key

# Hermes' own list of surfaces that are not a human messaging channel. Newer Hermes ships it as
# gateway/session_context.py NON_MESSAGING_SESSION_SURFACES; on a Hermes without it (0.19) this
# copy of that upstream set is used, so both classify the same sources.
UPSTREAM_NON_MESSAGING = frozenset({"", "api_server", "cli", "codex", "desktop", "gateway", "kanban", "local",
                                    "msgraph_webhook", "tool", "tui", "webhook"})
# Of those, the ones that carry other people's messages are chats here: api_server is how chat
# bridges (NoneBot) talk to Hermes, webhooks deliver outsiders' text.
CARRY_OUTSIDERS = frozenset({"api_server", "webhook", "msgraph_webhook"})
# Sessions Hermes spawns on behalf of another (delegation, tools) belong where their parent does.
INHERITING_SOURCES = frozenset({"subagent", "tool", ""})


def _non_messaging() -> frozenset[str]:
    surfaces = _official_non_messaging()
    if surfaces is None:
        return UPSTREAM_NON_MESSAGING
    return frozenset(str(s).strip().lower() for s in surfaces)


def _official_non_messaging() -> Iterable[str] | None:
    """Hermes' ``NON_MESSAGING_SESSION_SURFACES``, or None on a Hermes without it. Inside Hermes
    the module is loaded already; elsewhere (``hermes recall search``, ``python -m hermes_side``)
    the constant is read from the module's source: importing ``gateway`` pulls in the agent and
    ``requests``, 37 % of a keyword CLI search's start, for one set of words."""
    module = sys.modules.get("gateway.session_context")
    if module is not None:
        return getattr(module, "NON_MESSAGING_SESSION_SURFACES", None)
    try:
        spec = importlib.util.find_spec("gateway")  # a top-level package: found, not imported
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return None
    source = Path(next(iter(spec.submodule_search_locations))) / "session_context.py"
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        tree = None
    for node in tree.body if tree is not None else ():
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
            node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id == "NON_MESSAGING_SESSION_SURFACES" and node.value:
            value = node.value
            if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
                value = value.args[0]  # frozenset({...})
            try:
                return ast.literal_eval(value)
            except ValueError:
                break  # not a literal: ask the module itself
    else:
        if tree is not None:
            return None  # the module has no such constant (Hermes 0.19)
    try:
        from gateway.session_context import NON_MESSAGING_SESSION_SURFACES
    except ImportError:
        return None
    return NON_MESSAGING_SESSION_SURFACES


# Where the operator types: the terminal CLI, the TUI, the desktop app, an editor over ACP, and
# Hermes' other operator surfaces (codex, local, gateway, kanban …). Everything else — api_server,
# every messaging platform, webhooks, cron deliveries, web UIs — is treated as a chat (fail
# closed: an unknown source is a chat).
OPERATOR_SOURCES = frozenset({"cli", "tui", "desktop", "acp"}) | (_non_messaging() - CARRY_OUTSIDERS
                                                                   - INHERITING_SOURCES)
CHAT_UNBOUND = "chat_unbound"
RECALL_OFF = "recall_off"  # an admin switched the chat's recall off (/recall-off)
RECALL_OFF_TEXT = "Recall is switched off in this chat; an admin can switch it back on with /recall-on."

REFUSALS = {
    "unset": "This chat is not linked to a project yet; an admin can link it with /move in the group.",
    "home": "This chat is not linked to a project (it is in Home); an admin can link it with /move in the group.",
    "archived": ("This chat's project is archived, so its history cannot be searched; an admin can link "
                 "another project with /move."),
    "missing": "This chat's project no longer exists; an admin can link another project with /move in the group.",
    "unknown": "This conversation's chat cannot be identified, so no history can be searched from it.",
}


@dataclass(frozen=True)
class Origin:
    chat: bool  # True: a chat session, sealed to its chat's project
    name: str | None = None  # the chat; None when a chat session's chat cannot be told
    # An operator's session made from a chat's conversation (a CLI ``/branch`` of it): the
    # operator's, never in a chat's recall; ``name`` is the chat its first turns were copied from.
    copied: bool = False


OPERATOR = Origin(False)


def origin_of(session_id: str, rows: Mapping[str, Mapping[str, Any]], recorded: Mapping[str, str], *,
              session_key: str | None = None, platform: str | None = None) -> Origin:
    """Whether ``session_id`` is a chat session, and of which chat.

    ``recorded`` is session id → chat as the first-turn hook saw it (the api_server row keeps no
    session key). ``session_key``/``platform`` are the live turn's hints, used only when the row
    does not exist yet. Parents (compression, delegation) lend their chat; once any session on the
    way up is a chat session, the answer stays "chat". Except where the operator made a session of
    their own from a chat's conversation (a ``/branch``, :func:`branches_off`): that session is the
    operator's from its first new turn (``copied``: the copies of the chat's turns in it keep that
    chat's rules, ``stores/rule_view.py``; its own turns are never in a chat's recall).
    """
    if not session_id:
        return _from_hints(None, session_key, platform)
    is_chat, operator, sid, seen = False, False, session_id, set()
    while sid and sid not in seen:
        seen.add(sid)
        name = chat_from_session_id(sid)
        if name:
            return Origin(True, name)
        row = rows.get(sid)
        if row is None:
            if sid == session_id:
                return _from_hints(recorded.get(sid), session_key, platform)
            break  # a parent we cannot read: it may have been a chat's
        source = row.get("source") or ""
        if source not in OPERATOR_SOURCES:  # Hermes writes them lower-case; anything else, normalise
            source = str(source).strip().lower()
        created = str(row.get("created_source") or "").strip().lower()  # newer Hermes only
        if created and created not in OPERATOR_SOURCES and created not in INHERITING_SOURCES:
            source = created  # created by a chat surface: a chat, whatever `source` says now
        if source in OPERATOR_SOURCES:
            if is_chat:
                return Origin(True, None)
            parent = row.get("parent_session_id")
            if parent in rows and branches_off(row, rows[parent]):
                above = origin_of(parent, rows, recorded)
                return Origin(False, above.name, copied=True) if above.chat or above.copied else OPERATOR
            # Still walk up: an operator-surface rotation of a chat session continues that chat.
            operator = True
        else:
            name = (recorded.get(sid) or chat_from_row(source, row.get("chat_id"), row.get("chat_type"))
                    or chat_from_session_key(row.get("session_key")))
            if name:
                return Origin(True, name)
            is_chat = is_chat or source not in INHERITING_SOURCES
        sid = row.get("parent_session_id")
    else:  # reached the root: an operator's lineage with no chat session in it
        if operator and not is_chat:
            return OPERATOR
    return Origin(True, None)


def branches_off(row: Mapping[str, Any], parent: Mapping[str, Any]) -> bool:
    """Whether the session ``row`` was made from ``parent`` as a new conversation (Hermes' CLI
    ``/branch`` marks it ``_branched_from``), not as its rotation (``end_reason`` compression)."""
    return bool(row.get("branched_from")) or parent.get("end_reason") != "compression"


def _from_hints(recorded: str | None, session_key: str | None, platform: str | None) -> Origin:
    name = recorded or chat_from_session_key(session_key)
    if name:
        return Origin(True, name)
    if platform and platform.strip().lower() not in OPERATOR_SOURCES:
        return Origin(True, None)
    return OPERATOR  # no row, no hint: nothing to search either way


def bound_project(origin: Origin, bound: Mapping[str, str | None],
                  projects: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, str]:
    """(the project a chat session may search, "") or (None, refusal reason)."""
    if origin.name is None:
        return None, "unknown"
    if origin.name not in bound:
        return None, "unset"
    project_id = bound[origin.name]
    if not project_id:
        return None, "home"
    project = hermes_db.find_project(projects, project_id)
    if project is None:
        return None, "missing"
    if project.get("archived"):
        return None, "archived"
    return project, ""


def refusal(reason: str) -> str:
    return REFUSALS[reason]
