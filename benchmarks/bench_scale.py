"""What a search costs as the profile grows around a project, in one run (issue 25).

    python -m benchmarks synth --home benchmarks/out/synth1m --messages 1000000 --conversations 5000
    python -m benchmarks fill_vectors --home benchmarks/out/synth1m --all
    python -m benchmarks scale --home benchmarks/out/synth1m [--base COMMIT] [--json out.json]

On a home made by ``benchmarks synth`` whose every message has a (random) vector (``fill_vectors.py
--all``: what a year of busy projects leaves in embeddings.db, without embedding a million texts):

1. **first search**: one hybrid search in the ``--first`` bucket's project in a fresh process, wall
   time and peak RSS (``ru_maxrss``), ``--rounds`` processes; with ``--base COMMIT`` the same
   for that commit (a temporary git worktree), alternating base / head;
2. **warm** keyword and hybrid p50/p95 per bucket (``bench_latency.time_engine``: the tool's path);
3. **keyword vs Hermes**: the English queries of each bucket through the tool (keyword, in the
   bucket's project) and Hermes' own unscoped ``SessionDB.search_messages``, alternating query by
   query so that the machine's load falls on both columns alike.

4. **hybrid vs deja-vu on LoCoMo** (``--locomo N``): the first N English LoCoMo questions through
   the tool's hybrid search and deja-vu's ``search --project``, alternating (``bench_locomo.latency_loop``;
   the LoCoMo home of ``benchmarks locomo`` is reused or built, deja-vu from ``.cache/deja-vu``).

The load average is printed with each part.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

FIRST = """
import json, resource, sys, time
from pathlib import Path
t0 = time.perf_counter()
from hermes_side.search.engine import SearchEngine
from hermes_side.search.request import parse_search_args
engine = SearchEngine(Path(sys.argv[1]))
out = engine.search(parse_search_args({"query": sys.argv[3], "mode": "hybrid", "limit": 5}), project=sys.argv[2])
wall = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"wall_s": round(wall, 2), "peak_rss_mb": round(peak),
                  "status": out.get("semantic_status"), "results": len(out["results"])}))
