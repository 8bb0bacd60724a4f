"""Turning what a person typed into search terms, and validating tool arguments. Pure functions,
except the MATCH expressions, which run on a state.db written by Hermes' own SessionDB.

What a user notices: a natural-language question finds the message (its scaffolding words are not
required), CJK text of any length is searchable, no input can be parsed as FTS5 syntax, and bad
arguments come back as a clear error rather than a guess.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime

import pytest

from hermes_side.search import probes
from hermes_side.search.keyword import doc_terms
from hermes_side.search.query import (
    EMBED_BUDGET,
    MAX_QUERY_CHARS,
    MAX_TERMS,
    QueryError,
    fold,
    fts_quote,
    like_pattern,
    parse_query,
    trigrams,
)
from hermes_side.search.request import RequestError, parse_search_args
from hermes_side.stores import hermes_db
from tests.hermes.world import World

NOW = datetime(2026, 9, 10, 12, 0).timestamp()


class TestNaturalLanguageQuestions:
    def test_question_scaffolding_is_dropped_and_content_words_kept(self):
        pq = parse_query("what did we decide about the deploy script?")
        assert set(pq.words) == {"decide", "deploy", "script"}

    def test_words_are_lower_cased_and_deduplicated(self):
        assert parse_query("Deploy deploy DEPLOY").words == ("deploy",)

    def test_a_question_made_only_of_stop_words_still_searches_something(self):
        assert not parse_query("what is it?").empty

    def test_numbers_survive_even_when_short(self):
        assert "7" in parse_query("error 7 again").words


class TestCjkQueries:
    def test_long_run_is_cut_at_question_words_and_searched_as_bigrams(self):
        pq = parse_query("上次数据库迁移怎么定的")
        assert pq.cjk == ("数据库迁移",)  # "定" alone is dropped: a lone character matches half the corpus
        assert pq.cjk_grams == ("数据", "据库", "库迁", "迁移")
        assert pq.words == ()

    def test_two_character_word_is_one_bigram(self):
        pq = parse_query("部署")
        assert pq.cjk == ("部署",) and pq.cjk_grams == ("部署",)

    def test_single_character_is_searched_when_it_is_all_there_is(self):
        assert parse_query("库").cjk_grams == ("库",)

    def test_mixed_latin_and_cjk_keeps_both(self):
        pq = parse_query("部署 nonebot 插件")
        assert pq.words == ("nonebot",) and pq.cjk == ("部署", "插件")

    def test_full_width_letters_digits_and_punctuation_are_folded(self):
        pq = parse_query("ＮｏｎｅＢｏｔ　插件，部署？Ｅ１２３")
        assert pq.words == ("nonebot", "e123") and pq.cjk == ("插件", "部署")

    def test_characters_that_also_start_words_do_not_cut_them(self):
        # 在/对/还 are function words, but also half of 在家, 对话, 还原: those words stay whole.
        assert parse_query("在家 对话 还原").cjk == ("在家", "对话", "还原")

    def test_korean_and_japanese_are_cjk_pieces(self):
        assert parse_query("배포 스크립트").cjk == ("배포", "스크립트")
        assert parse_query("デプロイ手順").cjk_grams == ("デプ", "プロ", "ロイ", "イ手", "手順")

    def test_trigrams_cover_the_run(self):
        assert trigrams("数据库迁移") == ["数据库", "据库迁", "库迁移"]


class TestCjkTokenisationOnRealQueries:
    """Queries and messages of the LoCoMo-zh dev split, pinned: what is searched and what matches."""

    @pytest.mark.parametrize(("query", "words", "pieces"), [
        ("慈善跑 心理健康 发声 意识 意义", (), ("慈善跑", "心理健康", "发声", "意识", "意义")),
        ("Becoming Nicole 书 收获 自我接纳 支持 希望", ("becoming", "nicole"), ("收获", "自我接纳", "支持", "希望")),
        ("画画 多久 开始 17岁 创作", ("17",), ("画画", "多久", "开始", "创作")),
        ("The Alchemist 牧羊少年奇幻之旅 梦想", ("alchemist",), ("牧羊少年奇幻之旅", "梦想")),
    ])
    def test_query_terms(self, query, words, pieces):
        pq = parse_query(query)
        assert (pq.words, pq.cjk) == (words, pieces)

    def test_query_bigrams(self):
        assert parse_query("慈善跑 心理健康 发声").cjk_grams == ("慈善", "善跑", "心理", "理健", "健康", "发声")

    def test_message_terms(self):
        text = "称赞对方参加慈善跑很有意义，为心理健康发声很值得"
        terms = doc_terms(text)
        assert {"慈善", "善跑", "心理", "健康", "发声", "意义"} <= set(terms)
        assert "义为" not in terms  # punctuation ends a run: no bigram across "，"

    def test_message_with_latin_names(self):
        terms = doc_terms(fold("Caroline：说上周笔记本电脑崩溃、所有作品都丢了"))
        assert terms["caroline"] == 1 and terms["电脑"] == 1 and "崩溃" in terms

    def test_query_bigrams_are_found_in_the_message_they_came_from(self):
        pq = parse_query("慈善跑 心理健康 发声 意识 意义")
        terms = doc_terms("称赞对方参加慈善跑很有意义，为心理健康发声很值得，为她感到骄傲")
        assert [g for g in pq.cjk_grams if g not in terms] == ["意识"]  # the one word the message lacks


class TestTermBound:
    def test_a_normal_question_is_not_bounded(self):
        assert parse_query("请帮我找找关于生产环境部署脚本回滚流程的记录").notice() is None

    def test_hundreds_of_distinct_words_are_announced(self):
        letters = "abcdefghijklmnopqrstuvwxyz"
        pq = parse_query(" ".join(f"{a}{b}" for a in letters for b in letters)[:MAX_QUERY_CHARS])
        assert pq.term_count > 600 and f"only the {MAX_TERMS} most distinctive" in pq.notice("keyword")

    def test_the_embedder_reads_a_bounded_prefix(self):
        long_zh = parse_query("部署" * 900)
        long_en = parse_query(" ".join(["deploy"] * 280))
        assert len(long_zh.text) == EMBED_BUDGET and long_zh.full_text == "部署" * 900
        assert EMBED_BUDGET <= len(long_en.text) <= 2 * EMBED_BUDGET and long_en.text.endswith("deploy")
        assert "semantic search read its first" in long_zh.notice("semantic")
        assert long_zh.notice("keyword") is None

    def test_a_normal_question_reaches_the_embedder_whole(self):
        pq = parse_query("what did we decide about the deploy script last week, and who signed it off?")
        assert pq.text == "what did we decide about the deploy script last week, and who signed it off?"
        assert pq.full_text == ""

    def test_highlight_terms_are_bounded(self):
        pq = parse_query("".join(chr(0x4E00 + i) for i in range(1500)))
        assert len(pq.highlights) < 100


HOSTILE = ["foo AND (", '"unbalanced', "NEAR(", "col:val", "*", "-x", "a OR", "NOT", "^start",
           "x + y", "{a b}", 'say "hi', "a' OR 1=1 --", "数据库 AND (", "部署\"", "\x00nul", "(((", ")"]


# Typed text that production's probes must find when history holds it: the hostile inputs, and the
# shapes of expression probes.py builds (a stem's prefix, trigrams, the multimodal phrase).
TYPED = [*HOSTILE, "deployed scripts", "上次数据库迁移怎么定的", "déploiement échoué", "デプロイ手順", "배포 스크립트"]
IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}


@pytest.fixture(scope="module")
def typed_history(tmp_path_factory):
    """A state.db written by Hermes' own SessionDB (its messages_fts and messages_fts_trigram),
    holding each typed text as a message, plainly and inside a multimodal one; read-only, as the
    plugin reads it. Yields the connection and each text's (plain, multimodal) message ids."""
    root = tmp_path_factory.mktemp("typed-history")
    (root / "home").mkdir()
    world = World(root / "home", root / "work")
    stored = {}
    for raw in TYPED:
        sid = world.session(f"said: {raw}")
        world.db.append_message(sid, "user", [{"type": "text", "text": f"said: {raw}"}, IMAGE])
        plain, multimodal = (m["id"] for m in world.messages(sid))
        stored[raw] = (plain, multimodal)
    world.close()
    conn = hermes_db.connect_state(root / "home", rows=False)
    yield conn, stored
    conn.close()


