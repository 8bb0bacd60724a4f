"""Incremental indexing with the real local model over a real Hermes state.db."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from dataclasses import replace

import pytest

from hermes_side.embedding import build_index, store
from hermes_side.embedding.providers import LocalE5
from hermes_side.search.semantic import semantic_search
from tests.hermes import hermes_line

from .helpers import Counting

FP = "local:multilingual-e5-small:384"
LONG = " ".join(f"Step {i}: run the migration script, then verify table {i} and its indexes." for i in range(60))


def dump(home, fingerprint=FP):
    conn = store.connect(home)
    try:
        return sorted(conn.execute(
            "SELECT session_id, message_id, chunk_index, content_hash, vector FROM chunks"
            " WHERE model_fingerprint = ?", (fingerprint,)).fetchall())
    finally:
        conn.close()


def corpus(history, sessions=3, per_session=12):
    for s in range(sessions):
        texts = [f"session {s} turn {i}: notes about topic {i % 5} 第{i}条" for i in range(per_session)]
        history.turns(f"s{s}", *texts)


@pytest.mark.slow
def test_second_run_embeds_nothing(history, settings, local_model):
    corpus(history, 2, 6)
    history.turns("s9", LONG)
    first = Counting(local_model)
    stats = build_index(history.home, settings, embedder=first)
    assert stats.status == "done" and stats.messages_scanned == 13
    assert stats.chunks_embedded == len(first.passages) > 13  # the long message has several chunks
    again = Counting(local_model)
    stats = build_index(history.home, settings, embedder=again)
    assert (stats.status, stats.chunks_embedded, again.passages) == ("done", 0, [])


@pytest.mark.slow
def test_new_chunk_size_re_embeds_only_changed_chunks(history, settings, local_model):
    corpus(history, 1, 5)
    history.turns("s9", LONG)
    build_index(history.home, settings, embedder=Counting(local_model))
    smaller = replace(settings, chunk_size=128, chunk_overlap=16)
    counting = Counting(local_model)
    stats = build_index(history.home, smaller, embedder=counting)
    assert stats.chunks_skipped == 5  # the short turns hash the same: never embedded twice
    assert counting.passages and all(p in LONG for p in counting.passages)
    rows = dump(history.home)
    long_id = max(r[1] for r in rows)
    assert len([r for r in rows if r[1] == long_id]) == stats.chunks_embedded  # old windows replaced


def test_new_messages_are_picked_up_incrementally(history, settings, local_model):
    corpus(history, 1, 4)
    build_index(history.home, settings, embedder=Counting(local_model))
    history.turns("s0", "a new turn in an old session")
    history.turns("new", "a brand new session", "with a reply")
    counting = Counting(local_model)
    stats = build_index(history.home, settings, embedder=counting, reconcile=False)
    assert sorted(counting.messages) == sorted(["a new turn in an old session", "a brand new session", "with a reply"])
    assert stats.messages_scanned == 3


@pytest.mark.slow
def test_failure_mid_run_then_resume_equals_from_scratch(history, settings, local_model):
    corpus(history, 3, 12)
    small = replace(settings, batch_size=4)
    failing = Counting(local_model, fail_on_batch=3)
    stats = build_index(history.home, small, embedder=failing)
    assert stats.status == "unavailable" and "injected failure" in stats.detail
    assert len(dump(history.home)) == 8  # the two finished batches are kept
    resumed = Counting(local_model)
    assert build_index(history.home, small, embedder=resumed).status == "done"
    assert len(resumed.passages) == 36 - 8  # nothing embedded twice
    after_resume = dump(history.home)
    build_index(history.home, small, embedder=Counting(local_model), rebuild=True)
    assert dump(history.home) == after_resume


@pytest.mark.slow
def test_stop_event_stops_after_the_current_batch(history, settings, local_model):
    corpus(history, 2, 10)
    stop = threading.Event()
    stopper = Counting(local_model, on_batch=lambda n: n == 2 and stop.set())
    stats = build_index(history.home, replace(settings, batch_size=4), embedder=stopper, stop_event=stop)
    assert stats.status == "stopped" and stats.chunks_embedded == 8
    stats = build_index(history.home, settings, embedder=Counting(local_model))
    assert stats.chunks_embedded == 12 and len(dump(history.home)) == 20


KILL_SCRIPT = """
import sys, threading
from pathlib import Path
from dataclasses import replace
from hermes_side.embedding import build_index, load_settings
home = Path(sys.argv[1])
settings = replace(load_settings(home), batch_size=2)
def progress(p):
    print("batch", p.chunks_embedded, flush=True)
    threading.Event().wait(0.3)  # give the parent time to SIGKILL us between or inside batches
