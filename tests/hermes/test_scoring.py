"""The two scoring formulas, pure and by hand: reciprocal rank fusion and Okapi BM25.

Every expected number below is worked out on paper from the formula, not read back from the code:
RRF gives an item ``w / (k + rank)`` per list it is in; BM25 gives a term
``idf · w · tf·(k1+1) / (tf + k1·(1 − b + b·len/avg))`` with ``idf = ln(1 + (N − df + ½)/(df + ½))``.
"""

from __future__ import annotations

import math

import pytest

from hermes_side.search import bm25 as scoring
from hermes_side.search.bm25 import Doc, Matcher, bm25
from hermes_side.search.fusion import rrf
from hermes_side.search.query import Term
from hermes_side.search.settings import RANKING


# -- rrf -------------------------------------------------------------------------------------------
def test_rrf_adds_one_over_k_plus_rank_per_list():
    fused = dict(rrf([["a", "b", "c"], ["b", "d"]], k=1))
    assert fused == pytest.approx({"a": 1 / 2, "b": 1 / 3 + 1 / 2, "c": 1 / 4, "d": 1 / 3})


def test_rrf_orders_best_first_and_an_item_in_both_lists_wins():
    assert [item for item, _ in rrf([["a", "b", "c"], ["b", "d"]], k=1)] == ["b", "a", "d", "c"]


def test_rrf_ties_keep_the_order_items_were_first_seen():
    # x and y are both first in one list: 1/(5+1) each.
    assert rrf([["x"], ["y"]], k=5) == [("x", pytest.approx(1 / 6)), ("y", pytest.approx(1 / 6))]
    assert [item for item, _ in rrf([["y"], ["x"]], k=5)] == ["y", "x"]


def test_rrf_weights_scale_each_list():
    # a: 2/(1+1) = 1.0 from the first list; b: 0.5/(1+1) = 0.25 from the second.
    assert rrf([["a"], ["b"]], k=1, weights=[2.0, 0.5]) == [("a", pytest.approx(1.0)), ("b", pytest.approx(0.25))]
    # A weight can turn the order around: a = 1/2 beats b = 1/3 + 0.1/2, but not b = 1/3 + 3/2.
    assert [item for item, _ in rrf([["a", "b"], ["b"]], k=1, weights=[1.0, 0.1])] == ["a", "b"]
    assert [item for item, _ in rrf([["a", "b"], ["b"]], k=1, weights=[1.0, 3.0])] == ["b", "a"]


def test_rrf_small_k_lets_a_top_hit_lead_where_a_large_k_rewards_agreement():
    lists = [["solo", "x1", "x2", "both"], ["y1", "y2", "y3", "both"]]
    # k=1: solo 1/2 = 0.5 beats both 2/5 = 0.4.  k=60: solo 1/61 ≈ 0.0164 < both 2/64 ≈ 0.03125.
    assert rrf(lists, k=1)[0][0] == "solo"
    assert rrf(lists, k=60)[0][0] == "both"


def test_rrf_of_nothing_is_nothing():
    assert rrf([], k=5) == [] and rrf([[], []], k=5) == []


# -- BM25 ------------------------------------------------------------------------------------------
K1, B, AVG = RANKING.bm25_k1, RANKING.bm25_b, RANKING.bm25_avg_tokens


def test_the_constants_these_examples_assume():
    assert (K1, B, AVG) == (1.2, 0.75, 30.0)


def test_idf_by_hand():
    # N=100, df=9: ln(1 + 91.5/9.5) = ln(10.6316…) = 2.36383…
    assert scoring.idf(9, 100) == pytest.approx(math.log(1 + 91.5 / 9.5))
    assert scoring.idf(9, 100) == pytest.approx(2.36383, abs=1e-5)
    # A term in every message still weighs a little (the +1 inside the log keeps it positive).
    assert 0 < scoring.idf(100, 100) < scoring.idf(1, 100)


