"""int8 vector encoding and the incrementally refreshed in-memory matrix."""

from __future__ import annotations

import numpy as np

from hermes_side.embedding import store
from hermes_side.embedding.vectors import VectorIndex, decode, encode, score_rows


def unit_rows(n: int, dim: int = 384, seed: int = 0) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_int8_roundtrip_keeps_cosine_within_0_003():
    m = unit_rows(500)
    q8, scales = decode(encode(m), 384)
    assert q8.dtype == np.int8 and len(encode(m)[0]) == 4 + 384
    query = m[3]
    exact = m @ query
    approx = score_rows(q8, scales, query)
    assert np.abs(exact - approx).max() < 0.003
    tenth = np.sort(exact)[-10]
    assert all(exact[i] >= tenth - 0.005 for i in np.argsort(-approx)[:10])  # only near-ties swap
    rows = np.array([5, 1, 400])
    assert np.allclose(score_rows(q8, scales, query, rows), approx[rows])


def insert(conn, fingerprint, session, message, vector, index=0):
    row = store.ChunkRow(session, message, index, f"h{message}-{index}", encode(vector[None])[0])
    store.write_batch(conn, fingerprint, len(vector), [row], [], {}, "256/32")


def test_index_follows_appends_and_reloads_after_deletes(home):
    conn = store.connect(home)
    m = unit_rows(6)
    for i in range(4):
        insert(conn, "fp", "a" if i < 2 else "b", 100 + i, m[i])
    insert(conn, "other", "a", 999, m[5])  # another fingerprint is never mixed in
    index = VectorIndex(store.store_path(home), "fp")
    index.refresh()
    assert len(index) == 4
    hits = index.search(m[2], ["a", "b"], 10)
    assert hits[0][:2] == (102, "b") and len(hits) == 4
    assert {h[0] for h in index.search(m[2], ["a"], 10)} == {100, 101}

    insert(conn, "fp", "a", 104, m[4])
    index.refresh()
    assert len(index) == 5 and index.search(m[4], ["a"], 1)[0][0] == 104

    store.delete_messages(conn, "fp", [100, 104])
    index.refresh()
    assert len(index) == 3
    assert {h[0] for h in index.search(m[0], ["a", "b"], 10)} == {101, 102, 103}


def test_chunk_hits_merge_to_messages_by_max_score(home):
    conn = store.connect(home)
    m = unit_rows(3)
    insert(conn, "fp", "a", 1, m[0], index=0)
    insert(conn, "fp", "a", 1, m[1], index=1)
    insert(conn, "fp", "a", 2, m[2])
    index = VectorIndex(store.store_path(home), "fp")
    index.refresh()
    hits = index.search(m[1], ["a"], 5)
    assert [h[0] for h in hits] == [1, 2]
    assert hits[0][2] > 0.99


def test_a_scope_reads_only_its_sessions_and_those_that_join_it(home):
    """A search's matrix holds its scope's vectors alone, whatever the rest of the profile holds
    (memory follows the project, not the profile); a session that joins the scope later — a new
    conversation, older chunks included — and new chunks of its sessions are read on the next search."""
    from hermes_side.embedding.vectors import drop_indexes, get_index

    conn = store.connect(home)
    m = unit_rows(40)
    for i in range(30):  # another project's busy history
        insert(conn, "fp", f"other{i % 3}", 1000 + i, m[i])
    insert(conn, "fp", "a", 1, m[30])
    insert(conn, "fp", "b", 2, m[31])
    insert(conn, "fp", "c", 3, m[32])  # in no scope yet
    try:
        index = get_index(store.store_path(home), "fp", "explicit:p1", ["a", "b"])
        assert len(index) == 2 and index.scope == {"a", "b"}
        assert [h[0] for h in index.search(m[32], ["a", "b", "c"], 10)] and 3 not in \
            {h[0] for h in index.search(m[32], ["a", "b", "c"], 10)}

        insert(conn, "fp", "a", 4, m[33])
        insert(conn, "fp", "other0", 1100, m[34])
        index = get_index(store.store_path(home), "fp", "explicit:p1", ["a", "b", "c"])
        assert len(index) == 4  # a's new chunk and c's old one; nothing of the other project
        assert index.search(m[32], ["a", "b", "c"], 1)[0][0] == 3
        assert index.search(m[33], ["a"], 1)[0][0] == 4

        store.delete_messages(conn, "fp", [2])  # a reload keeps to the scope as it is now
        index = get_index(store.store_path(home), "fp", "explicit:p1", ["a", "c"])
        assert len(index) == 3 and index.scope == {"a", "c"}
    finally:
        drop_indexes()


def test_a_session_passage_is_its_best_run_of_consecutive_messages(home):
    """VectorIndex.passages: per session, the best mean cosine of ``width`` consecutive messages
    (a message by its best chunk); a session shorter than the width by all its messages."""
    conn = store.connect(home)
    dim = 384
    query = np.zeros(dim, np.float32)
    query[0] = 1.0

    def near(cos: float, seed: int) -> np.ndarray:  # a unit vector at cosine ``cos`` to the query
        v = unit_rows(1, dim, seed)[0]
        v[0] = 0.0
        v = v / np.linalg.norm(v) * np.sqrt(1 - cos ** 2)
        v[0] = cos
        return v

    # "stray": one turn very near, its neighbours far; "about": three turns fairly near in a row
    for i, cos in enumerate([0.1, 0.9, 0.1, 0.1]):
        insert(conn, "fp", "stray", 10 + i, near(cos, i))
    for i, cos in enumerate([0.1, 0.6, 0.6, 0.6, 0.1]):
        insert(conn, "fp", "about", 20 + i, near(cos, 10 + i))
    insert(conn, "fp", "about", 22, near(0.8, 30), index=1)  # a second chunk: the message's best counts
    insert(conn, "fp", "short", 40, near(0.5, 40))
    index = VectorIndex(store.store_path(home), "fp")
    index.refresh()
    one = index.passages(query, ["stray", "about", "short"], 1)
    assert one["stray"] > one["about"]  # by its best single turn the stray session leads
    three = index.passages(query, ["stray", "about", "short", "unknown"], 3)
    assert set(three) == {"stray", "about", "short"}
    assert abs(three["about"] - (0.6 + 0.8 + 0.6) / 3) < 0.01
    assert abs(three["stray"] - (0.1 + 0.9 + 0.1) / 3) < 0.01
    assert abs(three["short"] - 0.5) < 0.01
    assert index.passages(query, [], 3) == {} and index.passages(query, ["about"], 0) == {}
