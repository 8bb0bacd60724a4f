"""FriendsQA scenes as a QQ group's past conversations, written the way the NoneBot bridge writes them.

Data: ``shared/data/friendsqa/`` (Yang & Choi 2019, Apache 2.0; its README), read at run time,
never copied here. ``dev`` is the dev set; ``tst`` is kept back and run once at the end.

**The group.** Each season's scenes are one QQ group's history (one project per season, the group
bound to it): the people who speak are its members, each with a stable QQ-like id and their name
as the nickname the bridge writes (``[user=Ross Geller id=…]``); a stage direction (``#NOTE#``) is a
member "Narrator" describing what happens, a line said by everyone (``#ALL#``) a member "Everyone",
a line of several speakers is sent by the first (the narrator @-s the bot only with a scene's
last line). The show's transcript tokens are put back as typed
("do n't" → "don't", "gon na" → "gonna"), questions too.

**What reaches Hermes.** The bot only sees a message addressed to it, with the group's last lines
before it (``HERMES_PERCEPTION_ENABLED=true``, 10 lines). Nobody in a scene talks to a bot, so we
choose who does: a scene is cut into runs of 4–9 messages (a fixed pseudo-random length per run,
seeded by the scene), and the last message of each run @-mentions the bot. That member's turn is
one ``user`` row holding their message and, in ``<recent_messages>``, the lines before it — so
every line of a scene reaches Hermes at least once (the runs are shorter than the window; a line
may sit in two rows, and a scene's first row also shows the end of the previous scene, as the
buffer keeps the group's last lines whatever their age; a buffered line is cut at 200 characters
as the bridge cuts it, so the tail of 77 of the 2,847 dev lines reaches Hermes only when that line
is the one that @-s the bot). The bot answers each turn with a short
acknowledgement from a fixed list: the data has no bot, so its rows carry nothing of the scene —
noise the ranker must pass over, as a real bot's chatter is. No reply quotes: a transcript has no
reply structure, and inventing one would invent threads.

**Two variants** (``shared``):

- ``friends`` (bridge default + perception, passive mode): each member's turns go to their own
  session ``hermes-onebotv11+group+{group}+{user}``; the text is ``<recent_messages>`` lines, a blank
  line, the member's message with `` @<bot>`` appended — the asker's name is in the session id only.
- ``friends_shared`` (``HERMES_SESSION_SHARE_GROUP=true`` and ``HERMES_ACTIVE_SESSION_ENABLED=true``,
  reactive mode): one session for the group; the text is ``<runtime_state>``, the lines up to and
  including the message, ``<current_message>[user=Nick id=ID]: …</current_message>`` and the
  bridge's reminder; the answer is the ``submit_decision`` JSON, and it enters the buffer as a
  ``[bot]`` line. Under in-flight coalescing a burst of messages makes one turn, which is what one
  turn per run stands for.

**Conversations.** The issue counts a conversation as a Hermes session; a bridge session lives on
until ``/clear`` (or the bridge's reset after a context overflow) starts generation ``-gN``. So
each scene starts a new generation of every session it writes (``…-g{scene number}``): a scene is
one session (shared) or one per member who @-ed the bot (per member). A question's conversation is
its scene; its evidence is every row that holds one of its answers' utterances.

**Time.** A season's scenes in episode order, each starting five hours after the one before, from
the season's first dev episode's US air date (20:00 UTC), never before its own episode's date;
within a scene each message follows the one before by 4 s plus its typing time (6 characters a
second), the bot's answer 6 s after the turn. ``now`` (when questions are asked): a day after the
season's last scene.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path

from . import bridge
from .bridge import ChatCorpus, GroupBuffer, Line
from .locomo import Question, Turn, shared_data

SCENE_GAP = 5 * 3600
TYPING_CPS = 6.0
REPLY_DELAY = 6.0
RUN_MIN, RUN_MAX = 4, 9  # messages per run ending in an @ of the bot (< the 10-line window)
AIRED = {  # US air dates of the dev/test episodes; only the order and the spacing matter here
    "s01_e23": "1995-05-11", "s01_e24": "1995-05-18", "s02_e23": "1996-05-09", "s02_e24": "1996-05-16",
    "s03_e23": "1997-05-01", "s03_e24": "1997-05-08", "s03_e25": "1997-05-15",
    "s04_e23": "1998-05-07", "s04_e24": "1998-05-07",
}
ACKS = ("Got it.", "Ha, okay.", "Noted.", "I see.", "Sure thing.", "Makes sense.", "Okay!", "Hm, interesting.",
        "Right.", "Oh wow.")
PSEUDO = {"#NOTE#": "Narrator", "#ALL#": "Everyone"}
_TITLE = re.compile(r"s(\d+)_e(\d+)_c(\d+)")


def default_data_dir() -> Path:
    return shared_data("friendsqa")


def detok(text: str) -> str:
    """Transcript tokens back as typed: contractions joined, no space before punctuation."""
    s = " ".join(text.split())
    s = re.sub(r" (n't|'s|'re|'m|'ll|'ve|'d)\b", r"\1", s, flags=re.IGNORECASE)
    s = re.sub(r"\b(gon|wan|got) na\b", r"\1na", s, flags=re.IGNORECASE)
    s = re.sub(r" ([.,!?;:%)\]])", r"\1", s)
    s = re.sub(r"([(\[$]) ", r"\1", s)
    return s.strip()


def sender(speakers: list[str]) -> str:
    name = (speakers or ["#NOTE#"])[0].strip() or "#NOTE#"
    return PSEUDO.get(name, name)


def _unit(*parts: object) -> float:
    return int(hashlib.sha1("|".join(map(str, parts)).encode()).hexdigest()[:8], 16) / 0xFFFFFFFF


def triggers(title: str, senders: list[str]) -> set[int]:
    """Which messages of a scene @ the bot: the last of each run of RUN_MIN–RUN_MAX, or the last
    one in the run a person sent (the narrator and "everyone" do not talk to bots) — except in the
    scene's last run, whose last line is the trigger whoever sent it, so that every line of a scene
    reaches Hermes within its scene."""
    out, at, k = set(), 0, 0
    while at < len(senders):
        length = RUN_MIN + int(_unit(title, k) * (RUN_MAX - RUN_MIN + 1))
        end = min(len(senders), at + length)
        people = [i for i in range(at, end) if senders[i] not in PSEUDO.values()]
        out.add(people[-1] if people and end < len(senders) else end - 1)
        at, k = end, k + 1
    return out


def scene_order(title: str) -> tuple[int, int, int]:
    m = _TITLE.fullmatch(title)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else (0, 0, 0)


def _aired(title: str) -> float:
    day = AIRED.get(title[:7])
    if day is None:
        return 0.0
    return datetime.fromisoformat(day).replace(hour=20, tzinfo=UTC).timestamp()


def names_in(question: str, people: set[str]) -> list[str]:
    """The members a question names: a full name, or its first word as a whole word."""
    found = []
    for name in sorted(people):
        first = name.split()[0]
        if re.search(rf"\b{re.escape(name)}\b", question) or (len(first) > 2 and re.search(rf"\b{re.escape(first)}\b",
                                                                                            question)):
            found.append(name)
    return found


class _Writer:
    """One season: its group's buffer, sessions and rows."""

    def __init__(self, corpus: ChatCorpus, db, season: str, group: str, shared: bool,
                 one_session: bool = False) -> None:
        self.corpus, self.db, self.season, self.group, self.shared = corpus, db, season, group, shared
        self.one_session = one_session  # no /clear: the bridge's sessions live the whole season
        self.buffer = GroupBuffer()
        self.made: set[str] = set()
        self.rows_of: dict[str, list[int]] = {}  # utterance key → rows holding it
        self.scene_sessions: dict[str, list[str]] = {}

    def _session(self, sid: str, title: str) -> str:
        if sid not in self.made:
            bridge.new_session(self.corpus, self.db, sid)
            self.made.add(sid)
            self.corpus.when[sid] = title
        conversation = f"{sid}@{title}" if self.one_session else sid
        if conversation not in self.scene_sessions.get(title, []):
            self.scene_sessions.setdefault(title, []).append(conversation)
        return sid

    def _row(self, sid: str, role: str, text: str, ts: float, speaker: str, title: str, n: int) -> int:
        mid = self.db.append_message(sid, role, text, timestamp=ts)
        if self.one_session:
            self.corpus.conversation_of[mid] = f"{sid}@{title}"
        turn = Turn(self.season, f"{title}#{mid}", n, speaker, role, text, mid, sid)
        self.corpus.turns[(self.season, turn.dia_id)] = turn
        self.corpus.by_message[mid] = turn
        return mid

    def scene(self, n: int, title: str, utterances: list[dict], start: float) -> float:
        """Write scene number ``n``; returns when its last message was sent."""
        fires = triggers(title, [sender(u.get("speakers") or []) for u in utterances])
        ts = start
        for i, u in enumerate(utterances):
            name = sender(u.get("speakers") or [])
            uid, nick = bridge.qq_id(name), bridge.nickname(name)
            text = detok(str(u.get("utterance") or "")) or "..."
            ts += 4 + len(text) / TYPING_CPS
            fired = i in fires
            said = bridge.typed(text, at_bot=fired)
            line = self.buffer.add(ts, uid, nick, said, key=f"{title}#{u['uid']}")
            if fired:
                ts = self._turn(n, title, line, name, said, ts)
        return ts

    def _turn(self, n: int, title: str, line: Line, name: str, said: str, ts: float) -> float:
        if self.shared:
            sid = self._session(bridge.shared_session(self.group, 0 if self.one_session else n), title)
            recent = self.buffer.recent()
            text = bridge.reactive_text(self.group, recent, line.user_id, line.nick, said)
        else:
            sid = self._session(bridge.member_session(self.group, line.user_id, 0 if self.one_session else n), title)
            recent = self.buffer.recent(before=line)
            text = bridge.passive_text(recent, said)
        mid = self._row(sid, "user", text, ts, name, title, n)
        held = [(r.key, self._speaker(r), "recent") for r in recent if r.key and r is not line]
        held.append((line.key, name, "current"))
        self.corpus.holds[mid] = held
        for key, _, _ in held:
            self.rows_of.setdefault(key, []).append(mid)
        ack = ACKS[int(_unit(title, mid) * len(ACKS)) % len(ACKS)]
        ts += REPLY_DELAY
        reply = self._row(sid, "assistant", bridge.decision(ack) if self.shared else ack, ts, bridge.SELF_NICK,
                          title, n)
        self.corpus.holds[reply] = []
        if self.shared:
            self.buffer.add(ts, bridge.SELF_ID, bridge.SELF_NICK, ack, is_bot=True)
        return ts

    def _speaker(self, line: Line) -> str:
        return line.nick if not line.is_bot else bridge.SELF_NICK


