"""Builds Hermes fixtures with Hermes' own writers: SessionDB, projects_db, real git repos."""

from __future__ import annotations

import atexit
import json
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

PLUGIN = "project-history-recall"
TOOL_NAMES = ("project_history_search", "project_session_move", "project_history_open")


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


_STATE_TEMPLATE: list[Path] = []


def empty_state_db(dest: Path) -> None:
    """Put an empty state.db, created by Hermes' own SessionDB, at ``dest``.

    Creating the schema takes ~0.2 s; it is created once per process and copied after that.
    """
    if not _STATE_TEMPLATE:
        from hermes_state import SessionDB

        template_dir = tempfile.mkdtemp(prefix="recall-state-template-")
        atexit.register(shutil.rmtree, template_dir, True)
        template = Path(template_dir) / "state.db"
        SessionDB(db_path=template).close()
        _STATE_TEMPLATE.append(template)
    shutil.copyfile(_STATE_TEMPLATE[0], dest)


class World:
    def __init__(self, home: Path, work: Path) -> None:
        from hermes_state import SessionDB

        self.home = Path(home)
        self.work = Path(work)
        self.work.mkdir(parents=True, exist_ok=True)
        if not (self.home / "state.db").exists():
            empty_state_db(self.home / "state.db")
        self.db = SessionDB(db_path=self.home / "state.db")
        self._n = 0

    def close(self) -> None:
        self.db.close()

    # -- places --------------------------------------------------------------------------
    def folder(self, rel: str) -> Path:
        path = self.work / rel
        path.mkdir(parents=True, exist_ok=True)
        return path

    def repo(self, rel: str) -> Path:
        path = self.folder(rel)
        git("init", "-q", "-b", "main", cwd=path)
        (path / "README").write_text("x")
        git("add", ".", cwd=path)
        git("commit", "-q", "-m", "init", cwd=path)
        return path

    def worktree(self, repo: Path, rel: str, branch: str) -> Path:
        path = self.work / rel
        git("worktree", "add", "-q", "-b", branch, str(path), cwd=repo)
        return path

    def project(self, name: str, *folders: Path | str, archived: bool = False) -> str:
        from hermes_cli import projects_db

        conn = projects_db.connect(self.home / "projects.db")
        try:
            paths = [str(f) for f in folders]
            pid = projects_db.create_project(conn, name=name, folders=paths or None,
                                             primary_path=paths[0] if paths else None)
            if archived:
                projects_db.archive_project(conn, pid)
            return pid
        finally:
            conn.close()

    # -- sessions ------------------------------------------------------------------------
    def session(self, *messages: str | tuple[str, str], cwd: Path | str | None = None, source: str = "cli",
                sid: str | None = None, parent: str | None = None, git_root: str | None = None,
                title: str | None = None, ts: float | None = None, **kw: Any) -> str:
        self._n += 1
        sid = sid or f"s{self._n:03d}"
        self.db.create_session(sid, source, cwd=str(cwd) if cwd else None, parent_session_id=parent, **kw)
        if git_root:
            self.db.update_session_cwd(sid, str(cwd), "main", str(git_root))
        if title:
            self.db.set_session_title(sid, title)
        for i, m in enumerate(messages):
            role, text = m if isinstance(m, tuple) else (("user", "assistant")[i % 2], m)
            self.db.append_message(sid, role, text, timestamp=(ts + i) if ts else None)
        return sid

    def turns(self, sid: str, *texts: str, source: str = "cli", cwd: Path | str = "/work/p") -> list[int]:
        """Append ``texts`` (user, assistant, user, …) to session ``sid``, created on first use with
        ``source`` and ``cwd``; their message ids. For tests that need ids more than places."""
        if self.db.get_session(sid) is None:
            self.db.create_session(sid, source, cwd=str(cwd))
        return [self.db.append_message(sid, ("user", "assistant")[i % 2], t) for i, t in enumerate(texts)]

    def compress(self, parent: str, *messages: str | tuple[str, str], sid: str | None = None) -> str:
        """Rotate ``parent`` the way Hermes' non-in-place compression does: the parent ends with
        ``compression`` and a child is created with ``parent_session_id`` and NO cwd or git columns."""
        self.db.end_session(parent, "compression")
        return self.session(*messages, sid=sid, parent=parent)

    def messages(self, sid: str) -> list[dict[str, Any]]:
        return self.db.get_messages(sid)


def load_plugin(home: Path, *, enable: bool = True):
    """Enable the plugin in the profile's config.yaml and run Hermes' plugin discovery."""
    import hermes_cli.plugins as plugins

    cfg = {"plugins": {"enabled": [PLUGIN] if enable else []}}
    (Path(home) / "config.yaml").write_text(json.dumps(cfg))  # JSON is valid YAML
    unload_plugin()
    plugins.discover_plugins(force=True)
    _discovered[:] = [_discovery_inputs(home), plugins.get_plugin_manager()]
    return plugins.get_plugin_manager()


# What the last discovery read, and the manager it made (see ``plugin_in``).
_discovered: list[Any] = []


