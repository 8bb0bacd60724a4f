"""semantic_search over a real state.db with the real local model: statuses, cross-lingual
recall, scope, and candidates re-checked against state.db."""

from __future__ import annotations

from hermes_side.embedding import build_index
from hermes_side.embedding.catchup import wait_for_catch_up
from hermes_side.search.semantic import semantic_search

from .helpers import write_config


def test_chinese_query_finds_chinese_and_english_paraphrase(history, settings, local_model):
    zh = history.turns("zh", "我们决定用 Alembic 做数据库迁移，脚本放在 migrations 目录")[0]
    en = history.turns("en", "We agreed that schema changes go through Alembic database migrations")[0]
    history.turns("noise", "我周末去爬山了，天气很好", "Pasta needs salted boiling water",
                    "The cat sleeps on the sofa all afternoon", "明天的会议改到下午三点")
    build_index(history.home, settings, embedder=local_model)
    result = semantic_search(history.home, "数据库迁移怎么定的", ["zh", "en", "noise"], top_k=3)
    assert result.status == "ready"
    # e5-small is multilingual but small: the English paraphrase ranks in the top 3 of 6, behind
    # the Chinese original and "明天的会议改到下午三点" ("the meeting was moved to 3pm").
    assert result.hits[0][0] == zh
    assert en in {h[0] for h in result.hits}
    assert [h[2] for h in result.hits] == sorted((h[2] for h in result.hits), reverse=True)


def test_scope_limits_hits_to_given_sessions(history, settings, local_model):
    history.turns("p", "deploy with docker compose")
    history.turns("q", "deploy with kubernetes helm charts")
    build_index(history.home, settings, embedder=local_model)
    result = semantic_search(history.home, "deployment", ["q"])
    assert [h[1] for h in result.hits] == ["q"]
    assert semantic_search(history.home, "deployment", []).hits == []


def test_rewound_and_deleted_messages_are_never_returned(history, settings, local_model):
    ids = history.turns("s1", "the launch date is March 3", "noted: March 3",
                          "no wait, the launch date is April 9", "noted: April 9")
    history.turns("s2", "launch date talk in another session")
    build_index(history.home, settings, embedder=local_model)
    history.db.rewind_to_message("s1", ids[2])
    history.db.delete_session("s2")
    # vectors for both are still in embeddings.db; the re-check against state.db drops them
    result = semantic_search(history.home, "launch date", ["s1", "s2"], top_k=10, catch_up=False)
    assert {h[0] for h in result.hits} == set(ids[:2])


def test_partial_then_indexing_then_ready(history, settings, local_model):
    history.turns("s1", "first message about caching")
    build_index(history.home, settings, embedder=local_model)
    new = history.turns("s1", "second message about redis caching")[0]
    result = semantic_search(history.home, "redis", ["s1"], catch_up=False)
    assert result.status == "partial" and "not indexed" in result.detail
    assert new not in {h[0] for h in result.hits}  # the indexed part is still searchable
    result = semantic_search(history.home, "redis", ["s1"])  # starts the background catch-up
    assert result.status in ("indexing", "ready")
    assert wait_for_catch_up(history.home, 60)
    result = semantic_search(history.home, "redis", ["s1"])
    assert result.status == "ready" and result.hits[0][0] == new


def test_never_indexed_history_starts_catch_up(history):
    history.turns("s1", "hello world")
    result = semantic_search(history.home, "hello", ["s1"])
    assert (result.status, result.hits) == ("indexing", [])
    wait_for_catch_up(history.home, 60)
    assert semantic_search(history.home, "hello", ["s1"]).status == "ready"


def test_disabled_and_missing_state(history, home):
    write_config(home, {"enabled": False})
    assert semantic_search(home, "x", ["s1"]).status == "disabled"
    write_config(home, {})
    (home / "state.db").unlink()
    result = semantic_search(home, "x", ["s1"])
    assert result.status == "unavailable" and "session database not found" in result.detail


def test_empty_scope_is_ready_without_embedding_anything(history):
    history.turns("s1", "text")
    assert semantic_search(history.home, "anything", [], catch_up=False).status == "ready"


def test_a_running_index_elsewhere_reports_indexing(history, settings):
    from hermes_side.embedding.runlock import hold_run

    history.turns("s1", "not indexed yet")
    with hold_run(history.home, "local:multilingual-e5-small:384", None):  # e.g. `hermes recall index`
        result = semantic_search(history.home, "indexed", ["s1"], catch_up=False)
    assert result.status == "indexing"
    assert semantic_search(history.home, "indexed", ["s1"], catch_up=False).status == "partial"


def test_nothing_starts_in_the_background_without_a_search(history):
    import threading

    from hermes_side.embedding import index_status, load_settings

    def ours() -> set[threading.Thread]:  # pools of earlier searches in this process stay
        return {t for t in threading.enumerate() if t.name.startswith("recall-")}

    before = ours()
    history.turns("s1", "text")
    load_settings(history.home)
    index_status(history.home, {"p": ["s1"]})
    assert not ours() - before


def test_a_conversation_talked_over_for_a_few_turns_has_the_better_passage(history, settings, local_model):
    """A conversation's best passage (a few consecutive turns by meaning) prefers the one where the
    trip was told and asked about over one stray turn that names the same thing."""
    history.turns("stray", "Pasta needs salted boiling water", "We should go camping sometime, I guess.",
                  "The cat sleeps on the sofa all afternoon", "明天的会议改到下午三点")
    history.turns("about", "Pasta needs salted boiling water",
                  "Last weekend I took the kids on a trip to the lake.", "Nice! Where did you all sleep?",
                  "In a tent by the water, and we roasted marshmallows over the fire.",
                  "The cat sleeps on the sofa all afternoon")
    build_index(history.home, settings, embedder=local_model)
    result = semantic_search(history.home, "Where did Melanie go camping with her kids?", ["stray", "about"])
    assert result.passages is not None
    passages = result.passages(["stray", "about"])
    assert passages["about"] > passages["stray"]
    # ... although the single turn nearest the question by its dense cosine is the stray one
    best_turn = {sid: max(c for _, s, c in result.hits if s == sid) for sid in ("stray", "about")}
    assert best_turn["stray"] > best_turn["about"]
    assert result.passages([]) == {} and set(result.passages(["about"])) == {"about"}


def test_the_passages_read_the_cosines_the_dense_scan_gave(history, settings, local_model, monkeypatch):
    """A search scores each indexed turn of its scope against the question once: its best messages,
    the cosines of hits the latent terms found and each conversation's best passage all read that
    one scan (a second scan of the same rows was most of the passage step)."""
    from hermes_side.embedding import vectors

    history.turns("stray", "Pasta needs salted boiling water", "We should go camping sometime, I guess.")
    history.turns("about", "Last weekend I took the kids on a trip to the lake.", "Nice! Where did you all sleep?",
                  "In a tent by the water, and we roasted marshmallows over the fire.")
    build_index(history.home, settings, embedder=local_model)
    scans = []
    score_rows = vectors.score_rows
    monkeypatch.setattr(vectors, "score_rows", lambda *a, **k: scans.append(1) or score_rows(*a, **k))

    result = semantic_search(history.home, "Where did Melanie go camping with her kids?", ["stray", "about"])
    passages = result.passages(["stray", "about"])

    assert len(scans) == 1
    dense = {mid: c for mid, _, c in result.hits}
    tent = max(dense, key=dense.get)  # a passage of one conversation's three turns: their mean cosine
    assert passages["about"] >= dense[tent] / 3
