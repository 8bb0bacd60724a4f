"""Keyword search of two commits and Hermes' own search, query by query alternating, answers compared.

    python -m benchmarks keyword_ab --home benchmarks/out/synth200k --base main [--rounds 3]

The English queries of ``bench_scale``'s keyword-vs-Hermes loop ("all": the ``--buckets``
projects' English queries, ``--max-queries`` each), each searched through the tool (keyword mode,
limit 3, in its project) by this checkout and by ``--base`` (a temporary git worktree), and by
Hermes' unscoped ``SessionDB.search_messages``: each arm is a process of its own, and the arms take
turns per query (the order rotating), so the machine's load falls on every column alike. Before the
timed rounds, every query's whole tool result is taken from both commits and compared: a change
meant to cost less must not change an answer (``differing`` lists the queries that did).

The load average is printed with the numbers, and beside the plain percentiles those of each
query's median over the rounds (``query_medians``), which a moment of the machine's load moves less.
Keyword search opens state.db read-only; Hermes' ``SessionDB`` opens it as Hermes does (run on a
copy of a profile you care about).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

WORKER = r"""
import json, os, sys, time
from pathlib import Path
home, arm = Path(os.environ["HERMES_HOME"]), sys.argv[1]
queries = json.loads(sys.stdin.readline())
if arm == "hermes":
    from hermes_state import SessionDB
    db = SessionDB(db_path=home / "state.db")
    search = lambda text, pid: {"empty": not db.search_messages(text, limit=10)}
else:
    from hermes_side.search.engine import SearchEngine
    from hermes_side.search.request import parse_search_args
    engine = SearchEngine(home)
    search = lambda text, pid: engine.search(parse_search_args({"query": text, "mode": "keyword", "limit": 3}),
                                             project=pid)
print("ready", flush=True)
for line in sys.stdin:
    i, whole = json.loads(line)
    t0 = time.perf_counter()
    out = search(*queries[i])
    ms = (time.perf_counter() - t0) * 1000
    print(json.dumps({"ms": ms, "out": out if whole else None}, sort_keys=True, default=str), flush=True)
"""


class Arm:
    """One arm's process: the queries once at start, then one query per request."""

    def __init__(self, name: str, checkout: Path, home: Path, queries: list[tuple[str, str]]) -> None:
        env = {**os.environ, "HERMES_HOME": str(home), "PYTHONPATH": str(checkout)}
        self.name = name
        self.proc = subprocess.Popen([sys.executable, "-c", WORKER, name], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env, cwd=checkout)
        self.proc.stdin.write(json.dumps(queries) + "\n")
        self.proc.stdin.flush()
        if self.proc.stdout.readline().strip() != "ready":
            raise SystemExit(f"{name}: worker did not start")

    def ask(self, i: int, whole: bool = False) -> dict:
        self.proc.stdin.write(json.dumps([i, whole]) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"{self.name}: worker died")
        return json.loads(line)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--base", help="the commit to compare this checkout with (omit: this checkout and Hermes)")
    ap.add_argument("--buckets", default="10k,100k")
    ap.add_argument("--max-queries", type=int, default=60, help="English queries per bucket")
    ap.add_argument("--rounds", type=int, default=3, help="timed passes over the queries")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    from benchmarks.bench_latency import load, summary
    from benchmarks.bench_scale import english, load_avg

    home = args.home.resolve()
    manifest, queries = load(home)
    every: list[tuple[str, str]] = []
    for name in args.buckets.split(","):
        pid = manifest["buckets"][name]
        every += [(q["text"], pid) for q in queries if pid in q["projects"] and english(q["text"])][:args.max_queries]
    tmp = tempfile.mkdtemp(prefix="bench-kw-ab-") if args.base else None
    checkouts = {"head": ROOT, "hermes": ROOT}
    if tmp:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", f"{tmp}/base", args.base], check=True,
                       capture_output=True)
        checkouts = {"base": Path(tmp) / "base", **checkouts}
    arms: list[Arm] = []
    try:
        arms = [Arm(name, checkout, home, every) for name, checkout in checkouts.items()]
        tools = [a for a in arms if a.name != "hermes"]
        answers = {a.name: [a.ask(i, whole=True)["out"] for i in range(len(every))] for a in arms}
        differing = [every[i][0] for i in range(len(every))
                     if len({json.dumps(answers[a.name][i], sort_keys=True) for a in tools}) > 1]
        times: dict[str, list[float]] = {a.name: [] for a in arms}
        loads = [load_avg()]
        for r in range(args.rounds):
            for i in range(len(every)):
                k = (i + r) % len(arms)
                for arm in arms[k:] + arms[:k]:
                    times[arm.name].append(arm.ask(i)["ms"])
            loads.append(load_avg())
        # Each query's median over the rounds, then their p50 / p95: on a shared machine a round's
        # worst moment lands on one query's one round, not on its median.
        medians = {name: [statistics.median(t[i::len(every)]) for i in range(len(every))] for name, t in times.items()}
        report = {"queries": len(every), "rounds": args.rounds, "load": loads,
                  **{name: summary(t) for name, t in times.items()},
                  "query_medians": {name: summary(m) for name, m in medians.items()},
                  "hermes_empty": sum(bool(o and o.get("empty")) for o in answers["hermes"]),
                  "differing": differing}
    finally:
        for arm in arms:
            arm.close()
        if tmp:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", f"{tmp}/base"],
                           capture_output=True)
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
