"""What the NoneBot bridge (nonebot-plugin-hermes 0.5.5) makes of a chat, for the chat-shaped dev
worlds (``friendsqa``, ``memorybank``): session ids, the user text Hermes stores, the bot's buffer.

Read from the bridge's source (``handlers/message.py``, ``core/prompt_builder.py``,
``core/session.py``, ``core/message_buffer.py``) and ``shared/design/deployment-chain.md``:

- session ids (``X-Hermes-Session-Id``): ``hermes-onebotv11+group+{group}+{user}`` per member
  (default), ``hermes-onebotv11+group+{group}`` with ``HERMES_SESSION_SHARE_GROUP=true``,
  ``hermes-onebotv11+private+{user}`` for a direct chat; ``/clear`` (or the bridge's reset after a
  context overflow) starts generation ``-gN``;
- a group member's text: what they typed, a replied-to message as a ``(引用: …) `` prefix, and the
  @-mentions appended (`` @<bot self id>`` when they @ the bot: that is what triggers it);
- ``HERMES_PERCEPTION_ENABLED=true`` keeps the group's last lines (``hermes_perception_buffer`` 10,
  each cut at 200 characters + ``...``; the bot's own replies only in the reactive mode) and writes
  them before the text: passive mode ``<recent_messages>…</recent_messages>\\n\\n<text>`` (lines
  before this message only), reactive mode (``HERMES_ACTIVE_SESSION_ENABLED=true``) a
  ``<runtime_state>`` block, the lines including this message, ``<current_message>`` with the
  sender's tag, and a reminder; a line is ``[m:<id>] [bot] [user=Nick id=ID]: text``;
- a direct chat's text is what the user typed, nothing around it.

Hermes stores that text as the ``user`` row and the model's answer as the ``assistant`` row (in
the reactive mode the ``submit_decision`` JSON). Sessions are written through Hermes' own
``SessionDB`` (source ``api_server``, no cwd: the row the api_server writes), the chat is bound to
its project in the plugin's own bindings store (as ``/bind`` does), and each session is placed in
that project by the plugin's own first-turn hook (``chat_service.place_new_session``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .locomo import Corpus

ADAPTER = "onebotv11"
SELF_ID = "2854196310"  # the bot's own account
SELF_NICK = "Hermes"
BUFFER = 10  # hermes_perception_buffer
LINE_CHARS = 200  # hermes_perception_text_length
_NICK_CHARS = 24  # handlers/message.py _MAX_NICKNAME_LEN
REMINDER = ("\n\n请用 submit_decision JSON 对象回复(字段:should_reply / reply_text / "
            "topic_hint / should_exit_active),不要直接说话或扮演动作。")


def qq_id(name: str, digits: int = 9) -> str:
    """A stable QQ-like account number for a name."""
    n = int(hashlib.sha1(name.encode()).hexdigest(), 16)
    return str(10 ** (digits - 1) + n % (9 * 10 ** (digits - 1)))


def nickname(value: str) -> str:
    """``_sanitize_nickname``: printable only, ``]`` made full-width, 24 characters at most."""
    s = "".join(ch for ch in value if ch.isprintable()).replace("]", "］").strip()
    return s[:_NICK_CHARS] + "…" if len(s) > _NICK_CHARS else s


def speaker_tag(nick: str | None, user_id: str) -> str:
    """``_format_speaker_tag``: ``[user=Nick id=ID]``, or ``[user=ID]`` without a real nickname."""
    nick = (nick or "").strip()
    return f"[user={user_id}]" if not nick or nick == user_id else f"[user={nick} id={user_id}]"


def _generation(base: str, gen: int) -> str:
    return f"{base}-g{gen}" if gen else base


def member_session(group: str, user_id: str, gen: int = 0) -> str:
    return _generation(f"hermes-{ADAPTER}+group+{group}+{user_id}", gen)


def shared_session(group: str, gen: int = 0) -> str:
    return _generation(f"hermes-{ADAPTER}+group+{group}", gen)


def private_session(user_id: str, gen: int = 0) -> str:
    return _generation(f"hermes-{ADAPTER}+private+{user_id}", gen)


def group_chat(group: str) -> str:
    return f"{ADAPTER}:{group}"


def private_chat(user_id: str) -> str:
    return f"{ADAPTER}:private:{user_id}"


@dataclass
class Line:
    """One group message in the bridge's buffer (``BufferedMessage``)."""
    id: int
    ts: float
    user_id: str
    nick: str
    text: str
    is_bot: bool = False
    key: str = ""  # what the world calls it (an utterance), for the evidence map

    def rendered(self) -> str:
        text = self.text if len(self.text) <= LINE_CHARS else self.text[:LINE_CHARS] + "..."
        return f"[m:{self.id}] {'[bot] ' if self.is_bot else ''}{speaker_tag(self.nick, self.user_id)}: {text}"


