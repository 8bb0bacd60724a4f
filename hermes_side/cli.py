"""``hermes recall …`` — operator commands (also ``python -m hermes_side …``)."""

from __future__ import annotations

import argparse
import functools
import json
import logging
import sqlite3
import sys
from pathlib import Path
from typing import Any

from .actions.refs import project_ids, session_missing
from .console import EXIT_FAILED, EXIT_USAGE, fail, int_in, note, warning
from .errors import RecallError
from .host import clock, deps
from .host.profile import current_profile
from .search.engine import SearchError, engine_for
from .search.request import DEFAULT_MODE, MAX_LIMIT, MIN_LIMIT, MODES, parse_search_args
from .search.results import render_search, search_notes

# Error codes that mean recall could not do its work (exit 1), not that the request was wrong (exit 2).
FAILURES = frozenset({"unavailable", "internal", "busy", "backend_unsupported", "config_unreadable"})


def _home() -> Path:
    return current_profile().home


def _setup_search(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", nargs="+", help="what to look for (keywords or a question)")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--project", help="the project to search in: its name as `status` prints it, slug or id")
    where.add_argument("--session", help="search the project of this session (excluding it)")
    p.add_argument("--mode", choices=MODES, default=DEFAULT_MODE,
                   help="hybrid: keywords and meaning together (default); keyword: exact words only; "
                        "semantic: meaning only (needs the index: hermes recall index)")
    p.add_argument("--limit", type=int_in(MIN_LIMIT, MAX_LIMIT, "a whole number"), default=5,
                   metavar=f"{MIN_LIMIT}-{MAX_LIMIT}", help="how many conversations to show (default: 5); "
                                                            "refused outside the range, as in the chat")
    p.add_argument("--after", help="only messages after this: a date (2026-11-01, 2026-11-01T14:30) or a span "
                                   "back from now (24h, 7d, 2w, 3m)")
    p.add_argument("--before", help="only messages before this, same forms as --after")
    p.add_argument("--json", action="store_true", help="print the raw result object")


def _run_search(args: argparse.Namespace) -> None:
    try:
        req = parse_search_args({"query": " ".join(args.query), "mode": args.mode, "limit": args.limit,
                                 "after": args.after, "before": args.before}, zone=clock.zone(_home()))
        engine = engine_for(_home())
        if args.session and args.session not in engine.scope_map().rows:
            fail(session_missing(args.session))
        project = project_ids(_home(), [args.project])[0] if args.project else None
        result = engine.search(req, project=project, session_id=args.session)
    except RecallError as exc:  # the request cannot be answered as asked (2), or recall itself failed (1)
        fail(file_error(exc), EXIT_FAILED if exc.code in FAILURES else EXIT_USAGE)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return
    for line in search_notes(result):
        note(line)
    print(render_search(result, notes=False))


