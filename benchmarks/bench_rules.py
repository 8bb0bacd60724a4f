"""What forget rules cost a search (issue 34 §6): hybrid ``project_history_search`` p50/p95 at the
10k scope of a profile with no rules and of the same profile with ``--rules`` forgotten turns (and
a few opt-out and recall-off spans), timed alternately query by query in one run so both columns
share the machine's mood; plus what building the rules' view costs once, and a new message after.

Rules name turns (``scope/speakers.py``): the forgotten turns are drawn from the whole profile, a
tenth of them from the searched scope, and recorded the way ``/forget`` records them
(``forgotten.forget_turns``), under one receipt per 1,000.

Run on a home made by ``python -m benchmarks synth`` whose 10k bucket has vectors
(``python -m benchmarks fill_vectors --bucket 10k``); the benchmark copies it twice and writes only the copies:

    python -m benchmarks synth --home /tmp/rules/base --messages 100000 --projects 20
    python -m benchmarks fill_vectors --home /tmp/rules/base --bucket 10k
    python -m benchmarks rules --base /tmp/rules/base --work /tmp/rules --rules 10000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import time
from pathlib import Path


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def copy_home(base: Path, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(base, dest, symlinks=True)
    return dest


def write_rules(home: Path, project_id: str, count: int, seed: int) -> dict:
    """``count`` forgotten turns (a tenth in the project's scope) and three spans."""
    from hermes_side.actions import forget_scan
    from hermes_side.embedding import forgetting
    from hermes_side.search.reader import reader_for
    from hermes_side.stores import forgotten

    reader = reader_for(home)
    rnd = random.Random(seed)
    with reader.leased() as conn:
        smap = reader.scope_map()
        rows = [r for r in forget_scan.scan(conn, smap, list(smap.rows)) if r.ok]
        inside = set(smap.sessions_in({"kind": "explicit", "id": project_id}))
    near = [r for r in rows if r.session in inside]
    far = [r for r in rows if r.session not in inside]
    picked = rnd.sample(near, min(len(near), count // 10)) + rnd.sample(far, min(len(far), count - count // 10))
    for start in range(0, len(picked), 1000):
        part = picked[start:start + 1000]
        entry = forgotten.Entry(actor="bench", surface="cli", action="forget", scope={"kind": "bench"})
        forgotten.forget_turns(home, [(r.id, r.session) for r in part], [r.said.key for r in part], entry)
    chats = sorted({o.name for o in smap.origins.values() if o.name})[:3]
    for kind, chat in zip(("off", "optout", "optout"), chats, strict=False):
        entry = forgotten.Entry(actor="bench", surface="cli", action=kind, scope={"chat": chat})
        forgotten.set_rule(home, kind, chat, "" if kind == "off" else "42", [], True, entry)
    t0 = time.perf_counter()
    forgetting.finish_pending(home)  # what /forget does after its rules: the index goes with them
    purge = (time.perf_counter() - t0) * 1000
    anchors = {r.said.anchor for r in picked}
    taken = {r.id for r in picked}
    more = [r for r in rows if r.id not in taken and r.said.anchor in anchors][:1]
    return {"turns": len(picked), "in_scope": min(len(near), count // 10), "span_chats": len(chats),
            "finish_ms": round(purge), "one_more": more}


def one_more_forget(home: Path, more: list) -> dict:
    """One more forget where rules are already (the common case): what its receipt and the next
    search pay for the view (``View.absorb`` re-reads that chat or family only)."""
    from hermes_side.embedding import forgetting
    from hermes_side.stores import forgotten

    entry = forgotten.Entry(actor="bench", surface="cli", action="forget", scope={"kind": "bench"})
    t0 = time.perf_counter()
    forgotten.forget_turns(home, [(r.id, r.session) for r in more], [r.said.key for r in more], entry)
    forgetting.finish_pending(home)
    return {"one_more_forget_ms": round((time.perf_counter() - t0) * 1000, 1)}


def view_costs(home: Path) -> dict:
    """The rules' view built once (a restart, or the first search after a forget), then one new
    message judged (what every write costs the next search)."""
    from hermes_side.scope import rule_view
    from hermes_side.stores import hermes_db

    rule_view.forget_views()
    conn = hermes_db.connect_state(home)
    try:
        t0 = time.perf_counter()
        rule_view.prepare(conn, home)
        build = (time.perf_counter() - t0) * 1000
        hidden = conn.execute("SELECT count(*) FROM temp.recall_forgotten").fetchone()[0]
        t0 = time.perf_counter()
        rule_view.prepare(conn, home)
        unchanged = (time.perf_counter() - t0) * 1000
    finally:
        conn.close()
    return {"build_ms": round(build, 1), "unchanged_ms": round(unchanged, 3), "rows_out_of_recall": hidden}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", type=Path, required=True, help="a synth.py home with vectors in its 10k bucket")
    ap.add_argument("--work", type=Path, required=True, help="where the two copies go")
    ap.add_argument("--rules", type=int, default=10_000)
    ap.add_argument("--bucket", default="10k")
    ap.add_argument("--queries", type=int, default=150)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    plain, ruled = copy_home(args.base, args.work / "no-rules"), copy_home(args.base, args.work / "rules")
    os.environ["HERMES_HOME"] = str(ruled)
    from hermes_side.search.engine import SearchEngine
    from hermes_side.search.request import parse_search_args

    manifest = json.loads((args.base / "synth_manifest.json").read_text())
    queries = json.loads((args.base / "synth_queries.json").read_text())["queries"][: args.queries]
    project = manifest["buckets"][args.bucket]
    rules = write_rules(ruled, project, args.rules, args.seed)
    more = rules.pop("one_more")
    costs = view_costs(ruled) | one_more_forget(ruled, more)
    engines = {"no rules": SearchEngine(plain), "rules": SearchEngine(ruled)}
    times: dict[str, list[float]] = {name: [] for name in engines}
    statuses: dict[str, dict[str, int]] = {name: {} for name in engines}
    for engine in engines.values():  # warm: scope maps, vectors, the view
        for q in queries[:5]:
            engine.search(parse_search_args({"query": q["text"], "mode": "hybrid", "limit": 3}), project=project)
    order = list(engines)
    for _ in range(args.rounds):
        for q in queries:
            req = parse_search_args({"query": q["text"], "mode": "hybrid", "limit": 3})
            order.reverse()  # alternating, query by query, each arm first every other time
            for name in order:
                t0 = time.perf_counter()
                found = engines[name].search(req, project=project)
                times[name].append((time.perf_counter() - t0) * 1000)
                status = found.get("semantic_status", "-")
                statuses[name][status] = statuses[name].get(status, 0) + 1
    out = {"written": rules, "view": costs, "load_average": os.getloadavg(), "bucket": args.bucket,
           "searches_each": len(times["rules"])}
    for name, values in times.items():
        out[name] = {"p50_ms": round(statistics.median(values), 1), "p95_ms": round(pct(values, 0.95), 1),
                     "semantic_status": statuses[name]}
    out["p95_ratio"] = round(out["rules"]["p95_ms"] / out["no rules"]["p95_ms"], 3)
    out["p50_ratio"] = round(out["rules"]["p50_ms"] / out["no rules"]["p50_ms"], 3)
    # Paired per query: the same query, one run after the other.
    pairs = sorted(r / n for r, n in zip(times["rules"], times["no rules"], strict=True))
    out["paired_ratio_median"] = round(statistics.median(pairs), 3)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
