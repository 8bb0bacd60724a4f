"""Smoke test of the LoCoMo benchmark loader: one conversation into a temp Hermes home.

Checks the corpus the retrieval benchmark scores against is what the data says: every turn is one
message in Hermes' real state.db, evidence ids point at the right rows, and every session sits in
its conversation's project folder. LoCoMo is research data read from ../shared at run time.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from benchmarks.worlds import locomo, locomo_agent, locomo_zh

REPO = Path(__file__).resolve().parents[2]
CONV = "30"  # the smallest file: 19 sessions, 369 turns


def _shared(name: str) -> Path:
    # The main checkout and its git worktrees sit at different depths below the shared folder.
    for parent in REPO.parents:
        if (parent / "shared" / "data" / name).is_dir():
            return parent / "shared" / "data" / name
    return REPO.parent / "shared" / "data" / name


DATA_DIR = _shared("locomo-dev")
ZH_DIR = _shared("locomo-zh-dev")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not (DATA_DIR / f"{CONV}.json").is_file(),
    reason=f"LoCoMo dev data not available at {DATA_DIR} (research data, not shipped with the repo)",
)]


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    home = tmp_path_factory.mktemp("locomo-home")
    mp.setenv("HERMES_HOME", str(home))  # the loader sets it too; this restores it afterwards
    try:
        corpus = locomo.load_locomo(home, DATA_DIR, [CONV])
        raw = json.loads((DATA_DIR / f"{CONV}.json").read_text(encoding="utf-8"))
        yield locomo, corpus, raw
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


@pytest.mark.skipif(not (ZH_DIR / "questions.jsonl").is_file(), reason="LoCoMo-zh dev data not available")
def test_chinese_history_holds_the_summaries_of_the_evidence_turns(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    corpus = locomo_zh.load_locomo_zh(tmp_path, DATA_DIR, ZH_DIR, [CONV])
    rows = map(json.loads, (ZH_DIR / "corpus.jsonl").open())
    summaries = {locomo_zh.zh_turn_key(r["id"]): r["summary"] for r in rows}
    mine = {k: v for k, v in summaries.items() if k[0] == CONV}
    assert corpus.message_count() == len(mine) and corpus.questions
    with sqlite3.connect(corpus.state_db) as conn:
        content = dict(conn.execute("SELECT id, content FROM messages"))
    for (conv, dia), turn in corpus.turns.items():
        assert content[turn.message_id] == f"{turn.speaker}：{mine[(conv, dia)]}"
    for q in corpus.questions:  # every evidence id names a Chinese message of this conversation
        assert q.conv == CONV and all(content[m].split("：", 1)[1] in mine.values() for m in q.evidence_message_ids)



@pytest.mark.skipif(not (ZH_DIR / "questions.jsonl").is_file(), reason="LoCoMo-zh dev data not available")
def test_the_mixed_chinese_world_keeps_every_other_turn_beside_the_chinese_ones(tmp_path, monkeypatch):
    """zhmix: the whole conversation is there, the evidence turns in Chinese, the rest in English, and a
    question's evidence is still exactly its Chinese turns."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    corpus = locomo_zh.load_locomo_zh(tmp_path, DATA_DIR, ZH_DIR, [CONV], mixed=True)
    data = json.loads((DATA_DIR / f"{CONV}.json").read_text(encoding="utf-8"))
    english = {t["dia_id"]: t for k, v in data.items() if re.fullmatch(r"session_\d+", k) and v for t in v}
    rows = map(json.loads, (ZH_DIR / "corpus.jsonl").open())
    summaries = {locomo_zh.zh_turn_key(r["id"]): r["summary"] for r in rows}
    mine = {dia: s for (conv, dia), s in summaries.items() if conv == CONV}
    assert corpus.message_count() == len(english) and len(corpus.projects) == 1
    with sqlite3.connect(corpus.state_db) as conn:
        content = dict(conn.execute("SELECT id, content FROM messages"))
    for (_, dia), turn in corpus.turns.items():
        want = f"{turn.speaker}：{mine[dia]}" if dia in mine else locomo._turn_text(english[dia])  # as the en world
        assert content[turn.message_id] == want and (dia in mine) == ("：" in want)
    plain = locomo_zh.load_locomo_zh(tmp_path / "plain", DATA_DIR, ZH_DIR, [CONV])
    assert [q.question for q in corpus.questions] == [q.question for q in plain.questions]
    assert all(content[m] == plain.by_message[pm].text for q, pq in zip(corpus.questions, plain.questions, strict=True)
               for m, pm in zip(q.evidence_message_ids, pq.evidence_message_ids, strict=True))