def _setup_bindings(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the links as JSON")


def bindings_view(home: Path) -> list[dict[str, Any]]:
    """Every chat → project link of the profile, with the project's name and slug."""
    from .actions import chat_service
    from .stores import bindings, hermes_db

    projects = hermes_db.load_projects(home)
    rows = []
    for row in bindings.all_bindings(home):
        try:
            conversations: int | None = len(chat_service.sessions_of_chat(home, row["chat"]))
        except SearchError:  # no state.db yet: the links are still worth listing
            conversations = None
        found = hermes_db.find_project(projects, row["project_id"]) if row["project_id"] else None
        project = None
        if row["state"] == "bound":
            project = {"id": row["project_id"], "slug": (found or {}).get("slug"),
                       "name": (found or {}).get("name"), "missing": found is None or bool(found.get("archived"))}
        rows.append({"chat": row["chat"], "state": row["state"], "project": project,
                     "sessions": conversations, "updated_at": row["updated_at"]})
    return rows


def render_bindings(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No chat is linked to a project yet (link one with /move in the chat)."
    lines = []
    for row in rows:
        project = row["project"]
        if project is None:
            where = "Home (unlinked)"
        else:
            where = f"{project['name'] or project['id']} ({project['slug'] or project['id']})"
            where += "  [project missing or archived]" if project["missing"] else ""
        count = "?" if row["sessions"] is None else row["sessions"]
        lines.append(f"{row['chat']}  →  {where}  · {count} conversation(s)")
    return "\n".join(lines)


def _run_bindings(args: argparse.Namespace) -> None:
    rows = bindings_view(_home())
    print(json.dumps(rows, ensure_ascii=False, indent=2) if args.json else render_bindings(rows))


SUBCOMMANDS: dict[str, tuple[str, Any, Any]] = {
    "search": ("search a project's history", _setup_search, _run_search),
    "bindings": ("list every chat group → project link", _setup_bindings, _run_bindings),
}


def _projects_provider(home: Path) -> dict[str, list[str]]:
    """Project → session ids, by the same attribution the searches use."""
    from .actions.status import project_sessions

    return {pid: info["session_ids"] for pid, info in project_sessions(home).items()}


def _run_consent(args: argparse.Namespace) -> None:
    from .embedding import cli as emb_cli

    if getattr(args, "projects", None):
        args.projects = project_ids(_home(), args.projects)
    emb_cli.run_consent(args)


def _run_index(args: argparse.Namespace) -> None:
    from .embedding import cli as emb_cli

    args.project = project_ids(_home(), getattr(args, "project", None))
    emb_cli.run_index(args, projects_provider=_projects_provider)


def _register_optional() -> None:
    """Subcommands whose modules carry heavier imports register here, when ``hermes recall`` runs.

    Without numpy (a directory install into a stock Hermes) the embedding commands are replaced by
    stand-ins that say what is missing and how to install it; ``status`` still reports the projects.
    """
    gap = deps.missing(deps.EMBEDDING)
    if gap is None:
        from .embedding import cli as emb_cli

        SUBCOMMANDS["index"] = ("build or update the embedding index", emb_cli.setup_index, _run_index)
        SUBCOMMANDS["consent"] = ("show, grant or revoke consent for a remote embedding provider",
                                  emb_cli.setup_consent, _run_consent)
    else:
        SUBCOMMANDS["index"] = ("build or update the embedding index (needs numpy)", _setup_nothing, _needs_embedding)
        SUBCOMMANDS["consent"] = ("consent for a remote embedding provider (needs numpy)", _setup_nothing,
                                  _needs_embedding)
    from .actions import status

    # The same object GET /status returns (it says itself when semantic search is missing); the
    # notes add what only the operator's terminal may see: the install command, Hermes' version.
    SUBCOMMANDS["status"] = ("per-project messages, index and consent status", status.setup_status,
                             _with_notes(status.run_status))
    from .actions import forget_cli

    SUBCOMMANDS["forget"] = ("take a session, a span or a member's turns out of recall (dry run without --apply)",
                             forget_cli.setup_forget, forget_cli.run_forget)
    from .actions import repair

    SUBCOMMANDS["repair"] = ("what is wrong with recall's own files, and put a damaged or missing store back in "
                             "service (dry run without --apply)", repair.setup_repair, repair.run_repair)
    from . import demo

    SUBCOMMANDS["demo"] = ("index and search this profile (or a demo history) with the local model",
                           demo.setup_demo, functools.partial(demo.run_demo, commands=SUBCOMMANDS))
    from .api import serve as api_cli

    SUBCOMMANDS["serve"] = ("serve the recall API for chat groups", api_cli.setup_serve, api_cli.run_serve)


def _setup_nothing(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def _needs_embedding(args: argparse.Namespace) -> None:
    fail(deps.missing(deps.SEMANTIC).message(f"hermes recall {args.recall_command}"), EXIT_USAGE)


def _with_notes(run: Any) -> Any:
    """Status first says (on stderr, so ``--json`` stays parseable) what keeps features off and the
    command that installs what is missing."""

    def run_with_notes(args: argparse.Namespace) -> None:
        problem = deps.hermes_version_problem()
        if problem:
            warning(problem)
        off = deps.features_off_note()
        if off and getattr(args, "json", False):  # the text output lists it under "Next:"
            warning(off)
        run(args)

    return run_with_notes


def setup_recall_command(parser: argparse.ArgumentParser) -> None:
    _register_optional()
    sub = parser.add_subparsers(dest="recall_command", metavar="COMMAND")
    for name, (help_text, setup, run) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text)
        setup(p)
        p.set_defaults(recall_func=run)


def run_recall_command(args: argparse.Namespace) -> None:
    func = getattr(args, "recall_func", None)
    if func is None:
        print("usage: hermes recall {" + ",".join(SUBCOMMANDS) + "} ...", file=sys.stderr)
        sys.exit(2)
    # A full disk: Hermes' own log file cannot be written either, and the logging module would print
    # a traceback over the answer for every line; the command's own error: line says what is wrong.
    logging.raiseExceptions = False
    try:
        func(args)
    except BrokenPipeError:  # `hermes recall … | head`: the reader left, nothing to say
        raise
    except (RecallError, sqlite3.Error, OSError) as exc:
        wrong_request = isinstance(exc, RecallError) and exc.code not in FAILURES
        fail(file_error(exc), EXIT_USAGE if wrong_request else EXIT_FAILED)


def file_error(exc: BaseException) -> str:
    """A known fault that reached the top of a command: the file, the cause and the fix, on one
    ``error:`` line (exit 1) — never a traceback. Commands answer their own errors first."""
    from .stores import faults

    if isinstance(exc, TimeoutError):
        return f"{exc}; try again in a moment"
    if not isinstance(exc, RecallError):
        exc = faults.unattributed(exc, _home())
    recovery = getattr(exc, "recovery", "")
    return f"{exc}; {recovery}" if recovery else str(exc)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m hermes_side")
    setup_recall_command(parser)
    run_recall_command(parser.parse_args(argv))
