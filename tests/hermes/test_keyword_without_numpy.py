"""A plugin directory copied into a stock Hermes has no numpy (issue 10): keyword search — and
hybrid, which then answers from keywords — must work there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SEARCH = """
import json, sys
sys.modules["numpy"] = None  # any "import numpy" now raises ImportError, as on a stock Hermes
from pathlib import Path
from hermes_side.search.request import parse_search_args
from hermes_side.search.engine import SearchEngine

engine = SearchEngine(Path(sys.argv[1]))
out = {}
for mode in ("keyword", "hybrid"):
    for query in ("kestrel rollout", "灰度发布", "部署"):
        res = engine.search(parse_search_args({"query": query, "mode": mode}), project=sys.argv[2])
        out[f"{mode} {query}"] = [r["session_id"] for r in res["results"]]
print(json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.parametrize("scan_max", ["3000", "0"])
def test_keyword_search_runs_without_numpy(world, scan_max):
    folder = world.folder("proj")
    pid = world.project("Proj", folder)
    en = world.session("the kestrel rollout moved to friday", cwd=folder)
    zh = world.session("灰度发布改到周五，部署脚本也改了", cwd=folder)
    world.session("unrelated chatter", cwd=folder)
    code = SEARCH.replace("from hermes_side.search.engine import SearchEngine",
                          "from hermes_side.search.engine import SearchEngine\n"
                          f"import hermes_side.search.keyword as kw; kw.SCAN_SCOPE_MAX = {scan_max}")

    done = subprocess.run([sys.executable, "-c", code, str(world.home), pid], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={**os.environ, "HERMES_HOME": str(world.home),
                                                      "PYTHONPATH": str(ROOT)})

    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    for mode in ("keyword", "hybrid"):
        assert found[f"{mode} kestrel rollout"] == [en]
        assert found[f"{mode} 灰度发布"] == [zh]
        assert found[f"{mode} 部署"] == [zh]
