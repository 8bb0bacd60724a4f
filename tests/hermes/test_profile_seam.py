"""One profile seam: the tool, ``hermes [-p NAME] recall …``, the recall API and the consent
records agree on which profile this is, so a consent granted on one surface holds on all.

The CLI runs as a real ``hermes`` process (Hermes' own ``-p`` handling sets ``HERMES_HOME``); the
tool is dispatched through Hermes' loader; the API is the real app. The remote provider points at
a closed port: with no index yet nothing is ever sent, so only the consent answer differs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from hermes_side.api.app import create_app
from hermes_side.host.profile import current_profile, named_profile, profile_at, profile_name, profiles_root
from tests.hermes.world import World, call_tool, load_plugin, unload_plugin

REPO_ROOT = Path(__file__).resolve().parents[2]
KEY = "seam-test-key-0123456789"
REMOTE = """
  project-history-recall:
    embedding:
      provider: openai
      base_url: http://127.0.0.1:9/v1
"""


def hermes(*argv: str, home: Path | None = None, user_home: Path | None = None) -> subprocess.CompletedProcess:
    """``hermes …`` as a user runs it; our worktree first on the path."""
    env = {k: v for k, v in os.environ.items() if k != "HERMES_HOME"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]))
    if home is not None:
        env["HERMES_HOME"] = str(home)
    if user_home is not None:
        env["HOME"] = str(user_home)
    exe = Path(sys.executable).with_name("hermes")
    return subprocess.run([str(exe), *argv], env=env, capture_output=True, text=True, timeout=120)


def enable_remote(home: Path) -> None:
    (home / "config.yaml").write_text("plugins:\n  enabled: [project-history-recall]\n" + REMOTE)


def test_profile_name_is_a_function_of_the_home(tmp_path):
    assert profile_name(tmp_path / ".hermes") == "default"
    assert profile_name(tmp_path / ".hermes" / "profiles" / "work") == "work"
    assert profile_name(tmp_path / "opt-data") == "default"  # a custom HERMES_HOME root
    assert profile_name(tmp_path / "profiles" / "Bad..Name") == "default"
    assert profiles_root(tmp_path / ".hermes" / "profiles" / "work") == tmp_path / ".hermes"
    assert named_profile(tmp_path, "work").home == tmp_path / "profiles" / "work"
    assert named_profile(tmp_path, "..") is None and named_profile(tmp_path, "a/b") is None
    work = profile_at(tmp_path / "profiles" / "work")
    assert work.consent_file == tmp_path / "profiles" / "work" / "project-history-recall" / "consent.json"


@pytest.fixture
def named(tmp_path, monkeypatch):
    """A user whose ``~/.hermes`` has a ``work`` profile with a project, remote embeddings and its
    own recall key; this process acts as that profile (HERMES_HOME = ~/.hermes/profiles/work)."""
    user = tmp_path / "user"
    root = user / ".hermes"
    home = root / "profiles" / "work"
    home.mkdir(parents=True)
    monkeypatch.setenv("HERMES_HOME", str(home))
    world = World(home, tmp_path / "work")
    folder = world.folder("ops")
    world.project("Ops", folder)
    world.session("the pager rotation is weekly", "ok", cwd=folder)
    current = world.session("current question", cwd=folder)
    load_plugin(home)
    enable_remote(home)  # after load_plugin, which writes a bare config.yaml
    (home / ".env").write_text(f"RECALL_API_KEY={KEY}\n")
    yield user, root, home, world, current
    unload_plugin()
    world.close()


def _tool_semantic_status(current: str) -> str:
    result = call_tool("project_history_search", {"query": "pager rotation", "mode": "semantic"}, current)
    assert result["success"], result
    return result["semantic_status"]


@pytest.mark.slow
def test_consent_granted_with_hermes_p_name_holds_for_cli_tool_and_api(named):
    user, root, home, _, current = named
    assert current_profile().name == "work"
    assert _tool_semantic_status(current) == "consent_required"

    granted = hermes("-p", "work", "recall", "consent", "grant", user_home=user)
    assert granted.returncode == 0, granted.stderr
    assert json.loads((home / "project-history-recall" / "consent.json").read_text())["profile"] == "work"

    # CLI search and status in the same profile, the agent tool, and the API serving ~/.hermes.
    searched = hermes("-p", "work", "recall", "search", "--project", "ops", "--mode", "semantic", "--json",
                      "pager", user_home=user)
    assert searched.returncode == 0, searched.stderr
    assert json.loads(searched.stdout)["semantic_status"] != "consent_required"
    status = hermes("-p", "work", "recall", "status", "--json", user_home=user)
    assert json.loads(status.stdout)["profile"] == "work"
    assert json.loads(status.stdout)["semantic"]["consent"] == "granted"
    assert _tool_semantic_status(current) != "consent_required"
    api = TestClient(create_app(root, "launch-key-0123456789abc"))
    answer = api.get("/p/work/status", headers={"Authorization": f"Bearer {KEY}"}).json()
    assert answer["profile"] == "work" and answer["semantic"]["consent"] == "granted"

    revoked = hermes("-p", "work", "recall", "consent", "revoke", user_home=user)
    assert revoked.returncode == 0
    assert _tool_semantic_status(current) == "consent_required"
    assert api.get("/p/work/status", headers={"Authorization": f"Bearer {KEY}"}).json()["semantic"]["consent"] \
        == "required"


@pytest.mark.slow
def test_consent_recorded_in_process_holds_for_the_cli(named):
    """The other direction: what this process (tool/API side) records, ``hermes -p work`` reads."""
    from hermes_side.embedding import load_settings, record_consent

    user, _, home, _, current = named
    record_consent(home, load_settings(home), None, ["*"])
    status = hermes("-p", "work", "recall", "status", "--json", user_home=user)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["semantic"]["consent"] == "granted"


@pytest.mark.slow
def test_custom_hermes_home_gets_one_name_everywhere(world, tmp_path):
    """A ``HERMES_HOME`` outside ``~/.hermes``: the CLI, the tool and the API all call it default."""
    folder = world.folder("notes")
    world.project("Notes", folder)
    world.session("the backup runs nightly", "ok", cwd=folder)
    current = world.session("what about backups", cwd=folder)
    load_plugin(world.home)
    try:
        enable_remote(world.home)
        granted = hermes("recall", "consent", "grant", home=world.home, user_home=tmp_path / "nobody")
        assert granted.returncode == 0, granted.stderr
        assert _tool_semantic_status(current) != "consent_required"
        api = TestClient(create_app(world.home, KEY))
        status = api.get("/status", headers={"Authorization": f"Bearer {KEY}"}).json()
        assert status["profile"] == "default" and status["semantic"]["consent"] == "granted"
        cli = hermes("recall", "status", "--json", home=world.home, user_home=tmp_path / "nobody")
        assert json.loads(cli.stdout) == status
    finally:
        unload_plugin()
