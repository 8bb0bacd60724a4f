"""argparse commands for ``hermes recall index | status | consent`` (wired by the plugin).

Each ``setup_*`` fills a subparser; each ``run_*`` takes the parsed args and exits non-zero on
failure. Which sessions belong to which project is not decided here: callers pass
``projects_provider(home) -> {project_key: [session_id, ...]}``.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ..console import EXIT_CONSENT, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, fail
from ..host.profile import current_profile
from . import runlock
from .consent import ALL_PROJECTS, consent_state, read_consent, record_consent, revoke_consent
from .settings import EmbeddingSettings, SettingsError, load_settings

if TYPE_CHECKING:  # the indexer (numpy, the model) is imported when ``index`` runs, not when it is listed
    from .indexer import IndexProgress, IndexStats

ProjectsProvider = Callable[[Path], Mapping[str, Sequence[str]]]

# hermes_side/console.py: error: lines on stderr, 1 failed, 2 command line or setup, 3 consent, 130 interrupted.
EXIT_CONFIG = EXIT_USAGE


def _home(home: Path | None) -> Path:
    return Path(home) if home is not None else current_profile().home


def _profile(profile: str | None) -> str | None:
    """An explicit label (tests); None lets consent use the home's own label (``profile.py``)."""
    return profile or None


def _fail(message: str, code: int) -> NoReturn:
    fail(message, code)


def _stopped(message: str) -> NoReturn:
    """Ctrl-C is the operator's choice, not an error: said plainly, exit 130."""
    print(message, file=sys.stderr)
    sys.exit(EXIT_INTERRUPTED)


def _settings(home: Path) -> EmbeddingSettings:
    try:
        return load_settings(home)
    except SettingsError as exc:
        _fail(f"embedding configuration: {exc}", EXIT_CONFIG)


def _scope(home: Path, projects: Sequence[str] | None, provider: ProjectsProvider | None):
    """(session_ids or None for all, project keys) for the requested projects."""
    if not projects:
        return None, [ALL_PROJECTS]
    if provider is None:
        _fail("--project needs the plugin's project resolver; run without --project to index everything", EXIT_CONFIG)
    mapping = provider(home)
    unknown = [p for p in projects if p not in mapping]
    if unknown:
        known = ", ".join(mapping) or "none"
        _fail(f"no project {', '.join(map(repr, unknown))} in this profile; its projects: {known}", EXIT_CONFIG)
    sessions = sorted({s for p in projects for s in mapping[p]})
    return sessions, list(projects)


# -- index ------------------------------------------------------------------------------------

def setup_index(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project", action="append", metavar="PROJECT",
                        help="index only this project, by slug or id (repeatable); default: every session")
    parser.add_argument("--rebuild", action="store_true",
                        help="drop this model's vectors and embed everything again")


def run_index(args: argparse.Namespace, *, projects_provider: ProjectsProvider | None = None,
              home: Path | None = None, profile: str | None = None) -> None:
    home = _home(home)
    settings = _settings(home)
    if not settings.enabled:
        _fail("semantic search is disabled (plugins.project-history-recall.embedding.enabled: false)", EXIT_CONFIG)
    session_ids, projects = _scope(home, getattr(args, "project", None), projects_provider)
    profile = _profile(profile)
    if consent_state(home, settings, profile, projects) == "required":
        _fail(f"indexing with provider '{settings.provider}' sends conversation text to {settings.endpoint}.\n"
              f"Confirm first: hermes recall consent grant"
              f"{''.join(' --projects ' + p for p in projects if p != ALL_PROJECTS)}", EXIT_CONSENT)
    from .indexer import build_index

    stop = threading.Event()
    with _progress_bar() as update, _stop_on_sigint(stop), ExitStack() as waiting:
        asked = False
        while True:
            stats = build_index(home, settings, session_ids=session_ids, projects=projects, profile=profile,
                                progress=update, stop_event=stop, rebuild=getattr(args, "rebuild", False))
            if stats.status != "busy":
                break
            if not asked:  # from now on a catch-up that starts meanwhile stops after its first batch
                waiting.enter_context(runlock.asking_turn(home))
                asked = True
            _take_over(home, update, stop)
    _report(stats)


CATCH_UP_WAIT = 600.0  # seconds to wait for a background catch-up to stop after its batch


