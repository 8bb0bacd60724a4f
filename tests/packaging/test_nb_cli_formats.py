"""The registration lines of README.md and the store page, applied the way they say to a bot
project of each nb-cli format, then ``nb run`` (nb-cli 1.7.4, the real one) starts the bot with the
plugin loaded.

nb-cli knows two formats of ``[tool.nonebot]``: the table ``[tool.nonebot.plugins]`` that nb-cli
1.x's ``nb create`` writes, and the older ``plugins = [...]`` list. Issue 38: the README gave only
the table; written into an older project it makes ``nb run`` fail (a duplicate ``plugins`` key, or
``ProjectInvalidError: Invalid project config format`` when the two formats mix). ``nb
upgrade-format`` needs the store's plugin list from the network, so the list is appended to by hand.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from tests.packaging.test_nonebot_wheel import install, requires_dist
from tests.packaging.venvs import REPO_ROOT, build_wheel, clean_env, python, venv

pytestmark = pytest.mark.packaging

READMES = ("README.md", "packaging/nonebot/README.md")
MODULE = "nonebot_plugin_history_recall"
ONEBOT = '{ name = "OneBot V11", module_name = "nonebot.adapters.onebot.v11" }'
# What `nb create` of nb-cli 1.7 writes (nb_cli/template/project/simple/…/pyproject.toml).
TABLE_PROJECT = f"""\
[project]
name = "bot"
version = "0.1.0"

[tool.nonebot]
plugin_dirs = []
builtin_plugins = []

[tool.nonebot.adapters]
nonebot-adapter-onebot = [
    {ONEBOT}
]
"@local" = []

[tool.nonebot.plugins]
"@local" = []
"""
# The older format nb-cli still reads (LegacyConfigPolicy): lists under [tool.nonebot].
LIST_PROJECT = f"""\
[project]
name = "bot"
version = "0.1.0"

[tool.nonebot]
adapters = [
    {ONEBOT}
]
plugins = []
plugin_dirs = []
builtin_plugins = ["echo"]
"""


@pytest.fixture(scope="module")
def nb_venv(tmp_path_factory) -> Path:
    """nb-cli 1.7.4 with a bot's packages and this build of the plugin (no network needed by `nb run`)."""
    wheel = build_wheel(REPO_ROOT / "packaging" / "nonebot", tmp_path_factory.mktemp("nb-wheel"))
    path = venv("nb-cli-bot", ["nb-cli==1.7.4", *requires_dist(wheel), "nonebot2[fastapi]", "nonebot-adapter-onebot"])
    install(path, wheel)
    return path


def toml_blocks(readme: str) -> list[str]:
    """The ```toml blocks, dedented (in a list item a block is indented with it)."""
    text = (REPO_ROOT / readme).read_text(encoding="utf-8")
    return [textwrap.dedent(b) for b in re.findall(r"```toml\n(.*?)^\s*```", text, re.S | re.M)]


def table_lines(readme: str) -> list[str]:
    """The README's lines for the table format: the entries of its [tool.nonebot.plugins] block."""
    (block,) = [b for b in toml_blocks(readme) if b.lstrip().startswith("[tool.nonebot.plugins]") and MODULE in b]
    return [line.strip() for line in block.splitlines()[1:] if line.strip()]


def list_modules(readme: str) -> list[str]:
    """The README's line for the list format: the modules of its `plugins = [...]` under [tool.nonebot]."""
    blocks = [b for b in toml_blocks(readme) if b.lstrip().startswith("[tool.nonebot]\n")
              and re.search(r"^plugins = \[", b, re.M)]
    assert blocks, f"{readme} has no line for a project in the plugins = [...] format"
    return re.findall(r'"([\w.]+)"', re.search(r"^plugins = \[(.*?)\]", blocks[0], re.M).group(1))


def add_to_table(project: str, lines: list[str]) -> str:
    """What the README asks: its lines under the project's own [tool.nonebot.plugins] table."""
    return project.replace("[tool.nonebot.plugins]\n", "[tool.nonebot.plugins]\n" + "\n".join(lines) + "\n", 1)


def add_to_list(project: str, modules: list[str]) -> str:
    """What the README asks: the module appended to the project's own `plugins = [...]` list."""
    match = re.search(r"^plugins = \[(.*?)\]$", project, re.M)
    kept = [m for m in re.findall(r'"([^"]+)"', match.group(1))]
    return project[:match.start()] + f"plugins = {[*kept, *modules]!r}".replace("'", '"') + project[match.end():]


def nb_run(venv_path: Path, project: Path, timeout: float = 120) -> tuple[bool, str]:
    """``nb run`` in ``project`` until the plugin loads (True) or the run ends (False); the run and
    the bot it starts are stopped by their process group, which this test started."""
    env = clean_env() | {"DRIVER": "~fastapi", "HOST": "127.0.0.1", "PORT": str(_free_port()), "ENVIRONMENT": "nbcli",
                         "LOCALSTORE_DATA_DIR": str(project / "store")}
    log = project / "nb-run.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([str(venv_path / "bin" / "nb"), "-py", str(python(venv_path)), "run"], cwd=project,
                                env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    loaded = f'Succeeded to load plugin "{MODULE}"'
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and proc.poll() is None and loaded not in log.read_text(errors="replace"):
            time.sleep(0.5)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(20)
    text = log.read_text(errors="replace")
    return loaded in text, text


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("readme", READMES)
def test_the_table_format_takes_the_readmes_table_line(nb_venv, tmp_path, readme):
    (tmp_path / "pyproject.toml").write_text(add_to_table(TABLE_PROJECT, table_lines(readme)), encoding="utf-8")
    loaded, log = nb_run(nb_venv, tmp_path)
    assert loaded, log[-3000:]


@pytest.mark.parametrize("readme", READMES)
def test_the_list_format_takes_the_readmes_list_line(nb_venv, tmp_path, readme):
    assert list_modules(readme) == [MODULE]
    (tmp_path / "pyproject.toml").write_text(add_to_list(LIST_PROJECT, list_modules(readme)), encoding="utf-8")
    loaded, log = nb_run(nb_venv, tmp_path)
    assert loaded, log[-3000:]
    assert 'Succeeded to load plugin "echo"' in log  # the plugins the project had stay


def test_the_table_line_in_a_list_format_project_breaks_nb_run_as_the_readmes_say(nb_venv, tmp_path):
    """Why both READMEs say to change one place only: the table added to an older project."""
    for readme in READMES:
        assert "ProjectInvalidError" in (REPO_ROOT / readme).read_text(encoding="utf-8")
    mixed = LIST_PROJECT.replace("plugins = []\n", "") + "\n[tool.nonebot.plugins]\n" + "\n".join(
        table_lines("README.md")) + "\n"
    (tmp_path / "pyproject.toml").write_text(mixed, encoding="utf-8")
    loaded, log = nb_run(nb_venv, tmp_path)
    assert not loaded and "Invalid project config format" in log