class TestNoInputIsFtsSyntax:
    """Every term reaches FTS5 double-quoted; whatever was typed, the MATCH string is valid."""

    @pytest.fixture
    def fts(self):
        conn = sqlite3.connect(":memory:")
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(c)")
        conn.execute("CREATE VIRTUAL TABLE g USING fts5(c, tokenize='trigram')")
        conn.execute("INSERT INTO t VALUES ('foo near col val unbalanced x start')")
        conn.execute("INSERT INTO g VALUES ('数据库迁移')")
        yield conn
        conn.close()

    @pytest.mark.parametrize("raw", TYPED)
    def test_match_expression_parses(self, typed_history, raw):
        """Production's own MATCH expressions (probes.py: a word's, a CJK piece's trigrams, the
        multimodal phrase; the held forms and span reads ``scope_matches`` makes of them) run on
        Hermes' real FTS5 tables: each parses, and each finds the message that says what was typed."""
        conn, stored = typed_history
        plain, multimodal = stored[raw]
        pq = parse_query(raw)
        found_by = probes.probes_of(pq, list(pq.terms))

        assert bool(found_by) == bool(pq.words or pq.cjk_long)  # every term an index can find is asked for
        for table, match, holds in found_by:
            rows = {r[0] for r in conn.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (match,))}
            assert (plain if holds else multimodal) in rows, (table, match)
        scope = sorted(i for pair in stored.values() for i in pair)
        for spans in ([], [(scope[0], scope[-1])]):  # the scope read in one pass, and span by span
            found = probes.scope_matches(conn, found_by, 1000, scope, frozenset(scope), spans)
            assert [(plain if holds else multimodal) in rowids for holds, rowids in found] == [True] * len(found)

    def test_operator_words_are_searched_as_words(self, fts):
        pq = parse_query("NEAR(")
        hits = fts.execute("SELECT count(*) FROM t WHERE t MATCH ?", (" OR ".join(map(fts_quote, pq.words)),))
        assert hits.fetchone()[0] == 1

    def test_quote_inside_a_term_is_escaped(self):
        assert fts_quote('a"b') == '"a""b"'

    @pytest.mark.parametrize(("term", "text", "matches"), [
        ("50%", "uptime was 50% today", True),
        ("50%", "uptime was 500 today", False),
        ("a_b", "name a_b here", True),
        ("a_b", "name axb here", False),
        ("c:\\x", "path c:\\x here", True),
    ])
    def test_like_wildcards_in_the_query_are_literal(self, term, text, matches):
        conn = sqlite3.connect(":memory:")
        got = conn.execute("SELECT ? LIKE ? ESCAPE '\\'", (text, like_pattern(term))).fetchone()[0]
        assert bool(got) is matches

    def test_overlong_query_is_refused_before_parsing(self):
        with pytest.raises(QueryError) as err:
            parse_query("x" * (MAX_QUERY_CHARS + 1))
        assert err.value.code == "query_too_long"


