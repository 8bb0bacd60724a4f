"""MemoryBank's daily chats (a user and an AI companion) as a direct chat through the NoneBot bridge.

Data: ``shared/data/memorybank/`` (Zhong et al. 2024, MIT; its README), ``cn`` and ``en``, read at
run time, never copied here; the evidence labels are ours, ``benchmarks/labels/
memorybank_evidence.jsonl`` (how they were made: ``benchmarks/labels/README.md``).

**The chat.** Each user (15 per language) talks to the bot in a direct chat: one project per user,
the chat ``onebotv11:private:{id}`` bound to it. A direct chat's text reaches Hermes as typed (the
bridge adds no buffer lines and no @ in a private chat), so each ``{query, response}`` pair is a
``user`` row (the query) and an ``assistant`` row (the companion's response).

**Conversations.** Each day is one conversation: the day's session is a new generation of the
chat's session (``hermes-onebotv11+private+{id}``, then ``-g1``, ``-g2`` …, as ``/clear`` starts
them), so a day is one Hermes session. A question's conversations are its labelled days; its
evidence rows are the labelled turns' query (``side: query``), response (``response``) or both.
Questions labelled ``none`` (the history does not hold the answer) are left out. The English
history's name keys carry stray spaces (``" Jason "``): matched with ``strip()``.

**Time.** A day's chat starts at 20:00 Beijing time (12:00 UTC, so the day is the same in UTC and
in China): each query 1–3 minutes after the previous response, each response 8 s plus 40
characters a second after its query. ``now``, when the questions are asked: 2023-05-07 20:00
Beijing, the evening after the last day (05-06), so "5月2日" is 2023-05-02 and "a few days ago"
counts back from the 7th.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path

from . import bridge
from .bridge import ChatCorpus
from .locomo import Question, Turn, shared_data

LABELS = Path(__file__).resolve().parents[1] / "labels" / "memorybank_evidence.jsonl"
START_HOUR_UTC = 12
NOW = datetime(2023, 5, 7, START_HOUR_UTC, tzinfo=UTC)
LANGS = ("cn", "en")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")
_CN_DATE = re.compile(r"(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_EN_DATE = re.compile(rf"\b({'|'.join(_MONTHS)})\s+(\d{{1,2}})(?:st|nd|rd|th)?\b", re.IGNORECASE)
_EN_DATE_OF = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({'|'.join(_MONTHS)})\b", re.IGNORECASE)
RELATIVE = re.compile(r"昨天|前天|前几天|几天前|这几天|上周|上个星期|上星期|那天|最近|今天|刚才|"
                      r"\b(?:yesterday|the day before|a few days ago|days ago|last week|the other day|recently|"
                      r"today|earlier)\b", re.IGNORECASE)


def default_data_dir() -> Path:
    return shared_data("memorybank")


def named_day(question: str, year: int = NOW.year) -> str | None:
    """The day a question names ("5月2日", "May 2nd"), in ``now``'s year, as ``YYYY-MM-DD``."""
    month = day = None
    if m := _CN_DATE.search(question):
        month, day = int(m.group(1)), int(m.group(2))
    elif m := _EN_DATE.search(question):
        month, day = _MONTHS.index(m.group(1).lower()) + 1, int(m.group(2))
    elif m := _EN_DATE_OF.search(question):
        month, day = _MONTHS.index(m.group(2).lower()) + 1, int(m.group(1))
    if month is None:
        return None
    try:
        return datetime(year, month, day).strftime("%Y-%m-%d")
    except ValueError:
        return None


def _labels(lang: str) -> dict[tuple[str, int], dict]:
    rows = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {(r["user"].strip(), int(r["q"])): r for r in rows if r["lang"] == lang}


def _pause(*parts: object) -> float:
    return 60 + 120 * int(hashlib.sha1("|".join(map(str, parts)).encode()).hexdigest()[:6], 16) / 0xFFFFFF


def load_memorybank(home: Path, data_dir: Path, lang: str, one_session: bool = False) -> ChatCorpus:
    """Write one language's MemoryBank users into a Hermes home: a project and a direct chat each.
    ``one_session``: each chat is one session over all its days, as the bridge writes a direct chat
    nobody ``/clear``-s (a conversation is then its day, ``ChatCorpus.conversation_of``)."""
    if lang not in LANGS:
        raise ValueError(f"lang is one of {LANGS}, not {lang!r}")
    home = Path(home).resolve()
    root = Path(data_dir) / lang
    history = json.loads((root / f"memory_bank_{lang}.json").read_text(encoding="utf-8"))
    asked = [json.loads(line) for line in (root / f"probing_questions_{lang}.jsonl").read_text(
        encoding="utf-8").splitlines() if line.strip()]
    labels = _labels(lang)
    projects_db, pconn, db = bridge.open_home(home)
    corpus = ChatCorpus(home=home, now=NOW.timestamp())
    try:
        for i, (raw_name, user) in enumerate(history.items()):
            name = raw_name.strip()
            key = f"mb-{lang}-{i:02d}"
            uid = bridge.qq_id(f"memorybank-{lang}-{name}", 10)
            bridge.add_project(corpus, projects_db, pconn, key, f"{name} (MemoryBank {lang})", bridge.private_chat(uid))
            rows, sessions = _write_days(corpus, db, key, name, uid, user["history"], one_session)
            corpus.turn_counts[key] = len(rows)
            questions = next((q[n] for q in asked for n in q if n.strip() == name), [])
            for qi, text in enumerate(questions):
                _question(corpus, key, name, qi, text, labels.get((name, qi)), rows, sessions)
    finally:
        db.close()
        pconn.close()
    return corpus


