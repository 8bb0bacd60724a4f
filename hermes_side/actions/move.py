"""Move a whole conversation to a project's primary folder, or to Home.

The only write this plugin makes to ``state.db``, and only through Hermes' own
``SessionDB.update_session_cwd`` (seed §3.3). Attribution is a function of cwd, so changing the
cwd of every session of the conversation is the move; the stale git root Hermes 0.19.0 leaves
behind is ignored by our attribution because the new cwd does not lie inside it.
"""

from __future__ import annotations

import inspect
import logging
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import RecallError
from ..host.config import ConfigError, read_config, section
from ..scope.attribution import resolve_project
from ..scope.scope_map import git_common_root
from ..stores import bindings, faults, hermes_db
from . import journal

log = logging.getLogger(__name__)


class MoveError(RecallError):
    """A move that did not happen. Texts that could name a server folder carry the code
    ``folder_missing``, which the recall API answers with a fixed sentence (api/app.py)."""


def _projects(home: Path) -> list[dict[str, Any]]:
    try:
        return hermes_db.load_projects(home)
    except hermes_db.Unavailable as exc:
        raise MoveError(str(exc), exc.code, exc.detail) from None


def _configured_home(home: Path) -> str:
    """``terminal.cwd`` of the profile; a broken config.yaml names no folder (the user's home
    directory is the next candidate), rather than failing the move."""
    try:
        terminal = section(read_config(home), "terminal")
    except ConfigError:
        return ""
    configured = str(terminal.get("cwd") or "") if isinstance(terminal, dict) else ""
    return "" if configured in ("", ".") else os.path.abspath(os.path.expanduser(configured))


def is_home_place(home: Path, folder: str) -> bool:
    """True when a session whose cwd is ``folder`` would be attributed to Home."""
    row = {"cwd": folder, "git_repo_root": None, "probed_repo_root": git_common_root(folder)}
    return resolve_project(row, _projects(home))["kind"] == "home"


def home_cwd(home: Path) -> str:
    """Where "Home" sessions live: ``terminal.cwd`` from the profile's config, else the user's
    home directory — whichever is a real folder that belongs to no project and no repo."""
    candidates = [c for c in (_configured_home(home), os.path.expanduser("~")) if c]
    for folder in candidates:
        if os.path.isdir(folder) and is_home_place(home, folder):
            return folder
    raise MoveError("no folder outside every project to use as Home", "folder_missing",
                    "set terminal.cwd in config.yaml to a folder that is in no project and no git repository")


def target_for(home: Path, project_id: str) -> tuple[dict[str, Any] | None, str]:
    """(project or None for Home, the folder to move into)."""
    if not project_id:
        return None, home_cwd(home)
    project = hermes_db.find_project(_projects(home), project_id)
    if project is None or project.get("archived"):
        raise MoveError(f"project not found: {project_id}", "unknown_project")
    folders = project.get("folders") or []
    folder = project.get("primary_path") or (folders[0]["path"] if folders else "")
    if not folder:
        raise MoveError(f"project has no folder: {project.get('name')}", "folder_missing")
    if not os.path.isdir(folder):
        raise MoveError("project folder not found", "folder_missing", folder)
    return project, folder


def open_session_db(home: Path):
    from hermes_state import SessionDB

    path = hermes_db.state_db_path(home)
    if not path.exists():
        raise MoveError("session database not found", "no_db")
    return SessionDB(db_path=path)


def conversation_ids(db, session_id: str) -> list[str]:
    """Every session of the conversation, root → tip, by Hermes' own compression-lineage helper.

    Not ``get_conversation_root``: it also follows branch and delegate links, and moving a
    /branch must not move the conversation it was branched from.
    """
    lineage = db.get_compression_lineage(session_id) or [session_id]
    return lineage if session_id in lineage else [*lineage, session_id]


def write_cwd(db, session_id: str, cwd: str, branch: str, repo_root: str) -> None:
    params = inspect.signature(db.update_session_cwd).parameters
    if "replace_git_meta" in params:  # newer Hermes can clear a stale root itself
        db.update_session_cwd(session_id, cwd, branch, repo_root, replace_git_meta=True)
    else:
        db.update_session_cwd(session_id, cwd, branch, repo_root)


def git_branch(folder: str) -> str:
    from tui_gateway import git_probe

    return git_probe.branch(folder) or ""


