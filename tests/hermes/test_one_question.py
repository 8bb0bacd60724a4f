"""One search, one question: what a search works out about its question and its scope it works out
once (search/question.py), through the agent's tool on a real Hermes home."""

from __future__ import annotations

from hermes_side.search.reader import ScopeMessageIds
from hermes_side.search.settings import overridden
from tests.hermes.world import call_tool


def test_every_stage_of_a_search_reads_the_same_rows_of_its_scope(world, loaded_plugin, monkeypatch):
    """The scope's rows are read once per search, at one moment: a Chinese hybrid search (its
    keyword side, the semantic side's early start, the translations, the coverage, the row labels)
    used to read them four or five times, each time up to the newest message then."""
    a = world.folder("a")
    world.project("A", a)
    answer = world.session("That charity race sounds great! Raising awareness for mental health is rewarding.",
                           cwd=a)
    world.session("We repainted the kitchen cabinets a deep green last weekend.", cwd=a)
    current = world.session("hello", cwd=a)
    reads = []
    scope = ScopeMessageIds.scope
    monkeypatch.setattr(ScopeMessageIds, "scope", lambda self, *a: reads.append(a) or scope(self, *a))

    out = call_tool("project_history_search", {"query": "慈善 心理健康 意识", "mode": "hybrid"}, current)

    assert [r["session_id"] for r in out["results"]][:1] == [answer]
    assert len(reads) == 1


def test_the_translated_list_is_a_ranking_setting(world, loaded_plugin):
    """A Chinese question finds the English message through its words' translations; with the
    ranking setting ``translated_list`` off (bench_latency.py times both arms) it is asked as typed,
    and nothing in the English history holds those words."""
    a = world.folder("a")
    world.project("A", a)
    answer = world.session("That charity race sounds great! Raising awareness for mental health is rewarding.",
                           cwd=a)
    current = world.session("hello", cwd=a)
    args = {"query": "慈善 心理健康 意识", "mode": "keyword"}

    with overridden(translated_list=False):
        without = call_tool("project_history_search", args, current)
    found = call_tool("project_history_search", args, current)

    assert without["results"] == []
    assert [r["session_id"] for r in found["results"]] == [answer]
