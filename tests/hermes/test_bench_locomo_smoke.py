"""Smoke test of the LoCoMo benchmark loader: one conversation into a temp Hermes home.

Checks the corpus the retrieval benchmark scores against is what the data says: every turn is one
message in Hermes' real state.db, evidence ids point at the right rows, and every session sits in
its conversation's project folder. LoCoMo is research data read from ../shared at run time.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sqlite3
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = REPO.parent / "shared" / "data" / "locomo-dev"
CONV = "30"  # the smallest file: 19 sessions, 369 turns

pytestmark = pytest.mark.skipif(
    not (DATA_DIR / f"{CONV}.json").is_file(),
    reason=f"LoCoMo dev data not available at {DATA_DIR} (research data, not shipped with the repo)",
)


def _load_module():
    spec = importlib.util.spec_from_file_location("_bench_locomo_load", REPO / "benchmarks" / "locomo_load.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    home = tmp_path_factory.mktemp("locomo-home")
    mp.setenv("HERMES_HOME", str(home))  # the loader sets it too; this restores it afterwards
    try:
        mod = _load_module()
        corpus = mod.load_locomo(home, DATA_DIR, [CONV])
        raw = json.loads((DATA_DIR / f"{CONV}.json").read_text(encoding="utf-8"))
        yield mod, corpus, raw
    finally:
        mp.undo()


def _turns(raw):
    for key in sorted((k for k in raw if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])):
        yield from raw[key]


def _expected_text(turn) -> str:
    text = turn["text"].strip()
    return f"{text} [shares a photo: {turn['blip_caption'].strip()}]" if turn.get("blip_caption") else text


def test_every_turn_is_one_message(loaded):
    _, corpus, raw = loaded
    turns = list(_turns(raw))
    with sqlite3.connect(corpus.state_db) as conn:
        (n_messages,) = conn.execute("SELECT COUNT(*) FROM messages").fetchone()
        (n_sessions,) = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()
        counts = dict(conn.execute("SELECT id, message_count FROM sessions"))
    assert n_messages == len(turns) == corpus.turn_counts[CONV] == corpus.message_count()
    n_locomo_sessions = sum(1 for k in raw if re.fullmatch(r"session_\d+", k) and raw[k])
    assert n_sessions == n_locomo_sessions == len(corpus.sessions)
    for (_conv, n), sid in corpus.sessions.items():
        assert counts[sid] == len(raw[f"session_{n}"])


def test_messages_keep_text_role_and_date(loaded):
    mod, corpus, raw = loaded
    speaker_a = raw["speaker_a"]
    with sqlite3.connect(corpus.state_db) as conn:
        rows = {mid: (sid, role, content, ts) for mid, sid, role, content, ts in conn.execute(
            "SELECT id, session_id, role, content, timestamp FROM messages")}
    for turn in _turns(raw):
        t = corpus.turns[(CONV, turn["dia_id"])]
        sid, role, content, ts = rows[t.message_id]
        assert content == _expected_text(turn)
        assert role == ("user" if turn["speaker"] == speaker_a else "assistant")
        assert sid == corpus.sessions[(CONV, t.session_no)]
        started = mod.parse_locomo_date(raw[f"session_{t.session_no}_date_time"]).timestamp()
        assert started <= ts < started + 24 * 3600
    assert any("[shares a photo: " in r[2] for r in rows.values()), "captions of shared photos are kept"


def test_evidence_maps_to_the_right_messages(loaded):
    _, corpus, raw = loaded
    by_dia = {t["dia_id"]: t for t in _turns(raw)}
    expected = [q for q in raw["qa"] if q["category"] in (1, 2, 3, 4)]
    assert len(corpus.questions) + len(corpus.dropped_questions) == len(expected)
    assert corpus.questions and all(1 <= q.category <= 4 for q in corpus.questions)
    with sqlite3.connect(corpus.state_db) as conn:
        content = dict(conn.execute("SELECT id, content FROM messages"))
        session_of = dict(conn.execute("SELECT id, session_id FROM messages"))
    for q in corpus.questions:
        assert q.evidence and len(q.evidence) == len(q.evidence_message_ids)
        for dia, mid in zip(q.evidence, q.evidence_message_ids, strict=True):
            assert content[mid] == _expected_text(by_dia[dia])
        assert sorted({session_of[m] for m in q.evidence_message_ids}) == q.evidence_session_ids


def test_sessions_belong_to_the_conversation_project(loaded):
    _, corpus, _ = loaded
    from hermes_cli import projects_db

    folder = corpus.folders[CONV]
    assert folder.is_dir() and folder == corpus.home / "work" / CONV
    conn = projects_db.connect(corpus.projects_db)
    try:
        project = projects_db.get_project(conn, corpus.projects[CONV])
        assert project is not None and project.to_dict()["primary_path"] == str(folder)
        with sqlite3.connect(corpus.state_db) as sconn:
            cwds = {cwd for (cwd,) in sconn.execute("SELECT DISTINCT cwd FROM sessions")}
        assert cwds == {str(folder)}
        assert projects_db.project_for_path(conn, str(folder)).id == corpus.projects[CONV]
    finally:
        conn.close()


def test_evidence_normalisation(loaded):
    mod, _, _ = loaded
    known = {"D8:6", "D9:17", "D11:26", "D1:18", "D1:20"}
    assert mod.normalise_evidence(["D8:6; D9:17"], known) == ["D8:6", "D9:17"]
    assert mod.normalise_evidence(["D:11:26"], known) == ["D11:26"]
    assert mod.normalise_evidence(["D1:18", "D", "D1:20", "D10:19"], known) == ["D1:18", "D1:20"]
