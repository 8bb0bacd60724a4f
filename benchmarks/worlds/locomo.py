"""Load LoCoMo conversations into a real Hermes home (state.db + projects.db).

Everything is written through Hermes' own write paths, the way a real install fills them:

- one project per conversation, created with ``hermes_cli.projects_db.create_project`` and owning a
  real folder ``<home>/work/<conv>``;
- one Hermes session per LoCoMo session (``session_N``), created with ``SessionDB.create_session``
  (source ``cli``, ``cwd`` = the project folder) and titled ``"<speaker_a> & <speaker_b> — session N"``;
- one message per turn through ``SessionDB.append_message``: ``speaker_a`` → ``user``,
  ``speaker_b`` → ``assistant``; a shared photo is kept as ``" [shares a photo: <caption>]"`` after
  the text. ``timestamp`` is the LoCoMo session date plus 30 s per turn. (``create_session`` has no
  ``started_at`` parameter in 0.19.0, so the session row keeps its creation time; the message
  timestamps carry the LoCoMo dates.)

LoCoMo is research data: it is read from the shared data folder at run time and never copied into
this repository.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from .locomo_agent import AgentWriter

# Categories 1–4 are answerable; 5 is adversarial and has no evidence to retrieve.
ANSWERABLE_CATEGORIES = (1, 2, 3, 4)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

TURN_SECONDS = 30
_SESSION_KEY = re.compile(r"session_(\d+)")
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"
POOLED = "all"  # the one project of the pooled Chinese world (locomo_zh)


def default_data_dir() -> Path:
    """``../shared/data/locomo-dev`` next to the repository checkout (override: ``LOCOMO_DATA_DIR``)."""
    env = os.environ.get("LOCOMO_DATA_DIR")
    if env:
        return Path(env)
    return shared_data("locomo-dev")


def shared_data(name: str) -> Path:
    """``shared/data/<name>`` in the nearest folder above this checkout that has one (a git
    worktree sits one level deeper than the main checkout)."""
    checkout = Path(__file__).resolve().parents[2]
    for parent in (checkout, *checkout.parents):
        if (parent / "shared" / "data" / name).is_dir():
            return parent / "shared" / "data" / name
    return checkout.parent / "shared" / "data" / name


@dataclass
class Turn:
    conv: str
    dia_id: str
    session_no: int
    speaker: str
    role: str
    text: str  # exactly what was stored as the message content
    message_id: int
    session_id: str


@dataclass
class Question:
    conv: str
    question: str
    answer: str
    category: int
    evidence: list[str]  # normalised dia_ids that exist in the conversation
    evidence_message_ids: list[int]
    evidence_session_ids: list[str]


@dataclass
class Corpus:
    home: Path
    projects: dict[str, str] = field(default_factory=dict)  # conv -> project_id
    folders: dict[str, Path] = field(default_factory=dict)  # conv -> project folder
    speakers: dict[str, tuple[str, str]] = field(default_factory=dict)  # conv -> (speaker_a, speaker_b)
    sessions: dict[tuple[str, int], str] = field(default_factory=dict)  # (conv, N) -> Hermes session id
    turns: dict[tuple[str, str], Turn] = field(default_factory=dict)  # (conv, dia_id) -> turn
    by_message: dict[int, Turn] = field(default_factory=dict)  # message_id -> turn
    questions: list[Question] = field(default_factory=list)
    turn_counts: dict[str, int] = field(default_factory=dict)  # conv -> number of turns
    dropped_questions: list[tuple[str, str]] = field(default_factory=list)  # (conv, question): no evidence
    # agent world: a compaction's copy of a turn (message id) → that turn; shown, it counts as the turn
    copies: dict[int, Turn] = field(default_factory=dict)
    # every conversation in one project (the pooled Chinese world): a question is asked over all five
    pooled: bool = False

    def scope(self, conv: str) -> str:
        """What a question about ``conv`` searches: its conversation, or all of them when pooled
        (the plain baselines scope by this; the plugin and deja-vu by the project and its folder)."""
        return POOLED if self.pooled else conv

    @property
    def state_db(self) -> Path:
        from hermes_side.host.profile import profile_at  # where Hermes keeps it: the one answer

        return profile_at(self.home).state_db

    @property
    def projects_db(self) -> Path:
        from hermes_side.host.profile import profile_at

        return profile_at(self.home).projects_db

    def message_count(self) -> int:
        return len(self.by_message)


def parse_locomo_date(value: str) -> datetime:
    return datetime.strptime(value.strip(), _DATE_FORMAT).replace(tzinfo=UTC)


def normalise_evidence(raw: list[str], known: set[str]) -> list[str]:
    """Clean LoCoMo's evidence lists: ``"D8:6; D9:17"`` → two ids, ``"D:11:26"`` → ``"D11:26"``;
    ids that name no turn of the conversation (``"D"``, ``"D10:19"`` past the session's end) are dropped."""
    out: list[str] = []
    for item in raw:
        for part in re.split(r"[;,\s]+", str(item)):
            part = part.strip()
            if not part:
                continue
            m = re.fullmatch(r"D:?(\d+):(\d+)", part)
            if m:
                part = f"D{int(m.group(1))}:{int(m.group(2))}"
            if part in known and part not in out:
                out.append(part)
    return out


def _session_id(conv: str, session_no: int, started: datetime) -> str:
    # Hermes' own id shape: YYYYMMDD_HHMMSS_<6 hex>; the hex part keeps conversations apart.
    tag = hashlib.sha1(f"locomo-{conv}-{session_no}".encode()).hexdigest()[:6]
    return f"{started:%Y%m%d_%H%M%S}_{tag}"


def _turn_text(turn: dict) -> str:
    text = str(turn.get("text") or "").strip()
    caption = str(turn.get("blip_caption") or "").strip()
    if caption:
        text = f"{text} [shares a photo: {caption}]" if text else f"[shares a photo: {caption}]"
    return text


def conversation_files(data_dir: Path, files=None) -> list[Path]:
    """``files`` = names like ``"26"`` / ``"26.json"`` / paths; ``None`` = every ``*.json`` in data_dir."""
    if not files:
        return sorted(data_dir.glob("*.json"), key=lambda p: (len(p.stem), p.stem))
    out = []
    for f in files:
        p = Path(str(f))
        if not p.suffix:
            p = p.with_suffix(".json")
        if not p.is_absolute() and not p.exists():
            p = data_dir / p.name
        out.append(p)
    return out


def load_locomo(home: Path, data_dir: Path, files=None, *, agent: bool = False) -> Corpus:
    """Write the given LoCoMo conversation files into a Hermes home and return the corpus map.

    ``home`` becomes ``HERMES_HOME`` for this process (set before any Hermes module is imported
    here, so import-time defaults agree with it; every Hermes call also gets an explicit path).
    ``agent``: store each conversation the way Hermes stores an agent's work (``AgentWriter``)."""
    home = Path(home).resolve()
    home.mkdir(parents=True, exist_ok=True)
    os.environ["HERMES_HOME"] = str(home)

    from hermes_cli import projects_db  # noqa: PLC0415 — must follow HERMES_HOME
    from hermes_state import SessionDB  # noqa: PLC0415

    corpus = Corpus(home=home)
    paths = conversation_files(Path(data_dir), files)
    pconn = projects_db.connect(home / "projects.db")
    db = SessionDB(db_path=home / "state.db")
    try:
        for path in paths:
            conv = path.stem
            data = json.loads(path.read_text(encoding="utf-8"))
            speaker_a, speaker_b = data["speaker_a"], data["speaker_b"]
            corpus.speakers[conv] = (speaker_a, speaker_b)

            folder = home / "work" / conv
            folder.mkdir(parents=True, exist_ok=True)
            project_id = projects_db.create_project(
                pconn,
                name=f"LoCoMo {conv}: {speaker_a} & {speaker_b}",
                slug=f"locomo-{conv}",
                folders=[str(folder)],
                primary_path=str(folder),
            )
            corpus.projects[conv] = project_id
            corpus.folders[conv] = folder

            numbers = sorted(
                int(m.group(1))
                for k in data
                if (m := _SESSION_KEY.fullmatch(k)) and isinstance(data[k], list) and data[k]
            )
            n_turns = 0
            for n in numbers:
                started = parse_locomo_date(data[f"session_{n}_date_time"])
                sid = _session_id(conv, n, started)
                db.create_session(sid, "cli", cwd=str(folder))
                db.set_session_title(sid, f"{speaker_a} & {speaker_b} — session {n}")
                corpus.sessions[(conv, n)] = sid
                writer = AgentWriter(db, sid, len(data[f"session_{n}"])) if agent else None
                for i, turn in enumerate(data[f"session_{n}"]):
                    speaker = turn["speaker"]
                    role = "user" if speaker == speaker_a else "assistant"
                    text = _turn_text(turn)
                    ts = started.timestamp() + i * TURN_SECONDS
                    if writer is None:
                        mid = db.append_message(sid, role, text, timestamp=ts)
                    else:
                        text, mid = writer.turn(i, role, text, ts)
                    t = Turn(conv, turn["dia_id"], n, speaker, role, text, mid, sid)
                    corpus.turns[(conv, t.dia_id)] = t
                    corpus.by_message[mid] = t
                    n_turns += 1
                    if writer is not None and (copies := writer.maybe_compact(i, ts)):
                        for copy_id, original in copies:
                            corpus.copies[copy_id] = corpus.by_message[original]
            corpus.turn_counts[conv] = n_turns

            known = {dia for (c, dia) in corpus.turns if c == conv}
            for qa in data.get("qa", []):
                category = int(qa.get("category", 0))
                if category not in ANSWERABLE_CATEGORIES:
                    continue
                evidence = normalise_evidence(qa.get("evidence") or [], known)
                if not evidence:
                    corpus.dropped_questions.append((conv, qa["question"]))
                    continue
                turns = [corpus.turns[(conv, e)] for e in evidence]
                corpus.questions.append(
                    Question(
                        conv=conv,
                        question=qa["question"],
                        answer=str(qa.get("answer", "")),
                        category=category,
                        evidence=evidence,
                        evidence_message_ids=[t.message_id for t in turns]
                        + [c for c, t in corpus.copies.items() if t in turns],
                        evidence_session_ids=sorted({t.session_id for t in turns}),
                    )
                )
    finally:
        db.close()
        pconn.close()
    return corpus


def main(argv: list[str] | None = None) -> int:
    """A quick look: the English LoCoMo world of ``files`` in a throw-away home, counted."""
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(description="Load LoCoMo conversations into a throw-away Hermes home and count them.")
    ap.add_argument("files", nargs="*", help="conversation files, e.g. 26 30 (default: every one)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="locomo-home-") as tmp:
        c = load_locomo(Path(tmp), default_data_dir(), args.files or None)
        print(
            f"{len(c.projects)} projects, {len(c.sessions)} sessions, {c.message_count()} messages, "
            f"{len(c.questions)} questions (dropped {len(c.dropped_questions)} without evidence)"
        )
    return 0


if __name__ == "__main__":  # quick look: python -m benchmarks locomo_world [files...]
    main()
