"""The world's manifest (projects, counts, buckets, planted facts) and its queries."""

from __future__ import annotations

import math
import random

from .text import TextGen
from .vocab import Vocab
from .words import YEAR_SECONDS, YEAR_START


def build_manifest(args, home, projects, convs, facts, fact_sid, anchors, C_eff):
    plist = []
    for pr in projects:
        st = pr.stats
        plist.append({
            "id": pr.pid, "key": pr.key, "kind": pr.kind, "name": pr.name, "slug": pr.slug,
            "folder": pr.folders[0] if pr.folders else None, "folders": pr.folders,
            "git_folders": pr.git_folders, "repo_root": pr.repo_root, "topics": pr.topics,
            "zh_ratio": pr.zh_ratio, "codename": pr.codename, "zh_codename": pr.zh_codename,
            "target_messages": pr.size, **st,
            "session_count": st["sessions"],
        })
    scoped = [p for p in plist if p["kind"] != "home"]
    buckets = {}
    for name, target in (("1k", 1_000), ("10k", 10_000), ("100k", 100_000)):
        best = min(scoped, key=lambda p: (abs(math.log(max(p["messages"], 1) / target)), p["key"]))
        buckets[name] = best["id"]
    for f in facts:
        f["session_id"] = fact_sid[f["id"]]
        f["project"] = next(p.pid for p in projects if p.key == f["project_key"])
        c = convs[f["conv"]]
        f["state"] = "compacted" if (c.op == "compact" and len(c.seg_rows) == 1) else "active"
    return {
        "version": 1,
        "generator": "python -m benchmarks synth",
        "params": {"messages": args.messages, "conversations": args.conversations,
                   "conversations_effective": C_eff, "projects": args.projects, "seed": args.seed,
                   "write_mode": args.write_mode},
        "home": str(home),
        "time_range": [YEAR_START, YEAR_START + YEAR_SECONDS],
        "totals": {
            "messages": sum(p["messages"] + p["subagent_messages"] for p in plist),
            "attributed_messages": sum(p["messages"] for p in plist),
            "subagent_messages": sum(p["subagent_messages"] for p in plist),
            "sessions": sum(p["sessions"] + p["subagent_sessions"] for p in plist),
            "conversations": len(convs),
            "lineages": sum(p["lineages"] for p in plist),
            "compacted": sum(p["compacted"] for p in plist),
            "rewound": sum(p["rewound"] for p in plist),
            "archived_sessions": sum(p["archived_sessions"] for p in plist),
            "summary_rows": sum(p["summary_rows"] for p in plist),
        },
        "buckets": buckets,
        "bucket_sizes": {k: next(p["messages"] for p in plist if p["id"] == v) for k, v in buckets.items()},
        "projects": plist,
        "planted": [{k: f[k] for k in ("id", "project", "session_id", "lang", "term", "term_kind", "state",
                                       "question", "keywords", "answer")} for f in facts],
    }


def build_queries(args, vocab: Vocab, projects, facts, fact_sid, manifest):
    rng = random.Random(f"queries:{args.seed}")
    b = manifest["buckets"]
    bucket_ids = list(dict.fromkeys([b["1k"], b["10k"], b["100k"]]))
    big = b["100k"]
    qs = []

    def add(text, lang, kind, projs, expect=None):
        q = {"id": f"q{len(qs) + 1:03d}", "text": text, "lang": lang, "kind": kind, "projects": projs}
        if expect is not None:
            q["expect"] = expect
        qs.append(q)

    for f in facts:
        projs = list(dict.fromkeys([f["project"], big]))
        exp = {p: ([f["session_id"]] if p == f["project"] else []) for p in projs}
        add(f["term"], "zh" if f["term_kind"] == "zh_term" else "en", "rare", projs, exp)
    for f in facts:
        projs = list(dict.fromkeys([f["project"], big]))
        exp = {p: ([f["session_id"]] if p == f["project"] else []) for p in projs}
        add(f["question"], f["lang"], "question", projs, exp)
    # common single words (top of the Zipf ranks)
    for w in vocab.en_nouns[:12]:
        add(w, "en", "common", bucket_ids + ["home"])
    for w in vocab.zh_nouns[:12]:
        add(w, "zh", "common", bucket_ids + ["home"])
    for i in range(3):
        add(next(p.codename for p in projects if p.pid == big) if i == 0 else vocab.tech.items[i],
            "en", "common", bucket_ids)
    # mixed zh + identifiers
    for _ in range(20):
        tpl = rng.choice(("修复 {id} 的 {err}", "{cls} {zn}{zp}", "{tech} {zn}怎么配置", "{err} {zn}"))
        pick = rng.choice(bucket_ids)
        pr = next(p for p in projects if p.pid == pick)
        tg = TextGen(vocab, pr, rng)
        add(tg.fill(tpl), "mixed", "mixed", bucket_ids)
    # rare general terms from the long tail (may or may not occur)
    for _ in range(10):
        add(vocab.camel.items[rng.randrange(vocab.camel.n // 2, vocab.camel.n)], "en", "rare_tail", bucket_ids)
    # 2-3 keyword combos (topic words + mid-frequency words)
    target = max(200, len(qs) + 30)
    while len(qs) < target:
        pick = rng.choice(bucket_ids)
        pr = next(p for p in projects if p.pid == pick)
        tg = TextGen(vocab, pr, rng)
        if rng.random() < 0.5:
            tpl = rng.choice(("{n} {v}", "{n} {adj} {n2}", "{tech} {n}", "{n} {err}", "{v} {n} {tech}", "{jar} {n}"))
            lang = "en"
        else:
            tpl = rng.choice(("{zn} {zp}", "{zn} {zv}", "{zc}", "{zn} {zn2} {zv}", "{tech} {zn}"))
            lang = "zh"
        add(tg.fill(tpl), lang, "keywords", bucket_ids)
    return {"version": 1, "seed": args.seed, "buckets": manifest["buckets"], "queries": qs}

