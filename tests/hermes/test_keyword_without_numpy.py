"""A plugin directory copied into a stock Hermes has no numpy (issue 10): keyword search — and
hybrid, which then answers from keywords — must work there, on both keyword paths."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Both keyword paths (settings.py's scan_scope_max: a scope up to it is scanned, a bigger one asks
# FTS5), in a Python where any "import numpy" raises ImportError, as on a stock Hermes. Which path
# ran is counted at probes.scope_matches, which only the FTS path calls.
SEARCH = """
import json, sys
sys.modules["numpy"] = None  # any "import numpy" now raises ImportError, as on a stock Hermes
from pathlib import Path
from hermes_side.search import probes
from hermes_side.search.engine import SearchEngine
from hermes_side.search.request import parse_search_args
from hermes_side.search.settings import RANKING, overridden

asked = []
scope_matches = probes.scope_matches
probes.scope_matches = lambda *a, **k: asked.append(1) or scope_matches(*a, **k)
engine = SearchEngine(Path(sys.argv[1]))
out = {}
for path, scan_max in (("scan", RANKING.scan_scope_max), ("fts", 0)):
    with overridden(scan_scope_max=scan_max):
        asked.clear()
        for mode in ("keyword", "hybrid"):
            for query in ("kestrel rollout", "灰度发布", "部署"):
                res = engine.search(parse_search_args({"query": query, "mode": mode}), project=sys.argv[2])
                out[f"{path} {mode} {query}"] = {"hits": [r["session_id"] for r in res["results"]],
                                                 "semantic": [res.get("semantic_status"), res.get("semantic_detail")]}
        out[f"{path} fts probes"] = len(asked)
out["numpy imported"] = sys.modules.get("numpy") is not None
print(json.dumps(out))
"""


@pytest.mark.slow
def test_keyword_search_runs_without_numpy(world):
    folder = world.folder("proj")
    pid = world.project("Proj", folder)
    en = world.session("the kestrel rollout moved to friday", cwd=folder)
    zh = world.session("灰度发布改到周五，部署脚本也改了", cwd=folder)
    world.session("unrelated chatter", cwd=folder)

    done = subprocess.run([sys.executable, "-c", SEARCH, str(world.home), pid], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={**os.environ, "HERMES_HOME": str(world.home),
                                                      "PYTHONPATH": str(ROOT)})

    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["numpy imported"] is False
    assert found["scan fts probes"] == 0 and found["fts fts probes"] > 0  # each path ran as named
    for path in ("scan", "fts"):
        for mode in ("keyword", "hybrid"):
            assert found[f"{path} {mode} kestrel rollout"]["hits"] == [en]
            assert found[f"{path} {mode} 灰度发布"]["hits"] == [zh]
            assert found[f"{path} {mode} 部署"]["hits"] == [zh]
        status, detail = found[f"{path} hybrid kestrel rollout"]["semantic"]
        assert status == "unavailable" and "numpy" in detail  # hybrid says why it answered from keywords
