"""A big scope's keyword search asks Hermes' FTS5 indexes (settings.py's ``scan_scope_max``); a
state.db whose indexes Hermes could not create, or lost, must still answer (the seed's failure
table, §7). Its own file: the 3,1xx-message home is built once for the module, each test breaking
its own copy.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from contextlib import closing

import pytest

from hermes_side.search.chat_facing import chat_facing
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


def damage_index(conn: sqlite3.Connection) -> None:
    """Lose the FTS index's segments: every MATCH then raises 'database disk image is malformed'
    while the messages table reads whole (and Hermes 0.19's own health probe still says ok)."""
    conn.execute("DELETE FROM messages_fts_data WHERE id > 10")


class TestFtsUnavailable:
    """A big scope's keyword search asks Hermes' FTS5 indexes; when a state.db has none to ask, the
    scope's newest messages are read instead and the user gets the same answer."""

    @pytest.mark.parametrize(("damage", "query"), [
        # Hermes on a SQLite without the trigram tokenizer (< 3.34) creates no trigram index.
        pytest.param(lambda c: without_fts(c, "messages_fts_trigram"), "数据库迁移", id="no-trigram"),
        # On a SQLite without FTS5 it creates neither, and drops their triggers (hermes_state).
        pytest.param(lambda c: without_fts(c, "messages_fts", "messages_fts_trigram"), "what about kestrel?",
                     id="no-fts5"),
        # An index whose segments were lost (TestDamagedIndex: the operator is told too).
        pytest.param(damage_index, "what about kestrel?", id="corrupt-index"),
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


def project_messages(home) -> int:
    """Every message of the fixture's one project (the asking session's included)."""
    with closing(sqlite3.connect(home / "state.db")) as conn:
        return conn.execute("SELECT count(*) FROM messages").fetchone()[0]


class TestDamagedIndex:
    """A damaged FTS index answers from the scope's newest messages (above) and says so to the
    operator — naming state.db, what was searched and the fix — never to a chat; after the fix the
    whole scope is searched again and the note is gone."""

    def test_the_operator_is_told_what_was_searched_and_the_fix_works(self, big_scope, tmp_path, monkeypatch):
        home = tmp_path / "hermes-home"
        shutil.copytree(big_scope.home, home)
        with closing(sqlite3.connect(home / "state.db")) as conn, conn:
            damage_index(conn)
        monkeypatch.setenv("HERMES_HOME", str(home))
        load_plugin(home)
        try:
            damaged = search(big_scope.cur, "what about kestrel?")
            chat = chat_facing(damaged)
            # The operator's fix, as the note words it: SQLite's own rebuild of the index from the
            # messages (what `hermes sessions repair` does where it sees the damage).
            fix = re.search(r'sqlite3 \S+ "([^"]+)"', damaged.get("keyword_detail", ""))
            assert fix, damaged
            with closing(sqlite3.connect(home / "state.db")) as conn, conn:
                conn.executescript(fix.group(1))
            repaired = search(big_scope.cur, "what about kestrel?")
        finally:
            unload_plugin()

        detail = damaged["keyword_detail"]
        assert str(home / "state.db") in detail and "malformed" in detail
        n = project_messages(home)
        assert f"read the project's {n} messages" in detail and "hermes sessions repair" in detail
        assert hit_ids(damaged) == [big_scope.hit]
        assert "keyword_detail" not in chat and str(home) not in json.dumps(chat)  # a group never reads it
        assert "keyword_detail" not in repaired and hit_ids(repaired) == [big_scope.hit]
