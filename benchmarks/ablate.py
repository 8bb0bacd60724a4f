"""What each ranking constant is worth: every dev set with it removed, against the shipped settings,
judged by the paired protocol (``paired.py``).

    python -m benchmarks ablate                       # every variant, every dev set, hybrid and keyword
    python -m benchmarks ablate --only rrf_k_60 cross_script_0 --jobs 2
    python -m benchmarks ablate --suites en zh xl agent agentxl wrong   # the older LoCoMo-only table

Each variant is ``benchmarks dev --set …`` in its own process (hybrid and keyword, per question,
the query vectors cached), beside one run of the shipped settings. Per set, method and metric:
questions gained g and lost l by the variant, and the exact two-sided sign test on those g + l
discordant pairs (``paired.sign_test``); p < 0.05 is beyond noise. A constant *earns its place*
when removing it loses beyond noise on some set (the shipped value is better somewhere) and gains
beyond noise on none; the table also says whether keeping it would *land* as a new change under
the protocol (gains on ≥ 2 sets, losses on none). Variants that only act on a
Chinese question skip the sets whose questions are English (identical there by construction).

"Removed" means the simpler pipeline without the constant: the textbook value, no cap, no floor,
no bonus, or one threshold where there were two. Markdown to stdout and ``--out``;
benchmarks/README.md, "Ranking switches judged on every dev set", keeps the last one.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks import dev_worlds, paired

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
    "member_names_off": ("a member's name dropped as common like any word", ["member_names=false"]),
    "common_spread_off": ("a word common in the scope's rows dropped however few conversations hold it",
                          ["common_spread=0"]),
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
    "passage_off": ("no list of conversations by their best passage (3 turns, weight 0.25)", ["passage_weight=0"]),
    "passage_one_turn": ("a conversation's best passage of one turn, not 3", ["passage_turns=1"]),
    "weak_sense_1": ("a word held only through a sense the project lacks counts fully (not half)",
                     ["weak_sense=1.0"]),
    "more_per_row_0": ("a row shows no other turns of its conversation (more_per_row 2 → 0)", ["more_per_row=0"]),
    "day_with_year_only": ("a day named without its year names no time", ["day_without_year=false"]),
    "named_time_one_list": ("the named time's conversations one list of the fusion, not leading",
                            ["named_time_leads=false"]),
    "held_then_found_only": ("only conversations a search found are held then (none by the day alone)",
                             ["held_then_unfound=false"]),
    "conversation_is_session": ("a conversation is a session lineage (no cut at an hour's pause)",
                                ["conversation_pause=0"]),
    "buffer_every_turn": ("every turn counts every buffered line of the group it holds", ["buffer_once=false"]),
    "translated_list_off": ("a Chinese question searched as asked only (no translated list)",
                            ["translated_list=false"]),
    "reverse_translation_off": ("an English question over Chinese history searched as typed only",
                                ["reverse_translation=false"]),
    "reverse_sure_only": ("an English word's own entry's first sixteen Chinese words only",
                          ["reverse_lemmas=false"]),
    "named_time_labels_first": ("in a small project, rows by their labels before the named time's conversations",
                                ["named_time_over_labels=false"]),
}
# act only on a question with Chinese words: the sets asked in English are identical by construction
CHINESE_ONLY = {"piece_alpha_0", "senses_1", "weigh_senses_off", "translated_adds_off", "weak_sense_1",
                "translated_list_off"}
# act only on an English question (over history holding Chinese): the sets asked in Chinese likewise
ENGLISH_ONLY = {"reverse_translation_off", "reverse_sure_only"}
ENGLISH_SETS = {"en", "rev", "revpool", "revmix", "friends", "friends_shared", "friends_long", "mben",
                "mben_long", "mbrev", "agent"}


def suites_for(name: str, suites: list[str]) -> list[str]:
    """The sets a variant can move; none (not even ``wrong``) when only sets of the other language
    were asked for — ``wrong`` alone would ask LoCoMo's sets instead."""
    left = [s for s in suites if not (name in CHINESE_ONLY and s in ENGLISH_SETS)
            and not (name in ENGLISH_ONLY and s not in ENGLISH_SETS | {"wrong"})]
    return left if set(left) - {"wrong"} else []


def run_variant(name: str, sets: list[str], suites: list[str], methods: list[str], cache: Path, where: Path) -> Path:
    out = where / f"{name}.json"
    cmd = paired.dev_command(suites_for(name, suites), methods, sets, out, cache)
    with (where / f"{name}.log").open("w") as log:
        proc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    if proc.returncode not in (0, 1):  # 1: a check failed, which is a result, not an error
        raise SystemExit(f"{name}: benchmarks dev exited {proc.returncode}, see {where / (name + '.log')}")
    return out


