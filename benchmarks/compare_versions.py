"""Search latency of this checkout next to an earlier commit's, in one run.

    python -m benchmarks compare_versions --base 807e72d [--rounds 2] [--suites en zh xl]

The earlier commit is checked out into a temporary git worktree; both run ``benchmarks locomo
--methods hybrid`` over the same cached homes (benchmarks/out/homes, copied for the base so
neither writes the other's index), alternated A B A B so that load from other processes drifts
over both. Per suite, the median over rounds of each run's p95 (ms per question, the local model
included) and the ratio head / base; the quality columns show both score the same questions.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def locomo_command(checkout: Path) -> list[str]:
    """How ``checkout`` runs the LoCoMo benchmark: the suite's entry point, or for a commit from
    before the suite (benchmarks as scripts) its ``bench_locomo.py``."""
    if (checkout / "benchmarks" / "__main__.py").exists():
        return [sys.executable, "-m", "benchmarks", "locomo"]
    return [sys.executable, str(checkout / "benchmarks" / "bench_locomo.py")]


def run(checkout: Path, homes: Path, suites: list[str], out: Path) -> dict[str, dict]:
    from benchmarks.worlds.locomo import default_data_dir  # noqa: PLC0415  (this checkout's ../shared)
    from benchmarks.worlds.locomo_zh import default_zh_dir  # noqa: PLC0415

    cmd = [*locomo_command(checkout), "--suites", *suites,
           "--methods", "hybrid", "--cache-dir", str(homes), "--json", str(out),
           "--data-dir", str(default_data_dir()), "--zh-dir", str(default_zh_dir())]
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    proc = subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"bench_locomo in {checkout} exited {proc.returncode}: {proc.stderr[-800:]}")
    return {r["suite"]: r for r in json.loads(out.read_text())["results"] if r.get("p95_ms") is not None}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the earlier commit")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--suites", nargs="*", default=["en", "zh", "xl"])
    ap.add_argument("--homes", type=Path, default=HERE / "out" / "homes")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="compare-") as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), args.base],
                       check=True, capture_output=True)
        try:
            base_homes = Path(tmp) / "homes"
            shutil.copytree(args.homes, base_homes)
            runs: dict[str, list[dict[str, dict]]] = {"base": [], "head": []}
            for i in range(args.rounds):
                for name, checkout, homes in (("base", base, base_homes), ("head", ROOT, args.homes)):
                    print(f"round {i + 1}: {name}", flush=True)
                    runs[name].append(run(checkout, homes, args.suites, Path(tmp) / f"{name}{i}.json"))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], capture_output=True)
    print(f"\nhybrid, {args.rounds} alternated rounds each; base {args.base}\n")
    print("| suite | p95 ms base | p95 ms head | head ÷ base | msg@1 base / head | msg@5 base / head |")
    print("|---|---|---|---|---|---|")
    for suite in runs["head"][0]:
        p95 = {n: statistics.median(r[suite]["p95_ms"] for r in runs[n]) for n in runs}
        first = {n: runs[n][0][suite] for n in runs}
        print(f"| {suite} | {p95['base']:.1f} | {p95['head']:.1f} | {p95['head'] / p95['base']:.2f} |"
              f" {first['base']['msg@1']:.3f} / {first['head']['msg@1']:.3f} |"
              f" {first['base']['msg@5']:.3f} / {first['head']['msg@5']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
