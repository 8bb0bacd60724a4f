"""A big scope's keyword search asks Hermes' FTS5 indexes (settings.py's ``scan_scope_max``); a
state.db whose indexes Hermes could not create, or lost, must still answer (the seed's failure
table, §7). Its own file: the 3,1xx-message home is built once for the module, each test breaking
its own copy.
"""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing

import pytest

from hermes_side.search.settings import RANKING
from tests.hermes.test_failure_modes import hit_ids, search
from tests.hermes.world import World, load_plugin, unload_plugin


@pytest.fixture(scope="module")
def big_scope(tmp_path_factory):
    """A project whose scope holds more than ``scan_scope_max`` messages, so keyword search asks
    FTS5 rather than scanning: written once by Hermes' SessionDB, each test breaking its own copy."""
    root = tmp_path_factory.mktemp("big-scope")
    (root / "hermes-home").mkdir()
    w = World(root / "hermes-home", root / "work")
    proj = w.folder("proj")
    w.project("Proj", proj)
    for n in range(RANKING.scan_scope_max // 100 + 1):
        w.session(*(f"weekly sync note {n}.{i} about the release train" for i in range(100)), cwd=proj)
    w.hit = w.session("kestrel 数据库迁移先加列", cwd=proj)
    w.session("unrelated words", cwd=proj)
    w.cur = w.session("hello", cwd=proj)
    w.close()
    yield w


def without_fts(conn: sqlite3.Connection, *tables: str) -> None:
    """What Hermes leaves on a SQLite that cannot hold ``tables``: neither them nor their triggers."""
    for table in tables:
        for trigger in ("insert", "delete", "update"):
            conn.execute(f"DROP TRIGGER IF EXISTS {table}_{trigger}")
        conn.execute(f"DROP TABLE {table}")


class TestFtsUnavailable:
    """A big scope's keyword search asks Hermes' FTS5 indexes; when a state.db has none to ask, the
    scope's newest messages are read instead and the user gets the same answer."""

    @pytest.mark.parametrize(("damage", "query"), [
        # Hermes on a SQLite without the trigram tokenizer (< 3.34) creates no trigram index.
        pytest.param(lambda c: without_fts(c, "messages_fts_trigram"), "数据库迁移", id="no-trigram"),
        # On a SQLite without FTS5 it creates neither, and drops their triggers (hermes_state).
        pytest.param(lambda c: without_fts(c, "messages_fts", "messages_fts_trigram"), "what about kestrel?",
                     id="no-fts5"),
        # An index whose segments were lost: what `hermes sessions repair` rebuilds (Hermes' doctor).
        pytest.param(lambda c: c.execute("DELETE FROM messages_fts_data WHERE id > 10"), "what about kestrel?",
                     id="corrupt-index", marks=pytest.mark.xfail(strict=True, reason=(
                         "keyword.py falls back on sqlite3.OperationalError only; a corrupt FTS index raises"
                         " DatabaseError ('database disk image is malformed'): 'search failed', code internal"))),
    ])
    def test_fts_index_missing_falls_back_to_like(self, big_scope, tmp_path, monkeypatch, damage, query):
        home = tmp_path / "hermes-home"
        shutil.copytree(big_scope.home, home)
        with closing(sqlite3.connect(home / "state.db")) as conn, conn:
            damage(conn)
            in_scope = conn.execute("SELECT count(*) FROM messages WHERE session_id != ?", (big_scope.cur,))
            assert in_scope.fetchone()[0] > RANKING.scan_scope_max  # the FTS path, not a scan of a small scope
        monkeypatch.setenv("HERMES_HOME", str(home))
        load_plugin(home)
        try:
            out = search(big_scope.cur, query)
        finally:
            unload_plugin()

        assert out["success"] is True and hit_ids(out) == [big_scope.hit]
        assert ">>>" in out["results"][0]["snippet"]