def load_friendsqa(home: Path, data_dir: Path, *, split: str = "dev", shared: bool = False,
                   one_session: bool = False) -> ChatCorpus:
    """Write FriendsQA ``split`` into a Hermes home: one project and group per season.
    ``one_session``: nobody ``/clear``-s, so each of the bridge's sessions lives the whole season (a
    conversation is then its scene, ``ChatCorpus.conversation_of``)."""
    home = Path(home).resolve()
    data = json.loads((Path(data_dir) / f"friendsqa_{split}.json").read_text(encoding="utf-8"))["data"]
    scenes = sorted(data, key=lambda s: scene_order(s["title"]))
    projects_db, pconn, db = bridge.open_home(home)
    corpus = ChatCorpus(home=home)
    try:
        seasons: dict[str, list[dict]] = {}
        for s in scenes:
            seasons.setdefault(s["title"][:3], []).append(s)
        for season, items in seasons.items():
            group = bridge.qq_id(f"friends-{split}-{season}")
            bridge.add_project(corpus, projects_db, pconn, season, f"Friends group, season {int(season[1:])}",
                               bridge.group_chat(group))
            writer = _Writer(corpus, db, season, group, shared, one_session)
            ts = _aired(items[0]["title"])
            people: set[str] = set()
            for n, s in enumerate(items, start=1):
                start = max(ts + SCENE_GAP if n > 1 else ts, _aired(s["title"]))
                utterances = s["paragraphs"][0]["utterances:"]
                people.update(sender(u.get("speakers") or []) for u in utterances)
                writer.scene(n, s["title"], utterances, start)
                ts = start
            corpus.now = max(corpus.now, ts + 86400)
            corpus.turn_counts[season] = sum(1 for t in corpus.by_message.values() if t.conv == season)
            for s in items:
                _questions(corpus, writer, season, s, people)
    finally:
        db.close()
        pconn.close()
    return corpus


def _questions(corpus: ChatCorpus, writer: _Writer, season: str, scene: dict, people: set[str]) -> None:
    title = scene["title"]
    speaker_of = {u["uid"]: sender(u.get("speakers") or []) for u in scene["paragraphs"][0]["utterances:"]}
    for qa in scene["paragraphs"][0]["qas"]:
        question = detok(qa["question"])
        uids = sorted({int(a["utterance_id"]) for a in qa.get("answers") or [] if a.get("utterance_id") is not None})
        keys = [f"{title}#{u}" for u in uids]
        rows = sorted({m for k in keys for m in writer.rows_of.get(k, [])})
        if not rows:
            corpus.dropped_questions.append((season, question))
            continue
        corpus.questions.append(Question(
            conv=season, question=question, answer=str((qa.get("answers") or [{}])[0].get("answer_text", "")),
            category=0, evidence=keys, evidence_message_ids=rows,
            evidence_session_ids=sorted(writer.scene_sessions.get(title, []))))
        corpus.info.append({
            "id": qa["id"], "scene": title, "names": names_in(question, people),
            "evidence_speakers": sorted({speaker_of.get(u, "?") for u in uids}),
            "is_speaker": any(a.get("is_speaker") for a in qa.get("answers") or []),
        })
