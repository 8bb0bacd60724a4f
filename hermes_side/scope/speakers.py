"""Who said a turn, in which chat, and what it copies: the facts every privacy rule is judged by. Pure.

Hermes makes new rows from old ones — in-place compaction (``archive_and_compact``) writes the kept
tail again with new ids and the compaction's time, a rotation's child and a ``/branch`` start with
copies, an import restores rows under new ids — so a rule that names rows is undone by the next
compaction. A rule names what was said instead (:class:`Said`):

- its *anchor*: the chat it was said in (``onebotv11:111``); for the operator's own sessions, and a
  chat session whose chat cannot be told, its conversation family (``family:<first session>``);
- its *author*: the member whose per-member session it is, or in a shared group session
  (``HERMES_SESSION_SHARE_GROUP``) the bridge's sender tag ``<current_message>\\n[user=Nick id=ID]:``
  where the bridge wrote one; :data:`OPERATOR` for the operator's own turns; for an agent turn the
  author of the turn it answers; ``""`` when it cannot be told;
- its role and its words (``messages.copy_key``'s text, digested).

A row is a *copy* when an earlier row of its family (every parent link: rotations, branches) has
the same role and words; a copy is the original's turn — its anchor, author and time — never
judged by when it was written. Rows are fed in id order (:class:`Attributor`), so an original is
always seen before its copies.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from .chat_rule import origin_of
from .chats import member_from_session_id

OPERATOR = "@operator"  # the author of the operator's own turns
AGENT_ROLES = ("assistant",)
# The bridge's sender tag, right after the current-message marker (nonebot-plugin-hermes 0.5.5
# ``prompt_builder._format_speaker_tag``: ``[user=Nick id=ID]`` or ``[user=ID]``; a nickname's own
# ``]`` is written full-width, so the first ``]`` ends the tag and the id is its last word).
SENDER_TAG = re.compile(r"<current_message>\n\[user=(?:[^\]\n]*? id=)?(?P<uid>[^\]\s]+)\]: ")
CURRENT = re.compile(r"<current_message>\n(?:\[user=[^\]]*\]: )?(?P<text>.*?)\n</current_message>", re.S)
REPLY = re.compile(r"^\(引用: .*?\)(?= |$)", re.S)  # a turn's own reply prefix (the shortest reading)


def digest(text: str) -> str:
    """The words of a turn as rules keep them: never the words themselves."""
    return hashlib.blake2b(text.strip().encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def words(text: str) -> str:
    """A turn's own words, as a quote of it reads: what the member typed — inside the bridge's
    ``<current_message>`` or after its ``<recent_messages>`` block — without their own reply
    prefix, spaces folded."""
    if current := CURRENT.search(text):
        text = current.group("text")
    elif "</recent_messages>" in text:
        text = text.rsplit("</recent_messages>", 1)[1]
    own = REPLY.sub("", text.strip(), count=1)
    return " ".join(own.split())


def sender_tag(text: str) -> str | None:
    """The member id of the bridge's sender tag in a shared session's turn, or None."""
    found = SENDER_TAG.search(text)
    return found.group("uid") if found else None


def family_root(session_id: str, rows: Mapping[str, Mapping[str, Any]]) -> str:
    """The first session of everything copied from one conversation: up every parent link —
    compression rotations and ``/branch`` alike (a branch starts as a copy of its parent's turns)."""
    seen, current = {session_id}, session_id
    while True:
        parent = (rows.get(current) or {}).get("parent_session_id")
        if not parent or parent in seen or parent not in rows:
            return current
        seen.add(parent)
        current = parent


@dataclass(frozen=True)
class SessionFacts:
    family: str  # family_root
    chat: str | None  # the chat of a chat session (None: the operator's, or a chat that cannot be told)
    member: str | None  # a per-member session (or its rotation): every user turn in it is this member's
    operator: bool  # the operator's own session, also one made from a chat's conversation (a /branch)
    copied_from: str | None = None  # for such a branch: the chat its first turns were copied from


def session_facts(rows: Mapping[str, Mapping[str, Any]], recorded: Mapping[str, str]) -> dict[str, SessionFacts]:
    """Facts of every session in ``rows`` (``hermes_db.load_session_rows``); ``recorded`` is the
    first-turn hook's session → chat record (``bindings.load_all``)."""
    out: dict[str, SessionFacts] = {}
    for sid in rows:
        origin = origin_of(sid, rows, recorded)
        out[sid] = SessionFacts(family_root(sid, rows), origin.name if origin.chat else None,
                                _member(sid, rows) if origin.chat else None, not origin.chat,
                                origin.name if origin.copied else None)
    return out


def _member(session_id: str, rows: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The member of the per-member bridge session this chat session is, or descends from."""
    seen, sid = set(), session_id
    while sid and sid not in seen:
        seen.add(sid)
        found = member_from_session_id(sid)
        if found:
            return found[1]
        sid = (rows.get(sid) or {}).get("parent_session_id")
    return None


class Said(NamedTuple):
    """One row as the rules see it (module docstring). ``digest`` is the words' digest as rules
    store it, filled only where a rule may need it (:meth:`Attributor.said` ``keyed``): it costs
    more than everything else about a row. (A tuple: a rebuild makes one per row.)"""

    anchor: str
    author: str
    role: str
    when: float  # the original's time
    copy: bool = False
    digest: str = ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.anchor, self.author, self.role, self.digest)


def anchor_of(facts: SessionFacts) -> str:
    return facts.chat if facts.chat and not facts.operator else f"family:{facts.family}"


Keyed = Callable[[str, str], bool]  # (anchor, role) → whether the row's digest is needed


class Attributor:
    """Turns rows (fed in id order) into :class:`Said`, remembering each family's originals (by the
    words' in-process hash: a copy is found without digesting it) and each session's current
    exchange (whose turn an agent turn answers)."""

    def __init__(self, facts: Mapping[str, SessionFacts], keyed: Keyed = lambda anchor, role: True) -> None:
        self.facts = facts
        self.keyed = keyed
        self.originals: dict[tuple[str, str, int], Said] = {}
        self.exchange: dict[str, str] = {}  # session → author of its last user turn

    def said(self, session_id: str, role: str, text: str, timestamp: float | None, *,
             keyed: bool = False) -> Said | None:
        """``None`` for what is no turn (no words, a role other than user/assistant). ``keyed``:
        digest the words whatever ``self.keyed`` says."""
        words = text.strip()
        facts = self.facts.get(session_id)
        if not words or role not in ("user", *AGENT_ROLES) or facts is None:
            return None
        known = (facts.family, role, hash(words))
        original = self.originals.get(known)
        copy = original is not None
        if original is None:
            original = Said(anchor_of(facts), self._author(facts, session_id, role, words), role,
                            float(timestamp or 0.0))
            self.originals[known] = original
        if role == "user":
            self.exchange[session_id] = original.author
        wanted = keyed or self.keyed(original.anchor, role)
        if not copy and not wanted:
            return original
        return Said(original.anchor, original.author, role, original.when, copy, digest(words) if wanted else "")

    def _author(self, facts: SessionFacts, session_id: str, role: str, words: str) -> str:
        if role != "user":
            return self.exchange.get(session_id, "")
        if facts.operator:
            return OPERATOR
        if facts.member:
            return facts.member
        return (sender_tag(words) or "") if facts.chat else ""
