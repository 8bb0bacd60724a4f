"""What forgetting costs a search: keyword ``project_history_search`` p50/p95 per scope bucket with
nothing forgotten, then with a share of every bucket's messages forgotten (``stores/forgotten.py``,
read through the one eligibility predicate), plus the cost of preparing a connection.

Run on a home made by ``python -m benchmarks synth`` (a copy: this writes the home's forgotten.db):

    python -m benchmarks forget --home /tmp/synth200k --share 0.1
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import time
from pathlib import Path

from benchmarks.bench_latency import bucket_sessions, load, summary, time_engine


def _prepare_ms(home: Path, rounds: int = 50) -> dict:
    from hermes_side.scope import rule_view
    from hermes_side.stores import hermes_db

    conn = hermes_db.connect_state(home)
    try:
        cold = []
        for _ in range(rounds):
            conn.execute("DROP TABLE IF EXISTS temp.recall_forgotten_key")
            t0 = time.perf_counter()
            rule_view.prepare(conn, home)
            cold.append((time.perf_counter() - t0) * 1000)
        warm = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            rule_view.prepare(conn, home)
            warm.append((time.perf_counter() - t0) * 1000)
    finally:
        conn.close()
    return {"refill": summary(cold), "unchanged": summary(warm)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--share", type=float, default=0.1, help="share of each bucket's messages forgotten")
    ap.add_argument("--max-queries", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    import os

    os.environ["HERMES_HOME"] = str(args.home)
    from hermes_side.search.engine import SearchEngine
    from hermes_side.stores import forgotten

    manifest, queries = load(args.home)
    queries = queries[: args.max_queries]
    buckets = manifest["buckets"]
    out: dict = {"share": args.share, "before": {}, "after": {}}
    engine = SearchEngine(args.home)
    for name, pid in buckets.items():
        time_engine(engine, queries[:5], pid, "keyword")  # warm the scope map and caches
        out["before"][name] = time_engine(engine, queries, pid, "keyword")
    out["prepare_nothing_forgotten"] = _prepare_ms(args.home)
    rnd = random.Random(args.seed)
    conn = sqlite3.connect(f"file:{args.home / 'state.db'}?mode=ro", uri=True)
    picked: list[tuple[int, str]] = []
    for pid in buckets.values():
        sessions = bucket_sessions(engine, pid)
        rows = conn.execute("SELECT id, session_id FROM messages WHERE session_id IN (SELECT value FROM json_each(?))",
                            (json.dumps(sessions),)).fetchall()
        picked += rnd.sample(rows, int(len(rows) * args.share))
    conn.close()
    entry = forgotten.Entry(actor="bench", surface="cli", action="forget", scope={"kind": "bench"})
    forgotten.forget_messages(args.home, picked, entry)
    out["forgotten_messages"] = len(picked)
    engine = SearchEngine(args.home)
    for name, pid in buckets.items():
        time_engine(engine, queries[:5], pid, "keyword")
        out["after"][name] = time_engine(engine, queries, pid, "keyword")
    out["prepare_forgotten"] = _prepare_ms(args.home)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