def judge(changes: list[paired.Change], method: str) -> tuple[str, str]:
    """(verdict, the sets that moved) of removing one constant: ``changes`` are removed − shipped."""
    removed = paired.verdict(changes, method)  # "gains" here are what removing it gains
    kept = paired.verdict([paired.Change(c.set, c.method, c.metric, c.head, c.base, c.lost, c.gained, c.n)
                           for c in changes], method)
    moved = [f"{s} −{'/'.join(c.metric for c in cs)}" for s, cs in removed.losses.items()]
    moved += [f"{s} +{'/'.join(c.metric for c in cs)}" for s, cs in removed.gains.items()]
    if removed.gains and removed.losses:
        word = "mixed: removing it gains on some sets and loses on others"
    elif removed.losses:
        word = "earns its place" + (" (and would land)" if kept.lands else "")
    elif removed.gains:
        word = "costs: removing it gains" + (" (removal would land)" if removed.lands else "")
    else:
        word = "moves nothing beyond noise"
    return word, ", ".join(moved) or "–"


def table(dirs: list[Path], names: list[str], method: str) -> str:
    """One line per variant; its changes are every set's of every run folder that holds both the
    baseline and the variant (runs of different sets, e.g. a keyword pass and a hybrid pass)."""
    lines = [f"| removed ({method}) | verdict | beyond noise (− the removal loses, + it gains) |"
             " every set's largest change (removed − shipped; gained/lost, p) |", "|---|---|---|---|"]
    for name in names:
        changes = [c for d in dirs if (d / "baseline.json").exists() and (d / f"{name}.json").exists()
                   for c in paired.compare(d / "baseline.json", d / f"{name}.json") if c.method == method]
        if not changes:
            continue
        word, moved = judge(changes, method)
        biggest = {}
        for c in changes:
            if c.gained or c.lost:
                best = biggest.get(c.set)
                if best is None or (c.p, -abs(c.gained - c.lost)) < (best.p, -abs(best.gained - best.lost)):
                    biggest[c.set] = c
        detail = "; ".join(f"{s} {c.metric} {c.cell()}" for s, c in biggest.items()) or "identical"
        lines.append(f"| {VARIANTS[name][0]} | {word} | {moved} | {detail} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", choices=sorted(VARIANTS), help="these variants (default: all)")
    ap.add_argument("--methods", nargs="*", default=["hybrid", "keyword"], choices=["keyword", "semantic", "hybrid"])
    ap.add_argument("--suites", nargs="*", default=[*dev_worlds.DEV_SETS, "wrong"])
    ap.add_argument("--cache-dir", type=Path, default=HERE / "out" / "homes")
    ap.add_argument("--jobs", type=int, default=1, help="variants run at once (each is one process)")
    ap.add_argument("--reuse", action="store_true", help="reuse the results already in --dir")
    ap.add_argument("--dir", type=Path, default=OUT, help="each variant's run (default benchmarks/out/ablate)")
    ap.add_argument("--also", type=Path, nargs="*", default=[], help="more run folders whose sets join the table")
    ap.add_argument("--table-only", action="store_true", help="only the table, of the variants already run")
    ap.add_argument("--out", type=Path, help="the table (default: <dir>/ablation.md)")
    args = ap.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    args.out = args.out or args.dir / "ablation.md"
    names = args.only or list(VARIANTS)
    todo = {"baseline": [], **{n: VARIANTS[n][1] for n in names}}
    paths: dict[str, Path] = {}

    def one(item: tuple[str, list[str]]) -> tuple[str, Path]:
        name, sets = item
        done = args.dir / f"{name}.json"
        if args.reuse and done.exists():
            return name, done
        if not suites_for(name, args.suites):
            return name, done  # nothing it could move here; the table skips it
        print(f"running {name} {' '.join(sets)}", flush=True)
        return name, run_variant(name, sets, args.suites, args.methods, args.cache_dir, args.dir)

    if args.table_only:
        todo = {n: v for n, v in todo.items() if (args.dir / f"{n}.json").exists()}
        args.reuse = True
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for name, path in pool.map(one, todo.items()):
            paths[name] = path
    paths.pop("baseline", None)
    out = "\n\n".join(table([args.dir, *args.also], list(VARIANTS), method) for method in args.methods)
    print(out)
    args.out.write_text(out + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
