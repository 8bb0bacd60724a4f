"""Issue 39 §2: corruption of embeddings.db is caught wherever the file is read, and status and search
agree. A file whose ``integrity_check`` fails used to make ``/status`` say ``unavailable`` while every
search answered ``semantic_status: "ready"``; a database error met during a scan answered a vague
"semantic search failed (DatabaseError)". Now both name embeddings.db and the fix, keyword answers
as always, and the fix — ``hermes recall index --rebuild`` — is run against the live server.

A real ``hermes recall serve`` process, the real local model, garbage written into real pages.
"""

from __future__ import annotations

import sqlite3

import pytest

from hermes_side.embedding import build_index, store
from hermes_side.embedding.settings import EmbeddingSettings
from tests.hermes.faulty import api, group_world, hermes

pytestmark = pytest.mark.slow  # real processes, the model


def _pages(db, name: str, kind: str | None = None) -> list[int]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT pageno, pagetype FROM dbstat WHERE name = ?", (name,)).fetchall()
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return [(page, size) for page, pagetype in rows if kind is None or pagetype == kind]


def _spoil(db, pages) -> None:
    with open(db, "r+b") as fh:
        for page, size in pages:
            fh.seek((page - 1) * size)
            fh.write(b"\xde\xad\xbe\xef" * (size // 4))


def _ask(server, mode: str = "hybrid") -> dict:
    status, body = server.call("POST", "/search", {"query": "marmalade migration", "project": "alpha", "mode": mode})
    assert status == 200, body
    return body


@pytest.fixture
def indexed(world):
    group_world(world)
    world.session("the marmalade migration needs a second canary", "agreed, two canaries",
                  cwd=world.work / "alpha")
    stats = build_index(world.home, EmbeddingSettings())
    assert stats.status == "done" and stats.chunks_embedded >= 4
    return world


def test_damage_search_does_not_read_is_said_by_status_and_search_alike(indexed, tmp_path):
    db = store.store_path(indexed.home)
    with api(indexed.home, tmp_path / "recall.log") as server:
        assert _ask(server)["semantic_status"] == "ready"
        _spoil(db, _pages(db, "chunks_by_message"))  # an index no search reads: only a full check sees it

        code, status = server.call("GET", "/status")
        body = _ask(server)

    assert code == 200 and status["semantic"]["status"] == "unavailable"
    assert "embeddings.db is damaged" in status["semantic"]["detail"]
    assert [s["file"] for s in status["stores"]] == ["embeddings.db"]
    assert "hermes recall index --rebuild" in status["stores"][0]["recovery"]
    assert body["semantic_status"] == "unavailable"  # was "ready", ranking by a damaged file
    assert "embeddings.db is damaged" in body["semantic_detail"] and "--rebuild" in body["semantic_detail"]
    assert body["results"], "keyword still answers"


def test_damage_met_during_a_scan_names_the_file_and_rebuild_fixes_it_live(indexed, tmp_path):
    db = store.store_path(indexed.home)
    _spoil(db, _pages(db, "chunks", "leaf"))  # the vectors themselves

    with api(indexed.home, tmp_path / "recall.log") as server:
        body = _ask(server)
        assert body["semantic_status"] == "unavailable"
        assert "embeddings.db is damaged" in body["semantic_detail"], body.get("semantic_detail")
        assert body["results"] and _ask(server, "keyword")["results"]
        code, status = server.call("GET", "/status")
        assert status["semantic"]["status"] == "unavailable" and status["stores"][0]["file"] == "embeddings.db"

        refused = hermes(indexed.home, "index")  # a plain run would write into the damaged file
        assert refused.returncode == 1 and "--rebuild" in refused.stderr

        fixed = hermes(indexed.home, "index", "--rebuild")  # the recovery both of them name
        assert fixed.returncode == 0 and "Done:" in fixed.stdout, fixed

        body = _ask(server)  # the same server process, no restart
        code, status = server.call("GET", "/status")
    assert body["semantic_status"] == "ready" and body["results"]
    assert status["semantic"]["status"] == "ready" and status["stores"] == []