build_index(home, settings, progress=progress)
"""


@pytest.mark.slow
def test_hard_kill_mid_run_loses_nothing(history, settings, local_model):
    corpus(history, 2, 10)
    proc = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, str(history.home)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().startswith("batch")
    time.sleep(0.1)
    proc.kill()
    proc.wait()
    partial = dump(history.home)
    assert 0 < len(partial) < 20
    counting = Counting(local_model)
    assert build_index(history.home, settings, embedder=counting).status == "done"
    assert len(counting.passages) == 20 - len(partial)
    resumed = dump(history.home)
    build_index(history.home, settings, embedder=Counting(local_model), rebuild=True)
    assert dump(history.home) == resumed


def test_model_change_builds_a_separate_index(history, settings, local_model):
    corpus(history, 1, 4)
    build_index(history.home, settings, embedder=local_model)
    other = replace(settings, model="portuguese-multilingual-e5-small")
    other_model = LocalE5(other.model)
    assert other_model.fingerprint != local_model.fingerprint
    result = semantic_search(history.home, "topic", ["s0"], settings=other, catch_up=False)
    assert (result.status, result.hits) == ("partial", [])  # never served from the old model's vectors
    build_index(history.home, other, embedder=other_model)
    assert len(dump(history.home)) == len(dump(history.home, other_model.fingerprint)) == 4
    result = semantic_search(history.home, "topic", ["s0"], settings=other, catch_up=False)
    assert result.status == "ready" and len(result.hits) == 4


def test_reconcile_forgets_rewound_and_deleted_and_restores_where_hermes_can(history, settings, local_model):
    ids = history.turns("s1", "keep me", "keep me too", "rewind me", "rewound reply")
    history.turns("gone", "delete this session")
    build_index(history.home, settings, embedder=local_model)
    history.db.rewind_to_message("s1", ids[2])
    history.db.delete_session("gone")
    stats = build_index(history.home, settings, embedder=local_model)
    assert stats.chunks_deleted == 3
    assert {r[1] for r in dump(history.home)} == set(ids[:2])
    counting = Counting(local_model)
    if hermes_line.sessiondb_has("restore_rewound"):  # 0.19 can undo a rewind; 0.22 has no such call
        history.db.restore_rewound("s1", ids[2])
        build_index(history.home, settings, embedder=counting)
        assert sorted(counting.messages) == ["rewind me", "rewound reply"]
    else:  # nothing brings the turns back: they stay forgotten, and nothing is re-embedded
        build_index(history.home, settings, embedder=counting)
        assert counting.messages == [] and {r[1] for r in dump(history.home)} == set(ids[:2])


def test_archived_sessions_wait_until_unarchived(history, settings, local_model):
    history.turns("s1", "visible")
    history.turns("old", "archived talk")
    history.db.set_session_archived("old", True)
    build_index(history.home, settings, embedder=local_model)
    assert [r[1] for r in dump(history.home)] == [1]
    history.db.set_session_archived("old", False)
    counting = Counting(local_model)
    build_index(history.home, settings, embedder=counting)
    assert counting.passages == ["archived talk"]


def test_compaction_keeps_archived_turns_and_skips_the_summary(history, settings, local_model):
    history.turns("s1", "we picked postgres", "ok, postgres it is")
    history.db.archive_and_compact("s1", [
        {"role": "assistant", "content": "[CONTEXT COMPACTION — REFERENCE ONLY] earlier: postgres chosen"}])
    counting = Counting(local_model)
    build_index(history.home, settings, embedder=counting)
    assert sorted(counting.messages) == ["ok, postgres it is", "we picked postgres"]


def test_session_scoped_run_marks_only_its_sessions(history, settings, local_model):
    history.turns("a", "alpha one", "alpha two")
    history.turns("b", "beta one")
    stats = build_index(history.home, settings, session_ids=["a"], embedder=local_model)
    assert stats.messages_scanned == 2
    assert semantic_search(history.home, "alpha", ["a"], catch_up=False).status == "ready"
    assert semantic_search(history.home, "beta", ["b"], catch_up=False).status == "partial"
    history.turns("a", "alpha three")
    assert semantic_search(history.home, "alpha", ["a"], catch_up=False).status == "partial"
    counting = Counting(local_model)
    build_index(history.home, settings, session_ids=["a"], embedder=counting, reconcile=False)
    assert counting.messages == ["alpha three"]
