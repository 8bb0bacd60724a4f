"""Fill a benchmark home's embedding index with RANDOM unit vectors for one project.

For latency and memory measurements only: embedding 100k messages with the real model takes over
an hour on a 2-core machine, while a vector scan's cost and the process's memory do not depend on
what the vectors say. Rows get ``content_hash = "synthetic-random-vector"`` and the project's
index markers are advanced, so searches report ``ready`` and never start a catch-up. Retrieval
quality must never be measured on such a home; use a copy of the synth home, not a real profile.

    .venv/bin/python benchmarks/fill_vectors.py --home benchmarks/out/synth1m_vec --bucket 100k
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

SYNTHETIC = "synthetic-random-vector"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--bucket", default="100k", help="scope bucket of synth_manifest.json")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    home = args.home.resolve()
    os.environ["HERMES_HOME"] = str(home)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from hermes_side.embedding import load_settings, make_embedder, store
    from hermes_side.embedding.indexer import chunker_key
    from hermes_side.embedding.vectors import encode
    from hermes_side.messages import ELIGIBLE_MESSAGE_SQL
    from hermes_side.search import SearchEngine

    project = json.loads((home / "synth_manifest.json").read_text())["buckets"][args.bucket]
    engine = SearchEngine(home)
    sessions = sorted(engine.scope_map().sessions_in({"kind": "explicit", "id": project}))
    with engine.leased() as conn:
        rows = conn.execute(
            "SELECT m.id, m.session_id FROM messages m JOIN sessions s ON s.id = m.session_id"
            f" WHERE {ELIGIBLE_MESSAGE_SQL}"
            " AND m.session_id IN (SELECT value FROM json_each(?)) ORDER BY m.id", (json.dumps(sessions),)).fetchall()
    settings = load_settings(home)
    fingerprint = make_embedder(home, settings).fingerprint
    rng = np.random.default_rng(args.seed)
    db = store.connect(home)
    t0 = time.time()
    try:
        for start in range(0, len(rows), 5000):
            part = rows[start:start + 5000]
            vecs = rng.standard_normal((len(part), 384)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            chunk_rows = [store.ChunkRow(sid, mid, 0, SYNTHETIC, blob)
                          for (mid, sid), blob in zip(part, encode(vecs), strict=True)]
            marks: dict[str, int] = {}
            for mid, sid in part:
                marks[sid] = max(marks.get(sid, 0), mid)
            store.write_batch(db, fingerprint, 384, chunk_rows, [], marks, chunker_key(settings))
    finally:
        db.close()
    print(f"{len(rows)} messages of {project} ({args.bucket}) given random vectors in {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
