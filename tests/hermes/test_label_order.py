"""One order, one label (issue 26, results.py): rows stand in the order of their level, the
conversation ranking deciding within a level; the score shown never rises down the list; a row is
as related as the surest of what it shows."""

from __future__ import annotations

from hermes_side.search.relevance import Relevance
from hermes_side.search.results import best_of, group_by_conversation, in_order, with_conversation_words


def hit(mid: int, sid: str, score: float, level: str, rel: float) -> dict:
    return {"message_id": mid, "session_id": sid, "score": score, "relevance": Relevance(level, rel)}


def test_a_lower_label_never_stands_above_a_higher_one_even_past_the_limit():
    hits = [hit(1, "a", 0.9, "low", 0.2), hit(2, "b", 0.8, "medium", 0.5), hit(3, "c", 0.7, "low", 0.1),
            hit(4, "d", 0.6, "high", 0.9)]
    rows = group_by_conversation(hits, {}, 3)
    assert [r["session_id"] for r in rows] == ["d", "b", "a"]  # "d" was fourth: the limit cuts after


def test_a_conversation_is_shown_by_its_best_labelled_hit():
    hits = [hit(1, "a", 0.9, "low", 0.2), hit(2, "a", 0.5, "high", 0.9), hit(3, "b", 0.8, "medium", 0.5)]
    rows = group_by_conversation(hits, {}, 5)
    assert [(r["session_id"], r["message_id"]) for r in rows] == [("a", 2), ("b", 3)]


def shown(relevances: list[Relevance]) -> list[tuple[str, float]]:
    return [(r.level, round(r.score, 3)) for r in in_order(relevances)]


def test_the_score_shown_never_rises_down_the_list_and_keeps_its_band():
    rows = [Relevance("medium", 0.40), Relevance("medium", 0.65), Relevance("low", 0.2)]
    assert shown(rows) == [("medium", 0.525), ("medium", 0.525), ("low", 0.2)]


def test_a_conversation_about_the_question_is_as_related_as_its_words_together():
    hits = [hit(1, "a", 0.9, "low", 0.25), hit(2, "a", 0.5, "low", 0.25), hit(3, "b", 0.4, "low", 0.25)]
    texts = {1: "two networking events", 2: "a supplier for the store", 3: "store"}

    def judge_words(text: str) -> Relevance:
        share = sum(w in text for w in ("networking", "events", "store")) / 3
        return Relevance("high" if share >= 0.8 else "low", share)

    out = with_conversation_words(hits, {}, texts, judge_words)
    assert [h["relevance"].level for h in out] == ["high", "high", "low"]  # "b" has one hit: its own


def test_a_weak_first_row_over_a_related_one_is_as_related_as_the_two_together():
    """Where the ranking leads, a weak first row does not make a related one under it weak:
    both stand at what the two say together (the least change that puts the scores in order)."""
    assert shown([Relevance("low", 0.2), Relevance("medium", 0.6), Relevance("low", 0.1)]) == \
        [("medium", 0.4), ("medium", 0.4), ("low", 0.1)]


def test_a_first_row_with_nothing_in_it_stays_weak_over_a_barely_related_one():
    assert shown([Relevance("low", 0.05), Relevance("medium", 0.35)]) == [("low", 0.2), ("low", 0.2)]


def test_a_sure_row_under_a_weak_one_does_not_lift_both_to_sure():
    assert shown([Relevance("low", 0.2), Relevance("high", 0.9)]) == [("medium", 0.55), ("medium", 0.55)]


def test_each_row_keeps_its_own_thresholds_and_none_stands_above_a_lower_label():
    # A row in another script than the question needs a higher score to be medium: at the pooled
    # score it is low, and the row under it, medium by the usual threshold, is held down with it.
    rows = [Relevance("low", 0.34, medium=0.55), Relevance("medium", 0.34, medium=0.30)]
    assert shown(rows) == [("low", 0.34), ("low", 0.34)]


def test_a_row_is_as_related_as_the_surest_turn_it_shows():
    assert best_of([Relevance("low", 0.2), None, Relevance("medium", 0.5), Relevance("medium", 0.4)]) == \
        Relevance("medium", 0.5)
    assert best_of([None]) is None


def test_where_the_ranking_leads_rows_keep_its_order():
    hits = [hit(1, "a", 0.9, "low", 0.2), hit(2, "b", 0.8, "high", 0.9)]
    assert [r["session_id"] for r in group_by_conversation(hits, {}, 5, labels_lead=False)] == ["a", "b"]
