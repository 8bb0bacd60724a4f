"""Forgetting: which turns a request covers (a dry run), taking them out of recall (with a receipt),
member opt-outs and a chat's recall switch. Shared by ``hermes recall forget``, the recall API and
through it the bot's ``/forget``, ``/recall-optout`` and ``/recall-off``.

Whose words a turn is (``scope/speakers.py``): every user turn of the bridge's per-member group
sessions (``hermes-{adapter}+group+{group_id}+{user_id}[-gN]``, and their compression children) is
that member's; in a shared group session (``HERMES_SESSION_SHARE_GROUP=true``) a turn is the member's
whose id the bridge's sender tag names (``<current_message>\n[user=Nick id=ID]:``, written in its
reactive mode). A shared session's turn without that tag belongs to no member: only an admin can
forget it (by session, or by date), and a member cannot opt out while the group talks that way
(``set_optout`` refuses and says what an admin can do instead).

A member's words may live on in the agent's answer ("you said the deadline is Friday"), so forgetting
a user turn also forgets the assistant turns that answer it (up to the next user turn); receipts
count both (``user_turns`` and ``replies``). Admin scopes (a session, a date span) take every turn.
A forget names turns, so it reaches every copy Hermes makes of them, later ones too
(``actions/forget_scan.py``, ``stores/rule_view.py``).

Nothing here writes Hermes' ``state.db``: the words stay there and in Hermes' logs until the
operator deletes them with Hermes' own commands (``hermes sessions delete``/``prune``) — every
receipt says so (``STILL_IN_HERMES``).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..embedding import forgetting
from ..scope import speakers
from ..scope.chats import chat_session_patterns, member_session_patterns, valid_member_id
from ..search.reader import SearchError, reader_for
from ..stores import forgotten, hermes_db
from . import chat_service, forget_scan
from .forget_scan import Row

log = logging.getLogger(__name__)

STILL_IN_HERMES = ("Recall no longer finds these turns (search, semantic index, opened windows, the agent's "
                   "tools). Hermes' own state.db and logs still hold the words: the operator can delete them "
                   "with Hermes' own commands (hermes sessions delete / prune).")
OPTOUT_NOTE = ("This member's turns in this group from now on stay out of recall (search, semantic index, the "
               "agent's tools) until they opt in again. Hermes' own state.db and logs still record them.")
NOT_ATTRIBUTABLE_OPTOUT = ("This group talks in one shared conversation where the bridge does not say who wrote "
                           "each turn, so your turns cannot be kept out alone. An admin can switch the group's "
                           "recall off (/recall-off) or forget a span of it (/forget --all --before <date>).")


class ForgetError(SearchError):
    """A request that cannot be planned (codes: bad_request, not_found, not_attributable)."""


@dataclass
class Plan:
    """What a forget request covers, newest state: turns already forgotten are not counted again.
    ``copies``: of those messages, how many are copies of another one (compaction, rotation, branch)."""

    scope: dict[str, Any]
    messages: list[tuple[int, str]] = field(default_factory=list)  # (message id, session id)
    turns: set[forgotten.TurnKey] = field(default_factory=set)  # what the rule names
    user_turns: int = 0
    replies: int = 0
    copies: int = 0
    first: float | None = None
    last: float | None = None
    shared_sessions: int | None = None  # member plans only: sessions whose turns no member owns

    @property
    def sessions(self) -> list[str]:
        return sorted({sid for _, sid in self.messages})

    def summary(self) -> dict[str, Any]:
        out = {"scope": self.scope, "messages": len(self.messages), "user_turns": self.user_turns,
               "replies": self.replies, "copies": self.copies, "sessions": len(self.sessions),
               "session_ids": self.sessions, "first": self.first, "last": self.last}
        if self.shared_sessions is not None:
            out["shared_sessions"] = self.shared_sessions
        return out

    def take(self, chosen: Sequence[Row], rows: Sequence[Row]) -> Plan:
        """Name the ``chosen`` turns and count every row of ``rows`` that is one of them."""
        self.turns |= {r.said.key for r in chosen}
        for row in sorted(forget_scan.same_turns(rows, chosen), key=lambda r: r.id):
            self.messages.append((row.id, row.session))
            self.copies += row.said.copy
            self.user_turns += row.said.role == "user"
            self.replies += row.said.role != "user"
            when = row.said.when
            self.first = when if self.first is None else min(self.first, when)
            self.last = when if self.last is None else max(self.last, when)
        return self


def _check_member(chat: str, user_id: str) -> None:
    if not isinstance(user_id, str) or not valid_member_id(user_id):
        raise ForgetError("'user' must be the member's platform id", "bad_request")
    try:
        member_session_patterns(chat, user_id)
    except ValueError:
        raise ForgetError("forgetting a member's turns needs a group chat", "bad_request") from None


# -- plans -------------------------------------------------------------------------------------
def plan_member(home: Path, chat: str, user_id: str, *, after: float | None = None, before: float | None = None,
                message_id: int | None = None) -> Plan:
    """The member's own turns in the group (all, a time span, or the exchange holding one result)
    and the agent's answers to them. A result that is not the member's own → ``not_attributable``."""
    _check_member(chat, user_id)
    scope = {"kind": "member", "chat": chat, "user": user_id, "after": after, "before": before,
             "message_id": message_id}
    reader = reader_for(home)
    with reader.leased() as conn:
        smap = reader.scope_map()
        rows = forget_scan.scan(conn, smap, chat_service.sessions_of_chat(home, chat))
        chosen = forget_scan.members_turns(rows, chat, user_id, after=after, before=before, only=message_id)
        plan = Plan({k: v for k, v in scope.items() if v is not None}).take(chosen, rows)
        # Turns of the group no member owns (a shared session without the sender tag): "nothing of
        # yours" may then mean "not attributable" — the bot says which.
        plan.shared_sessions = forget_scan.unattributed(rows, chat)
    if message_id is not None and not plan.messages:
        raise ForgetError("that result is not one of your own turns in this group (only turns that can be "
                          "attributed to you can be forgotten by you; an admin can forget others)",
                          "not_attributable")
    return plan


def plan_session(home: Path, session_id: str, *, chat: str | None = None) -> Plan:
    """Every turn of a conversation (the session and its compression lineage). With ``chat`` the
    session must be one of that chat's (a group's admin forgets only the group's conversations)."""
    if not isinstance(session_id, str) or not session_id or len(session_id) > 256:
        raise ForgetError("'session_id' must be a session id", "bad_request")
    reader = reader_for(home)
    with reader.leased() as conn:
        smap = reader.scope_map()
        if session_id not in smap.rows:
            raise ForgetError("session not found", "not_found")
        if chat is not None and session_id not in set(chat_service.sessions_of_chat(home, chat)):
            raise ForgetError("session not found", "not_found")  # another chat's: the same answer as none
        scope = {"kind": "session", "session_id": session_id, **({"chat": chat} if chat else {})}
        return _every_turn(conn, smap, smap.conversation(session_id), Plan(scope))