def test_scene_ids_map_to_locomo_conversations(loaded):
    assert locomo_zh.zh_turn_key("scene_0_session_2_turn_12") == ("26", "D2:12")
    assert locomo_zh.zh_turn_key("scene_1_session_10_turn_3") == ("30", "D10:3")
    with pytest.raises(ValueError):
        locomo_zh.zh_turn_key("scene_x")


def test_one_command_reports_every_suite_from_a_cached_home(tmp_path, monkeypatch, capsys):
    """The benchmark's own entry point on one conversation, keyword methods only (no model)."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    from benchmarks import bench_locomo  # noqa: PLC0415

    argv = ["--files", CONV, "--methods", "bm25", "keyword", "--suites", "en", "zh", "xl",
            "--data-dir", str(DATA_DIR), "--zh-dir", str(ZH_DIR), "--cache-dir", str(tmp_path / "homes"),
            "--json", str(tmp_path / "out.json")]
    bench_locomo.main(argv)
    first = json.loads((tmp_path / "out.json").read_text())
    suites = {(r["suite"], r["method"]) for r in first["results"]}
    assert suites == {(s, m) for s in ("en", "zh", "xl") for m in ("bm25", "keyword")}
    assert "reused" not in capsys.readouterr().out
    bench_locomo.main(argv)  # the second run reuses both homes and gives the same numbers
    assert capsys.readouterr().out.count("(reused)") == 2
    def scores(out):
        return [{k: v for k, v in r.items() if k != "p95_ms"} for r in out["results"]]

    assert scores(json.loads((tmp_path / "out.json").read_text())) == scores(first)


def test_the_agent_world_is_written_the_way_hermes_stores_agent_work(tmp_path, monkeypatch):
    """Tool-call turns without text, tool results, long turns and an in-place compaction, all
    through SessionDB; every question's evidence is still a searchable turn (or its compaction copy),
    and the answer the search shows after a tool call is the turn itself, never the machinery."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    corpus = locomo.load_locomo(tmp_path, DATA_DIR, [CONV], agent=True)
    with sqlite3.connect(corpus.state_db) as conn:
        rows = {r[0]: r for r in conn.execute("SELECT id, session_id, role, content, tool_calls, active, compacted"
                                              " FROM messages")}
    calls = [r for r in rows.values() if r[2] == "assistant" and r[4] and not r[3]]
    assert calls and any(r[2] == "tool" and r[3].startswith("{") for r in rows.values())
    assert any(r[2] == "user" and (r[3] or "").startswith("[CONTEXT COMPACTION") for r in rows.values())
    assert any(locomo_agent.LONG_TAIL in (r[3] or "") for r in rows.values()) and corpus.copies
    for q in corpus.questions:
        for mid in q.evidence_message_ids:
            _, _, role, content, _, active, compacted = rows[mid]
            assert role in ("user", "assistant") and content and (active or compacted)
    from hermes_side.scope import rule_view
    from hermes_side.search.answers import reply_to
    from hermes_side.stores.hermes_db import connect_ro

    conn = connect_ro(corpus.state_db)
    try:
        rule_view.prepare(conn, tmp_path)  # what every reader of history does first
        for mid, t in list(corpus.by_message.items())[:80]:
            nxt = reply_to(conn, t.session_id, mid)
            assert nxt is None or nxt["message_id"] in corpus.by_message or nxt["message_id"] in corpus.copies
    finally:
        conn.close()
