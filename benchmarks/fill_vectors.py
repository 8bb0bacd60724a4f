"""Fill a benchmark home's embedding index with RANDOM unit vectors (and random latent terms) for one project.

For latency and memory measurements only: embedding 100k messages with the real model takes over
an hour on a 2-core machine, while a vector scan's cost and the process's memory do not depend on
what the vectors say. Latent terms (128 per message, as the local model stores them) are drawn
at random with each term's frequency in the real terms of 400 of the project's messages (the local
model run on them), so a real query's terms have posting lists as long as real text gives them —
scoring cost depends on that, not on which rows the terms land on. Rows get
``content_hash = "synthetic-random-vector"`` and the project's index markers are advanced, so
searches report ``ready`` and never start a catch-up. Retrieval quality must never be measured
on such a home; use a copy of the synth home, not a real profile.

    python -m benchmarks fill_vectors --home benchmarks/out/synth1m_vec --bucket 100k
    python -m benchmarks fill_vectors --home benchmarks/out/synth1m_vec --all

``--all`` gives every eligible message of the profile a vector (what a year of busy projects
leaves in embeddings.db), so a benchmark can show what a search in one project reads of it; the
latent terms are then those of the sampled real messages, each row taking one sample's terms.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

SYNTHETIC = "synthetic-random-vector"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--bucket", default="100k", help="scope bucket of synth_manifest.json")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sample", type=int, default=400, help="real messages whose latent terms are modelled")
    ap.add_argument("--all", action="store_true", help="every eligible message of the profile, not one bucket")
    args = ap.parse_args(argv)
    home = args.home.resolve()
    os.environ["HERMES_HOME"] = str(home)
    from hermes_side.embedding import load_settings, make_embedder, store
    from hermes_side.embedding.indexer import chunker_key
    from hermes_side.embedding.terms import TERMS_PER_TEXT, encode_terms
    from hermes_side.embedding.vectors import encode
    from hermes_side.search.engine import SearchEngine
    from hermes_side.stores.messages import MESSAGES_FROM, eligible_sql, message_text

    engine = SearchEngine(home)
    if args.all:
        project = "the whole profile"
        with engine.leased() as conn:
            rows = conn.execute(f"SELECT m.id, m.session_id {MESSAGES_FROM} WHERE {eligible_sql(conn)}"
                                " ORDER BY m.id").fetchall()
    else:
        project = json.loads((home / "synth_manifest.json").read_text())["buckets"][args.bucket]
        sessions = sorted(engine.scope_map().sessions_in({"kind": "explicit", "id": project}))
        with engine.leased() as conn:
            rows = conn.execute(
                f"SELECT m.id, m.session_id {MESSAGES_FROM}"
                f" WHERE {eligible_sql(conn)}"
                " AND m.session_id IN (SELECT value FROM json_each(?)) ORDER BY m.id",
                (json.dumps(sessions),)).fetchall()
    settings = load_settings(home)
    embedder = make_embedder(home, settings)
    fingerprint = embedder.fingerprint
    rng = np.random.default_rng(args.seed)
    sample = [int(i) for i in rng.choice(len(rows), min(args.sample, len(rows)), replace=False)]
    with engine.leased() as conn:
        texts = [message_text(r[0]) for r in conn.execute(
            "SELECT content FROM messages WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps([rows[i][0] for i in sample]),))]
    real_terms = embedder.embed_terms(texts) or []
    freq = term_frequencies(real_terms)
    db = store.connect(home)
    t0 = time.time()
    try:
        for start in range(0, len(rows), 5000):
            part = rows[start:start + 5000]
            vecs = rng.standard_normal((len(part), 384)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            if args.all and real_terms:  # each row takes one sampled real message's terms
                term_blobs = [real_terms[i] for i in rng.integers(0, len(real_terms), len(part))]
            else:
                term_blobs = [encode_terms(rng.choice(len(freq), TERMS_PER_TEXT, replace=False, p=freq),
                                           rng.random(TERMS_PER_TEXT) + 0.01) for _ in part]
            chunk_rows = [store.ChunkRow(sid, mid, 0, SYNTHETIC, blob, terms)
                          for (mid, sid), blob, terms in zip(part, encode(vecs), term_blobs, strict=True)]
            marks: dict[str, int] = {}
            for mid, sid in part:
                marks[sid] = max(marks.get(sid, 0), mid)
            store.write_batch(db, fingerprint, 384, chunk_rows, [], marks, chunker_key(settings))
    finally:
        db.close()
    which = "all" if args.all else args.bucket
    print(f"{len(rows)} messages of {project} ({which}) given random vectors in {time.time() - t0:.1f} s")


def term_frequencies(blobs: list[bytes]) -> np.ndarray:
    """How often each latent term occurs in real texts' terms (``blobs``), as probabilities."""
    from hermes_side.embedding.terms import decode_terms

    counts = np.zeros(1 << 14, np.float64)
    for blob in blobs:
        ids, _ = decode_terms(blob)
        np.add.at(counts, ids.astype(np.int64), 1.0)
    counts += 0.01  # every term possible
    return counts / counts.sum()


if __name__ == "__main__":
    main()
