"""Hermes' own plugin loader finds, enables and dispatches the plugin — both ways it is shipped.

(a) the pip entry point ``hermes_agent.plugins: project-history-recall = hermes_side``;
(b) the package directory copied to ``$HERMES_HOME/plugins/project-history-recall/`` with plugin.yaml.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from pathlib import Path

import pytest

import hermes_side
from tests import yamlio as yaml
from tests.hermes.world import PLUGIN, TOOL_NAMES, call_tool, call_tool_raw, load_plugin, unload_plugin

PACKAGE_DIR = Path(hermes_side.__file__).parent


def our_entry(manager) -> dict:
    (entry,) = [p for p in manager.list_plugins() if p["key"] == PLUGIN]
    return entry


def exercise_both_tools(world) -> None:
    """Search and move through Hermes' dispatch; both must answer from the plugin."""
    a, b = world.folder("a"), world.folder("b")
    world.project("A", a)
    pid_b = world.project("B", b)
    past = world.session("kestrel decision", cwd=a)
    cur = world.session("hello", cwd=a)

    found = call_tool("project_history_search", {"query": "kestrel", "mode": "keyword"}, cur)
    assert found["success"] is True and [r["session_id"] for r in found["results"]] == [past]

    moved = call_tool("project_session_move", {"project_id": pid_b}, cur)
    assert moved["success"] is True and world.db.get_session(cur)["cwd"] == str(b)


def socket_fds() -> int:
    fd_dir = Path("/proc/self/fd")
    if not fd_dir.is_dir():
        pytest.skip("needs /proc to count sockets")
    count = 0
    for fd in fd_dir.iterdir():
        try:
            count += os.readlink(fd).startswith("socket:")
        except OSError:
            continue
    return count


class TestEntryPoint:
    def test_listed_enabled_without_error(self, loaded_plugin):
        entry = our_entry(loaded_plugin)
        assert entry["enabled"] is True and entry["error"] is None
        assert entry["source"] == "entrypoint" and entry["kind"] == "standalone"
        assert entry["tools"] == len(TOOL_NAMES)

    def test_both_tools_registered_in_the_plugin_toolset(self, loaded_plugin):
        from tools.registry import registry

        for name in TOOL_NAMES:
            entry = registry.get_entry(name)
            assert entry is not None, name
            assert entry.toolset == "project_history"
            assert entry.handler.__module__.startswith("hermes_side.")

    def test_both_tools_dispatch(self, world, loaded_plugin):
        exercise_both_tools(world)

    @pytest.mark.parametrize("platform", ["cli", "api_server", "telegram"])
    def test_offered_to_the_model_by_default(self, loaded_plugin, platform):
        import model_tools
        from hermes_cli.config import load_config
        from hermes_cli.tools_config import _get_platform_tools

        toolsets = _get_platform_tools(load_config(), platform)
        assert "project_history" in toolsets  # no `hermes tools` opt-in needed

        # The toolset's tools, before Tool Search (0.22+) folds them into its catalog: how the model
        # reaches them there is tests/hermes/test_tool_search.py.
        import inspect

        raw = {"skip_tool_search_assembly": True} if "skip_tool_search_assembly" in inspect.signature(
            model_tools.get_tool_definitions).parameters else {}
        offered = model_tools.get_tool_definitions(enabled_toolsets=["project_history"], quiet_mode=True, **raw)
        assert sorted(d["function"]["name"] for d in offered) == sorted(TOOL_NAMES)

    def test_schemas_are_the_seeds(self, loaded_plugin):
        from tools.registry import registry

        search = registry.get_schema("project_history_search")["parameters"]
        assert search["required"] == ["query"]
        assert search["properties"]["mode"]["enum"] == ["hybrid", "keyword", "semantic"]
        assert search["properties"]["mode"]["default"] == "hybrid"
        assert search["properties"]["limit"]["type"] == "integer"
        assert search["properties"]["limit"]["default"] == 3
        move = registry.get_schema("project_session_move")["parameters"]
        assert move["required"] == ["project_id"] and move["properties"]["project_id"]["type"] == "string"


