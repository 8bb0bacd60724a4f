"""nonebug harness for the NoneBot side (``nonebot_plugin_history_recall``).

Run on its own, from the repository root: ``.venv/bin/python -m pytest tests/nonebot -q``.

How it works:
- ``pytest_configure`` hands nonebug the ``nonebot.init`` kwargs: no .env file, the fastapi
  driver, "/" as the command start, localstore dirs in a temp dir and the plugin settings below (an admin, a routed
  group with its own endpoint and key). nonebug's session fixtures run ``nonebot.init`` and the
  driver lifespan (so the plugin's startup hook runs once, too).
- ``after_nonebot_init`` registers the real OneBot v11 adapter and loads the plugin. Tests build
  bots from ``nonebot.get_adapter(Adapter)``, never ``ctx.create_adapter()``: a fake adapter is
  named "fake", which alconna cannot map to a chat target.
- Every event gets a fresh ``message_id``: alconna caches parse results by message id.
- The recall API is ``FakeRecallApi`` behind ``httpx.MockTransport``, installed by patching
  ``client._make_client``; it records every request so tests can assert what was (not) sent.
  Its answers are the real server's: ``api.replay(name)`` serves
  ``tests/fixtures/recall_api/<name>.json``, recorded from the real app by
  ``tests/hermes/test_api_contract.py`` (which fails when the server drifts from them). Hand-made
  answers are only for what a real server never says on purpose (proxies, 5xx, transport errors).
- Plugin modules are imported inside fixtures and tests: importing them needs an initialised
  NoneBot, which only exists once the session fixtures have run.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest
from nonebug import NONEBOT_INIT_KWARGS

from tests.nonebot.nb_helpers import ADMIN_ID, API_KEY, API_URL, BOT_ID, ROUTED_GROUP, TEAM_KEY, TEAM_URL, FakeRecallApi

_tmp_root = Path(tempfile.mkdtemp(prefix="nb-history-recall-"))


def plugin_settings() -> dict[str, Any]:
    return {
        "history_recall_api_url": API_URL,
        "history_recall_api_key": API_KEY,
        "history_recall_timeout": 7,
        "history_recall_groups": {f"onebotv11:{ROUTED_GROUP}": {"url": TEAM_URL, "key": TEAM_KEY}},
        "history_recall_admin_users": {f"onebotv11:{ADMIN_ID}"},
        "history_recall_forward_threshold": 1000,
        "history_recall_move_aliases": ["recall-move"],  # an alias beside the default name
    }


def pytest_configure(config: pytest.Config) -> None:
    config.stash[NONEBOT_INIT_KWARGS] = {
        # A file that does not exist: a developer's .env in the repo root must not leak in.
        "_env_file": (str(_tmp_root / "none.env"),),
        "driver": "~fastapi",
        "command_start": {"/"},
        "localstore_data_dir": str(_tmp_root / "data"),
        "localstore_cache_dir": str(_tmp_root / "cache"),
        "localstore_config_dir": str(_tmp_root / "config"),
        **plugin_settings(),
    }


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_tmp_root, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
async def after_nonebot_init(after_nonebot_init: None) -> None:
    import nonebot
    from nonebot.adapters.onebot.v11 import Adapter

    nonebot.get_driver().register_adapter(Adapter)
    nonebot.load_plugin("nonebot_plugin_history_recall")


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> FakeRecallApi:
    from nonebot_plugin_history_recall import client

    fake = FakeRecallApi()

    def make_client(timeout: float) -> httpx.AsyncClient:
        fake.timeouts.append(timeout)
        return httpx.AsyncClient(transport=httpx.MockTransport(fake.handler), timeout=timeout)

    monkeypatch.setattr(client, "_make_client", make_client)
    return fake


@pytest.fixture(autouse=True)
def _fresh_plugin_state(nonebug_init: None) -> None:
    """Module-level caches must not leak between tests."""
    from nonebot_plugin_uninfo.adapters import INFO_FETCHER_MAPPING

    from nonebot_plugin_history_recall import bindings, cooldown, last_results
    from tests.nonebot import nb_helpers

    bindings._pending.clear()
    cooldown.reset()
    for fetcher in INFO_FETCHER_MAPPING.values():  # uninfo's member cache: a role is per test
        fetcher.clean()
    nb_helpers.looked_up.clear()
    last_results.data_file(last_results.FILE_NAME).unlink(missing_ok=True)
    last_results.forget_cache()


@pytest.fixture
def plugin_config(nonebug_init: None):
    from nonebot_plugin_history_recall.config import plugin_config

    return plugin_config


@pytest.fixture
def bot_factory(nonebug_init: None):
    """``make(ctx)`` → a OneBot v11 bot bound to the real adapter, for a nonebug context."""
    import nonebot
    from nonebot.adapters.onebot.v11 import Adapter, Bot

    def make(ctx):
        return ctx.create_bot(base=Bot, adapter=nonebot.get_adapter(Adapter), self_id=BOT_ID)

    return make
