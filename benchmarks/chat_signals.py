"""What the chat-shaped dev sets carry that the ranker does not use yet — who said a turn, when it
was said, reply threads — and how much each could be worth, read from one dev run (issue 36, item 5).

    python -m benchmarks dev --suites friends friends_shared mbcn mben --json benchmarks/out/dev.json --per-question
    python -m benchmarks chat_signals benchmarks/out/dev.json [--method hybrid]

No search runs here: the run's per-question rows (what each method showed) and the worlds' own maps
(``ChatCorpus``: which utterances a row holds and who said them, which conversation a session is,
what a question names) are replayed. Oracles, not methods: each says how many questions a signal
could move at most if it were used perfectly, and how often it also points at a wrong row.

- **who** (FriendsQA): a question that names a member ("What did Ross want…"); is its evidence
  said by that member, and does the member's name also stand in the rows shown above it? Per-member
  sessions: the member is the session's; shared: the sender tag of the current message.
- **when** (MemoryBank): a question that names a day ("5月2日", "May 2nd") or a relative time;
  where the named day's conversation stands in the rows shown, and what putting it first would win.
- **reply threads**: the rows that carry a ``(引用: …)`` quote.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from collections import Counter
from pathlib import Path

from benchmarks.locomo_homes import DEFAULT_CACHE

SETS = {"friends": "friends", "friends_shared": "friends_shared", "mbcn": "mbcn", "mben": "mben"}


def _corpus(cache: Path, name: str):
    with (cache / name / "corpus.pickle").open("rb") as f:
        return pickle.load(f)


def _rows(run: Path, suite: str, method: str) -> list[dict]:
    rows = [q for q in json.loads(run.read_text())["per_question"] if q["suite"] == suite and q["method"] == method]
    return sorted(rows, key=lambda q: q["i"])


def member_of(corpus, mid: int) -> str:
    """Who asked the bot in a row: the session's member (per member), else the current sender."""
    held = corpus.holds.get(mid) or []
    return next((speaker for _, speaker, where in held if where == "current"), "")


def who(corpus, rows: list[dict]) -> dict:
    """Names in FriendsQA questions against the speakers of the evidence and of the rows shown."""
    out: Counter = Counter()
    for q, info, r in zip(corpus.questions, corpus.info, rows, strict=True):
        names = set(info["names"])
        if not names:
            continue
        out["name a member"] += 1
        spoke = bool(names & set(info["evidence_speakers"]))
        out["evidence said by a named member"] += spoke
        ev = set(q.evidence_message_ids)
        shown = r["shown"]
        first_ok = bool(r["sess@1"])
        if not first_ok:
            out["conv@1 missed"] += 1
            out["conv@1 missed, evidence said by a named member"] += spoke
            # would "rows whose sender / member is named come first" have helped?
            ev_rows = [m for m in ev if member_of(corpus, m) in names]
            out["conv@1 missed, an evidence row asked by a named member"] += bool(ev_rows)
            top = shown[0] if shown else None
            if top is not None:
                out["conv@1 missed, the wrong first row asked by a named member"] += member_of(corpus, top) in names
                text = corpus.by_message[top].text if top in corpus.by_message else ""
                out["conv@1 missed, the wrong first row holds a named member's line"] += any(
                    sp in names for _, sp, _ in corpus.holds.get(top) or [])
                out["conv@1 missed, the named name in the wrong first row's text"] += any(n.split()[0] in text
                                                                                       for n in names)
        if not r["msg@5"]:
            out["msg@5 missed"] += 1
            out["msg@5 missed, evidence said by a named member"] += spoke
    return dict(out)


def when(corpus, rows: list[dict]) -> dict:
    """Named days and relative times in MemoryBank questions against the days of the rows shown."""
    out: Counter = Counter()
    ranks: Counter = Counter()
    for info, r in zip(corpus.info, rows, strict=True):
        days = [corpus.when.get(corpus.by_message[m].session_id) for m in r["shown"] if m in corpus.by_message]
        out["questions"] += 1
        out["conv@1 hit"] += bool(r["sess@1"])
        if info["relative"]:
            out["name a relative time"] += 1
            out["relative, conv@1 hit"] += bool(r["sess@1"])
        named = info["named_day"]
        if not named:
            continue
        out["name a day"] += 1
        out["named day is an evidence day"] += bool(info["named_day_is_evidence"])
        out["named, conv@1 hit"] += bool(r["sess@1"])
        rank = days.index(named) + 1 if named in days else 0
        ranks[rank if rank else "not shown"] += 1
        if not r["sess@1"] and info["named_day_is_evidence"]:
            out["named, conv@1 missed, oracle (named day first) wins"] += 1
    out["rank of the named day among the rows shown"] = dict(sorted(ranks.items(), key=str))
    return dict(out)


def quotes(corpus) -> int:
    return sum("(引用: " in t.text for t in corpus.by_message.values())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", type=Path, help="a dev run's JSON written with --per-question")
    ap.add_argument("--methods", nargs="*", default=["hybrid", "keyword"])
    ap.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    args = ap.parse_args(argv)
    report: dict = {}
    for suite, home in SETS.items():
        if not (args.cache_dir / home / "corpus.pickle").exists():
            continue
        corpus = _corpus(args.cache_dir, home)
        report[suite] = {"reply quotes in rows": quotes(corpus)}
        for method in args.methods:
            rows = _rows(args.run, suite, method)
            if len(rows) != len(corpus.questions):
                continue
            report[suite][method] = who(corpus, rows) if suite.startswith("friends") else when(corpus, rows)
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