class TestUserPluginDirectory:
    @pytest.fixture
    def user_dir_plugin(self, world, monkeypatch):
        import hermes_cli.plugins as plugins

        target = world.home / "plugins" / PLUGIN
        shutil.copytree(PACKAGE_DIR, target, ignore=shutil.ignore_patterns("__pycache__"))
        # The editable install also exposes the same plugin as a pip entry point; entry points are
        # scanned last and the later source wins on a key collision, so with both present Hermes
        # would load hermes_side from the entry point and prove nothing about the directory copy.
        monkeypatch.setattr(plugins.PluginManager, "_scan_entry_points", lambda self: [])
        manager = load_plugin(world.home)
        yield manager
        unload_plugin()
        for name in [m for m in sys.modules if m.startswith("hermes_plugins.project_history_recall")]:
            del sys.modules[name]

    def test_listed_enabled_from_the_user_dir(self, user_dir_plugin):
        entry = our_entry(user_dir_plugin)
        assert entry["enabled"] is True and entry["error"] is None
        assert entry["source"] == "user"
        assert entry["kind"] == "standalone" and entry["version"] == "0.1.0"
        assert entry["tools"] == len(TOOL_NAMES)

    def test_handlers_come_from_the_copied_directory(self, user_dir_plugin, world):
        from tools.registry import registry

        for name in TOOL_NAMES:
            handler = registry.get_entry(name).handler
            assert handler.__module__.startswith("hermes_plugins.project_history_recall")
            assert Path(sys.modules[handler.__module__].__file__).is_relative_to(world.home / "plugins")

    def test_both_tools_dispatch(self, user_dir_plugin, world):
        exercise_both_tools(world)

    def test_with_both_sources_status_names_both_versions_and_the_copy_hermes_loads(self, world, capsys):
        """Why the fixture above hides the entry point: with both copies Hermes loads one, and
        which one changed (0.19: the entry point, scanned last, wins; 0.22: the directory copy is
        kept). Detected from what Hermes really loaded; status must say the same and warn."""
        from tools.registry import registry

        from hermes_side.cli import main

        shutil.copytree(PACKAGE_DIR, world.home / "plugins" / PLUGIN, ignore=shutil.ignore_patterns("__pycache__"))
        try:
            entry = our_entry(load_plugin(world.home))
            assert entry["enabled"] is True and entry["source"] in ("entrypoint", "user")
            from_directory = entry["source"] == "user"
            handler = registry.get_entry("project_history_search").handler
            assert handler.__module__.startswith("hermes_plugins.project_history_recall") is from_directory
            main(["status"])
            out = capsys.readouterr().err
            version = hermes_side.__version__
            assert (f"warning: two copies of {PLUGIN} are installed: a directory copy (version {version}) in "
                    f"$HERMES_HOME/plugins/{PLUGIN} and a pip install (version ") in out
            loaded = "the directory copy, so the pip install" if from_directory else "the pip install, so the directory"
            assert f"Hermes loads {loaded}" in out
        finally:
            unload_plugin()
            for name in [m for m in sys.modules if m.startswith("hermes_plugins.project_history_recall")]:
                del sys.modules[name]

    def test_one_copy_gives_no_install_warning(self, world, capsys):
        from hermes_side.cli import main

        try:
            load_plugin(world.home)
            main(["status"])
            assert "copies of" not in capsys.readouterr().err
        finally:
            unload_plugin()


class TestOptIn:
    def test_not_enabled_means_not_loaded_and_no_tools(self, world):
        from tools.registry import registry

        try:
            manager = load_plugin(world.home, enable=False)
            entry = our_entry(manager)
            assert entry["enabled"] is False and "not enabled" in entry["error"]
            assert all(registry.get_entry(name) is None for name in TOOL_NAMES)
            raw = call_tool_raw("project_history_search", {"query": "kestrel"}, "s001")
            assert "Unknown tool" in raw
        finally:
            unload_plugin()

    def test_disabled_wins_over_enabled(self, world):
        import json

        import hermes_cli.plugins as plugins
        from tools.registry import registry

        (world.home / "config.yaml").write_text(json.dumps({"plugins": {"enabled": [PLUGIN], "disabled": [PLUGIN]}}))
        unload_plugin()
        try:
            plugins.discover_plugins(force=True)
            assert our_entry(plugins.get_plugin_manager())["enabled"] is False
            assert registry.get_entry("project_history_search") is None
        finally:
            unload_plugin()