def test_bm25_one_term_at_average_length():
    word = Term("word", "rsync")
    doc = Doc(1, "s", {word: 1}, length=30)  # len = avg: the norm is k1 exactly
    # 2.0 · 1·2.2 / (1 + 1.2) = 2.0
    assert bm25(doc, {word: 2.0}) == pytest.approx(2.0)


def test_bm25_repeats_saturate_and_long_messages_weigh_less():
    word = Term("word", "rsync")
    twice = Doc(1, "s", {word: 2}, length=30)
    # 1.0 · 2·2.2 / (2 + 1.2) = 1.375: twice the term is not twice the score.
    assert bm25(twice, {word: 1.0}) == pytest.approx(4.4 / 3.2)
    long = Doc(2, "s", {word: 1}, length=90)
    # norm = 1.2 · (0.25 + 0.75·3) = 3.0 → 1.0 · 2.2 / (1 + 3.0) = 0.55
    assert bm25(long, {word: 1.0}) == pytest.approx(0.55)
    short = Doc(3, "s", {word: 1}, length=6)
    # norm = 1.2 · (0.25 + 0.75·0.2) = 0.48 → 2.2 / 1.48 = 1.4865
    assert bm25(short, {word: 1.0}) == pytest.approx(2.2 / 1.48)


def test_bm25_sums_terms_and_ignores_those_without_a_weight():
    a, b, c = Term("word", "kestrel"), Term("word", "deploy"), Term("word", "unknown")
    doc = Doc(1, "s", {a: 1, b: 1, c: 5}, length=30)
    # 3.0·1 + 0.5·1 (both at tf 1, average length); c has no idf: it does not count.
    assert bm25(doc, {a: 3.0, b: 0.5}) == pytest.approx(3.5)
    assert bm25(doc, {}) == 0.0


def test_bm25_a_cjk_bigram_counts_its_share_of_the_piece():
    gram = Term("cjk", "迁移", weight=0.5)
    doc = Doc(1, "s", {gram: 1}, length=30)
    assert bm25(doc, {gram: 2.0}) == pytest.approx(1.0)  # 2.0 · 0.5 · 1


def test_matcher_counts_inflections_and_cjk_and_the_length():
    deploy, gram = Term("word", "deploy"), Term("cjk", "迁移")
    doc = Matcher([deploy, gram]).doc(7, "s1", "Deploying now; deployed twice. 数据库迁移")
    # Latin tokens: deploying, now, deployed, twice = 4; CJK characters: 数据库迁移 = 5.
    assert doc.tf == {deploy: 2, gram: 1}
    assert doc.length == 9
    assert (doc.message_id, doc.session_id) == (7, "s1")


def test_the_rarer_word_ranks_the_message_higher():
    """What the user notices: of two messages holding one query word each, the one with the word
    few messages hold comes first."""
    rare, common = Term("word", "kestrel"), Term("word", "deploy")
    idf = {rare: scoring.idf(2, 1000), common: scoring.idf(400, 1000)}
    with_rare = Doc(1, "s1", {rare: 1}, length=20)
    with_common = Doc(2, "s2", {common: 1}, length=20)
    hits = scoring.best([with_common, with_rare], idf, limit=10)
    assert [h.message_id for h in hits] == [1, 2]


def test_a_pasted_code_block_does_not_lengthen_the_prose():
    # An agent's answer: the prose the question is about, then code. BM25's length is the prose's.
    word = Term("word", "sunsets")
    matcher = Matcher([word])
    prose = "This painting was inspired by the sunsets, the colors make me feel calm."
    code = "\n\n```python\n" + "x = compute(a, b, c)\n" * 40 + "```\n"
    alone, with_code = matcher.doc(1, "s", prose), matcher.doc(2, "s", prose + code)
    assert with_code.length == alone.length and bm25(with_code, {word: 1.0}) == bm25(alone, {word: 1.0})
