"""Issue 8 (small holes): a damaged embeddings.db is reported, ``--rebuild`` recovers from it, and
opening the store never loops forever when SQLite will not switch to WAL."""

from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys

import pytest

from hermes_side.embedding import build_index, store
from hermes_side.embedding.cli import run_index, setup_index
from hermes_side.embedding.settings import EmbeddingSettings


def parse(setup, *argv):
    parser = argparse.ArgumentParser()
    setup(parser)
    return parser.parse_args(list(argv))


@pytest.fixture
def damaged(history):
    history.turns("a1", "the deploy uses rsync", "agreed")
    path = store.store_path(history.home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"definitely not sqlite " * 512)
    return history


def test_indexing_a_damaged_store_reports_it_instead_of_crashing(damaged):
    stats = build_index(damaged.home, EmbeddingSettings())

    assert stats.status == "corrupt" and "--rebuild" in stats.detail


def test_status_reports_a_damaged_store(damaged, capsys):
    from hermes_side.actions.status import run_status, setup_status  # hermes recall status (HERMES_HOME = damaged.home)

    with pytest.raises(SystemExit):
        run_status(parse(setup_status))

    out = capsys.readouterr().out
    assert "damaged" in out and str(damaged.home) not in out


def test_cli_index_says_so_and_rebuild_moves_it_aside_and_starts_over(damaged, capsys):
    with pytest.raises(SystemExit) as err:
        run_index(parse(setup_index), home=damaged.home)
    assert err.value.code != 0 and "--rebuild" in capsys.readouterr().err

    run_index(parse(setup_index, "--rebuild"), home=damaged.home)

    assert "Done: 2 messages checked, 2 chunks embedded" in capsys.readouterr().out
    aside = list(store.store_path(damaged.home).parent.glob("embeddings.db.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"definitely not sqlite")
    conn = store.connect(damaged.home)
    assert conn.execute("SELECT count(*) FROM chunks").fetchone()[0] == 2
    conn.close()


def test_ensure_wal_returns_when_sqlite_keeps_another_journal_mode():
    # An in-memory database answers "memory" to journal_mode=WAL, like a file system without
    # shared memory answers "delete": the old loop never ended. Run apart so a hang cannot
    # take the suite down with it.
    code = ("import sqlite3; from hermes_side.embedding.store import _ensure_wal\n"
            "conn = sqlite3.connect(':memory:', isolation_level=None); _ensure_wal(conn)\n"
            "print(conn.execute('PRAGMA journal_mode').fetchone()[0])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)

    assert done.returncode == 0 and done.stdout.strip() == "memory"


def test_corruption_is_told_from_other_sqlite_errors():
    assert store.is_corruption(sqlite3.DatabaseError("database disk image is malformed"))
    assert not store.is_corruption(sqlite3.OperationalError("database is locked"))
