"""Runs INSIDE a clean Hermes venv (hermes-agent only, our package not installed), with
HERMES_HOME set. Uses Hermes' own writers and dispatch; imports nothing of this repo.

    python hermes_driver.py setup <work dir>     -> a history: project A with a past session, B empty
    python hermes_driver.py call <json calls>    -> loads plugins the way Hermes does, dispatches each
                                                   call through model_tools.handle_function_call
Prints one line ``RESULT <json>``.
"""

import json
import os
import sys
from pathlib import Path

HOME = Path(os.environ["HERMES_HOME"])
PLUGIN = "project-history-recall"
PAST = [("user", "The kestrel deploy failed because the database migration locked the users table."),
        ("assistant", "We agreed to run schema migrations before every rollout from now on.")]


def setup(work: Path) -> dict:
    from hermes_cli import projects_db
    from hermes_state import SessionDB

    a, b = work / "a", work / "b"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    conn = projects_db.connect(HOME / "projects.db")
    try:
        projects_db.create_project(conn, name="A", folders=[str(a)], primary_path=str(a))
        pid_b = projects_db.create_project(conn, name="B", folders=[str(b)], primary_path=str(b))
    finally:
        conn.close()
    db = SessionDB(db_path=HOME / "state.db")
    try:
        db.create_session("s-past", "cli", cwd=str(a))
        for role, text in PAST:
            db.append_message("s-past", role, text)
        db.create_session("s-cur", "cli", cwd=str(a))
        db.append_message("s-cur", "user", "hello")
    finally:
        db.close()
    return {"project_b": pid_b, "past": "s-past", "current": "s-cur"}


def call(calls: list) -> dict:
    import model_tools  # discovers plugins from HERMES_HOME
    from hermes_cli.plugins import get_plugin_manager

    (entry,) = [p for p in get_plugin_manager().list_plugins() if p["key"] == PLUGIN]
    out = {"entry": {k: entry.get(k) for k in ("enabled", "error", "source", "tools", "version")}, "calls": []}
    for name, args, session_id in calls:
        raw = model_tools.handle_function_call(name, args, task_id="packaging", session_id=session_id)
        out["calls"].append(json.loads(raw))
    out["hermes_side_imported"] = any(m == "hermes_side" or m.startswith("hermes_side.") for m in sys.modules)
    return out


if __name__ == "__main__":
    result = setup(Path(sys.argv[2])) if sys.argv[1] == "setup" else call(json.loads(sys.argv[2]))
    print("RESULT " + json.dumps(result, ensure_ascii=False))
