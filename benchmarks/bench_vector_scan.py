"""How long one query's exact vector scan takes over a scope of N vectors, per storage format.

    python -m benchmarks vector_scan [--sizes 10000 100000 1000000] [--repeat 20]

What chose brute force over an index library for semantic search (issue 25): the scan of a
scope's vectors is ``embedding/vectors.py``'s ``score_rows`` (int8 rows + a float32 scale per
row, converted to float32 in cache-sized blocks, BLAS sgemv), next to a float16 matrix (half
the memory of float32, numpy's float16 matmul) and float32. When ``faiss`` (``IndexFlatIP``) or
``usearch`` (exact search) is importable it is measured too, on the same float32 vectors; neither
is a dependency. Median and p95 milliseconds per query over ``--repeat`` random queries, the
load average printed beside. Vectors are random unit vectors: a scan's cost does not depend on
what they say.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

DIM = 384


def timed(fn, queries: np.ndarray) -> dict[str, float]:
    fn(queries[0])  # warm
    times = []
    for q in queries:
        t0 = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return {"p50_ms": round(statistics.median(times), 2), "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2)}


def top(scores: np.ndarray, k: int = 58) -> np.ndarray:
    return np.argpartition(-scores, k)[:k]


def measure(n: int, rng: np.random.Generator, queries: np.ndarray):
    """(format, bytes, timings) of each way to scan ``n`` random unit vectors."""
    from hermes_side.embedding.vectors import decode, encode, score_rows

    m = np.empty((n, DIM), np.float32)
    for start in range(0, n, 100_000):
        part = rng.standard_normal((min(100_000, n - start), DIM)).astype(np.float32)
        m[start:start + len(part)] = part / np.linalg.norm(part, axis=1, keepdims=True)
    q8, scales = decode(encode(m), DIM)
    f16 = m.astype(np.float16)
    yield "int8 + scale (shipped)", q8.nbytes + scales.nbytes, timed(lambda q: top(score_rows(q8, scales, q)), queries)
    yield "float16", f16.nbytes, timed(lambda q: top(f16 @ q.astype(np.float16)), queries)
    yield "float32", m.nbytes, timed(lambda q: top(m @ q), queries)
    try:
        import faiss  # noqa: PLC0415
    except ImportError:
        faiss = None
    if faiss is not None:
        flat = faiss.IndexFlatIP(DIM)
        flat.add(m)
        yield "faiss IndexFlatIP (float32)", m.nbytes, timed(lambda q: flat.search(q[None], 58), queries)
    try:
        from usearch.index import search as usearch_exact  # noqa: PLC0415
    except ImportError:
        usearch_exact = None
    if usearch_exact is not None:
        yield "usearch exact (float32)", m.nbytes, timed(
            lambda q: usearch_exact(m, q, 58, metric="ip", exact=True), queries)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(1)
    queries = rng.standard_normal((args.repeat, DIM)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    print(f"load average {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores")
    print("| vectors in scope | format | memory MB | p50 ms | p95 ms |")
    print("|---|---|---|---|---|")
    for n in args.sizes:
        for name, nbytes, t in measure(n, rng, queries):
            print(f"| {n:,} | {name} | {nbytes / 2**20:.0f} | {t['p50_ms']} | {t['p95_ms']} |", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
