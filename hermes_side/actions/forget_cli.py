"""``hermes recall forget`` — the operator takes history out of recall, any scope of the profile.

Without ``--apply`` a dry run: what would be forgotten (counts, conversations, dates; no content).
``--log`` prints the audit trail.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
import time
from datetime import tzinfo
from typing import Any

from ..host import clock
from ..host.profile import current_profile
from ..scope.chats import parse_chat
from ..search.reader import SearchError, reader_for
from ..search.request import RequestError, parse_time
from ..search.results import format_when
from ..stores import forgotten, hermes_db
from . import forget
from .refs import project_ids, session_missing


def setup_forget(p: argparse.ArgumentParser) -> None:
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--session", help="forget a whole conversation (this session and its lineage)")
    what.add_argument("--project", help="forget a project's turns in a time span (with --before/--after); "
                                        "its name as `status` prints it, slug or id")
    what.add_argument("--chat", help="with --user: forget one member's turns in a group, e.g. onebotv11:12345")
    what.add_argument("--log", action="store_true", help="list who forgot what scope when (no content)")
    p.add_argument("--user", help="the member's platform id (with --chat)")
    p.add_argument("--after", help="ISO date or span like 7d")
    p.add_argument("--before", help="ISO date or span like 7d")
    p.add_argument("--apply", action="store_true", help="really forget (without it: a dry run)")
    p.add_argument("--json", action="store_true", help="print the result object")


def _when(ts: float | None, zone: tzinfo | None) -> str:
    return format_when(ts, zone) or "-"  # the profile's calendar; "-" for none or one no calendar holds


def render(result: dict[str, Any], zone: tzinfo | None = None) -> str:
    head = (f"Forgot {result['messages']} turn(s), receipt {result['receipt']}" if result["applied"]
            else f"Dry run: would forget {result['messages']} turn(s) (add --apply to do it)")
    lines = [head,
             f"  {result['user_turns']} user turn(s), {result['replies']} agent turn(s), "
             f"{result['sessions']} conversation(s), {_when(result['first'], zone)} … {_when(result['last'], zone)}"]
    if result.get("copies"):
        lines.append(f"  of them {result['copies']} copies Hermes keeps of the same turns (compaction, branches)")
    lines += [f"  {sid}" for sid in result["session_ids"][:20]]
    if len(result["session_ids"]) > 20:
        lines.append(f"  … and {len(result['session_ids']) - 20} more")
    if result.get("index"):
        lines.append(f"  index: {result['index']['vectors_deleted']} vector(s) deleted")
    lines.append(result["note"])
    return "\n".join(lines)


def render_log(rows: list[dict[str, Any]], zone: tzinfo | None = None) -> str:
    if not rows:
        return "Nothing was forgotten in this profile."
    out = []
    for r in rows:
        scope = " ".join(f"{k}={v}" for k, v in sorted(r["scope"].items()))
        out.append(f"{_when(r['at'], zone)}  {r['receipt']}  {r['action']:<10} by {r['actor']} ({r['surface']})"
                   f"  {scope}"
                   f"  · {r['user_turns']} user + {r['replies']} agent turn(s) in {r['sessions']} conversation(s)"
                   + ("  · not finished: their vectors are still indexed until the next forget, index run or"
                      " server start" if r.get("index_pending") else ""))
    return "\n".join(out)


def _plan(args: argparse.Namespace, zone: tzinfo | None) -> forget.Plan:
    home = current_profile().home
    now = time.time()
    after, before = parse_time(args.after, "after", now, zone), parse_time(args.before, "before", now, zone)
    if after is not None and before is not None and after >= before:
        raise RequestError("--after must be earlier than --before")
    if args.session:
        if args.user or after is not None or before is not None:
            raise RequestError("--session takes the whole conversation: no --user, --after or --before")
        if args.session not in reader_for(home).scope_map().rows:
            raise RequestError(session_missing(args.session))
        return forget.plan_session(home, args.session)
    if args.project:
        if args.user:
            raise RequestError("--user goes with --chat")
        (project,) = project_ids(home, [args.project])  # the one lookup and error of every command
        return forget.plan_project(home, project, after=after, before=before)
    chat = parse_chat(args.chat or "")
    if chat is None:
        raise RequestError("--chat must look like onebotv11:12345")
    if not args.user:
        raise RequestError("--chat needs --user (a member's id); to forget a whole group use --session or --project")
    return forget.plan_member(home, chat, args.user, after=after, before=before)


def run_forget(args: argparse.Namespace) -> None:
    home = current_profile().home
    zone = clock.zone(home)  # dates read and times shown on the profile's calendar
    try:
        if args.log:
            rows = forgotten.audit_log(home)
            print(json.dumps(rows, ensure_ascii=False, indent=2) if args.json else render_log(rows, zone))
            return
        plan = _plan(args, zone)
        result = (forget.apply(home, plan, actor=f"operator:{getpass.getuser()}", surface="cli")
                  if args.apply else forget.dry_run(plan))
    except (RequestError, SearchError, hermes_db.Unavailable) as exc:
        print(f"error: {exc}{'; ' + exc.recovery if hasattr(exc, 'recovery') else ''}", file=sys.stderr)
        sys.exit(1 if exc.code in ("unavailable", "busy") else 2)  # the work failed, or the request was wrong
    print(json.dumps(result, ensure_ascii=False, indent=2) if args.json else render(result, zone))
