"""Red-team hole (issue 15 §4): a ``/move`` killed with SIGKILL half-way left part of a chat in the
old project (and the chat bound there) until someone moved it again. Every move is now journaled in
the plugin's folder first, and the next start of the recall API or the next move finishes it.

The move runs in a real subprocess, paused by the move's own per-session callback
(``on_written``) after its first session; the test kills it there with SIGKILL.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from hermes_side.actions import chat_service
from hermes_side.actions.journal import journal_dir
from hermes_side.actions.move import finish_interrupted
from hermes_side.stores import bindings
from tests.e2e.nonebot_proc import REPO_ROOT
from tests.e2e.recall_proc import RecallServer
from tests.hermes.world import call_tool

KEY = "journal-test-key-0123456789"
CHAT = "onebotv11:111"
GROUP = [f"hermes-onebotv11+group+111+{i}" for i in range(4)]

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")

MOVER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    home, marker, kind, target, what = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]

    def pause(session_id):
        marker.write_text(session_id)  # the first session is written: hold here until killed
        time.sleep(600)

    if kind == "chat":
        from hermes_side.actions.chat_service import move_chat
        move_chat(home, what, target, on_written=pause)
    else:
        from hermes_side.actions.move import move_sessions
        move_sessions(home, [what], target, on_written=pause)
""")


def start_mover(home: Path, tmp: Path, kind: str, target: str, what: str) -> tuple[subprocess.Popen, Path]:
    marker = tmp / f"written-{time.monotonic_ns()}"
    env = dict(os.environ, HERMES_HOME=str(home),
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])))
    proc = subprocess.Popen([sys.executable, "-c", MOVER, str(home), str(marker), kind, target, what], env=env)
    deadline = time.monotonic() + 120
    while not marker.exists():
        if proc.poll() is not None:
            raise AssertionError(f"the mover exited {proc.returncode} before pausing")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("the mover never wrote its first session")
        time.sleep(0.05)
    return proc, marker


def kill(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(30) == -signal.SIGKILL


def cwds(world, ids) -> dict[str, str]:
    return {sid: world.db.get_session(sid)["cwd"] for sid in ids}


@pytest.fixture
def group(world):
    """Group 111 bound to Alpha with four conversations placed there; Beta waits."""
    world.alpha_dir, world.beta_dir = world.folder("alpha"), world.folder("beta")
    world.project("Alpha", world.alpha_dir)
    world.project("Beta", world.beta_dir)
    for i, sid in enumerate(GROUP):
        world.session(f"kestrel note {i} of group one", source="api_server", sid=sid)
    chat_service.move_chat(world.home, CHAT, "alpha")
    assert set(cwds(world, GROUP).values()) == {str(world.alpha_dir)}
    return world


def _killed_half_way(world, tmp_path) -> None:
    proc, marker = start_mover(world.home, tmp_path, "chat", "beta", CHAT)
    kill(proc)
    # The hole as it was: one conversation in Beta, the rest still in Alpha, the chat bound to Alpha.
    places = cwds(world, GROUP)
    assert places[marker.read_text()] == str(world.beta_dir)
    assert sorted(places.values()).count(str(world.alpha_dir)) == len(GROUP) - 1
    assert len(list(journal_dir(world.home).glob("*.json"))) == 1


@pytest.mark.slow  # a real process (recall API or shell)
def test_move_killed_half_way_is_finished_when_the_recall_api_starts(group, tmp_path):
    world = group
    (world.home / "config.yaml").write_text("plugins:\n  enabled: [project-history-recall]\n")
    alpha_id = bindings.get_binding(world.home, CHAT)["project_id"]
    _killed_half_way(world, tmp_path)
    assert bindings.get_binding(world.home, CHAT)["project_id"] == alpha_id

    api = RecallServer(world.home, KEY, tmp_path / "recall.log")
    api.start()
    try:
        # Started, and not asked anything yet: the move is already finished.
        assert list(journal_dir(world.home).glob("*.json")) == []
        assert set(cwds(world, GROUP).values()) == {str(world.beta_dir)}
        auth = {"Authorization": f"Bearer {KEY}"}
        binding = httpx.get(f"{api.url}/chats/{CHAT}/binding", headers=auth, timeout=30).json()
        found = httpx.post(f"{api.url}/search", headers=auth, timeout=60,
                           json={"query": "kestrel note", "chat": CHAT, "mode": "keyword", "limit": 10}).json()
    finally:
        api.stop()
    assert binding["state"] == "bound" and binding["project"]["name"] == "Beta"
    assert set(cwds(world, GROUP).values()) == {str(world.beta_dir)}
    assert {r["session_id"] for r in found["results"]} == set(GROUP)  # the whole chat, in Beta


def test_operator_move_killed_half_way_is_finished_by_the_next_move(world, loaded_plugin, tmp_path):
    """A CLI conversation (three compression segments) moved by the operator; the next move of
    anything — here the agent tool in another CLI session — finishes it first."""
    a, b = world.folder("alpha"), world.folder("beta")
    world.project("Alpha", a)
    world.project("Beta", b)
    root = world.session("kestrel plan part one", cwd=a)
    mid = world.compress(root, "kestrel plan part two")
    tip = world.compress(mid, "kestrel plan part three")
    before = cwds(world, [root, mid, tip])  # rotated children have no cwd of their own
    proc, marker = start_mover(world.home, tmp_path, "sessions", "beta", tip)
    kill(proc)
    half = cwds(world, [root, mid, tip])
    assert half == {**before, marker.read_text(): str(b)} and half != before

    other = world.session("hello", cwd=a)
    assert call_tool("project_session_move", {"project_id": "beta"}, other)["success"] is True

    assert set(cwds(world, [root, mid, tip, other]).values()) == {str(b)}
    assert list(journal_dir(world.home).glob("*.json")) == []


def test_move_killed_half_way_rolls_back_when_its_target_folder_is_gone(group, tmp_path):
    world = group
    alpha_id = bindings.get_binding(world.home, CHAT)["project_id"]
    _killed_half_way(world, tmp_path)
    world.beta_dir.rmdir()

    assert finish_interrupted(world.home) == 1

    assert set(cwds(world, GROUP).values()) == {str(world.alpha_dir)}
    assert bindings.get_binding(world.home, CHAT)["project_id"] == alpha_id
    assert list(journal_dir(world.home).glob("*.json")) == []


def test_a_move_still_running_is_left_alone(group, tmp_path):
    world = group
    proc, _ = start_mover(world.home, tmp_path, "chat", "beta", CHAT)
    try:
        assert finish_interrupted(world.home) == 0  # its mover holds the journal's lock
        (journal,) = journal_dir(world.home).glob("*.json")
        assert json.loads(journal.read_text())["chat"] == CHAT
    finally:
        kill(proc)
    assert finish_interrupted(world.home) == 1  # the lock died with it