def _write_days(corpus: ChatCorpus, db, key: str, name: str, uid: str, days: dict[str, list[dict]],
                one_session: bool = False):
    """Each day a session (or, ``one_session``, one session for them all); returns ((day, turn,
    side) → row id, day → its conversation: the session, or the session and the day)."""
    rows: dict[tuple[str, int, str], int] = {}
    sessions: dict[str, str] = {}
    for n, day in enumerate(sorted(days)):
        sid = bridge.private_session(uid, 0 if one_session else n)
        if not (one_session and n):
            bridge.new_session(corpus, db, sid)
        sessions[day] = f"{sid}@{day}" if one_session else sid
        corpus.when[sid] = day
        ts = datetime.fromisoformat(day).replace(hour=START_HOUR_UTC, tzinfo=UTC).timestamp()
        for t, pair in enumerate(days[day]):
            for side, role, who in (("query", "user", name), ("response", "assistant", "AI")):
                text = str(pair.get(side) or "").strip()
                if not text:
                    continue
                if side == "response":
                    ts += 8 + len(text) / 40
                mid = db.append_message(sid, role, text, timestamp=ts)
                rows[(day, t, side)] = mid
                if one_session:
                    corpus.conversation_of[mid] = sessions[day]
                turn = Turn(key, f"{day}#{t}#{side}", n, who, role, text, mid, sid)
                corpus.turns[(key, turn.dia_id)] = turn
                corpus.by_message[mid] = turn
                corpus.holds[mid] = [(turn.dia_id, who, "own")]
            ts += _pause(key, day, t)
    return rows, sessions


def questions_over(corpus: ChatCorpus, data_dir: Path, lang: str) -> list[Question]:
    """``corpus``'s questions asked in the other language ``lang``: the data is one chat set
    translated (same users in the same order, the same days, question by question; the labels'
    cross-language check, benchmarks/labels/README.md), so each question keeps ``corpus``'s
    evidence and takes the text of its counterpart — English questions over the Chinese history
    (``mbrev``) or Chinese ones over the English history (``mbxl``), as LoCoMo's ``rev``/``xl``."""
    own = "en" if lang == "cn" else "cn"
    def users(which: str) -> list[tuple[str, list[str]]]:
        path = Path(data_dir) / which / f"probing_questions_{which}.jsonl"
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        return [(name.strip(), asked) for row in rows for name, asked in row.items()]
    other = dict(zip((n for n, _ in users(own)), (asked for _, asked in users(lang)), strict=True))
    out = []
    for q, info in zip(corpus.questions, corpus.info, strict=True):
        text = other[info["user"]][info["q"]] if info["q"] < len(other[info["user"]]) else None
        if text:
            out.append(Question(conv=q.conv, question=text, answer=q.answer, category=q.category,
                                evidence=q.evidence, evidence_message_ids=q.evidence_message_ids,
                                evidence_session_ids=q.evidence_session_ids))
    return out


def _question(corpus: ChatCorpus, key: str, name: str, qi: int, text: str, label: dict | None,
              rows: dict[tuple[str, int, str], int], sessions: dict[str, str]) -> None:
    evidence = (label or {}).get("evidence") or []
    mids = sorted({rows[(e["date"], int(e["turn"]), side)] for e in evidence
                   for side in (("query", "response") if e["side"] == "both" else (e["side"],))
                   if (e["date"], int(e["turn"]), side) in rows})
    if not mids:
        corpus.dropped_questions.append((key, text))
        return
    days = sorted({e["date"] for e in evidence})
    corpus.questions.append(Question(
        conv=key, question=text, answer=str(label.get("answer", "")), category=0,
        evidence=[f"{e['date']}#{e['turn']}#{e['side']}" for e in evidence], evidence_message_ids=mids,
        evidence_session_ids=sorted(sessions[d] for d in days if d in sessions)))
    named = named_day(text)
    corpus.info.append({
        "user": name, "q": qi, "status": label.get("status"), "days": days, "named_day": named,
        "named_day_is_evidence": named in days if named else None,
        "relative": bool(RELATIVE.search(text)),
        "days_before_now": sorted((NOW.date() - datetime.fromisoformat(d).date()).days for d in days),
    })
