"""Chat-group operations shared by the recall API and the ``pre_llm_call`` hook."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from . import bindings, hermes_db
from .chats import chat_from_session_id, chat_from_session_key
from .move import MoveError, move_sessions, target_for
from .search import SearchError, engine_for

log = logging.getLogger(__name__)


def resolve_project_ref(home: Path, ref: str) -> dict[str, Any]:
    project = hermes_db.find_project(hermes_db.load_projects(home), ref)
    if project is None or project.get("archived"):
        raise SearchError(f"project not found: {ref}", "unknown_project")
    return project


def chat_project(home: Path, chat: str) -> dict[str, Any]:
    """The project a chat searches in; a chat without one gets an error, never a global search."""
    binding = bindings.get_binding(home, chat)
    if binding["state"] != "bound":
        raise SearchError("this chat is not linked to a project", "chat_unbound")
    return resolve_project_ref(home, binding["project_id"])


def binding_view(home: Path, chat: str) -> dict[str, Any]:
    binding = bindings.get_binding(home, chat)
    project = None
    if binding["state"] == "bound":
        found = hermes_db.find_project(hermes_db.load_projects(home), binding["project_id"])
        project = {"id": binding["project_id"], "slug": (found or {}).get("slug"),
                   "name": (found or {}).get("name", binding["project_id"]),
                   "missing": found is None or bool(found.get("archived"))}
    return {"success": True, "chat": chat, "state": binding["state"], "project": project}


def sessions_of_chat(home: Path, chat: str, profile: str = "default") -> list[str]:
    """Sessions recorded for the chat by the hook, plus those named after it by the bridge."""
    ids = set(bindings.sessions_for_chat(home, chat))
    smap = engine_for(home, profile).scope_map()
    ids |= {sid for sid in smap.rows if chat_from_session_id(sid) == chat}
    return sorted(sid for sid in ids if sid in smap.rows)


def move_chat(home: Path, chat: str, project_ref: str, profile: str = "default") -> dict[str, Any]:
    """Move every conversation of the chat and bind it; ``""`` moves it to Home."""
    project_id = resolve_project_ref(home, project_ref)["id"] if project_ref else None
    ids = sessions_of_chat(home, chat, profile)
    if ids:
        result = move_sessions(home, ids, project_id or "")
    else:
        project, folder = target_for(home, project_id or "")
        result = {"success": True, "cwd": folder, "moved_sessions": 0,
                  "project": ({"kind": "explicit", "id": project["id"], "name": project["name"],
                               "slug": project.get("slug")} if project else {"kind": "home"})}
    bindings.set_binding(home, chat, project_id)
    engine_for(home, profile).scopes.invalidate()
    where = result["project"].get("name") or "Home"
    result["message"] = f"Linked {chat} to {where}; moved {result['moved_sessions']} session(s)"
    result["chat"] = chat
    return result


def place_new_session(home: Path, session_id: str, session_key: str | None) -> bool:
    """Put a bound chat's session in its project. Returns True when a move was written."""
    chat = chat_from_session_id(session_id) or chat_from_session_key(session_key)
    if not chat:
        return False
    bindings.record_session(home, chat, session_id)
    binding = bindings.get_binding(home, chat)
    if binding["state"] != "bound":
        return False
    try:
        move_sessions(home, [session_id], binding["project_id"])
    except MoveError as exc:
        log.warning("could not place session of %s in its project: %s", chat, exc)
        return False
    return True
