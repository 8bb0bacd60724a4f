"""A Chinese question over English history that names someone the project never mentions is about
another project's people: its rows are weak matches at best, however many of its other words the
dictionary finds ("database", "migration" are in any engineering chat). Named someone the project
does hold, the same question is answered with a level above low. Real tool, real e5, real state.db."""

from __future__ import annotations

import pytest

from hermes_side.embedding import build_index, load_settings
from hermes_side.embedding.vectors import drop_indexes
from tests.hermes.world import call_tool, shared_world

GINA = "Gina finished the database migration on Friday; the orders table now has partial indexes."
OTHER = "The CI cache key now includes the lockfile hash, so builds stopped restoring stale dependencies."


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with shared_world(tmp_path_factory.mktemp("names")) as w:
        orders = w.folder("orders")
        w.project("orders", orders)
        w.session("How is the database migration going?", GINA, cwd=orders, title="migration")
        w.session("Why did the build restore old packages?", OTHER, cwd=orders, title="CI cache")
        asking = w.session(cwd=orders)
        drop_indexes()
        assert build_index(w.home, load_settings(w.home)).status == "done"
        yield asking
        drop_indexes()


def levels(asking: str, query: str, mode: str) -> list[str]:
    out = call_tool("project_history_search", {"query": query, "mode": mode, "limit": 5}, asking)
    assert out["success"] is True and out.get("semantic_status") in (None, "ready"), out
    return [r["relevance"]["level"] for r in out["results"]]


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_name_the_project_holds_is_answered(world, mode):
    found = levels(world, "Gina 数据库 迁移 完成 了吗", mode)
    assert found and found[0] in ("medium", "high")


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_name_the_project_never_mentions_is_at_most_a_weak_match(world, mode):
    assert all(level == "low" for level in levels(world, "Marco 数据库 迁移 完成 了吗", mode))
