"""``hermes recall bindings``: every chat → project link of the profile, through Hermes' own CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from hermes_side.api.app import create_app
from tests.e2e.nonebot_proc import REPO_ROOT

KEY = "k" * 24
AUTH = {"Authorization": f"Bearer {KEY}"}


def _hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    hermes = Path(sys.executable).with_name("hermes")
    env = dict(os.environ, HERMES_HOME=str(home),
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])))
    return subprocess.run([str(hermes), "recall", *args], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_bindings_lists_every_linked_chat_with_its_project(world, loaded_plugin):
    alpha_dir = world.folder("alpha")
    world.project("Alpha", alpha_dir)
    world.session("group chat about the release", "ok", source="api_server", sid="hermes-onebotv11+group+111+42")
    client = TestClient(create_app(world.home, KEY))
    client.post("/move", headers=AUTH, json={"chat": "onebotv11:111", "project": "alpha"})
    client.post("/move", headers=AUTH, json={"chat": "telegram:-100200", "project": ""})

    listed = _hermes(world.home, "bindings", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["chat"]: row for row in json.loads(listed.stdout)}
    assert set(rows) == {"onebotv11:111", "telegram:-100200"}
    assert rows["onebotv11:111"]["state"] == "bound"
    assert rows["onebotv11:111"]["project"]["name"] == "Alpha" and rows["onebotv11:111"]["project"]["slug"] == "alpha"
    assert rows["onebotv11:111"]["sessions"] == 1 and rows["telegram:-100200"]["sessions"] == 0
    assert rows["telegram:-100200"]["state"] == "home" and rows["telegram:-100200"]["project"] is None

    text = _hermes(world.home, "bindings")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.strip().splitlines()
    assert lines[0].startswith("onebotv11:111") and "Alpha (alpha)" in lines[0]
    assert lines[1].startswith("telegram:-100200") and "Home" in lines[1]


@pytest.mark.slow
def test_bindings_without_any_link_says_how_to_make_one(world, loaded_plugin):
    out = _hermes(world.home, "bindings")
    assert out.returncode == 0, out.stderr
    assert "/move" in out.stdout
