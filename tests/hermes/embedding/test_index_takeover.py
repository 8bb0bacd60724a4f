"""Issue 39 §6: one index run at a time, without refusing the operator. ``hermes recall index`` used to
exit 1 ("another index run is in progress") while the recall API's own background catch-up ran,
with no word of when to retry. Now it asks the catch-up to stop after its current batch, shows
the catch-up's progress while it waits, and goes on; another ``hermes recall index`` is left
alone and the operator is told what runs, since when and how far.

The real ``hermes recall index`` CLI; the last test races it against a real server's catch-up.
"""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest

from hermes_side.embedding import runlock
from tests.hermes.faulty import AUTH, api, hermes

pytestmark = pytest.mark.slow  # real processes, the model

FINGERPRINT = "local:multilingual-e5-small:384"


def _project(world, messages: int) -> None:
    folder = world.folder("alpha")
    world.project("Alpha", folder)
    # Vectors only (no latent terms): half the indexing time, and the takeover is the same.
    (world.home / "config.yaml").write_text("plugins:\n  enabled: [project-history-recall]\n"
                                            "  project-history-recall:\n    embedding:\n      latent_terms: false\n")
    for i in range(0, messages, 50):
        world.session(*[f"note {i + j}: the marmalade rollout step {i + j} is done" for j in range(50)], cwd=folder)


class FakeRun(threading.Thread):
    """Holds the index lock as a run of ``kind`` would, publishing progress; a catch-up lets go at
    its next batch once an operator waits (``runlock.operator_waiting``), another run never."""

    def __init__(self, home, kind: str) -> None:
        super().__init__(daemon=True)
        self.home, self.kind = home, kind
        self.holding, self.release, self.saw_operator = threading.Event(), threading.Event(), False

    def run(self) -> None:
        with runlock.hold_run(self.home, FINGERPRINT, None, kind=self.kind) as run:
            run.info.update(done=120, total=1000)
            runlock._write_info(run.path, run.info)
            self.holding.set()
            while not self.release.wait(0.2):
                if self.kind == runlock.CATCH_UP and runlock.operator_waiting(self.home):
                    self.saw_operator = True
                    return


def test_the_operator_takes_over_from_the_background_catch_up(world):
    _project(world, 100)
    holder = FakeRun(world.home, runlock.CATCH_UP)
    holder.start()
    assert holder.holding.wait(30)

    done = hermes(world.home, "index")
    holder.release.set()

    assert done.returncode == 0 and "Done: 100 messages checked" in done.stdout, done
    assert "background catch-up" in done.stderr and "stops after its current batch" in done.stderr
    assert "120 of 1,000 messages" in done.stderr  # what runs and how far, before waiting
    assert holder.saw_operator


def test_another_index_run_is_left_alone_and_named(world):
    _project(world, 50)
    holder = FakeRun(world.home, "index")
    holder.start()
    assert holder.holding.wait(30)
    try:
        done = hermes(world.home, "index")
    finally:
        holder.release.set()
        holder.join(30)

    assert done.returncode == 1 and done.stderr.strip().splitlines()[-1].startswith("error: ")
    assert "another `hermes recall index`" in done.stderr and "running for" in done.stderr
    assert "120 of 1,000 messages" in done.stderr and "Traceback" not in done.stderr


def test_index_joins_a_real_servers_catch_up_and_finishes_the_work(world, tmp_path):
    _project(world, 1100)  # more than one catch-up does (CATCH_UP_LIMIT): it would still be running
    with api(world.home, tmp_path / "recall.log") as server:
        status, body = server.call("POST", "/search", {"query": "marmalade rollout", "project": "alpha"})
        assert status == 200 and body["semantic_status"] == "indexing"  # the search started a catch-up
        deadline = time.monotonic() + 120
        while (run := runlock.current_run(world.home)) is None or not run.get("done"):
            assert time.monotonic() < deadline, "the catch-up never started writing"
            time.sleep(0.2)
        assert run["kind"] == runlock.CATCH_UP

        done = hermes(world.home, "index", timeout=900)

        assert done.returncode == 0 and "Done:" in done.stdout, done
        assert "background catch-up" in done.stderr
        code, st = server.call("GET", "/status")
        (alpha,) = st["projects"]
        assert alpha["indexed_messages"] == alpha["messages"] == 1100
        assert st["semantic"]["status"] == "ready"
        r = httpx.post(f"{server.server.url}/search", headers=AUTH, timeout=120,
                       json={"query": "rollout step 1099", "project": "alpha", "mode": "semantic"})
        assert r.status_code == 200 and json.loads(r.text)["semantic_status"] == "ready"
