"""Hermes-side tests run against the real hermes-agent package with a throwaway HERMES_HOME.

``HERMES_HOME`` must be set before any Hermes module is imported (``hermes_state`` computes its
default path at import time, and importing ``model_tools`` discovers plugins), so it is set here,
at collection time, and every test then points it at its own temp home.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import ExitStack

os.environ["HERMES_HOME"] = tempfile.mkdtemp(prefix="recall-tests-home-")
# The parsed dictionary is cached in the user's cache folder (translate.py): never the real one.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="recall-tests-cache-")
os.environ.setdefault("GIT_AUTHOR_NAME", "test")
os.environ.setdefault("GIT_AUTHOR_EMAIL", "test@example.invalid")
os.environ.setdefault("GIT_COMMITTER_NAME", "test")
os.environ.setdefault("GIT_COMMITTER_EMAIL", "test@example.invalid")

import pytest  # noqa: E402

from hermes_side.search.settings import overridden  # noqa: E402
from tests.hermes.world import World  # noqa: E402


@pytest.fixture
def ranking():
    """``ranking(scan_scope_max=0, …)`` changes ranking constants (settings.py) for one test."""
    with ExitStack() as stack:
        yield lambda **changes: stack.enter_context(overridden(**changes))


@pytest.fixture
def world(tmp_path, monkeypatch):
    home = tmp_path / "hermes-home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    w = World(home, tmp_path / "work")
    yield w
    w.close()


@pytest.fixture
def loaded_plugin(world):
    """Our plugin discovered and loaded by Hermes' own loader from the pip entry point (kept loaded
    for the next test whose home gives discovery the same inputs: ``world.plugin_in``)."""
    from tests.hermes.world import plugin_in

    return plugin_in(world.home)


# The modules that take longest, run first: two xdist workers take whole files in collection order
# (`--dist loadfile --no-loadscope-reorder`: xdist would otherwise sort files by their number of
# tests), and the stateful privacy test alone is a fifth of the fast lane — started last, the other
# worker would sit idle while it runs.
LONGEST_FIRST = ("test_rules_stateful.py", "test_first_run.py", "test_trusted_results.py",
                 "test_seal_redirects.py", "test_mixed_language_ranking.py")


def pytest_collection_modifyitems(items):
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order
