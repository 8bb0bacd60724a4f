"""One row per conversation, and which conversations come first (``results.group_by_conversation``)."""

from __future__ import annotations

from hermes_side.search.results import group_by_conversation


def hit(mid: int, sid: str, score: float | None = None, **extra) -> dict:
    return {"message_id": mid, "session_id": sid, **({"score": score} if score is not None else {}), **extra}


def test_a_conversation_with_several_good_turns_outranks_one_stray_match():
    hits = [hit(1, "stray", 0.20), hit(2, "topic", 0.19), hit(3, "topic", 0.18), hit(4, "other", 0.05)]
    rows = group_by_conversation(hits, {}, limit=3)
    assert [r["session_id"] for r in rows] == ["topic", "stray", "other"]
    assert rows[0]["message_id"] == 2  # the row still shows the conversation's best turn


def test_a_pulled_in_reply_adds_nothing():
    hits = [hit(1, "a", 0.20), hit(2, "b", 0.15), hit(3, "b", 0.15, reply_to=2)]
    assert [r["session_id"] for r in group_by_conversation(hits, {}, limit=2)] == ["a", "b"]


def test_compression_children_are_one_conversation_and_limit_counts_conversations():
    hits = [hit(1, "root", 0.3), hit(2, "child", 0.29), hit(3, "x", 0.2), hit(4, "y", 0.1)]
    rows = group_by_conversation(hits, {"child": "root"}, limit=2)
    assert [r["message_id"] for r in rows] == [1, 3]


def test_without_scores_the_rank_order_stands():
    hits = [hit(5, "a"), hit(6, "b"), hit(7, "b"), hit(8, "c")]
    assert [r["message_id"] for r in group_by_conversation(hits, {}, limit=5)] == [5, 6, 8]
