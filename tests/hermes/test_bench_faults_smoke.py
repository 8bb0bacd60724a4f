"""Smoke test for ``python -m benchmarks faults`` (issue 39 §7: the campaign, rerunnable).

The load phase and the damaged-files phase on tiny worlds, as the operator runs the benchmark: every
phase finishes (a phase that fails is reported as "did not finish", which would hide a rotted
benchmark), no result lies outside its chat's project, and no forgotten turn comes back while a
store is lost or damaged — each recovery the status names is run and works. The figures at the
issue's size are in benchmarks/README.md; the full disk and kill -9 have their own tests
(test_store_faults.py, test_move_journal.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # real processes, the model

REPO = Path(__file__).resolve().parents[2]
ARGS = ["--phases", "load", "damage", "--messages", "300", "--small", "60", "--clients", "2", "--seconds", "2"]


def test_the_campaign_runs_and_nothing_leaks(tmp_path):
    out = tmp_path / "faults.json"
    done = subprocess.run([sys.executable, "-m", "benchmarks", "faults", *ARGS, "--json", str(out)],
                          cwd=REPO, env={**os.environ, "HERMES_HOME": str(tmp_path / "unused")},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(out.read_text())

    load = figures["load"]
    assert "error" not in load, load
    assert load["results_checked"] > 0 and load["outside_project"] == 0 and not load["errors"], load

    damage = figures["damage"]
    assert isinstance(damage, list), damage  # a dict here is the phase's "did not finish"
    assert {row["fault"] for row in damage} >= {"forgotten.db deleted", "forgotten.db emptied",
                                                "forgotten.db older copy", "bindings.db deleted",
                                                "embeddings.db garbage mid-file"}
    for row in damage:
        assert row["leaked"] == 0 and row["status_names_file"] and row["recovered"], row
    embeddings = next(row for row in damage if row["fault"].startswith("embeddings.db"))
    assert embeddings["semantic"] == ["unavailable"] and embeddings["status_semantic"] == "unavailable", embeddings
