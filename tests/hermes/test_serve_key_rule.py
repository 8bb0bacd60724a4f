"""One rule for the recall API's key, whichever way the server is started (README, "Chat groups"):
``RECALL_API_KEY`` in the profile's ``.env`` wins over the environment — Hermes' own rule for every
key, which ``hermes`` applies before any plugin runs — and the environment counts when the ``.env``
has none. The start-up line says where the key came from, never the key. Real server processes.
"""

from __future__ import annotations

import sys

import httpx
import pytest

from tests.e2e.recall_proc import RecallServer

pytestmark = pytest.mark.slow  # real processes: scripts/test.sh --fast skips it

FILE_KEY = "key-in-the-profile-env-0123456789"
ENV_KEY = "key-in-the-environment-0123456789"
RUNNERS = {"hermes recall serve": (), "python -m hermes_side serve": (sys.executable, "-m", "hermes_side")}


def _status(api: RecallServer, key: str) -> int:
    return httpx.get(f"{api.url}/projects", headers={"Authorization": f"Bearer {key}"}, timeout=30).status_code


@pytest.mark.parametrize("runner", RUNNERS)
def test_the_profiles_env_wins_over_the_environment_and_the_start_line_says_so(world, tmp_path, runner):
    (world.home / "config.yaml").write_text("plugins:\n  enabled: [project-history-recall]\n")
    (world.home / ".env").write_text(f"RECALL_API_KEY={FILE_KEY}\n", encoding="utf-8")
    api = RecallServer(world.home, ENV_KEY, tmp_path / "recall.log", runner=RUNNERS[runner])
    api.start()
    try:
        assert _status(api, FILE_KEY) == 200
        assert _status(api, ENV_KEY) == 401
    finally:
        api.stop()
    log = api.log_text()
    assert f"key: RECALL_API_KEY from {world.home / '.env'};" in log
    assert FILE_KEY not in log and ENV_KEY not in log
    if runner == "python -m hermes_side serve":  # only here is the environment's other key still visible
        assert "the environment's RECALL_API_KEY is not used" in log


def test_without_a_key_in_the_env_file_the_environments_key_is_used_and_named(world, tmp_path):
    (world.home / "config.yaml").write_text("plugins:\n  enabled: [project-history-recall]\n")
    api = RecallServer(world.home, ENV_KEY, tmp_path / "recall.log")
    api.start()
    try:
        assert _status(api, ENV_KEY) == 200
    finally:
        api.stop()
    assert f"key: RECALL_API_KEY from the environment ({world.home / '.env'} has none)" in api.log_text()
