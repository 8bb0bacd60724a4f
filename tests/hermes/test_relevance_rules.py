"""The relevance rules on real texts (pure functions; the calibration is in benchmarks/README.md)."""

from __future__ import annotations

import pytest

from hermes_side.search.bm25 import Doc, idf
from hermes_side.search.query import Term
from hermes_side.search.question import posed
from hermes_side.search.relevance import (
    Candidate,
    Evidence,
    judge,
    keyword_list_weight,
    script_of,
    translated_list_weight,
    word_coverage,
)
from hermes_side.search.settings import RANKING


@pytest.mark.parametrize(("text", "script"), [
    ("群机器人半夜掉线了怎么办？", "cjk"),
    ("用 Alembic 做数据库迁移", "cjk"),
    ("We went with Postgres because we need JSONB", "latin"),
    ("deploy 到 production 的 pipeline configuration", "latin"),
    ("", "latin"),
])
def test_script_follows_what_most_of_the_text_is_written_in(text, script):
    assert script_of(text) == script


def test_word_coverage_counts_chinese_words_like_english_ones():
    assert word_coverage("每 90 天轮换 access token", ["轮换", "token"]) == 1.0
    assert word_coverage("每 90 天轮换 access token", ["轮换", "心跳"]) == 0.5
    assert word_coverage("Deploying with Docker", ["docker", "kubernetes"]) == 0.5  # folded
    assert word_coverage("we deployed it on Friday", ["deploying"]) == 1.0  # inflected, as keyword search finds it


def test_a_long_unspaced_chinese_question_earns_partial_credit_for_one_matched_word():
    assert 0 < word_coverage("数据库迁移先加列再回填", ["请帮我找找关于数据库迁移方案"]) < 0.5


def test_nothing_in_common_is_dropped_and_more_agreement_ranks_higher():
    base = Evidence({"cjk": 0.85, "latin": 0.78})
    assert judge(posed("部署 回滚"), Candidate("周末去爬山"), base) is None
    assert judge(posed("部署"), Candidate("周末去爬山", 0.80), base) is None  # below small talk
    weak = judge(posed("回滚"), Candidate("部署脚本", 0.87), base)
    strong = judge(posed("回滚"), Candidate("部署脚本", 0.95), base)
    assert weak is not None and strong is not None and weak.score < strong.score
    assert strong.level == "high" and weak.level == "low"
    assert judge(posed("回滚 部署"), Candidate("回滚 部署 脚本")).score >= RANKING.medium  # all words, no model


def test_a_hit_keyword_search_found_is_kept_even_when_the_words_look_different():
    # e.g. a word keyword search matched inside multimodal JSON or by a stem this check lacks
    found = judge(posed("zeppelin"), Candidate("The build cache was rebuilt", keyword_hit=True))
    assert found is not None and found.level == "low"


def test_the_keyword_list_counts_by_the_rarity_of_the_words_it_found():
    # A scope of 80 turns; half begin with a speaker's name ("Melanie：…"), none says "paint".
    name, paint, park = Term("word", "melanie"), Term("word", "paint"), Term("word", "park")
    weights = {name: idf(40, 80), paint: idf(0, 80)}
    # "What did Melanie paint?": hits holding only the name are not half the question
    assert keyword_list_weight([Doc(1, "s1", {name: 1}, 6)], weights) < 0.25
    assert keyword_list_weight([Doc(1, "s1", {name: 1}, 6), Doc(2, "s2", {paint: 1}, 9)], weights) == 1.0
    # every word as rare as the others: the share of the words, full weight from half of them
    even = {Term("word", w): idf(2, 80) for w in ("adopted", "beagle", "cat", "dog")}
    assert keyword_list_weight([Doc(3, "s3", dict.fromkeys(list(even)[:2], 1), 9)], even) == 1.0
    assert keyword_list_weight([Doc(3, "s3", dict.fromkeys(list(even)[:1], 1), 9)], even) == 0.5
    assert keyword_list_weight([], weights) == 0.0
    assert keyword_list_weight([Doc(4, "s4", {park: 1}, 5)], {}) == 0.0  # nothing weighed


def test_the_translated_list_counts_by_the_chinese_words_it_adds():
    """A Chinese question's English senses count for the words the keyword list did not find as
    asked: over Chinese turns that hold them, English turns saying "script" add nothing."""
    english = ["The deploy script hit the rate limit", "Verify the exchange rate"]
    concepts = [("script",), ("exchange", "rate"), ("printer",)]
    sources = ["脚本", "汇率", "打印机"]
    # English history: the keyword list found none of the Chinese words, the senses count as found
    assert translated_list_weight(english, concepts, [], sources) == 1.0
    # a Chinese turn holds 脚本 and 汇率: only 打印机 could be added, and the English turns lack it
    chinese = ["脚本每晚超时，是因为汇率接口太慢"]
    assert translated_list_weight(english, concepts, chinese, sources) == 0.0
    # it holds 脚本 only: 汇率 is added through "exchange rate", one word of three
    assert translated_list_weight(english, concepts, ["脚本每晚超时"], sources) == 2 / 3
