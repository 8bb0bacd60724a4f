"""What Hermes itself does to a conversation's rows, run through Hermes' own code or its exact
``SessionDB`` calls — for tests that must hold after Hermes rewrote history (issue 34).

- :func:`compact`: in-place compaction (``agent/conversation_compression.py``, ``compression.in_place``,
  the default): ``archive_and_compact`` with a summary and the live tail, written again as new rows
  with new ids and the compaction's time.
- :func:`rotate`: compression with rotation (``in_place: false``): ``end_session(…, "compression")``,
  a child ``create_session(parent_session_id=…)`` of the same source, and the summary and the tail
  appended to the child.
- :func:`branch`: the CLI's own ``/branch`` (``CLICommandsMixin._handle_branch_command``), as after
  ``/resume`` of the session: a ``cli`` session with the copied transcript and no working folder.
- :func:`rewind`: ``rewind_to_message`` (the ``/rewind`` picker's call).
"""

from __future__ import annotations

import contextvars
import os
import time
from typing import Any

SUMMARY = "[CONTEXT COMPACTION — REFERENCE ONLY] earlier turns were summarized"


def _tail(db: Any, session_id: str, keep: int) -> list[dict[str, Any]]:
    live = db.get_messages(session_id)
    return [{"role": m["role"], "content": m["content"]} for m in live[-keep:]] if keep else []


def compact(db: Any, session_id: str, keep: int = 2) -> None:
    """Hermes' in-place compaction of ``session_id``, keeping its last ``keep`` live rows."""
    tail = _tail(db, session_id, keep)
    db.archive_and_compact(session_id, [{"role": "user", "content": SUMMARY}, *tail])


def rotate(db: Any, session_id: str, keep: int = 2) -> str:
    """Hermes' compression with rotation; the child's id."""
    tail = _tail(db, session_id, keep)
    source = (db.get_session(session_id) or {}).get("source") or "cli"
    db.end_session(session_id, "compression")
    child = f"{time.strftime('%Y%m%d_%H%M%S')}_{os.urandom(3).hex()}"
    db.create_session(session_id=child, source=source, parent_session_id=session_id)
    for message in [{"role": "user", "content": SUMMARY}, *tail]:
        db.append_message(child, message["role"], message["content"])
    return child


def branch(db: Any, session_id: str) -> str:
    """Run Hermes' own CLI ``/branch`` on ``session_id`` as after ``/resume`` of it; the branch's id."""
    from hermes_cli.cli_commands_mixin import CLICommandsMixin

    class Resumed(CLICommandsMixin):
        pass

    cli = Resumed()
    cli.session_id, cli._session_db, cli.agent = session_id, db, None
    cli.model, cli.max_turns, cli.reasoning_config = "m", 10, None
    cli.conversation_history = [{"role": m["role"], "content": m["content"]} for m in db.get_messages(session_id)]
    cli._transfer_session_yolo = lambda old, new: None
    # /branch makes the new session the process's current one (ContextVar and os.environ): keep
    # that inside this call, as it would stay inside that CLI process.
    saved = os.environ.get("HERMES_SESSION_ID")
    try:
        contextvars.copy_context().run(cli._handle_branch_command, "/branch")
    finally:
        if saved is None:
            os.environ.pop("HERMES_SESSION_ID", None)
        else:
            os.environ["HERMES_SESSION_ID"] = saved
    return cli.session_id


def rewind(db: Any, session_id: str, message_id: int) -> None:
    """``/rewind`` to a user turn: it and everything after it leave the live transcript."""
    db.rewind_to_message(session_id, message_id)
