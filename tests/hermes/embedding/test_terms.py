"""Latent terms (the local model's sparse head): stored per chunk, scored through an inverted index,
fused with the dense list — and an index built before them is upgraded by the next run."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from hermes_side.embedding import build_index, indexer, store, terms
from hermes_side.embedding.terms import TermIndex, decode_terms, encode_terms, query_weights
from hermes_side.search.semantic import semantic_search

from .helpers import Counting

FP = "local:multilingual-e5-small:384"


def _forward_scores(blobs: list[bytes | None], query: np.ndarray) -> np.ndarray:
    out = np.zeros(len(blobs), np.float32)
    for row, blob in enumerate(blobs):
        if blob:
            ids, weights = decode_terms(blob)
            out[row] = float(query[ids.astype(np.int64)] @ weights.astype(np.float32))
    return out


def test_blob_round_trip_is_a_unit_vector_and_drops_zero_weights():
    blob = encode_terms(np.array([5, 16383, 7]), np.array([3.0, 4.0, 0.0]))
    ids, weights = decode_terms(blob)
    assert ids.tolist() == [5, 16383]
    assert np.isclose(np.linalg.norm(weights.astype(np.float32)), 1.0, atol=1e-3)
    assert encode_terms(np.array([1]), np.array([0.0])) == b""


@pytest.mark.parametrize("tail_min", [1 << 30, 50])  # all rows in the forward tail; rebuilt many times
def test_inverted_scores_equal_a_forward_scan(monkeypatch, tail_min):
    monkeypatch.setattr(terms, "_TAIL_MIN", tail_min)
    rng = np.random.default_rng(7)
    blobs: list[bytes | None] = []
    for i in range(400):
        if i % 50 == 3:
            blobs.append(None)  # indexed before terms existed
        elif i % 50 == 4:
            blobs.append(b"")  # a text with no active term
        else:
            ids = rng.choice(300, size=int(rng.integers(1, 20)), replace=False)
            blobs.append(encode_terms(ids, rng.random(len(ids)) + 0.01))
    index = TermIndex()
    for start in range(0, len(blobs), 37):  # appended in uneven pages, as the store is read
        index.append(start, blobs[start:start + 37])
        index.settle()
    query = query_weights(encode_terms(np.arange(0, 300, 7), rng.random(43) + 0.01))
    got = index.snapshot().scores(query, len(blobs))
    assert np.allclose(got, _forward_scores(blobs, query), atol=2e-3)
    assert index.rows_with_terms == len([b for b in blobs if b is not None])
    # a search that only knows the first rows never sees a later one
    assert np.allclose(index.snapshot().scores(query, 100), got[:100], atol=2e-3)


def test_every_chunk_of_the_local_model_has_terms(history, settings, local_model):
    history.turns("s1", "We moved the nightly backup to 3am.", "数据库迁移定在周五晚上。")
    assert build_index(history.home, settings, embedder=Counting(local_model)).status == "done"
    conn = store.connect(history.home)
    try:
        rows = conn.execute("SELECT terms FROM chunks WHERE model_fingerprint = ?", (FP,)).fetchall()
    finally:
        conn.close()
    assert len(rows) == 2 and all(r[0] for r in rows)
    assert all(0 < len(decode_terms(r[0])[0]) <= terms.TERMS_PER_TEXT for r in rows)


class _WithoutTerms(Counting):
    """The local model as an index built before latent terms existed saw it."""

    def embed_terms(self, texts):
        return None

    def query_terms(self, text):
        return None


def test_an_index_built_without_terms_gets_them_on_the_next_run(history, settings, local_model, monkeypatch):
    history.turns("s1", *[f"turn {i}: we talked about topic {i}" for i in range(6)])
    # the previous release: no terms, and its chunker key without "/terms"
    monkeypatch.setattr(indexer, "chunker_key", lambda s: f"{s.chunk_size}/{s.chunk_overlap}/alone")
    old = build_index(history.home, settings, embedder=_WithoutTerms(local_model))
    monkeypatch.undo()
    assert old.status == "done" and old.chunks_embedded == 6
    again = Counting(local_model)
    stats = build_index(history.home, settings, embedder=again)
    assert stats.status == "done" and stats.chunks_embedded == 6  # each chunk once more, now with terms
    conn = store.connect(history.home)
    try:
        rows = conn.execute("SELECT message_id, terms FROM chunks WHERE model_fingerprint = ?", (FP,)).fetchall()
    finally:
        conn.close()
    assert len(rows) == 6 and all(r[1] for r in rows)  # replaced, not duplicated
    assert build_index(history.home, settings, embedder=Counting(local_model)).chunks_embedded == 0


def test_a_store_from_before_terms_is_migrated_in_place(history, settings, local_model):
    path = store.store_path(history.home)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(store._MIGRATIONS[0] + "; PRAGMA user_version = 1;")
    conn.execute("INSERT INTO chunks(session_id, message_id, chunk_index, content_hash, model_fingerprint, vector,"
                 " created_at) VALUES ('s0', 1, 0, 'h', ?, ?, 0)", (FP, b"\0" * 388))
    conn.commit()
    conn.close()
    conn = store.connect(history.home)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(store._MIGRATIONS)
        assert conn.execute("SELECT session_id, terms FROM chunks").fetchall() == [("s0", None)]
    finally:
        conn.close()


def test_a_chinese_question_finds_the_english_message(history, settings, local_model):
    """Across languages the fused list ranks the answer first where it matters: an English history,
    a Chinese question (the case the latent terms were added for)."""
    ids = history.turns(
        "s1",
        "I finally adopted a rescue dog last weekend, a small beagle named Max.",
        "The quarterly report is due on Friday, don't forget the charts.",
        "We should repaint the kitchen walls a lighter color this spring.",
        "My flight to Tokyo got delayed by six hours because of the storm.",
        "Let's try the new ramen place near the office for lunch tomorrow.",
        "I started learning the guitar again, mostly old rock songs.",
    )
    build_index(history.home, settings, embedder=Counting(local_model))
    res = semantic_search(history.home, "上周末领养的狗叫什么名字", ["s1"], top_k=3)
    assert res.status == "ready"
    assert res.hits[0][0] == ids[0]
    assert all(-1.0 <= score <= 1.0 for _, _, score in res.hits)  # dense cosines, for relevance


def test_an_operator_can_turn_latent_terms_off_and_on_again(history, settings, local_model):
    """``embedding.latent_terms: false`` indexes vectors only (about twice as fast); turning it on
    again walks the index once more and adds the terms."""
    from dataclasses import replace

    from hermes_side.embedding.settings import SettingsError, parse_settings

    assert parse_settings({"latent_terms": False}).latent_terms is False
    with pytest.raises(SettingsError, match="latent_terms must be true or false"):
        parse_settings({"latent_terms": "no"})
    ids = history.turns("s1", "I finally adopted a rescue dog, a beagle named Max.", "Lunch at the ramen place?")
    off = replace(settings, latent_terms=False)
    assert build_index(history.home, off, embedder=Counting(local_model)).chunks_embedded == 2
    conn = store.connect(history.home)
    try:
        assert [r[0] for r in conn.execute("SELECT terms FROM chunks")] == [None, None]
    finally:
        conn.close()
    res = semantic_search(history.home, "beagle adopted", ["s1"], top_k=2, settings=off)
    assert res.status == "ready" and res.hits[0][0] == ids[0]  # the vectors alone still answer
    assert build_index(history.home, settings, embedder=Counting(local_model)).chunks_embedded == 2
    conn = store.connect(history.home)
    try:
        assert all(r[0] for r in conn.execute("SELECT terms FROM chunks"))
    finally:
        conn.close()