def move_sessions(home: Path, session_ids: list[str], project_id: str, *, bind_chat: str | None = None,
                  on_written: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Move the conversations containing ``session_ids``; returns the seed's result object.

    All or nothing: every session is checked before the first write, and if a write fails the
    sessions already written get their old cwd and git columns back (``move_failed``). With
    ``bind_chat`` the chat is bound to the target (Home: unbound) after the last write. The whole
    plan is journaled first (``journal.py``), so a process killed half-way is finished by the next
    call (:func:`finish_interrupted`). ``on_written(session_id)`` runs after each session's write.
    """
    project, folder = target_for(home, project_id)
    db = open_session_db(home)
    try:
        before: dict[str, dict[str, Any]] = {}
        for sid in session_ids:
            if db.get_session(sid) is None:
                raise MoveError("session not found", "not_found", sid)
            for member in conversation_ids(db, sid):
                if member not in before:
                    before[member] = db.get_session(member) or {}
        branch, root = git_branch(folder), git_common_root(folder)
        entry = journal.Journal(home, {
            "folder": folder, "branch": branch, "root": root, "chat": bind_chat,
            "project_id": project["id"] if project else None,
            "sessions": {sid: {k: row.get(k) for k in ("cwd", "git_branch", "git_repo_root")}
                         for sid, row in before.items()}})
        try:
            try:
                _write_all(db, list(before), before, folder, branch, root, on_written)
            except MoveError:
                entry.discard()  # rolled back by _write_all itself: nothing left to finish
                raise
            if bind_chat is not None:
                bindings.set_binding(home, bind_chat, project["id"] if project else None)
            entry.discard()
        finally:
            entry.close()  # a journal still on disk here is finished by the next call
    finally:
        db.close()
    where = f"project {project['name']}" if project else "Home"
    return {
        "success": True,
        "project": ({"kind": "explicit", "id": project["id"], "name": project["name"],
                     "slug": project.get("slug")} if project else {"kind": "home"}),
        "cwd": folder,
        "moved_sessions": len(before),
        "message": f"Moved to {where}, cwd now {folder}",
    }


def finish_interrupted(home: Path) -> int:
    """Finish every move whose process died half-way (see ``journal.py``); returns how many.

    Forward when the target folder still exists: every session of the plan written to it (the
    writes are idempotent) and the chat bound. Otherwise back: every session that had a cwd gets
    it again, and the binding stays. Call it before taking a chat's lock (it takes them itself)."""
    done = 0
    for plan, discard in journal.interrupted(home):
        chat = plan.get("chat")
        if chat:
            with bindings.chat_lock(home, chat):
                _finish(home, plan)
        else:
            _finish(home, plan)
        discard()
        done += 1
    return done


def _finish(home: Path, plan: dict[str, Any]) -> None:
    sessions: dict[str, dict[str, Any]] = plan.get("sessions") or {}
    db = open_session_db(home)
    try:
        present = [sid for sid in sessions if db.get_session(sid) is not None]
        if os.path.isdir(plan.get("folder") or ""):
            for sid in present:
                write_cwd(db, sid, plan["folder"], plan.get("branch") or "", plan.get("root") or "")
            if plan.get("chat"):
                bindings.set_binding(home, plan["chat"], plan.get("project_id"))
            log.warning("project-history-recall: finished an interrupted move of %d session(s)", len(present))
        else:
            unrestored = _restore(db, present, sessions)
            log.warning("project-history-recall: rolled back an interrupted move (its folder is gone)%s",
                        f"; could not restore {', '.join(unrestored)}" if unrestored else "")
    finally:
        db.close()


def _write_all(db, members: list[str], before: dict[str, dict[str, Any]], folder: str, branch: str,
               root: str, on_written: Callable[[str], None] | None = None) -> None:
    written: list[str] = []
    try:
        for member in members:
            write_cwd(db, member, folder, branch, root)
            written.append(member)
            if on_written is not None:
                on_written(member)
    except Exception as exc:
        unrestored = _restore(db, written, before)
        if not unrestored and isinstance(exc, sqlite3.Error | OSError):  # the disk, a read-only profile
            raise faults.of(Path(getattr(db, "db_path", "state.db")), exc, writing=True) from exc
        detail = f"{type(exc).__name__}: {exc}"
        if unrestored:
            detail += f"; could not restore {', '.join(unrestored)}"
        raise MoveError("the move failed; nothing was changed" if not unrestored else "the move failed",
                        "move_failed", detail) from exc


def _restore(db, written: list[str], before: dict[str, dict[str, Any]]) -> list[str]:
    """Put back what a failed move wrote. A session that had no cwd (api_server and gateway rows)
    cannot get NULL back through ``update_session_cwd``; it keeps the new cwd, which is harmless:
    a chat session counts in a project only while its chat is bound there (``scope/chat_rule.py``)."""
    unrestored = []
    for member in written:
        old = before[member]
        try:
            if old.get("cwd"):
                write_cwd(db, member, old["cwd"], old.get("git_branch") or "", old.get("git_repo_root") or "")
            else:
                unrestored.append(member)
        except Exception:
            unrestored.append(member)
    return unrestored
