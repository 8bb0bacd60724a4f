"""One order, one label (issue 26, results.py): rows stand in the order of their level, the
conversation ranking deciding within a level; the score shown never rises down the list."""

from __future__ import annotations

from hermes_side.search.relevance import Relevance
from hermes_side.search.results import group_by_conversation, shown_scores, with_conversation_words


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


def test_the_score_shown_never_rises_down_the_list_and_keeps_its_band():
    rows = [{"relevance": {"level": "medium", "score": 0.40}}, {"relevance": {"level": "medium", "score": 0.65}},
            {"relevance": {"level": "low", "score": 0.2}}]
    assert [r["relevance"]["score"] for r in shown_scores(rows)] == [0.40, 0.40, 0.2]


def test_a_conversation_about_the_question_is_as_related_as_its_words_together():
    hits = [hit(1, "a", 0.9, "low", 0.25), hit(2, "a", 0.5, "low", 0.25), hit(3, "b", 0.4, "low", 0.25)]
    texts = {1: "two networking events", 2: "a supplier for the store", 3: "store"}

    def judge_words(text: str) -> Relevance:
        share = sum(w in text for w in ("networking", "events", "store")) / 3
        return Relevance("high" if share >= 0.8 else "low", share)

    out = with_conversation_words(hits, {}, texts, judge_words)
    assert [h["relevance"].level for h in out] == ["high", "high", "low"]  # "b" has one hit: its own


def test_where_the_ranking_leads_a_row_never_claims_more_than_the_row_above():
    rows = [{"relevance": {"level": "low", "score": 0.2}}, {"relevance": {"level": "high", "score": 0.9}}]
    assert [r["relevance"] for r in shown_scores(rows)] == [{"level": "low", "score": 0.2}] * 2


def test_where_the_ranking_leads_rows_keep_its_order():
    hits = [hit(1, "a", 0.9, "low", 0.2), hit(2, "b", 0.8, "high", 0.9)]
    assert [r["session_id"] for r in group_by_conversation(hits, {}, 5, labels_lead=False)] == ["a", "b"]
