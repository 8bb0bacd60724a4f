"""Cold start: one search in a fresh process, as a user types it, ours next to deja-vu's.

    python -m benchmarks cold_start [--rounds 5]

Over a copy of the English LoCoMo home that ``python -m benchmarks locomo`` built (benchmarks/out/homes/en-all,
the embedding index included), with the plugin enabled in the copy's config.yaml:

- ``hermes --version``: Hermes' own CLI start, the floor any plugin command stands on;
- ``hermes recall search --mode keyword|hybrid --project <conv> <question>`` (English, Chinese);
- ``deja search --json --project work/<conv> <question>`` (deja-vu, from the npm registry: see
  ``deja.py``; its index built once before).

Median and max wall time of ``--rounds`` fresh processes each, one after the other, on whatever
else the machine is doing (the load average is printed beside).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

QUESTIONS = {"en": "What did Caroline research?", "zh": "Caroline 研究了什么？"}


def timed(cmd: list[str], env: dict[str, str], rounds: int) -> dict[str, float]:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        times.append(time.perf_counter() - t0)
        if proc.returncode not in (0, 1):  # deja exits 1 when nothing matched
            raise SystemExit(f"{' '.join(cmd[:4])} … exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
    return {"median_s": round(statistics.median(times), 3), "max_s": round(max(times), 3)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--home", type=Path, default=HERE / "out" / "homes" / "en-all",
                    help="a home `python -m benchmarks locomo` built (default: benchmarks/out/homes/en-all)")
    ap.add_argument("--deja", type=Path, help="the deja-vu binary (default: .cache/deja-vu from npm, then PATH)")
    args = ap.parse_args(argv)
    if not (args.home / "corpus.pickle").exists():
        print(f"no benchmark home at {args.home}: run python -m benchmarks locomo --suites en first", file=sys.stderr)
        return 2
    from benchmarks import deja  # noqa: PLC0415

    hermes = shutil.which("hermes", path=str(Path(sys.executable).parent)) or shutil.which("hermes")
    if hermes is None:
        print("the hermes command is not installed in this environment", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="cold-start-") as tmp:
        home = Path(tmp) / "home"
        shutil.copytree(args.home, home, ignore=shutil.ignore_patterns("deja"))
        (home / "config.yaml").write_text(json.dumps({"plugins": {"enabled": ["project-history-recall"]}}))
        corpus = pickle.loads((home / "corpus.pickle").read_bytes())
        corpus.home = home
        conv = sorted(corpus.projects)[0]
        env = {**os.environ, "HERMES_HOME": str(home)}
        rows: dict[str, dict[str, float]] = {"hermes --version": timed([hermes, "--version"], env, args.rounds)}
        for lang, question in QUESTIONS.items():
            for mode in ("keyword", "hybrid"):
                cmd = [hermes, "recall", "search", "--mode", mode, "--project", corpus.projects[conv], question]
                rows[f"hermes recall search --mode {mode} ({lang})"] = timed(cmd, env, args.rounds)
        binary = deja.find_binary(args.deja)
        if binary is None:
            print(f"deja-vu MISSING: install it with {deja.INSTALL_HINT}")
        else:
            peer = deja.DejaVu(binary, corpus)
            for lang, question in QUESTIONS.items():
                cmd = [str(binary), "search", "--json", "--limit", "5", "--project", peer.project(conv), "--", question]
                rows[f"deja search --project ({lang})"] = timed(cmd, peer.env, args.rounds)
    print(f"load average {os.getloadavg()[0]:.2f}; {args.rounds} fresh processes each\n")
    print("| command | median s | max s |\n|---|---|---|")
    for name, row in rows.items():
        print(f"| `{name}` | {row['median_s']} | {row['max_s']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
