"""Writing the world through Hermes' own code: import or append, then the post-operations."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from . import text
from .conversation import SessOut, gen_conversation
from .manifest import build_manifest, build_queries
from .plan import Conv, plan
from .vocab import Vocab, _fmt_dur
from .words import SUBDIRS


def _import_dict(s: SessOut) -> dict[str, Any]:
    d = {"id": s.sid, "source": s.source, "model": s.model, "started_at": s.start,
         "ended_at": s.ended_at, "end_reason": s.end_reason, "title": s.title,
         "parent_session_id": s.parent, "messages": s.rows}
    if s.model_config:
        d["model_config"] = s.model_config
    if s.cwd and not s.cwd_via_update:
        d["cwd"] = s.cwd  # CLI records cwd only (no git metadata)
    return d


def _append_session(db, s: SessOut):
    kw = {"model": s.model}
    if s.model_config:
        kw["model_config"] = s.model_config
    if s.parent:
        kw["parent_session_id"] = s.parent
    if s.cwd and not s.cwd_via_update:
        kw["cwd"] = s.cwd
    db.create_session(s.sid, s.source, **kw)
    for m in s.rows:
        db.append_message(s.sid, m["role"], m.get("content"), tool_name=m.get("tool_name"),
                          tool_calls=m.get("tool_calls"), tool_call_id=m.get("tool_call_id"),
                          finish_reason=m.get("finish_reason"), timestamp=m["timestamp"])
    if s.title:
        db.set_session_title(s.sid, s.title)


def _post_ops(db, s: SessOut, mode: str) -> dict[str, int]:
    res = {"rewound": 0, "writes": 0}
    if s.cwd and s.cwd_via_update:
        db.update_session_cwd(s.sid, s.cwd, s.branch, s.repo_root)
        res["writes"] += 1
    if s.peer:
        db.record_gateway_session_peer(s.sid, **s.peer)
        res["writes"] += 1
    if s.op == "compact":
        db.archive_and_compact(s.sid, s.compact_msgs)
        res["writes"] += 1
    elif s.op == "rewind":
        ids = [m["id"] for m in db.get_messages(s.sid)]
        r = db.rewind_to_message(s.sid, ids[s.rewind_index])
        res["rewound"] = r["rewound_count"]
        expect = len(s.rows) - s.rewind_index
        if r["rewound_count"] != expect:
            raise RuntimeError(f"rewind of {s.sid}: expected {expect} rows, got {r['rewound_count']}")
        res["writes"] += 1
    for m in s.cont:
        db.append_message(s.sid, m["role"], m["content"], timestamp=m["timestamp"])
        res["writes"] += 1
    if mode == "append" and s.end_reason:
        db.end_session(s.sid, s.end_reason)
        res["writes"] += 1
    return res


class Progress:
    def __init__(self, total: int, quiet: bool):
        self.total = total
        self.quiet = quiet
        self.t0 = time.time()
        self.last = 0.0
        self.done = 0

    def update(self, done: int, force: bool = False, extra: str = ""):
        self.done = done
        now = time.time()
        if self.quiet or (not force and now - self.last < 2.0):
            return
        self.last = now
        el = now - self.t0
        rate = done / el if el > 0 else 0.0
        eta = (self.total - done) / rate if rate > 0 else 0.0
        pct = 100.0 * done / self.total if self.total else 100.0
        sys.stderr.write(f"[synth] {done:,}/{self.total:,} rows ({pct:5.1f}%)  {rate:,.0f} rows/s  "
                         f"elapsed {_fmt_dur(el)}  ETA {_fmt_dur(eta)} {extra}\n")
        sys.stderr.flush()


def _git_init(path: str):
    subprocess.run(["git", "init", "-q", "-b", "main", path], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _clean(home: Path):
    for name in ("state.db", "state.db-wal", "state.db-shm", "projects.db", "projects.db-wal",
                 "projects.db-shm", "synth_manifest.json", "synth_queries.json"):
        p = home / name
        if p.exists():
            p.unlink()
    if (home / "work").exists():
        shutil.rmtree(home / "work")


def run(args) -> dict[str, Any]:
    t_start = time.time()
    home = Path(args.home).expanduser().resolve()
    home.mkdir(parents=True, exist_ok=True)
    if (home / "state.db").exists() or (home / "projects.db").exists():
        if not args.force:
            raise SystemExit(f"{home} already has state.db/projects.db; pass --force to regenerate")
        _clean(home)
    os.environ["HERMES_HOME"] = str(home)
    text.use_hermes_markers()
    from hermes_cli import projects_db
    from hermes_state import SessionDB

    vocab = Vocab(args.seed)
    projects, convs, facts, anchors, C_eff = plan(args, home, vocab)
    if C_eff != args.conversations and not args.quiet:
        sys.stderr.write(f"[synth] --conversations {args.conversations} clamped to {C_eff} "
                         f"(at least 40 messages per conversation)\n")

    # ---- folders, git repos, projects.db ----
    for pr in projects:
        for f in pr.folders:
            for sub in SUBDIRS:
                Path(f, sub).mkdir(parents=True, exist_ok=True)
        for g in pr.git_folders:
            _git_init(g)
    with projects_db.connect_closing(home / "projects.db") as pconn:
        for pr in projects:
            if pr.kind == "explicit":
                pr.pid = projects_db.create_project(pconn, name=pr.name, slug=pr.slug, folders=pr.folders,
                                                    description=f"{' / '.join(pr.topics)} work")
            elif pr.kind == "auto":
                pr.pid = f"auto:{pr.slug}"
            else:
                pr.pid = "home"
    for pr in projects:
        pr.stats = {"messages": 0, "active": 0, "compacted": 0, "rewound": 0, "summary_rows": 0,
                    "tool_rows": 0, "sessions": 0, "session_ids": [], "conversations": len(pr.convs),
                    "lineages": 0, "archived_sessions": 0, "subagent_sessions": 0, "subagent_messages": 0,
                    "sources": {}, "first_ts": None, "last_ts": None}

    db = SessionDB(db_path=home / "state.db")
    prog = Progress(args.messages, args.quiet)
    written = 0
    titles: set = set()
    sids: set = set()
    fact_sid: dict[str, str] = {}
    batch: list[SessOut] = []
    batch_convs: list[tuple] = []
    batch_rows = 0
    batch_bytes = 0
    t_write0 = time.time()
    post_writes = 0

    def post(c: Conv, s: SessOut):
        nonlocal written, post_writes
        r = _post_ops(db, s, args.write_mode)
        post_writes += r["writes"]
        written += len(s.cont) + (len(s.compact_msgs) if s.op == "compact" else 0)
        _account(c, s, r)

    def flush():
        nonlocal batch, batch_convs, batch_rows, batch_bytes, written, post_writes
        if not batch:
            return
        if args.write_mode == "import":
            res = db.import_sessions([_import_dict(s) for s in batch])
            if not res.get("ok") or res.get("imported") != len(batch):
                raise RuntimeError(f"import_sessions failed: {json.dumps(res.get('errors'))[:2000]}")
            written += sum(len(s.rows) for s in batch)
        for c, sess in batch_convs:
            for s in sess:
                if args.write_mode == "append":
                    # live order: create + append, then compaction/rewind/end, then the continuation
                    _append_session(db, s)
                    written += len(s.rows)
                post(c, s)
                prog.update(written)
            if c.archived:
                db.set_session_archived(sess[-1].sid, True)
                post_writes += 1
        prog.update(written)
        batch, batch_convs, batch_rows, batch_bytes = [], [], 0, 0

    def _account(c: Conv, s: SessOut, r: dict[str, int]):
        st = c.project.stats
        n_rows = len(s.rows) + len(s.cont) + (len(s.compact_msgs) if s.op == "compact" else 0)
        if s.subagent:
            st["subagent_sessions"] += 1
            st["subagent_messages"] += n_rows
            return
        st["messages"] += n_rows
        st["sessions"] += 1
        st["session_ids"].append(s.sid)
        st["sources"][s.source] = st["sources"].get(s.source, 0) + 1
        st["tool_rows"] += sum(1 for m in s.rows if m["role"] == "tool")
        comp = len(s.rows) if s.op == "compact" else 0
        st["compacted"] += comp
        st["rewound"] += r["rewound"]
        st["active"] += n_rows - comp - r["rewound"]
        st["summary_rows"] += (1 if s.parent else 0) + (1 if s.op == "compact" else 0)
        if c.archived:
            st["archived_sessions"] += 1
        first = s.rows[0]["timestamp"]
        last = (s.cont or s.rows)[-1]["timestamp"]
        st["first_ts"] = first if st["first_ts"] is None else min(st["first_ts"], first)
        st["last_ts"] = last if st["last_ts"] is None else max(st["last_ts"], last)

    for c in convs:
        sess = gen_conversation(c, vocab, args.seed, titles, sids)
        for f in c.facts:
            if not f.get("planted"):
                raise RuntimeError(f"fact {f['id']} was not planted (conv {c.idx})")
            fact_sid[f["id"]] = sess[0].sid
        n = sum(len(s.rows) for s in sess)
        nbytes = sum(len(m["content"] or "") * 3 + 200 for s in sess for m in s.rows)
        if batch and (batch_rows + n > args.batch_messages or len(batch) + len(sess) > 450
                      or batch_bytes + nbytes > 20_000_000):
            flush()
        batch.extend(sess)
        batch_convs.append((c, sess))
        batch_rows += n
        batch_bytes += nbytes
    flush()
    # lineages = conversations made of more than one session
    for pr in projects:
        pr.stats["lineages"] = sum(1 for c in pr.convs if len(c.seg_rows) > 1)
    t_write = time.time() - t_write0
    prog.update(written, force=True, extra="(writes done)")

    t_opt0 = time.time()
    if not args.no_optimize:
        db.optimize_fts()
    t_opt = time.time() - t_opt0
    total_db_rows = db.message_count()
    db.close()
    if total_db_rows != args.messages:
        raise RuntimeError(f"state.db has {total_db_rows} messages, expected {args.messages}")

    manifest = build_manifest(args, home, projects, convs, facts, fact_sid, anchors, C_eff)
    manifest["timings"] = {"total_s": round(time.time() - t_start, 2), "write_s": round(t_write, 2),
                           "optimize_s": round(t_opt, 2), "write_mode": args.write_mode,
                           "post_op_writes": post_writes}
    sdb = home / "state.db"
    wal = home / "state.db-wal"
    manifest["sizes"] = {"state_db_bytes": sdb.stat().st_size,
                         "state_db_wal_bytes": wal.stat().st_size if wal.exists() else 0,
                         "projects_db_bytes": (home / "projects.db").stat().st_size}
    (home / "synth_manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1))
    queries = build_queries(args, vocab, projects, facts, fact_sid, manifest)
    (home / "synth_queries.json").write_text(json.dumps(queries, ensure_ascii=False, indent=1))
    return manifest