@dataclass
class GroupBuffer:
    """A group's perception buffer: every message the bot saw, newest last."""
    lines: list[Line] = field(default_factory=list)

    def add(self, ts: float, user_id: str, nick: str, text: str, *, is_bot: bool = False, key: str = "") -> Line:
        line = Line(len(self.lines) + 1, ts, user_id, nick, text, is_bot, key)
        self.lines.append(line)
        return line

    def recent(self, *, before: Line | None = None, limit: int = BUFFER) -> list[Line]:
        """``get_recent``: the last ``limit`` lines, before ``before`` (passive) or up to now (reactive)."""
        upto = self.lines.index(before) if before is not None else len(self.lines)
        return self.lines[max(0, upto - limit):upto]


def recent_block(lines: Iterable[Line]) -> str:
    return "\n".join(["<recent_messages>", *(line.rendered() for line in lines), "</recent_messages>"])


def typed(text: str, *, quote: str | None = None, at_bot: bool = False) -> str:
    """The member's text as the bridge reads it: reply prefix, text, @-mentions appended."""
    if quote:
        text = f"(引用: {quote}) {text}".strip()
    return f"{text} @{SELF_ID}".strip() if at_bot else text


def passive_text(recent: list[Line], text: str) -> str:
    """``build_passive_user_content``: the recent lines (if any), a blank line, the text."""
    return f"{recent_block(recent)}\n\n{text}" if recent else text


def reactive_text(group: str, recent: list[Line], user_id: str, nick: str, text: str) -> str:
    """``build_reactive_user_content`` for an explicit @ (``addressed_to_you``, full window)."""
    state = "\n".join(["<runtime_state>", "mode: reactive", f"adapter: {ADAPTER}", f"group_id: {group}",
                       f"you: {speaker_tag(SELF_NICK, SELF_ID)}", "addressed_to_you: true",
                       f"triggered_by: {user_id}", "</runtime_state>"])
    current = f"<current_message>\n{speaker_tag(nick, user_id)}: {text}\n</current_message>"
    return f"{state}\n\n{recent_block(recent)}\n\n{current}{REMINDER}"


def decision(reply: str) -> str:
    """The reactive mode's answer as Hermes stores it: the ``submit_decision`` object."""
    return json.dumps({"should_reply": True, "reply_text": reply}, ensure_ascii=False)


@dataclass
class ChatCorpus(Corpus):
    """A chat world: LoCoMo's corpus map plus what a chat carries for the analyses (item 5)."""
    now: float = 0.0  # when the questions are asked (epoch seconds)
    when: dict[str, str] = field(default_factory=dict)  # session → its conversation (scene / day)
    # message id → the utterances it holds: (utterance key, speaker, "current" | "recent" | "own")
    holds: dict[int, list[tuple[str, str, str]]] = field(default_factory=dict)
    info: list[dict] = field(default_factory=list)  # per question, parallel to ``questions``
    # A world written as one bridge session for the whole history (no /clear, ``one_session``):
    # message id → its conversation (the scene, the day), which the questions' evidence names
    # instead of a session; empty: a conversation is a session.
    conversation_of: dict[int, str] = field(default_factory=dict)


def open_home(home: Path):
    """``(projects_db module, projects connection, SessionDB)`` of a fresh home, HERMES_HOME set."""
    import os

    home.mkdir(parents=True, exist_ok=True)
    os.environ["HERMES_HOME"] = str(home)
    from hermes_cli import projects_db  # noqa: PLC0415 — must follow HERMES_HOME
    from hermes_state import SessionDB  # noqa: PLC0415

    return projects_db, projects_db.connect(home / "projects.db"), SessionDB(db_path=home / "state.db")


def new_session(corpus: ChatCorpus, db, sid: str) -> str:
    """A chat session as the api_server writes it (source ``api_server``, no cwd), placed in its
    chat's bound project by the plugin's own first-turn hook (``chat_service.place_new_session``:
    ``update_session_cwd`` to the project's folder, the session recorded for the chat)."""
    from hermes_side.actions.chat_service import place_new_session  # noqa: PLC0415

    db.create_session(sid, "api_server")
    if not place_new_session(corpus.home, sid, None):
        raise RuntimeError(f"{sid}: its chat is not bound to a project")
    return sid


def add_project(corpus: ChatCorpus, projects_db, pconn, key: str, name: str, chat: str) -> str:
    """A project for one chat (its folder exists; chat sessions have no cwd), the chat bound to it."""
    from hermes_side.stores import bindings  # noqa: PLC0415

    folder = corpus.home / "work" / key
    folder.mkdir(parents=True, exist_ok=True)
    pid = projects_db.create_project(pconn, name=name, slug=key, folders=[str(folder)], primary_path=str(folder))
    bindings.set_binding(corpus.home, chat, pid)
    corpus.projects[key] = pid
    return pid