"""


def load_avg() -> float:
    return round(os.getloadavg()[0], 1)


def first_search(checkout: Path, home: Path, pid: str, query: str) -> dict:
    env = {**os.environ, "HERMES_HOME": str(home), "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, "-c", FIRST, str(home), pid, query], capture_output=True, text=True,
                          env=env, cwd=checkout, timeout=600)
    if done.returncode:
        raise SystemExit(f"first search in {checkout} failed: {done.stderr[-800:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def first_searches(home: Path, pid: str, query: str, rounds: int, base: str | None) -> dict:
    checkouts = {"head": ROOT}
    tmp = None
    if base:
        tmp = tempfile.mkdtemp(prefix="bench-scale-")
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", f"{tmp}/base", base], check=True,
                       capture_output=True)
        checkouts = {"base": Path(tmp) / "base", "head": ROOT}
    try:
        runs: dict[str, list[dict]] = {name: [] for name in checkouts}
        for _ in range(rounds):
            for name, checkout in checkouts.items():
                runs[name].append({**first_search(checkout, home, pid, query), "load": load_avg()})
                print(f"  first search ({name}): {runs[name][-1]}", file=sys.stderr)
        return runs
    finally:
        if tmp:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", f"{tmp}/base"],
                           capture_output=True)


def english(text: str) -> bool:
    return not re.search(r"[\u3400-\u9fff]", text)


def keyword_vs_hermes(engine, db, queries: list[tuple[dict, str]]) -> dict:
    """The tool's keyword search of each (query, project) in that project and Hermes' unscoped
    search_messages of the same text, alternating which goes first; how often Hermes found nothing
    (it ANDs every word, so a question of many words mostly returns at once, empty)."""
    from benchmarks.bench_latency import summary
    from hermes_side.search.request import parse_search_args

    times: dict[str, list[float]] = {"tool": [], "hermes": []}
    empty = 0
    for i, (q, pid) in enumerate(queries):
        for arm in (("tool", "hermes") if i % 2 else ("hermes", "tool")):
            t0 = time.perf_counter()
            if arm == "tool":
                engine.search(parse_search_args({"query": q["text"], "mode": "keyword", "limit": 3}), project=pid)
            else:
                empty += not db.search_messages(q["text"], limit=10)
            times[arm].append((time.perf_counter() - t0) * 1000)
    return {**{arm: summary(t) for arm, t in times.items()}, "hermes_empty": empty}


def locomo_latency(n: int) -> dict:
    """Part 4: the LoCoMo home of ``benchmarks locomo`` (reused, or built and indexed once), then its
    alternating latency loop. Runs in this process after the synthetic parts; HERMES_HOME follows."""
    from benchmarks import deja
    from benchmarks.bench_locomo import latency_loop
    from benchmarks.locomo_homes import DEFAULT_CACHE, build_embedding_index, cached_corpus, loader_fingerprint
    from benchmarks.worlds import locomo
    from hermes_side.search.engine import SearchEngine
    from hermes_side.search.request import SearchRequest

    data = locomo.default_data_dir()
    home = (DEFAULT_CACHE / "en-all").resolve()
    corpus, _ = cached_corpus(home, loader_fingerprint(data), lambda h: locomo.load_locomo(h, data, None))
    build_embedding_index(corpus.home)
    os.environ["HERMES_HOME"] = str(corpus.home)
    engine = SearchEngine(corpus.home)
    engine.search(SearchRequest(query="warm up", mode="hybrid", limit=5),
                  project=next(iter(corpus.projects.values())))  # the model loads here, untimed
    return latency_loop(engine, corpus, corpus.questions, deja.find_binary(None), n)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--first", default="10k", help="the bucket of the first search")
    ap.add_argument("--rounds", type=int, default=2, help="fresh processes per checkout for the first search")
    ap.add_argument("--base", help="an earlier commit to measure the first search of, alternating")
    ap.add_argument("--buckets", default="10k,100k")
    ap.add_argument("--max-queries", type=int, default=60, help="queries per bucket and mode")
    ap.add_argument("--locomo", type=int, default=150, metavar="N",
                    help="LoCoMo questions timed for hybrid vs deja-vu (0: skip)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    home = args.home.resolve()
    os.environ["HERMES_HOME"] = str(home)
    from hermes_state import SessionDB

    from benchmarks.bench_latency import load, time_engine
    from hermes_side.embedding import store
    from hermes_side.search.engine import SearchEngine

    store.connect(home).close()  # the store's migrations run here, not inside a timed search
    manifest, queries = load(home)
    buckets = {b: manifest["buckets"][b] for b in args.buckets.split(",") if b in manifest["buckets"]}
    report: dict = {"messages": manifest["totals"]["messages"], "bucket_sizes": manifest["bucket_sizes"],
                    "cores": os.cpu_count()}
    pid = manifest["buckets"][args.first]
    probe = next(q["text"] for q in queries if pid in q["projects"] and english(q["text"]))
    report["first_search"] = first_searches(home, pid, probe, args.rounds, args.base)
    engine = SearchEngine(home)
    rows = []
    for name, bucket_pid in buckets.items():
        qs = [q for q in queries if bucket_pid in q["projects"]][: args.max_queries]
        for mode in ("keyword", "hybrid"):
            r = time_engine(engine, qs, bucket_pid, mode)
            rows.append({"scope": name, "messages": manifest["bucket_sizes"][name], "mode": mode, **r,
                         "load": load_avg()})
            print(f"  {name} {mode}: {rows[-1]}", file=sys.stderr)
    report["warm"] = rows
    db = SessionDB(db_path=home / "state.db")
    try:
        report["keyword_vs_hermes"] = {}
        every: list[tuple[dict, str]] = []
        for name, bucket_pid in buckets.items():
            qs = [(q, bucket_pid) for q in queries if bucket_pid in q["projects"] and english(q["text"])]
            qs = qs[: args.max_queries]
            every += qs
            report["keyword_vs_hermes"][name] = {**keyword_vs_hermes(engine, db, qs), "queries": len(qs),
                                                 "load": load_avg()}
            print(f"  keyword vs hermes {name}: {report['keyword_vs_hermes'][name]}", file=sys.stderr)
        # The buckets' English queries as one set, again alternating: the p95 of "an English
        # keyword search" over the benchmark's queries, not of one bucket's mix.
        report["keyword_vs_hermes"]["all"] = {**keyword_vs_hermes(engine, db, every), "queries": len(every),
                                              "load": load_avg()}
        print(f"  keyword vs hermes, all buckets: {report['keyword_vs_hermes']['all']}", file=sys.stderr)
    finally:
        db.close()
    if args.locomo:
        report["locomo_latency"] = locomo_latency(args.locomo)
        print(f"  LoCoMo hybrid vs deja-vu: {report['locomo_latency']}", file=sys.stderr)
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