def _discovery_inputs(home: Path) -> tuple[Any, ...]:
    """Everything Hermes' plugin discovery reads that a test can change: the profile's config.yaml,
    its plugins folder, the HERMES_* variables and the working folder (project plugins)."""
    import os

    home = Path(home)
    config = home / "config.yaml"
    folder = home / "plugins"
    listing = tuple(sorted((str(f.relative_to(folder)), f.stat().st_mtime_ns, f.stat().st_size)
                           for f in folder.rglob("*"))) if folder.is_dir() else ()
    env = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("HERMES_") and k != "HERMES_HOME"))
    return (config.read_bytes() if config.exists() else b"", listing, env, os.getcwd())


def plugin_in(home: Path):
    """The plugin loaded by Hermes' own discovery for a test's home (the fixtures' way).

    A forced discovery re-runs every bundled backend module (Hermes' dashboard password plugin
    alone hashes with scrypt at import: ~35 ms), ~60 ms a test. Our plugin's registration does not
    depend on the home (``register`` only declares tools, hooks and a command; everything reads
    HERMES_HOME when called), so when this home gives discovery the very inputs the last one read,
    and that discovery's manager and our tools are still Hermes' current ones, it is reused —
    the same objects one Hermes process keeps for its life. Anything else discovers afresh.
    Tests about loading itself call ``load_plugin``, which always discovers."""
    import hermes_cli.plugins as plugins
    from tools.registry import registry

    cfg = {"plugins": {"enabled": [PLUGIN]}}
    (Path(home) / "config.yaml").write_text(json.dumps(cfg))  # JSON is valid YAML
    if (_discovered and _discovered[0] == _discovery_inputs(home)
            and plugins._plugin_manager is _discovered[1]
            and all(registry.get_entry(name) is not None for name in TOOL_NAMES)):
        return _discovered[1]
    return load_plugin(home)


@contextmanager
def shared_world(root: Path) -> Iterator[World]:
    """A World with the plugin loaded that outlives one test (class/module fixtures).

    For tests that only read what the fixture built: building a Hermes home and loading the
    plugin once per class keeps the suite fast. Restores HERMES_HOME and unloads on exit.
    """
    home = Path(root) / "hermes-home"
    home.mkdir(parents=True)
    with _loaded(World(home, Path(root) / "work")) as world:
        yield world


@contextmanager
def template_world(root: Path) -> Iterator[World]:
    """A World a module builds once (its fixture's body) for tests that each write to their own
    copy of it (``copied_world``): what is expensive to build (an index, many messages) is built
    once, and no test sees another's writes. HERMES_HOME points at it while it is built; its
    files are closed on exit, so each copy is whole."""
    import pytest

    mp = pytest.MonkeyPatch()
    home = Path(root) / "hermes-home"
    home.mkdir(parents=True)
    mp.setenv("HERMES_HOME", str(home))
    world = World(home, Path(root) / "work")
    try:
        yield world
    finally:
        world.close()
        _drop_cached_indexes()
        mp.undo()


@contextmanager
def copied_world(template: World, root: Path) -> Iterator[World]:
    """A copy of ``template``'s home (``template_world``) under ``root``, with the plugin loaded, for
    one test: its work folders are the template's (projects.db names them), and what the template's
    builder set on it (session ids, folders) is set on the copy too. Undone on exit."""
    home = Path(root) / "hermes-home"
    shutil.copytree(template.home, home)
    world = World(home, template.work)
    world.__dict__.update({k: v for k, v in vars(template).items() if k not in ("home", "work", "db")})
    with _loaded(world) as world:
        yield world


@contextmanager
def _loaded(world: World) -> Iterator[World]:
    """``world`` with HERMES_HOME pointing at it and the plugin loaded; undone and closed on exit."""
    import pytest

    mp = pytest.MonkeyPatch()
    mp.setenv("HERMES_HOME", str(world.home))
    try:
        plugin_in(world.home)
        yield world
    finally:
        world.close()
        mp.undo()


def _drop_cached_indexes() -> None:
    """Close the embedding indexes this process holds open (a template's, before it is copied)."""
    import sys

    if "hermes_side.embedding.vectors" in sys.modules:
        sys.modules["hermes_side.embedding.vectors"].drop_indexes()


def unload_plugin() -> None:
    import hermes_cli.plugins as plugins
    from tools.registry import registry

    for name in TOOL_NAMES:
        registry.deregister(name)
    plugins._plugin_manager = None


def indexed_ids(home: Path) -> set[int]:
    """The message ids that have vectors in the profile's embeddings.db (what a forget must clear)."""
    conn = sqlite3.connect(Path(home) / "project-history-recall" / "embeddings.db")
    try:
        return {r[0] for r in conn.execute("SELECT message_id FROM chunks")}
    finally:
        conn.close()


def call_tool_raw(name: str, args: Any, session_id: str | None) -> str:
    """Dispatch through Hermes' full tool pipeline, as the agent loop does; the raw tool output."""
    import model_tools

    return model_tools.handle_function_call(name, args, task_id="test-task", session_id=session_id)


def call_tool(name: str, args: dict[str, Any], session_id: str | None) -> dict[str, Any]:
    return json.loads(call_tool_raw(name, args, session_id))