def _take_over(home: Path, update: Callable[[IndexProgress], None], stop: threading.Event) -> None:
    """The lock is held. A background catch-up (asked by ``runlock.asking_turn`` to stop after its
    current batch) is waited for, its progress on the bar; then the caller runs again. Another
    ``hermes recall index`` is not interrupted: the operator is told what runs, since when and how
    far (``error:``, exit 1)."""
    from .indexer import IndexProgress

    run = runlock.current_run(home)
    if run is None:
        return  # it finished between the two looks
    if run.get("kind") != runlock.CATCH_UP:
        _fail(f"{runlock.describe(run)} is indexing this profile; it does this work already. Wait for it to "
              "finish (`hermes recall status` shows it), or stop it and run this again", EXIT_FAILED)
    print(f"{runlock.describe(run).capitalize()} is indexing; it stops after its current batch and this run "
          "goes on from there.", file=sys.stderr)

    def show(holder: dict) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        update(IndexProgress(int(holder.get("done") or 0), holder.get("total"), 0, 0))

    if not runlock.wait_for_turn(home, CATCH_UP_WAIT, show):
        _fail(f"{runlock.describe(runlock.current_run(home))} did not stop within {CATCH_UP_WAIT:.0f}s; "
              "run this again later", EXIT_FAILED)


@contextmanager
def _progress_bar():
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("Embedding messages"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[rate]:.1f} chunks/s"), TimeRemainingColumn())
    with Progress(*columns, transient=False) as bar:
        task = bar.add_task("index", total=None, rate=0.0)

        def update(p: IndexProgress) -> None:
            elapsed = bar.tasks[task].elapsed or 0.0
            rate = p.chunks_embedded / elapsed if elapsed else 0.0
            bar.update(task, completed=p.messages_done, total=p.messages_total, rate=rate)

        yield update


@contextmanager
def _stop_on_sigint(stop: threading.Event):
    """First Ctrl-C finishes the current batch and exits cleanly; a second one aborts (still
    safe: every committed batch is kept and the next run resumes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        print("\nStopping after the current batch... (Ctrl-C again to abort now)", file=sys.stderr)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    except KeyboardInterrupt:
        _stopped("\nAborted. Everything embedded so far is saved; run `hermes recall index` to resume.")
    finally:
        signal.signal(signal.SIGINT, previous)


def _report(stats: IndexStats) -> None:
    summary = (f"{stats.messages_scanned} messages checked, {stats.chunks_embedded} chunks embedded, "
               f"{stats.chunks_skipped} unchanged, {stats.chunks_deleted} removed "
               f"in {stats.seconds:.1f}s ({stats.passages_per_second:.1f} chunks/s)")
    if stats.status in ("done", "limited"):
        print(f"Done: {summary}.")
    elif stats.status == "stopped":
        _stopped(f"Stopped after {summary}. Progress is saved; run `hermes recall index` again to resume.")
    elif stats.status == "consent_required":
        _fail(stats.detail, EXIT_CONSENT)
    elif stats.status == "corrupt":
        _fail(f"the embedding index is damaged: {stats.detail}", EXIT_FAILED)
    else:
        _fail(f"indexing failed: {stats.detail}; finished batches are saved, run again to resume", EXIT_FAILED)


# -- consent ----------------------------------------------------------------------------------

def setup_consent(parser: argparse.ArgumentParser) -> None:
    # Bare `hermes recall consent` shows the state and how to change it (not an argparse error).
    sub = parser.add_subparsers(dest="consent_action", metavar="{show,grant,revoke}")
    sub.add_parser("show", help="show the current consent record")
    grant = sub.add_parser("grant", help="allow sending history to the configured remote provider")
    grant.add_argument("--projects", nargs="+", metavar="PROJECT",
                       help="only these projects, by slug or id (default: all projects)")
    sub.add_parser("revoke", help="withdraw consent; nothing more is sent")


def run_consent(args: argparse.Namespace, *, home: Path | None = None, profile: str | None = None) -> None:
    home = _home(home)
    settings = _settings(home)
    action = args.consent_action
    if action == "revoke":
        print("Consent revoked." if revoke_consent(home) else "There was no consent to revoke.")
        return
    if action == "grant":
        if not settings.remote:
            print("The local model sends nothing off this machine; no consent is needed.")
            return
        record = record_consent(home, settings, _profile(profile), getattr(args, "projects", None) or [ALL_PROJECTS])
        print(f"Consent recorded: history of {', '.join(record['projects'])} (past and new messages) may be sent "
              f"to {record['endpoint']} for model {record['model']}.")
        return
    record = read_consent(home)
    print(f"Provider: {settings.provider} {settings.model}"
          f"{' at ' + str(settings.endpoint) if settings.remote else ' (local, no consent needed)'}")
    print("Consent: none" if record is None else "Consent: " + json.dumps(record, ensure_ascii=False))
    if action is None:
        print("Change it with: hermes recall consent grant [--projects KEY ...] | hermes recall consent revoke")