def plan_chat(home: Path, chat: str, *, after: float | None = None, before: float | None = None) -> Plan:
    """Every turn of the chat's conversations in a time span (a group admin's "everything before")."""
    if after is None and before is None:
        raise ForgetError("give 'before' and/or 'after'", "bad_request")
    reader = reader_for(home)
    with reader.leased() as conn:
        sessions = chat_service.sessions_of_chat(home, chat)
        scope = {k: v for k, v in {"kind": "chat", "chat": chat, "after": after, "before": before}.items()
                 if v is not None}
        return _every_turn(conn, reader.scope_map(), sessions, Plan(scope), after, before)


def plan_project(home: Path, project_ref: str, *, after: float | None = None, before: float | None = None) -> Plan:
    """Every turn of a project's conversations in a time span (the operator's CLI)."""
    if after is None and before is None:
        raise ForgetError("give --before and/or --after", "bad_request")
    project = chat_service.resolve_project_ref(home, project_ref)
    reader = reader_for(home)
    with reader.leased() as conn:
        smap = reader.scope_map()
        sessions = smap.sessions_in({"kind": "explicit", "id": project["id"]})
        scope = {k: v for k, v in {"kind": "project", "project": project["id"], "after": after,
                                   "before": before}.items() if v is not None}
        return _every_turn(conn, smap, sessions, Plan(scope), after, before)


def _every_turn(conn: sqlite3.Connection, smap: Any, sessions: Sequence[str], plan: Plan,
                after: float | None = None, before: float | None = None) -> Plan:
    rows = forget_scan.scan(conn, smap, sessions)
    return plan.take(forget_scan.every_turn(rows, set(sessions), after, before), rows)


