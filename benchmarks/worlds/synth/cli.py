"""Deterministic synthetic Hermes history for the latency/scale benchmark.

Writes ``$HOME_DIR/state.db`` and ``$HOME_DIR/projects.db`` **through Hermes' own code**
(``hermes_state.SessionDB`` and ``hermes_cli.projects_db``), so every row goes through Hermes'
INSERT paths and its FTS triggers (``messages_fts`` + ``messages_fts_trigram``).

    python -m benchmarks synth --home DIR --messages 1000000 --conversations 5000 \
        --projects 50 --seed 1

What ends up in DIR (all deterministic for a given seed and size; see benchmarks/README.md):

* ``work/...``            real folders: explicit project folders (some ``git init``-ed) and
                          unregistered git repos ("auto" projects).
* ``projects.db``         explicit projects (``projects_db.create_project``, 1-3 folders each).
* ``state.db``            sessions + messages: cli/tui sessions in project folders, tui sessions in
                          unregistered repos (``update_session_cwd(sid, cwd, branch, root)``), Home
                          sessions without cwd (``api_server``/``telegram``), compression lineages
                          (2-3 sessions, children without cwd, parents ``end_reason='compression'``),
                          in-place compaction (``archive_and_compact``), rewinds
                          (``rewind_to_message``), archived conversations (``set_session_archived``),
                          delegate subagent sessions, tool rows; timestamps spread over 2025.
* ``synth_manifest.json`` projects with counts, scope buckets ``{"1k","10k","100k"}``, planted facts.
* ``synth_queries.json``  ~200 queries (en/zh; common, keywords, questions, rare terms, mixed).

Write paths (``--write-mode``):

* ``import`` (default): ``SessionDB.import_sessions`` (Hermes' bulk restore API: one write
  transaction per batch of <=500 sessions / <=50k messages, rows inserted by Hermes'
  ``_insert_message_rows`` so triggers/FTS run normally). It also takes ``started_at``,
  ``ended_at``, ``end_reason``, ``cwd``, ``title``, ``parent_session_id`` and ``archived`` so the
  session rows carry realistic historical times.
* ``append``: the live path, one Hermes call per row: ``create_session`` / ``append_message`` /
  ``end_session`` / ``set_session_title``. Same content; ``started_at``/``ended_at`` are wall-clock
  because those Hermes methods take no time argument. ~1.5k rows/s on 2 cores and it slows down as
  the FTS index grows (Hermes runs an FTS ``optimize`` every 1000 writes) — use it for small sizes.

Either way the post-processing goes through Hermes methods: ``update_session_cwd``,
``record_gateway_session_peer``, ``rewind_to_message``, ``archive_and_compact``, ``append_message``,
``set_session_archived``. No SQL is written to state.db by this script.

Nothing in Hermes is patched: project ids are the ones ``create_project`` draws (random on every
Hermes line — 0.19's private ``_new_project_id`` is gone in 0.22), and the manifest records them.
"""

from __future__ import annotations

import argparse
from typing import Any

from .write import run


def print_report(m: dict[str, Any]):
    rows = sorted(m["projects"], key=lambda p: -p["messages"])
    inv = {v: k for k, v in m["buckets"].items()}
    print(f"{'project':<24} {'kind':<8} {'messages':>9} {'sessions':>8} {'lin':>4} {'cmp':>6} {'rew':>5} "
          f"{'arch':>4} {'sub':>5}  bucket")
    for p in rows:
        print(f"{(p['slug'] or p['id'])[:24]:<24} {p['kind']:<8} {p['messages']:>9,} {p['sessions']:>8} "
              f"{p['lineages']:>4} {p['compacted']:>6} {p['rewound']:>5} {p['archived_sessions']:>4} "
              f"{p['subagent_messages']:>5}  {inv.get(p['id'], '')}")
    t = m["totals"]
    print(f"total messages {t['messages']:,} (attributed {t['attributed_messages']:,}, subagent "
          f"{t['subagent_messages']:,}); sessions {t['sessions']:,}; conversations {t['conversations']:,}; "
          f"lineages {t['lineages']}; compacted rows {t['compacted']:,}; rewound rows {t['rewound']:,}; "
          f"archived sessions {t['archived_sessions']}")
    print("buckets: " + ", ".join(f"{k}={v} ({m['bucket_sizes'][k]:,} msgs)" for k, v in m["buckets"].items()))
    tm = m["timings"]
    print(f"time {tm['total_s']}s (writes {tm['write_s']}s, fts optimize {tm['optimize_s']}s); "
          f"state.db {m['sizes']['state_db_bytes'] / 1e6:,.1f} MB"
          + (f" (+ WAL {m['sizes']['state_db_wal_bytes'] / 1e6:,.1f} MB)" if m["sizes"]["state_db_wal_bytes"] else ""))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", required=True, help="HERMES_HOME to create (state.db, projects.db, work/)")
    ap.add_argument("--messages", type=int, default=20_000, help="exact number of message rows (default 20000)")
    ap.add_argument("--conversations", type=int, default=None,
                    help="approximate conversations (default messages/200; clamped to messages/40)")
    ap.add_argument("--projects", type=int, default=50, help="scopes incl. one Home and ~20%% auto repos")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--write-mode", choices=("import", "append"), default="import",
                    help="import = SessionDB.import_sessions batches (fast); append = one append_message per row")
    ap.add_argument("--batch-messages", type=int, default=40_000, help="rows per import_sessions call (<=50000)")
    ap.add_argument("--no-optimize", action="store_true", help="skip the final SessionDB.optimize_fts()")
    ap.add_argument("--force", action="store_true", help="delete an existing synthetic home's dbs and work/ first")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr, no report on stdout")
    args = ap.parse_args(argv)
    if args.messages < 200:
        ap.error("--messages must be >= 200")
    if args.conversations is None:
        args.conversations = max(1, args.messages // 200)
    args.batch_messages = max(1000, min(args.batch_messages, 49_000))
    m = run(args)
    if not args.quiet:
        print_report(m)


if __name__ == "__main__":
    main()