class TestLimit:
    @pytest.mark.parametrize(("given", "used"), [
        (None, 3), (1, 1), (3, 3), (10, 10), (0, 1), (-5, 1), (11, 10), (500, 10), ("7", 7), (4.9, 4),
    ])
    def test_limit_is_clamped_to_one_through_ten(self, given, used):
        args = {"query": "x"} if given is None else {"query": "x", "limit": given}
        assert parse_search_args(args, now=NOW).limit == used

    @pytest.mark.parametrize("bad", [True, False, "abc", [3], {"n": 3}, float("nan"), "1e999"])
    def test_non_numbers_are_refused(self, bad):
        with pytest.raises(RequestError):
            parse_search_args({"query": "x", "limit": bad}, now=NOW)


class TestArguments:
    @pytest.mark.parametrize("args", [
        {"query": 123}, {"query": None}, {}, {"query": ["a"]}, {"query": ""}, {"query": "   \t\n"},
        {"query": "\x00"}, {"query": "x", "mode": "fuzzy"}, {"query": "x", "mode": 1},
        {"query": "x", "colour": "red"}, {"query": "x", "session_id": "someone-else"}, "query=x",
    ])
    def test_bad_arguments_are_refused_with_a_code(self, args):
        with pytest.raises(RequestError) as err:
            parse_search_args(args, now=NOW)
        assert err.value.code and str(err.value)

    def test_mode_defaults_to_hybrid(self):
        assert parse_search_args({"query": "x"}, now=NOW).mode == "hybrid"

    @pytest.mark.parametrize("mode", ["hybrid", "keyword", "semantic"])
    def test_every_seed_mode_is_accepted(self, mode):
        assert parse_search_args({"query": "x", "mode": mode}, now=NOW).mode == mode

    def test_overlong_query_has_its_own_code(self):
        with pytest.raises(RequestError) as err:
            parse_search_args({"query": "x" * 100_000}, now=NOW)
        assert err.value.code == "query_too_long"


class TestTimeRange:
    @pytest.mark.parametrize(("text", "seconds_ago"), [
        ("7d", 7 * 86400), ("24h", 24 * 3600), ("2w", 14 * 86400), (" 3D ", 3 * 86400),
    ])
    def test_relative_spans_count_back_from_now(self, text, seconds_ago):
        assert parse_search_args({"query": "x", "after": text}, now=NOW).after == NOW - seconds_ago

    def test_iso_date_and_datetime(self):
        req = parse_search_args({"query": "x", "after": "2026-09-01", "before": "2026-09-02T14:30"}, now=NOW)
        assert req.after == datetime(2026, 9, 1).timestamp()
        assert req.before == datetime(2026, 9, 2, 14, 30).timestamp()

    def test_empty_bounds_mean_no_bound(self):
        req = parse_search_args({"query": "x", "after": "", "before": None}, now=NOW)
        assert req.after is None and req.before is None

    @pytest.mark.parametrize("args", [
        {"after": "last tuesday"}, {"before": 20260901}, {"after": "2026-13-45"},
        {"after": "2026-09-02", "before": "2026-09-01"}, {"after": "1d", "before": "7d"},
    ])
    def test_unreadable_or_empty_ranges_are_refused(self, args):
        with pytest.raises(RequestError):
            parse_search_args({"query": "x", **args}, now=NOW)