class TestManifestAndRegister:
    def test_plugin_yaml_declares_a_standalone_plugin_and_its_tools(self):
        manifest = yaml.safe_load((PACKAGE_DIR / "plugin.yaml").read_text(encoding="utf-8"))
        assert manifest["name"] == PLUGIN
        assert manifest["kind"] == "standalone"
        assert set(manifest["provides_tools"]) == set(TOOL_NAMES)

    def test_plugin_yaml_ships_with_the_package(self):
        from importlib.resources import files

        assert (files("hermes_side") / "plugin.yaml").is_file()

    def test_loading_starts_no_thread_and_opens_no_socket(self, world):
        threads_before = {t.ident for t in threading.enumerate()}
        sockets_before = socket_fds()
        try:
            manager = load_plugin(world.home)
            assert our_entry(manager)["enabled"] is True
            new_threads = [t.name for t in threading.enumerate() if t.ident not in threads_before]
            assert new_threads == []
            assert socket_fds() <= sockets_before
        finally:
            unload_plugin()

    def test_register_only_declares(self):
        """register(ctx) called directly: tools and a CLI command declared, no thread started."""

        class Ctx:
            def __init__(self):
                self.tools, self.hooks, self.commands = [], [], []

            def register_tool(self, **kw):
                self.tools.append(kw)

            def register_hook(self, name, cb):
                self.hooks.append(name)

            def register_cli_command(self, name, *args, **kw):
                self.commands.append(name)

        ctx = Ctx()
        before = threading.active_count()

        hermes_side.register(ctx)

        assert threading.active_count() == before
        assert sorted(t["name"] for t in ctx.tools) == sorted(TOOL_NAMES)
        assert all(t["toolset"] == "project_history" and callable(t["check_fn"]) for t in ctx.tools)
        assert ctx.commands == ["recall"]


def test_loads_and_searches_without_pyyaml_where_hermes_does_not_ship_it(tmp_path):
    """Hermes 0.22 brings ruamel.yaml (its ``hermes_yaml`` reader), not PyYAML; the plugin once
    imported PyYAML and failed to load there. A test venv may still hold PyYAML through a test
    dependency, so the process below hides it, loads the plugin with Hermes' own loader and searches.
    (On 0.19 Hermes itself reads config.yaml with PyYAML: nothing to hide there.)"""
    import importlib.util
    import json
    import subprocess

    if importlib.util.find_spec("hermes_yaml") is None:
        pytest.skip("this Hermes reads its own config with PyYAML")
    driver = Path(__file__).parents[1] / "packaging" / "hermes_driver.py"
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(json.dumps({"plugins": {"enabled": [PLUGIN]}}))
    env = {**os.environ, "HERMES_HOME": str(home)}
    hide = ("import runpy, sys; sys.modules['yaml'] = None; sys.argv = sys.argv[1:]; "
            "runpy.run_path(sys.argv[0], run_name='__main__')")

    def drive(*args: str) -> dict:
        proc = subprocess.run([sys.executable, "-c", hide, str(driver), *args], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-3000:]
        return json.loads(lines[-1].removeprefix("RESULT "))

    ids = drive("setup", str(tmp_path / "work"))
    call = ["project_history_search", {"query": "kestrel", "mode": "keyword"}, ids["current"]]
    out = drive("call", json.dumps([call]))
    assert out["entry"]["enabled"] is True and out["entry"]["error"] is None, out["entry"]
    assert [r["session_id"] for r in out["calls"][0]["results"]] == [ids["past"]]