# -- applying ----------------------------------------------------------------------------------
def apply(home: Path, plan: Plan, *, actor: str, surface: str) -> dict[str, Any]:
    """Record the plan's turns as forgotten under one receipt, then delete the vectors and latent
    terms of everything out of recall from embeddings.db; the receipt is given only after both (a
    receipt whose vectors are not gone yet stays ``index_pending`` and
    ``embedding/forgetting.finish_pending`` completes it — the next forget, index run or server start)."""
    entry = forgotten.Entry(actor=actor, surface=surface, action="forget", scope=plan.scope,
                            user_turns=plan.user_turns, replies=plan.replies, sessions=len(plan.sessions),
                            copies=plan.copies)
    receipt = forgotten.forget_turns(home, plan.messages, plan.turns, entry)
    index = forgetting.finish_pending(home)
    log.info("project-history-recall: %s forgot %d turn(s) in %d session(s) by %s (receipt %s)",
             surface, len(plan.messages), len(plan.sessions), actor, receipt)
    return {**plan.summary(), "applied": True, "receipt": receipt, "index": index, "note": STILL_IN_HERMES}


def dry_run(plan: Plan) -> dict[str, Any]:
    return {**plan.summary(), "applied": False, "receipt": None, "note": STILL_IN_HERMES}


# -- rules: future turns -------------------------------------------------------------------------
def set_optout(home: Path, chat: str, user_id: str, opted_out: bool, *, actor: str, surface: str) -> dict[str, Any]:
    """A member's future turns in the group stay out of recall (``opted_out``) or count again.
    Turns said while opted out stay out after opting in."""
    _check_member(chat, user_id)
    if opted_out and not _members_told_apart(home, chat):
        raise ForgetError(NOT_ATTRIBUTABLE_OPTOUT, "not_attributable")
    entry = forgotten.Entry(actor=actor, surface=surface, action="optout" if opted_out else "optin",
                            scope={"kind": "member", "chat": chat, "user": user_id})
    changed = forgotten.set_rule(home, "optout", chat, user_id, member_session_patterns(chat, user_id),
                                 opted_out, entry)
    return {"success": True, "chat": chat, "user": user_id, "opted_out": opted_out, "changed": changed,
            "receipt": entry.receipt, "note": OPTOUT_NOTE if opted_out else ""}


def _members_told_apart(home: Path, chat: str) -> bool:
    """Whether the chat's turns from now on can be told apart by member: its newest conversation is
    a per-member one, or a shared one whose newest user turn carries the bridge's sender tag. (Should
    the group later talk untagged, an open opt-out keeps those turns out: ``rule_view`` rule 3.)"""
    reader = reader_for(home)
    with reader.leased() as conn:
        smap = reader.scope_map()
        sessions = chat_service.sessions_of_chat(home, chat)
        if not sessions:
            return True
        newest = max(sessions, key=lambda sid: (smap.rows[sid].get("started_at") or 0, sid))
        if speakers.session_facts(smap.rows, smap.recorded)[newest].member is not None:
            return True
        rows = [r for r in forget_scan.scan(conn, smap, [newest]) if r.session == newest and r.said.role == "user"]
        return bool(rows) and rows[-1].said.author != ""


def set_recall(home: Path, chat: str, enabled: bool, *, actor: str, surface: str) -> dict[str, Any]:
    """Switch a group's recall off (nobody searches or opens its history, and nothing said while
    off is ever recalled) or back on. Reversible: history from before stays as it was."""
    try:
        patterns = chat_session_patterns(chat)
    except ValueError:
        raise ForgetError("recall can be switched off for a group chat", "bad_request") from None
    entry = forgotten.Entry(actor=actor, surface=surface, action="recall_on" if enabled else "recall_off",
                            scope={"kind": "chat", "chat": chat})
    changed = forgotten.set_rule(home, "off", chat, "", patterns, not enabled, entry)
    return {"success": True, "chat": chat, "recall": "on" if enabled else "off", "changed": changed,
            "receipt": entry.receipt}


def recall_state(home: Path, chat: str) -> dict[str, Any]:
    try:
        record = forgotten.load(home)
    except hermes_db.Unavailable as exc:
        raise SearchError(str(exc), exc.code) from None
    return {"success": True, "chat": chat, "recall": "off" if chat in record.off_chats() else "on",
            "opted_out": sorted(record.opted_out(chat))}
