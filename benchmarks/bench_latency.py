"""Latency, concurrency, indexing throughput and memory at scale, side by side with Hermes' search.

Run on a home made by ``python -m benchmarks synth`` (1M messages, scope buckets 1k/10k/100k):

    python -m benchmarks latency --home benchmarks/out/synth1m --index --api --json out.json

* keyword / semantic / hybrid ``project_history_search`` p50/p95 per scope bucket (the tool's own
  code path: scope → rank → group → format), query embedding included;
* Hermes' own ``SessionDB.search_messages`` (unscoped, as the agent's built-in tool runs it) on the
  same query texts, in the same run, so the ratio is robust to machine noise;
* hostile queries (issue 8 §6): 600 distinct two-character words, CJK and Latin, in the same
  buckets and modes, side by side with the normal queries (``--hostile N`` queries of each kind);
* queries naming a time (issue 36): ``--dated N`` of the bucket's queries with a day of any year
  ("… on May 2nd", "… 5月2日") or a month with its year ("… in May 2025") added, each timed with the
  conversations held then read (``ProfileReader.first_turns``) and without, alternating query by
  query: the read path's own cost (its "÷ normal" is on ÷ off; a hostile row's is ÷ all the
  bucket's queries);
* ``--ab-translation``: instead of the table, each Chinese query of the buckets timed with and
  without the translated keyword list (``hermes_side/search/translate.py``), alternating query by query,
  so both columns share the machine's mood;
* ``--index``: embed every session of the three bucket projects with the local model first and
  report messages/s (the search then sees a ready index);
* ``--api``: ``python -m hermes_side serve`` as a real process; request latency with 1, 8 and 32
  concurrent clients, failures counted, and the process RSS with the 100k-scope vectors loaded.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summary(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "p50_ms": round(pct(values, 0.5), 2), "p95_ms": round(pct(values, 0.95), 2),
            "mean_ms": round(statistics.fmean(values), 2) if values else float("nan")}


def load(home: Path) -> tuple[dict, list[dict]]:
    manifest = json.loads((home / "synth_manifest.json").read_text())
    queries = json.loads((home / "synth_queries.json").read_text())["queries"]
    return manifest, queries


def bucket_sessions(engine, project_id: str) -> list[str]:
    smap = engine.scope_map()
    return list(smap.sessions_in({"kind": "explicit", "id": project_id}))


def build_index_for(home: Path, engine, project_ids: list[str]) -> dict:
    from hermes_side.embedding import build_index, load_settings

    sessions = sorted({s for pid in project_ids for s in bucket_sessions(engine, pid)})
    settings = load_settings(home)
    t0 = time.perf_counter()
    last = [0.0]

    def progress(p) -> None:
        now = time.perf_counter()
        if now - last[0] > 10:
            last[0] = now
            print(f"  indexing: {p}", file=sys.stderr)

    stats = build_index(home, settings, session_ids=sessions, projects=project_ids, progress=progress)
    elapsed = time.perf_counter() - t0
    embedded = stats.messages_scanned
    return {"sessions": len(sessions), "seconds": round(elapsed, 1), "stats": str(stats),
            "messages_per_s": round(embedded / elapsed, 1) if embedded and elapsed else None}


def time_engine(engine, queries: list[dict], project_id: str, mode: str, limit: int = 3) -> dict:
    from hermes_side.search.request import parse_search_args

    times, statuses = [], {}
    for q in queries:
        req = parse_search_args({"query": q["text"], "mode": mode, "limit": limit})
        t0 = time.perf_counter()
        result = engine.search(req, project=project_id)
        times.append((time.perf_counter() - t0) * 1000)
        status = result.get("semantic_status", "-")
        statuses[status] = statuses.get(status, 0) + 1
    return {**summary(times), "semantic_status": statuses}


def hostile_queries(normal: list[dict], n: int, seed: int = 1) -> dict[str, list[str]]:
    """``n`` queries of each kind, each 600 distinct two-character words: CJK pairs drawn from the
    characters of the benchmark's own Chinese queries (so most pairs occur in the corpus), and
    Latin letter pairs."""
    import random

    rnd = random.Random(seed)
    han = sorted({ch for q in normal for ch in q["text"] if "\u4e00" <= ch <= "\u9fff"}) or ["部", "署"]
    letters = "abcdefghijklmnopqrstuvwxyz"

    def one(alphabet) -> str:
        words: dict[str, None] = {}
        while len(words) < min(600, len(alphabet) ** 2):
            words[rnd.choice(alphabet) + rnd.choice(alphabet)] = None
        return " ".join(words)

    return {"hostile-cjk": [one(han) for _ in range(n)], "hostile-latin": [one(letters) for _ in range(n)]}


DATED = {"dated day (any year)": "{} on May 2nd", "dated month (with year)": "{} in May 2025",
         "dated 日 (any year)": "{} 5月2日"}


def time_dated(engine, queries: list[dict], project_id: str, mode: str, n: int) -> dict[str, tuple[dict, dict]]:
    """Each kind of named time added to the first ``n`` queries, timed with the conversations held
    then read (``held_then_unfound``) and without, alternating which goes first: (on, off) per kind."""
    from hermes_side.search.request import parse_search_args
    from hermes_side.search.settings import overridden

    out = {}
    for kind, form in DATED.items():
        times: dict[bool, list[float]] = {True: [], False: []}
        for i, q in enumerate(queries[:n]):
            req = parse_search_args({"query": form.format(q["text"]), "mode": mode, "limit": 3})
            for on in ((True, False) if i % 2 else (False, True)):
                with overridden(held_then_unfound=on):
                    t0 = time.perf_counter()
                    engine.search(req, project=project_id)
                    times[on].append((time.perf_counter() - t0) * 1000)
        out[kind] = (summary(times[True]), summary(times[False]))
    return out


def time_hermes(db, texts: list[str]) -> dict:
    times, empty = [], 0
    for text in texts:
        t0 = time.perf_counter()
        rows = db.search_messages(text, limit=10)
        times.append((time.perf_counter() - t0) * 1000)
        empty += not rows
    return {**summary(times), "empty_results": empty}


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def api_bench(home: Path, queries: list[dict], buckets: dict[str, str], per_client: int, bucket: str) -> dict:
    import httpx

    from tests.e2e.nonebot_proc import free_port

    key = "bench-recall-api-key-0123456789"
    port = free_port()
    env = dict(os.environ, HERMES_HOME=str(home), RECALL_API_KEY=key)
    proc = subprocess.Popen([sys.executable, "-m", "hermes_side", "serve", "--port", str(port),
                             "--log-level", "warning"], env=env)
    url = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {key}"}
    try:
        for _ in range(300):
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        big = buckets[bucket]
        body = [{"query": q["text"], "mode": "hybrid", "limit": 3, "project": big} for q in queries]
        with httpx.Client(timeout=60) as c:  # warm: scope map, model, 100k-vector matrix
            for b in body[:5]:
                c.post(url + "/search", headers=headers, json=b)
        out: dict = {"rss_mb_after_warmup": rss_mb(proc.pid)}
        for clients in (1, 8, 32):
            lat: list[float] = []
            failed = [0]
            lock = threading.Lock()

            def worker(n: int, _lat: list[float] = lat, _failed: list[int] = failed,
                       _lock: threading.Lock = lock) -> None:
                with httpx.Client(timeout=120) as c:
                    for i in range(per_client):
                        b = body[(n * per_client + i) % len(body)]
                        t0 = time.perf_counter()
                        try:
                            ok = c.post(url + "/search", headers=headers, json=b).status_code == 200
                        except httpx.HTTPError:
                            ok = False
                        with _lock:
                            _lat.append((time.perf_counter() - t0) * 1000)
                            _failed[0] += not ok

            threads = [threading.Thread(target=worker, args=(n,)) for n in range(clients)]
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.perf_counter() - t0
            out[f"clients_{clients}"] = {**summary(lat), "failed": failed[0], "requests": len(lat),
                                         "req_per_s": round(len(lat) / wall, 1)}
        out["rss_mb_end"] = rss_mb(proc.pid)
        return out
    finally:
        proc.terminate()
        proc.wait(10)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--modes", default="keyword,semantic,hybrid")
    ap.add_argument("--max-queries", type=int, default=200)
    ap.add_argument("--index", action="store_true", help="embed the bucket projects first")
    ap.add_argument("--semantic-buckets", default="1k,10k,100k",
                    help="buckets whose projects are embedded and measured in semantic/hybrid mode")
    ap.add_argument("--api", action="store_true", help="also measure the recall API under concurrency")
    ap.add_argument("--api-requests", type=int, default=8, help="requests per client")
    ap.add_argument("--hostile", type=int, default=10, help="hostile queries of each kind per bucket and mode")
    ap.add_argument("--dated", type=int, default=10, help="queries naming a time, of each kind, per bucket and mode")
    ap.add_argument("--ab-translation", action="store_true",
                    help="time the Chinese queries with and without the translated keyword list, alternating")
    ap.add_argument("--ab-episodes", action="store_true",
                    help="time every query with and without conversations cut at their pauses, alternating")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    home = args.home.resolve()
    os.environ["HERMES_HOME"] = str(home)
    from hermes_state import SessionDB

    from hermes_side.search.engine import SearchEngine

    manifest, queries = load(home)
    buckets = manifest["buckets"]
    queries = queries[: args.max_queries]
    engine = SearchEngine(home)
    t0 = time.perf_counter()
    engine.scope_map()
    report: dict = {"load_avg": os.getloadavg(), "scope_map_cold_ms": round((time.perf_counter() - t0) * 1000, 1)}
    t0 = time.perf_counter()
    for _ in range(20):
        engine.scope_map()
    report["scope_map_warm_ms"] = round((time.perf_counter() - t0) * 1000 / 20, 2)
    semantic_buckets = [b for b in args.semantic_buckets.split(",") if b in buckets]
    if args.index:
        report["indexing"] = build_index_for(home, engine, list(dict.fromkeys(buckets[b] for b in semantic_buckets)))
    modes = [m for m in args.modes.split(",") if m]
    if args.ab_translation or args.ab_episodes:
        if args.ab_translation:
            report["ab_translation"] = ab_translation(engine, queries, buckets, modes, semantic_buckets)
        if args.ab_episodes:
            report["ab_episodes"] = ab_episodes(engine, queries, buckets, modes, semantic_buckets)
        if args.json:
            args.json.write_text(json.dumps(report, indent=1, default=str))
        return
    rows = []
    for name, pid, mode, qs in measured(buckets, modes, semantic_buckets, queries):
        r = time_engine(engine, qs, pid, mode)
        rows.append({"scope": name, "messages": manifest["bucket_sizes"][name], "mode": mode, **r})
        print(f"{name:>5} {mode:>8}: p50 {r['p50_ms']:7.1f} ms  p95 {r['p95_ms']:7.1f} ms  {r['semantic_status']}",
              file=sys.stderr)
        for kind, texts in (hostile_queries(queries, args.hostile).items() if args.hostile else ()):
            h = time_engine(engine, [{"text": t} for t in texts], pid, mode)
            rows.append({"scope": name, "messages": manifest["bucket_sizes"][name], "mode": f"{mode} {kind}",
                         **h, "vs_normal_p50": round(h["p50_ms"] / max(r["p50_ms"], 1e-9), 2),
                         "vs_normal_p95": round(h["p95_ms"] / max(r["p95_ms"], 1e-9), 2)})
            print(f"{name:>5} {mode} {kind}: p50 {h['p50_ms']:7.1f} ms  p95 {h['p95_ms']:7.1f} ms",
                  file=sys.stderr)
        for kind, (on, off) in (time_dated(engine, qs, pid, mode, args.dated).items() if args.dated else ()):
            rows.append({"scope": name, "messages": manifest["bucket_sizes"][name], "mode": f"{mode} {kind}",
                         **on, "vs_normal_p50": round(on["p50_ms"] / max(off["p50_ms"], 1e-9), 2),
                         "vs_normal_p95": round(on["p95_ms"] / max(off["p95_ms"], 1e-9), 2)})
            print(f"{name:>5} {mode} {kind}: p50 {on['p50_ms']:7.1f} ms  p95 {on['p95_ms']:7.1f} ms"
                  f" (without reading the time's conversations: {off['p50_ms']:.1f} / {off['p95_ms']:.1f})",
                  file=sys.stderr)
    db = SessionDB(db_path=home / "state.db")
    texts = list(dict.fromkeys(q["text"] for q in queries))
    hermes = time_hermes(db, texts)
    db.close()
    report.update({"rows": rows, "hermes_search_messages": hermes, "messages": manifest["totals"]["messages"]})
    if args.api:
        report["api"] = api_bench(home, queries, buckets, args.api_requests, semantic_buckets[-1])
    print_table(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str))


def measured(buckets: dict[str, str], modes: list[str], semantic_buckets: list[str],
             queries: list[dict]) -> Iterator[tuple[str, str, str, list[dict]]]:
    """(bucket, project id, mode, the bucket's queries) for every row measured: keyword everywhere,
    the other modes only in the buckets whose projects are embedded."""
    for name, pid in buckets.items():
        qs = [q for q in queries if pid in q["projects"]]
        for mode in modes:
            if mode == "keyword" or name in semantic_buckets:
                yield name, pid, mode, qs


def ab_translation(engine, queries: list[dict], buckets: dict[str, str], modes: list[str],
                   semantic_buckets: list[str]) -> list[dict]:
    """Queries with and without their translated keyword list, alternating per query (the order
    flips every query) so that machine noise falls on both columns alike: the Chinese queries
    (their English words, ``translated_list``) and the English ones (their Chinese words in a
    scope that holds Chinese, ``reverse_translation``)."""
    import re

    from hermes_side.search import translate

    translate.warm()  # the dictionary is read once per process; not part of any query here
    chinese = [q for q in queries if re.search("[\u4e00-\u9fff]", q["text"])]
    english = [q for q in queries if q not in chinese]
    rows = []
    print("| scope | mode | query | n | with p50 / p95 ms | without p50 / p95 ms |\n|---|---|---|---|---|---|")
    for language, asked, switch in (("zh", chinese, "translated_list"), ("en", english, "reverse_translation")):
        for name, pid, mode, qs in measured(buckets, modes, semantic_buckets, asked):
            row = {"scope": name, "mode": mode, "language": language, "queries": len(qs),
                   **alternating(engine, qs, pid, mode, {switch: True}, {switch: False})}
            rows.append(row)
            print(f"| {name} | {mode} | {language} | {len(qs)} | {row['with_p50_ms']} / {row['with_p95_ms']} | "
                  f"{row['without_p50_ms']} / {row['without_p95_ms']} |")
    return rows


def ab_episodes(engine, queries: list[dict], buckets: dict[str, str], modes: list[str],
                semantic_buckets: list[str]) -> list[dict]:
    """Every query with a conversation cut at its pauses (``conversation_pause``, episodes.py) and
    without (a session lineage), alternating per query: what reading the sessions' timelines costs,
    their first reads included (the process starts with none kept)."""
    from hermes_side.search.settings import RANKING

    rows = []
    print("| scope | mode | n | with p50 / p95 ms | without p50 / p95 ms |\n|---|---|---|---|---|")
    for name, pid, mode, qs in measured(buckets, modes, semantic_buckets, queries):
        row = {"scope": name, "mode": mode, "queries": len(qs),
               **alternating(engine, qs, pid, mode, {"conversation_pause": RANKING.conversation_pause},
                             {"conversation_pause": 0.0})}
        rows.append(row)
        print(f"| {name} | {mode} | {len(qs)} | {row['with_p50_ms']} / {row['with_p95_ms']} | "
              f"{row['without_p50_ms']} / {row['without_p95_ms']} |")
    return rows


def alternating(engine, qs: list[dict], pid: str, mode: str, on: dict, off: dict) -> dict:
    """Each query searched with ``on`` and with ``off`` (ranking settings), the order flipping every
    query, so that machine noise falls on both columns alike; p50 / p95 of each, ``with_`` / ``without_``."""
    from hermes_side.search.request import parse_search_args
    from hermes_side.search.settings import overridden

    times: dict[str, list[float]] = {"with": [], "without": []}
    for i, q in enumerate(qs):
        for arm in (("with", "without") if i % 2 else ("without", "with")):
            req = parse_search_args({"query": q["text"], "mode": mode, "limit": 3})
            with overridden(**(on if arm == "with" else off)):
                t0 = time.perf_counter()
                engine.search(req, project=pid)
                times[arm].append((time.perf_counter() - t0) * 1000)
    return {f"{arm}_{k}": v for arm, t in times.items() for k, v in summary(t).items() if k != "n"}


def print_table(report: dict) -> None:
    h = report["hermes_search_messages"]
    print(f"\nload average at start: {report['load_avg']}; scope map cold {report['scope_map_cold_ms']} ms, "
          f"warm {report['scope_map_warm_ms']} ms")
    print("\n| scope | messages | mode | p50 ms | p95 ms | p95 ÷ Hermes p95 | ÷ normal (p50, p95) |")
    print("|---|---|---|---|---|---|---|")
    for r in report["rows"]:
        vs = f"{r['vs_normal_p50']}, {r['vs_normal_p95']}" if "vs_normal_p50" in r else ""
        print(f"| {r['scope']} | {r['messages']:,} | {r['mode']} | {r['p50_ms']} | {r['p95_ms']} | "
              f"{r['p95_ms'] / h['p95_ms']:.2f} | {vs} |")
    print(f"| all (unscoped) | {report.get('messages', 0):,} | Hermes search_messages | {h['p50_ms']} | "
          f"{h['p95_ms']} | 1.00 | |")
    print(f"\nHermes returned nothing for {h['empty_results']} of {h['n']} queries.")
    if "indexing" in report:
        print(f"indexing: {report['indexing']}")
    if "api" in report:
        api = report["api"]
        print("\n| API clients | p50 ms | p95 ms | req/s | failed |\n|---|---|---|---|---|")
        for c in (1, 8, 32):
            r = api[f"clients_{c}"]
            print(f"| {c} | {r['p50_ms']} | {r['p95_ms']} | {r['req_per_s']} | {r['failed']}/{r['requests']} |")
        print(f"API RSS: {api['rss_mb_after_warmup']} MB after warm-up, {api['rss_mb_end']} MB at the end")


if __name__ == "__main__":
    main()
