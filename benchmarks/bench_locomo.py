"""Retrieval quality on LoCoMo, per language, every method side by side over the same state.db.

    python -m benchmarks locomo                     # every suite, every method (one run)
    python -m benchmarks locomo --suites en wrong   # a subset; --files 26 30 for fewer conversations
    python -m benchmarks locomo --json benchmarks/out/locomo.json --per-question

Suites (benchmarks/README.md has the details):

- ``en``: English LoCoMo dev, English questions (recall@5/@10, session hit@3, best-message hit@3, msg@1/@5);
- ``zh``: Chinese history (LoCoMo-zh evidence turns as Chinese messages), Chinese questions (msg@1/@5);
- ``zhpool`` / ``zhmix``: the Chinese history with all five conversations in one project / with each
  conversation's other turns kept beside its Chinese ones in English (issue 26; not asked in ``wrong``);
- ``xl``: the English conversations as history, the Chinese questions (msg@1/@5);
- ``rev``: the other way round — the Chinese history, the English questions whose evidence turns it
  holds (msg@1/@5; no target in issue 9, measured so the direction is not blind);
- ``wrong``: every question of the suites above asked in a *different* conversation's project; the share
  that comes back empty or all-low should be ≥ 0.80.

Methods: Hermes ``search_messages`` (unscoped, as typed), plain BM25, plain BM25 + dictionary (the
question's Chinese words also OR-ed as their CC-CEDICT translations), plain e5 (``baselines.py``) and the
plugin's keyword / semantic / hybrid through the tool entry point (``SearchEngine.search``, ``limit=5``).
The Hermes homes and the embedding index live in ``--cache-dir`` and are reused while the data and
the loader are unchanged, so a second run only embeds what the plugin's chunking changed.
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

from benchmarks.locomo_homes import DEFAULT_CACHE, build_embedding_index, cached_corpus, loader_fingerprint
from benchmarks.locomo_methods import (
    LIMIT,
    PLUGIN_MODES,
    baseline_method,
    deja_method,
    hermes_method,
    plugin_method,
)
from benchmarks.locomo_report import checks, report, run_suite, run_wrong
from benchmarks.query_cache import QueryCache
from benchmarks.worlds import locomo, locomo_zh
from benchmarks.worlds.locomo import Corpus, Question, default_data_dir
from benchmarks.worlds.locomo_zh import default_zh_dir

SUITES = ("en", "zh", "zhpool", "zhmix", "xl", "rev", "agent", "agentxl", "wrong")
BASELINES = ("hermes", "bm25", "bm25dict", "e5", "deja")
ALL_METHODS = (*BASELINES, *PLUGIN_MODES)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suites", nargs="*", default=list(SUITES), choices=SUITES)
    ap.add_argument("--methods", nargs="*", default=list(ALL_METHODS), choices=ALL_METHODS)
    ap.add_argument("--files", nargs="*", help="conversation files, e.g. 26 30 (default: all in --data-dir)")
    ap.add_argument("--data-dir", type=Path, default=default_data_dir())
    ap.add_argument("--zh-dir", type=Path, default=default_zh_dir())
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


def run(args: argparse.Namespace, changes: dict[str, object]) -> int:
    for d in (args.data_dir, args.zh_dir):
        if not d.is_dir():
            print(f"data not found at {d} (see --data-dir / --zh-dir)", file=sys.stderr)
            return 2

    files = sorted(args.files) if args.files else None
    tag = "-".join(files) if files else "all"
    suites = set(args.suites)
    need_en = bool(suites & {"en", "xl", "rev"}) or "wrong" in suites
    need_zh = bool(suites & {"zh", "rev"}) or "wrong" in suites
    need_agent = bool(suites & {"agent", "agentxl"})
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
    semantic = any(m in args.methods for m in ("semantic", "hybrid"))
    queries = QueryCache(args.query_cache) if args.query_cache else None
    rows: list[dict] = []
    per_q: list | None = [] if args.per_question else None
    from hermes_side.search.engine import SearchEngine  # noqa: PLC0415
    from hermes_side.search.request import SearchRequest  # noqa: PLC0415

    worlds = []
    if need_en:
        home = (args.cache_dir / f"en-{tag}").resolve()
        corpus, reused = cached_corpus(home, loader_fingerprint(args.data_dir),
                                       lambda h: locomo.load_locomo(h, args.data_dir, files))
        xl = locomo_zh.zh_questions(corpus, args.zh_dir) if suites & {"xl", "wrong"} else []
        worlds.append(("en", corpus, [("en", corpus.questions, True), ("xl", xl, False)]))
        print(f"English home ({'reused' if reused else 'built'}): {corpus.message_count()} messages,"
              f" {len(corpus.questions)} English and {len(xl)} Chinese questions", flush=True)
    if need_zh:
        home = (args.cache_dir / f"zh-{tag}").resolve()
        corpus, reused = cached_corpus(home, loader_fingerprint(args.data_dir, args.zh_dir),
                                       lambda h: locomo_zh.load_locomo_zh(h, args.data_dir, args.zh_dir, files))
        rev = locomo_zh.questions_over(corpus, worlds[0][1].questions) if worlds and "rev" in suites else []
        worlds.append(("zh", corpus, [("zh", corpus.questions, False), ("rev", rev, False)]))
        print(f"Chinese home ({'reused' if reused else 'built'}): {corpus.message_count()} messages,"
              f" {len(corpus.questions)} Chinese and {len(rev)} English questions", flush=True)
    # The Chinese history again: all five conversations in one project (zhpool), or each
    # conversation's other turns kept beside its Chinese ones in English (zhmix; issue 26).
    for world, shape in (("zhpool", {"pooled": True}), ("zhmix", {"mixed": True})):
        if world not in suites:
            continue
        home = (args.cache_dir / f"{world}-{tag}").resolve()
        corpus, reused = cached_corpus(home, loader_fingerprint(args.data_dir, args.zh_dir),
                                       lambda h, shape=shape: locomo_zh.load_locomo_zh(h, args.data_dir, args.zh_dir,
                                                                                         files, **shape))
        worlds.append((world, corpus, [(world, corpus.questions, False)]))
        chinese = sum("：" in t.text.split(" ", 1)[0] for t in corpus.by_message.values())
        print(f"{world} home ({'reused' if reused else 'built'}): {corpus.message_count()} messages"
              f" ({chinese} Chinese) in {len(set(corpus.projects.values()))} project(s),"
              f" {len(corpus.questions)} Chinese questions", flush=True)
    if need_agent:
        home = (args.cache_dir / f"agent-{tag}").resolve()
        corpus, reused = cached_corpus(home, loader_fingerprint(args.data_dir),
                                       lambda h: locomo.load_locomo(h, args.data_dir, files, agent=True))
        axl = locomo_zh.zh_questions(corpus, args.zh_dir) if "agentxl" in suites else []
        worlds.append(("agent", corpus, [("agent", corpus.questions, True), ("agentxl", axl, False)]))
        print(f"Agent-transcript home ({'reused' if reused else 'built'}): {corpus.message_count()} turns"
              f" (+ tool calls, tool results, {len(corpus.copies)} compaction copies),"
              f" {len(corpus.questions)} English and {len(axl)} Chinese questions", flush=True)

    for world, corpus, sets in worlds:
        if semantic:
            info[f"index-{world}"] = build_embedding_index(corpus.home)
            print(f"  index {world}: {info[f'index-{world}']}", flush=True)
        os.environ["HERMES_HOME"] = str(corpus.home)
        if queries is not None:
            queries.serve(corpus.home)
        methods: dict[str, Callable] = {}
        closers = []
        if "hermes" in args.methods:
            methods["hermes"], close = hermes_method(corpus)
            closers.append(close)
        if "bm25" in args.methods and world != "agent":  # the plain baselines: plain world only
            from benchmarks.baselines import PlainBM25  # noqa: PLC0415
            methods["bm25"] = baseline_method(PlainBM25(corpus).rank)
        if "bm25dict" in args.methods and world != "agent":  # the plain baselines: plain world only
            from benchmarks.baselines import PlainBM25  # noqa: PLC0415
            methods["bm25dict"] = baseline_method(PlainBM25(corpus).rank_translated)
        if "e5" in args.methods and world != "agent":  # the plain baselines: plain world only
            from benchmarks.baselines import PlainE5  # noqa: PLC0415
            methods["e5"] = baseline_method(PlainE5(corpus, corpus.home / "plain_e5.npz").rank)
        if deja_bin is not None:
            methods["deja"] = deja_method(corpus, deja_bin)
        engine = SearchEngine(corpus.home)
        status: dict[str, dict[str, int]] = {}
        for mode in PLUGIN_MODES:
            if mode in args.methods:
                status[mode] = {}
                methods[mode] = plugin_method(engine, corpus, mode, status[mode], not args.no_recall_at_k)
        convs = sorted(corpus.projects)
        if args.latency and world == "en":
            engine.search(SearchRequest(query="warm up", mode="hybrid", limit=LIMIT),
                          project=next(iter(corpus.projects.values())))  # the model loads here, untimed
            info["latency"] = latency_loop(engine, corpus, sets[0][1], deja_bin, args.latency)
            print(f"  latency (hybrid vs deja-vu, alternating): {info['latency']}", flush=True)
        for suite, questions, english in sets:
            if suite in suites and questions:
                rows.extend(run_suite(suite, questions, methods, english, per_q))
            if "wrong" in suites and questions and len(set(corpus.projects.values())) > 1 and world in ("en", "zh"):
                mine = {m: v for m, v in methods.items() if m in (*PLUGIN_MODES, "deja")}
                rows.extend(run_wrong(suite, questions, convs, mine, per_q))
        info[f"semantic_status-{world}"] = status
        for close in closers:
            close()

    print(report(rows))
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

