"""Two arms of the dev run, compared per question on every dev set: the protocol a ranking change
must pass (issue 36).

    python -m benchmarks paired --base main --head .                  # a branch against main
    python -m benchmarks paired --base . --head .:passage_weight=0    # a setting changed (settings.py)
    python -m benchmarks paired --base abc123 --head . --suites en friends mbcn --methods hybrid

An arm is ``REV[:NAME=VALUE,…]``: ``.`` is this checkout as it is, anything else a commit, checked
out into a temporary worktree whose ``hermes_side`` this checkout's benchmarks run against (its
homes copied, so neither arm writes the other's index); the settings are ``--set`` items of
``benchmarks dev``. Both arms answer the same questions (``--per-question``, query vectors cached).

**The test.** Per set, method and metric (conversation hit@1 / @5, evidence msg@1 / @5, and quiet
for the set asked in another project), the questions the head gets right and the base wrong
(gained) and the other way round (lost); the questions both get right or both wrong say nothing
about the difference. The exact two-sided sign test on those discordant pairs: under "no
difference" each is a coin toss, p = min(1, 2·P[Binomial(g + l, ½) ≤ min(g, l)]).

**The rule** (issue 36's). A change *lands* (per method) when it gains beyond noise (p < 0.05) on at
least two dev sets and loses beyond noise (p < 0.05, any metric) on none. The verdict says when
the gains come from one data family (``dev_worlds.FAMILIES``): sets of one family share their
conversations (friends and friends_shared are the same scenes), so their gains are not independent.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchmarks import dev_worlds

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out" / "paired"
QUERIES = HERE / "out" / "queries.pickle"
METRICS = ("sess@1", "sess@5", "msg@1", "msg@5")
# In its own project a question whose every row is labelled "low" reads as "nothing related here":
# ``labelled`` (1 − ``all-low``) is the other side of the wrong project's ``quiet``, so a change to
# the labels cannot buy quiet elsewhere with silence at home unseen (cross_script 0 gained xl quiet
# 18/0 and took xl's in-project all-low from 0.083 to 0.130).
LABELLED = "labelled"
ALPHA = 0.05


def sign_test(gained: int, lost: int) -> float:
    """Exact two-sided sign test on ``gained + lost`` discordant pairs."""
    n = gained + lost
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(gained, lost) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


@dataclass
class Change:
    set: str  # the dev set (a wrong-project run counts for its set)
    method: str
    metric: str
    base: float
    head: float
    gained: int
    lost: int
    n: int

    @property
    def p(self) -> float:
        return sign_test(self.gained, self.lost)

    @property
    def beyond(self) -> bool:
        return self.p < ALPHA

    def cell(self) -> str:
        p = f"{self.p:.3f}" if self.p >= 0.001 else f"{self.p:.0e}"
        return f"{self.head - self.base:+.3f} ({self.gained}/{self.lost}, p {p})"


def per_question(path: Path) -> dict[tuple[str, str], list[dict]]:
    rows: dict[tuple[str, str], list[dict]] = {}
    for q in json.loads(path.read_text())["per_question"]:
        rows.setdefault((q["suite"], q["method"]), []).append(q)
    return rows


def compare(base: Path, head: Path) -> list[Change]:
    """Every (set, method, metric) both runs answered, paired question by question."""
    a, b = per_question(base), per_question(head)
    out = []
    for key in a.keys() & b.keys():
        suite, method = key
        qa, qb = a[key], b[key]
        if len(qa) != len(qb) or [q["question"] for q in qa] != [q["question"] for q in qb]:
            raise SystemExit(f"{suite}/{method}: the two runs asked different questions")
        wrong = suite.startswith("wrong-")
        for metric in (("quiet",) if wrong else (*METRICS, LABELLED)):
            field = "all-low" if metric == LABELLED else metric
            if field not in qa[0]:
                continue
            x = [float(q[field]) for q in qa]
            y = [float(q[field]) for q in qb]
            if metric == LABELLED:
                x, y = [1 - v for v in x], [1 - v for v in y]
            out.append(Change(suite.removeprefix("wrong-"), method, metric, sum(x) / len(x), sum(y) / len(y),
                              sum(1 for i, j in zip(x, y, strict=True) if j > i),
                              sum(1 for i, j in zip(x, y, strict=True) if j < i), len(x)))
    order = {s: i for i, s in enumerate(dev_worlds.FAMILIES)}
    return sorted(out, key=lambda c: (c.method, order.get(c.set, 99), c.set, c.metric))


@dataclass
class Verdict:
    gains: dict[str, list[Change]]
    losses: dict[str, list[Change]]

    @property
    def families(self) -> set[str]:
        return {dev_worlds.FAMILIES.get(s, s) for s in self.gains}

    @property
    def lands(self) -> bool:
        return not self.losses and len(self.gains) >= 2

    def line(self, method: str) -> str:
        gained = ", ".join(f"{s} ({', '.join(c.metric for c in cs)})" for s, cs in self.gains.items()) or "none"
        lost = ", ".join(f"{s} ({', '.join(c.metric for c in cs)})" for s, cs in self.losses.items()) or "none"
        word = "LANDS" if self.lands else "does not land"
        one = f" (gains from one data family, {next(iter(self.families))})" if len(self.families) == 1 else ""
        return f"{method}: {word} — gains beyond noise on {gained}{one}; losses beyond noise on {lost}"


def verdict(changes: list[Change], method: str) -> Verdict:
    gains: dict[str, list[Change]] = {}
    losses: dict[str, list[Change]] = {}
    for c in changes:
        if c.method == method and c.beyond:
            (gains if c.gained > c.lost else losses).setdefault(c.set, []).append(c)
    return Verdict(gains, losses)


def table(changes: list[Change], method: str) -> str:
    """One line per set: each metric's change (head − base; gained/lost questions, p)."""
    mine = [c for c in changes if c.method == method]
    metrics = [m for m in (*METRICS, LABELLED, "quiet") if any(c.metric == m for c in mine)]
    lines = [f"| set ({method}) | " + " | ".join(metrics) + " |", "|---|" + "---|" * len(metrics)]
    for s in dict.fromkeys(c.set for c in mine):
        by = {c.metric: c for c in mine if c.set == s}
        cells = []
        for m in metrics:
            c = by.get(m)
            cells.append("–" if c is None else (f"**{c.cell()}**" if c.beyond else c.cell()))
        lines.append(f"| {s} ({next(iter(by.values())).n}) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report(changes: list[Change], methods: list[str]) -> str:
    text = []
    for method in methods:
        if any(c.method == method for c in changes):
            text += [table(changes, method), "", verdict(changes, method).line(method), ""]
    return "\n".join(text)


# ---- running an arm ------------------------------------------------------------------------------
def parse_arm(value: str) -> tuple[str, list[str]]:
    rev, _, sets = value.partition(":")
    return rev or ".", [s for s in sets.split(",") if s]


def dev_command(suites: list[str], methods: list[str], sets: list[str], out: Path, cache: Path,
                split: str = "dev") -> list[str]:
    return [sys.executable, "-m", "benchmarks", "dev", "--suites", *suites, "--methods", *methods,
            "--json", str(out), "--per-question", "--no-recall-at-k", "--query-cache", str(QUERIES),
            "--cache-dir", str(cache), "--friendsqa-split", split, *(a for s in sets for a in ("--set", s))]


def run_arm(name: str, arm: str, suites: list[str], methods: list[str], tmp: Path, cache: Path,
            split: str = "dev") -> Path:
    """``benchmarks dev`` for one arm; the JSON it wrote."""
    rev, sets = parse_arm(arm)
    out = OUT / f"{name}.json"
    log = (OUT / f"{name}.log").open("w")
    env, cwd = dict(os.environ), ROOT
    if rev != ".":
        checkout = tmp / f"checkout-{name}"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(checkout), rev],
                       check=True, capture_output=True)
        shim = tmp / f"shim-{name}"  # this checkout's benchmarks, that commit's hermes_side
        shim.mkdir()
        (shim / "benchmarks").symlink_to(HERE)
        env["PYTHONPATH"] = f"{shim}{os.pathsep}{checkout}"
        cwd = shim
        if cache.exists():
            copied = tmp / f"homes-{name}"
            shutil.copytree(cache, copied, ignore=shutil.ignore_patterns("deja"))
            cache = copied
    print(f"{name}: {arm}", flush=True)
    proc = subprocess.run(dev_command(suites, methods, sets, out, cache, split), cwd=cwd, env=env, stdout=log,
                          stderr=subprocess.STDOUT)
    if proc.returncode not in (0, 1):  # 1: a check failed, which is a result, not an error
        raise SystemExit(f"{name} ({arm}) exited {proc.returncode}, see {OUT / (name + '.log')}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="REV[:NAME=VALUE,…]; '.' is this checkout")
    ap.add_argument("--head", required=True, help="REV[:NAME=VALUE,…]; '.' is this checkout")
    ap.add_argument("--suites", nargs="*", default=[*dev_worlds.DEV_SETS, "wrong"])
    ap.add_argument("--methods", nargs="*", default=["hybrid", "keyword"], choices=["keyword", "semantic", "hybrid"])
    ap.add_argument("--cache-dir", type=Path, default=HERE / "out" / "homes")
    ap.add_argument("--friendsqa-split", choices=("dev", "tst"), default="dev",
                    help="tst is held back: once, at the end, reported apart")
    ap.add_argument("--reuse", action="store_true", help="compare the arms' JSON already in benchmarks/out/paired")
    ap.add_argument("--out", type=Path, default=OUT / "paired.md")
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    paths = {name: OUT / f"{name}.json" for name in ("base", "head")}
    if not args.reuse:
        with tempfile.TemporaryDirectory(prefix="paired-") as tmp:
            try:
                for name in sorted(("base", "head"), key=lambda n: parse_arm(getattr(args, n))[0] != "."):
                    paths[name] = run_arm(name, getattr(args, name), args.suites, args.methods, Path(tmp),
                                          args.cache_dir, args.friendsqa_split)
            finally:
                for checkout in Path(tmp).glob("checkout-*"):
                    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(checkout)],
                                   capture_output=True)
    text = (f"base {args.base}, head {args.head}; per question, exact two-sided sign test on the discordant "
            f"pairs, **bold** p < {ALPHA}; load {os.getloadavg()[0]:.1f}\n\n"
            + report(compare(paths["base"], paths["head"]), args.methods))
    print(text)
    args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
