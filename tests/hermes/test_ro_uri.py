"""Regression: a home path with ``#`` made the embedding side open — and create — another file.

``embedding/history.py`` opened state.db as ``f"file:{path}?mode=ro"``. In a URI ``#`` starts the
fragment, so for ``/srv/a#b/state.db`` SQLite opened ``/srv/a`` instead, without ``mode=ro`` (the
query string was inside the cut-off fragment): a new, empty, *writable* file beside the home.
Every read-only open now goes through ``stores/hermes_db.ro_uri``, which percent-encodes the path.
"""

from __future__ import annotations

import sqlite3

import pytest

from hermes_side.embedding import history
from tests.hermes.world import World


@pytest.mark.parametrize("folder", ["a#b", "a?b", "100%"])
def test_hash_in_home_path_opened_and_created_another_writable_file(tmp_path, folder):
    home = tmp_path / folder / "hermes-home"
    home.mkdir(parents=True)
    world = World(home, tmp_path / "work")
    try:
        world.session("kestrel deploy uses rsync", "noted", cwd=world.folder("p"))
    finally:
        world.close()
    before = sorted(p.name for p in tmp_path.iterdir())

    conn = history.connect_ro(home)
    try:
        assert history.count_in_scope(conn, None) == 2  # the real state.db, not an empty stranger
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("CREATE TABLE intruder (x)")
    finally:
        conn.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing created beside the home
