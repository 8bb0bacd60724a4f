"""What each ranking constant is worth: the dev split with it removed, against the shipped settings.

    python -m benchmarks ablate                       # every variant, English + Chinese + cross-lingual
    python -m benchmarks ablate --only rrf_k_60 cross_script_0 --jobs 2

Each variant is ``benchmarks locomo --set …`` in its own process (hybrid and keyword; suites en, zh,
zhmix, xl, the agent-transcript worlds agent and agentxl, and wrong), per question, beside one baseline
run. A change counts only beyond noise: per
metric, questions gained g and lost l against the baseline, and the difference is noise unless
|g − l| > 1.96·√(g + l) (a two-sided sign test at 5 %, the paired test for hit/miss outcomes). The
table (markdown) goes to stdout and ``--out``; benchmarks/README.md, "Ablation", keeps the last one.

"Removed" means the simpler pipeline without the constant: the textbook value, no cap, no floor,
no bonus, or one threshold where there were two.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out" / "ablate"

# name → (what is removed, --set items)
VARIANTS: dict[str, tuple[str, list[str]]] = {
    "rrf_k_60": ("RRF k 5 → textbook 60", ["rrf_k=60"]),
    "bm25_b_0": ("BM25 without length normalisation (b 0.75 → 0)", ["bm25_b=0"]),
    "keyword_full_weight": ("keyword lists always at full weight (no coverage weight)", ["keyword_coverage_scale=1e9"]),
    "per_conversation_uncapped": ("no cap on keyword hits per conversation (8)", ["per_conversation=100000"]),
    "piece_alpha_0": ("every CJK character pair weighs 1 (no √n piece weight)", ["piece_alpha=0"]),
    "no_inflect_unstemmed": ("unstemmed words without inflections", ["inflect_unstemmed=false"]),
    "no_common_words": ("no words dropped as common in the scope", ["common_share=1.0"]),
    "senses_1": ("a Chinese word's first sense only (3)", ["senses=1"]),
    "cross_script_0": ("no margin bonus across scripts", ["cross_script=0"]),
    "sem_zero_0": ("meaning from a margin of 0, not 0.01", ["sem_zero=0"]),
    "one_medium": ("one medium threshold (no separate cross-script 0.32)", ["medium_cross_script=0.30"]),
    "conversation_best_hit": ("a conversation by its best message only (3 hits, decay 0.1)", ["conversation_hits=1"]),
    "level_order_off": ("rows by the conversation ranking alone, not by level first", ["level_order=false"]),
    "conversation_words_off": ("a row by its own message's words only", ["conversation_words=false"]),
    "weigh_senses_off": ("every sense of a Chinese word alike (no weighing by the project)", ["weigh_senses=false"]),
    "translated_adds_off": ("the translated list weighed by every word it finds, not only those it adds",
                            ["translated_adds=false"]),
    "more_within_limit": ("a row's other turns only from the limit best hits, not the top expand_top",
                          ["more_from_read=false"]),
    "conversation_tie_by_list": ("tied conversations in the best-messages list's order, not their best message's",
                                 ["conversation_tie_by_message=false"]),
    "passage_off": ("no list of conversations by their best passage (3 turns, weight 0.25)", ["passage_weight=0"]),
    "passage_one_turn": ("a conversation's best passage of one turn, not 3", ["passage_turns=1"]),
}
BINARY = {  # the hit/miss metrics tested per question; r@k are fractions and left to the main table
    "en": ("sess@1", "sess@3", "sess@5", "msg@1", "msg@5", "all-low"),
    "zh": ("msg@1", "msg@5", "all-low"),
    "zhmix": ("msg@1", "msg@5", "all-low"),
    "xl": ("msg@1", "msg@5", "all-low"),
    "agent": ("sess@1", "sess@3", "sess@5", "msg@1", "msg@5", "all-low"),
    "agentxl": ("msg@1", "msg@5", "all-low"),
    "wrong-en": ("quiet",), "wrong-zh": ("quiet",), "wrong-xl": ("quiet",),
}
LOWER_IS_BETTER = {"all-low"}


def run_variant(name: str, sets: list[str], methods: list[str]) -> Path:
    out = OUT / f"{name}.json"
    cmd = [sys.executable, "-m", "benchmarks", "locomo",
           "--suites", "en", "zh", "zhmix", "xl", "agent", "agentxl", "wrong",
           "--methods", *methods, "--json", str(out), "--per-question", "--no-recall-at-k",
           "--query-cache", str(OUT / "queries.pickle"), *(a for s in sets for a in ("--set", s))]
    log = (OUT / f"{name}.log").open("w")
    proc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    if proc.returncode not in (0, 1):  # 1: a target failed, which is a result, not an error
        raise SystemExit(f"{name}: bench_locomo exited {proc.returncode}, see {OUT / (name + '.log')}")
    return out


def per_question(path: Path) -> dict[tuple[str, str], list[dict]]:
    rows: dict[tuple[str, str], list[dict]] = {}
    for q in json.loads(path.read_text())["per_question"]:
        rows.setdefault((q["suite"], q["method"]), []).append(q)
    return rows


def compare(base: list[dict], other: list[dict], metric: str) -> tuple[float, float, int, int, bool]:
    """(baseline mean, variant mean, gained, lost, beyond noise) over the same questions in order."""
    b = [float(q[metric]) for q in base]
    v = [float(q[metric]) for q in other]
    gained = sum(1 for x, y in zip(b, v, strict=True) if y > x)
    lost = sum(1 for x, y in zip(b, v, strict=True) if y < x)
    if metric in LOWER_IS_BETTER:
        gained, lost = lost, gained
    beyond = abs(gained - lost) > 1.96 * math.sqrt(gained + lost) if gained + lost else False
    return sum(b) / len(b), sum(v) / len(v), gained, lost, beyond


def table(base: Path, variants: dict[str, Path], method: str) -> tuple[str, dict[str, bool]]:
    ref = per_question(base)
    lines = [f"| removed ({method}) | moved beyond noise | every change (variant − shipped; g/l questions) |",
             "|---|---|---|"]
    verdict = {}
    for name, path in variants.items():
        rows = per_question(path)
        moved, changes = [], []
        for suite, metrics in BINARY.items():
            key = (suite, method)
            if key not in ref or key not in rows:
                continue
            for metric in metrics:
                b, v, g, lost, beyond = compare(ref[key], rows[key], metric)
                if g or lost:
                    label = f"{suite} {metric} {v - b:+.3f} ({g}/{lost})"
                    changes.append(f"**{label}**" if beyond else label)
                    if beyond:
                        moved.append(f"{suite} {metric}")
        verdict[name] = bool(moved)
        lines.append(f"| {VARIANTS[name][0]} | {', '.join(moved) or 'nothing'} | {'; '.join(changes) or 'identical'} |")
    return "\n".join(lines), verdict


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", choices=sorted(VARIANTS), help="these variants (default: all)")
    ap.add_argument("--methods", nargs="*", default=["hybrid", "keyword"], choices=["keyword", "semantic", "hybrid"])
    ap.add_argument("--jobs", type=int, default=1, help="variants run at once (each is one process)")
    ap.add_argument("--reuse", action="store_true", help="reuse results already in benchmarks/out/ablate")
    ap.add_argument("--out", type=Path, default=OUT / "ablation.md")
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    names = args.only or list(VARIANTS)
    todo = {"baseline": [], **{n: VARIANTS[n][1] for n in names}}
    paths: dict[str, Path] = {}

    def one(item: tuple[str, list[str]]) -> tuple[str, Path]:
        name, sets = item
        done = OUT / f"{name}.json"
        if args.reuse and done.exists():
            return name, done
        print(f"running {name} {' '.join(sets)}", flush=True)
        return name, run_variant(name, sets, args.methods)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for name, path in pool.map(one, todo.items()):
            paths[name] = path
    base = paths.pop("baseline")
    text = []
    for method in args.methods:
        md, verdict = table(base, paths, method)
        text.append(md)
        idle = [n for n, moved in verdict.items() if not moved]
        text.append(f"\nMoved nothing beyond noise ({method}): {', '.join(idle) or 'none'}\n")
    out = "\n".join(text)
    print(out)
    args.out.write_text(out + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
