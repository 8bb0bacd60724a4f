"""The Chinese LoCoMo worlds (LoCoMo-zh): ``zh``, pooled ``zhpool`` and mixed ``zhmix``, and the
questions across languages (``xl``: Chinese questions over the English history; ``rev``: English
questions over the Chinese history).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .locomo import (
    _SESSION_KEY,
    POOLED,
    TURN_SECONDS,
    Corpus,
    Question,
    Turn,
    _session_id,
    _turn_text,
    conversation_files,
    parse_locomo_date,
    shared_data,
)

ZH_SCENES = ("26", "30", "41", "42", "43", "44", "47", "48", "49", "50")
_ZH_TURN = re.compile(r"scene_(\d+)_session_(\d+)_turn_(\d+)")


def default_zh_dir() -> Path:
    """``../shared/data/locomo-zh-dev`` (override: ``LOCOMO_ZH_DATA_DIR``)."""
    env = os.environ.get("LOCOMO_ZH_DATA_DIR")
    if env:
        return Path(env)
    return shared_data("locomo-zh-dev")


def zh_turn_key(turn_id: str) -> tuple[str, str]:
    """``scene_0_session_2_turn_12`` → (``"26"``, ``"D2:12"``)."""
    m = _ZH_TURN.fullmatch(turn_id)
    if m is None:
        raise ValueError(f"not a LoCoMo-zh turn id: {turn_id!r}")
    return ZH_SCENES[int(m.group(1))], f"D{int(m.group(2))}:{int(m.group(3))}"


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def zh_questions(corpus: Corpus, zh_dir: Path) -> list[Question]:
    """The Chinese questions whose evidence turns are messages of ``corpus`` (category 0: none given)."""
    out: list[Question] = []
    for q in _jsonl(Path(zh_dir) / "questions.jsonl"):
        keys = [zh_turn_key(t) for t in q["evidence_turns"]]
        turns = [corpus.turns[k] for k in keys if k in corpus.turns]
        convs = {c for c, _ in keys}
        if not turns or len(convs) != 1 or next(iter(convs)) not in corpus.projects:
            corpus.dropped_questions.append((next(iter(convs), "?"), q["question"]))
            continue
        out.append(Question(
            conv=turns[0].conv, question=q["question"], answer="", category=0,
            evidence=[t.dia_id for t in turns],
            # a compaction's copy of an evidence turn is that turn, as for the English questions
            evidence_message_ids=[t.message_id for t in turns] + [c for c, t in corpus.copies.items() if t in turns],
            evidence_session_ids=sorted({t.session_id for t in turns})))
    return out


def questions_over(history: Corpus, questions: list[Question]) -> list[Question]:
    """``questions`` (of another home over the same conversations) whose evidence turns are messages
    of ``history``, pointed at those messages: the English questions over the Chinese history."""
    out = []
    for q in questions:
        turns = [history.turns[(q.conv, d)] for d in q.evidence if (q.conv, d) in history.turns]
        if turns and q.conv in history.projects:
            out.append(Question(
                conv=q.conv, question=q.question, answer=q.answer, category=q.category,
                evidence=[t.dia_id for t in turns], evidence_message_ids=[t.message_id for t in turns],
                evidence_session_ids=sorted({t.session_id for t in turns})))
    return out




def load_locomo_zh(home: Path, data_dir: Path, zh_dir: Path, files=None, pooled: bool = False,
                   mixed: bool = False) -> Corpus:
    """Chinese history: every LoCoMo-zh evidence turn becomes a Chinese message ``Speaker：summary``
    in its LoCoMo session (same project, session, role and time as the English turn); the
    questions are the Chinese ones. Sessions without any such turn are not created.

    ``pooled``: all conversations in one project (issue 26). One conversation's ~57 evidence turns
    per project let every method score 0.93–0.96 msg@1, so the split could not tell methods apart
    the way held-out data does; over all 283 turns a question must find its turn among the other
    conversations' too.

    ``mixed``: every other turn of the conversation is kept too, in its English original, so a
    question must find its Chinese turn among its conversation's ~600 others — the turns just before
    and after it on the same topic among them (issue 26). Only the evidence turns have a Chinese
    text, so this is the nearest the data comes to a whole history; see benchmarks/README.md."""
    home = Path(home).resolve()
    home.mkdir(parents=True, exist_ok=True)
    os.environ["HERMES_HOME"] = str(home)

    from hermes_cli import projects_db  # noqa: PLC0415 — must follow HERMES_HOME
    from hermes_state import SessionDB  # noqa: PLC0415

    summaries: dict[tuple[str, str], str] = {}
    for row in _jsonl(Path(zh_dir) / "corpus.jsonl"):
        summaries[zh_turn_key(row["id"])] = row["summary"].strip()
    corpus = Corpus(home=home, pooled=pooled)
    pconn = projects_db.connect(home / "projects.db")
    db = SessionDB(db_path=home / "state.db")
    shared: tuple[str, Path] | None = None
    if pooled:
        folder = home / "work" / POOLED
        folder.mkdir(parents=True, exist_ok=True)
        shared = (projects_db.create_project(pconn, name="LoCoMo-zh dev, every conversation", slug="locomo-zh-all",
                                             folders=[str(folder)], primary_path=str(folder)), folder)
    try:
        for path in conversation_files(Path(data_dir), files):
            conv = path.stem
            data = json.loads(path.read_text(encoding="utf-8"))
            speaker_a, speaker_b = data["speaker_a"], data["speaker_b"]
            corpus.speakers[conv] = (speaker_a, speaker_b)
            if shared is not None:
                corpus.projects[conv], folder = shared
            else:
                folder = home / "work" / conv
                folder.mkdir(parents=True, exist_ok=True)
                corpus.projects[conv] = projects_db.create_project(
                    pconn, name=f"LoCoMo-zh {conv}: {speaker_a} & {speaker_b}", slug=f"locomo-zh-{conv}",
                    folders=[str(folder)], primary_path=str(folder))
            corpus.folders[conv] = folder
            numbers = sorted(int(m.group(1)) for k in data
                             if (m := _SESSION_KEY.fullmatch(k)) and isinstance(data[k], list) and data[k])
            for n in numbers:
                turns = [(i, t) for i, t in enumerate(data[f"session_{n}"])
                         if mixed or (conv, t["dia_id"]) in summaries]
                if not turns:
                    continue
                started = parse_locomo_date(data[f"session_{n}_date_time"])
                sid = _session_id(conv, n, started)
                db.create_session(sid, "cli", cwd=str(folder))
                db.set_session_title(sid, f"{speaker_a} 和 {speaker_b} — 第 {n} 次对话")
                corpus.sessions[(conv, n)] = sid
                for i, turn in turns:
                    speaker = turn["speaker"]
                    role = "user" if speaker == speaker_a else "assistant"
                    zh = summaries.get((conv, turn["dia_id"]))
                    text = f"{speaker}：{zh}" if zh is not None else _turn_text(turn)
                    mid = db.append_message(sid, role, text, timestamp=started.timestamp() + i * TURN_SECONDS)
                    t = Turn(conv, turn["dia_id"], n, speaker, role, text, mid, sid)
                    corpus.turns[(conv, t.dia_id)] = t
                    corpus.by_message[mid] = t
                corpus.turn_counts[conv] = corpus.turn_counts.get(conv, 0) + len(turns)
    finally:
        db.close()
        pconn.close()
    corpus.questions = zh_questions(corpus, zh_dir)
    return corpus

