"""The ranking's constants live in one object (search/settings.py) that every stage reads at call
time, so a benchmark's ablation or a test changes a search everywhere at once."""

from __future__ import annotations

import dataclasses

import pytest

from hermes_side.search.engine import SearchEngine
from hermes_side.search.settings import RANKING, Ranking, overridden


def test_an_override_is_seen_by_the_stages_and_undone_after():
    with overridden(candidates=1, rrf_k=60) as ranking:
        assert ranking is RANKING and RANKING.candidates == 1 and RANKING.rrf_k == 60
    assert Ranking() == RANKING


def test_an_unknown_name_is_an_error_and_changes_nothing():
    with pytest.raises(KeyError, match="no ranking constant named per_conversaton"), \
            overridden(per_conversaton=1, rrf_k=60):
        pass
    assert Ranking() == RANKING


def test_no_one_else_can_change_it():
    with pytest.raises(dataclasses.FrozenInstanceError):
        RANKING.rrf_k = 60  # type: ignore[misc]


def test_a_search_follows_the_override(world):
    folder = world.folder("p")
    pid = world.project("P", folder)
    world.session("rsync backup to the nas", "the rsync job runs nightly", "rsync flags: -avz", cwd=folder)
    engine = SearchEngine(world.home)

    assert len(engine.rank_messages("rsync", mode="keyword", project=pid)) == 3
    with overridden(candidates=1):  # one candidate per list
        assert len(engine.rank_messages("rsync", mode="keyword", project=pid)) == 1
