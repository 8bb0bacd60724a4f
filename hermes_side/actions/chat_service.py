"""Chat-group operations shared by the recall API and the ``pre_llm_call`` hook.

Placing a chat's new session and moving the whole chat both run under the chat's lock
(``bindings.chat_lock``, cross-process): the hook runs in Hermes, ``/move`` in the recall API.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..scope.chats import chat_from_session_id, chat_from_session_key
from ..search.reader import SearchError, reader_for
from ..stores import bindings, hermes_db
from .move import MoveError, finish_interrupted, move_sessions, target_for

log = logging.getLogger(__name__)
BUSY = "this chat is being moved right now; try again in a moment"


def _projects(home: Path) -> list[dict[str, Any]]:
    try:
        return hermes_db.load_projects(home)
    except hermes_db.Unavailable as exc:
        log.warning("project-history-recall: %s (%s)", exc, exc.detail)
        raise  # the store fault itself: it names the file and the recovery


def resolve_project_ref(home: Path, ref: str) -> dict[str, Any]:
    project = hermes_db.find_project(_projects(home), ref)
    if project is None or project.get("archived"):
        raise SearchError(f"project not found: {ref}", "unknown_project")
    return project


def chat_project(home: Path, chat: str) -> dict[str, Any]:
    """The project a chat searches in (the ``chat_rule``, as the recall API resolves it for
    ``/search`` and ``/context``); otherwise ``chat_unbound``, or ``recall_off`` while an admin has
    switched the chat's recall off."""
    scope = reader_for(home).scope_for(chat=chat)
    return hermes_db.find_project(scope.smap.projects, scope.place["id"])


def binding_view(home: Path, chat: str) -> dict[str, Any]:
    binding = bindings.get_binding(home, chat)
    project = None
    if binding["state"] == "bound":
        found = hermes_db.find_project(_projects(home), binding["project_id"])
        project = {"id": binding["project_id"], "slug": (found or {}).get("slug"),
                   "name": (found or {}).get("name", binding["project_id"]),
                   "missing": found is None or bool(found.get("archived"))}
    return {"success": True, "chat": chat, "state": binding["state"], "project": project}


def sessions_of_chat(home: Path, chat: str) -> list[str]:
    """Every session the chat rule attributes to the chat: by the bridge's id, the gateway's
    row, the hook's record, or a parent's (compression children, delegations)."""
    smap = reader_for(home).scope_map()
    ids = set(bindings.sessions_for_chat(home, chat))
    ids |= {sid for sid, origin in smap.origins.items() if origin.name == chat}
    return sorted(sid for sid in ids if sid in smap.rows)


def move_chat(home: Path, chat: str, project_ref: str, *,
              on_written: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Move every conversation of the chat and bind it; ``""`` moves it to Home. All or nothing:
    the binding changes only after every session moved, and a move killed half-way is finished
    by the next one (``move.finish_interrupted``). ``on_written``: see ``move_sessions``."""
    try:
        finish_interrupted(home)  # before our lock: it takes the chat locks it needs
        with bindings.chat_lock(home, chat):
            result = _move_chat_locked(home, chat, project_ref, on_written)
    except TimeoutError:
        raise MoveError(BUSY, "busy") from None
    finally:
        reader_for(home).scopes.invalidate()
    where = result["project"].get("name") or "Home"
    result["message"] = f"Linked {chat} to {where}; moved {result['moved_sessions']} session(s)"
    result["chat"] = chat
    return result


def _move_chat_locked(home: Path, chat: str, project_ref: str,
                      on_written: Callable[[str], None] | None) -> dict[str, Any]:
    project_id = resolve_project_ref(home, project_ref)["id"] if project_ref else None
    ids = sessions_of_chat(home, chat)
    if ids:  # binds the chat itself, inside the move's journal
        return move_sessions(home, ids, project_id or "", bind_chat=chat, on_written=on_written)
    project, folder = target_for(home, project_id or "")
    bindings.set_binding(home, chat, project_id)
    return {"success": True, "cwd": folder, "moved_sessions": 0,
            "project": ({"kind": "explicit", "id": project["id"], "name": project["name"],
                         "slug": project.get("slug")} if project else {"kind": "home"})}


def place_new_session(home: Path, session_id: str, session_key: str | None, parent_session_id: str = "") -> bool:
    """Put a chat's session in the project its chat is bound to. Returns True when nothing is left
    to do (not a chat session, or placed), False while the chat is unbound (ask again next turn:
    the bot's initial binding may arrive later).

    Raises (``MoveError``, ``TimeoutError``, ``Unavailable``, ``sqlite3.Error``) when the
    placement failed, so the hook tries again on the next turn. The binding is read under the
    chat's lock, after any ``/move`` in progress has finished, so a new session never lands in
    the project the chat just left.
    """
    # Newer Hermes passes parent_session_id to pre_llm_call: a rotated bridge session whose own
    # id and key name no chat still belongs to its parent's chat.
    chat = (chat_from_session_id(session_id) or chat_from_session_key(session_key)
            or chat_from_session_id(parent_session_id))
    if not chat:
        return True
    finish_interrupted(home)  # a /move killed half-way: finish it before reading the binding
    with bindings.chat_lock(home, chat):
        bindings.record_session(home, chat, session_id)
        binding = bindings.get_binding(home, chat)
        if binding["state"] == "home":
            return True  # an admin's decision; a later /move moves this session with the chat
        if binding["state"] != "bound":
            return False
        move_sessions(home, [session_id], binding["project_id"])
    return True
