"""Forgetting: which turns a request covers (a dry run), taking them out of recall (with a receipt),
member opt-outs and a chat's recall switch. Shared by ``hermes recall forget``, the recall API and
through it the bot's ``/forget``, ``/recall-optout`` and ``/recall-off``.

Whose words a turn is: only the bridge's per-member group sessions
(``hermes-{adapter}+group+{group_id}+{user_id}[-gN]``, and their compression children) attribute
turns to a member — every ``user`` turn in them is that member's. Hermes 0.19 records no sender per
message, and a shared group session (``HERMES_SESSION_SHARE_GROUP=true``) mixes every member's
turns, so its turns belong to no member: only an admin can forget them (by session, or by date).

A member's words may live on in the agent's answer ("you said the deadline is Friday"), so forgetting
a user turn also forgets the assistant turns that answer it (up to the next user turn); receipts
count both (``user_turns`` and ``replies``). Admin scopes (a session, a date span) take every turn.

Nothing here writes Hermes' ``state.db``: the words stay there and in Hermes' logs until the
operator deletes them with Hermes' own commands (``hermes sessions delete``/``prune``) — every
receipt says so (``STILL_IN_HERMES``).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..scope.chats import (
    chat_session_patterns,
    member_from_session_id,
    member_session_patterns,
    valid_member_id,
)
from ..search.reader import SearchError, reader_for
from ..stores import forgotten, hermes_db
from ..stores.messages import copy_key, eligible_sql, message_text
from . import chat_service

log = logging.getLogger(__name__)

STILL_IN_HERMES = ("Recall no longer finds these turns (search, semantic index, opened windows, the agent's "
                   "tools). Hermes' own state.db and logs still hold the words: the operator can delete them "
                   "with Hermes' own commands (hermes sessions delete / prune).")
OPTOUT_NOTE = ("This member's turns in this group from now on stay out of recall (search, semantic index, the "
               "agent's tools) until they opt in again. Hermes' own state.db and logs still record them.")
_ROWS = ("SELECT m.id, m.session_id, m.role, m.timestamp, m.content, ({eligible}) AS ok FROM messages m"
         " JOIN sessions s ON s.id = m.session_id"
         " WHERE m.session_id IN (SELECT value FROM json_each(?)) AND m.role IN ('user', 'assistant')"
         " ORDER BY m.session_id, m.id")  # {eligible}: stores.messages.eligible_sql(conn)


class ForgetError(SearchError):
    """A request that cannot be planned (codes: bad_request, not_found, not_attributable)."""


@dataclass
class Plan:
    """What a forget request covers, newest state: turns already forgotten are not counted again.
    ``copies``: of those messages, how many are copies of another one (compaction, rotation, branch)."""

    scope: dict[str, Any]
    messages: list[tuple[int, str]] = field(default_factory=list)  # (message id, session id)
    user_turns: int = 0
    replies: int = 0
    copies: int = 0
    first: float | None = None
    last: float | None = None
    shared_sessions: int | None = None  # member plans only: the chat's sessions no member owns

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


def _in_range(ts: float | None, after: float | None, before: float | None) -> bool:
    ts = ts or 0.0
    return (after is None or ts >= after) and (before is None or ts < before)


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


def _family(rows: Mapping[str, Mapping[str, Any]], sessions: Iterable[str]) -> dict[str, str]:
    """Session id → family root, for ``sessions`` and every session sharing a root with one."""
    roots = {sid: family_root(sid, rows) for sid in rows}
    wanted = {roots.get(sid, sid) for sid in sessions}
    return {sid: root for sid, root in roots.items() if root in wanted} | {
        sid: sid for sid in sessions if sid not in roots}


Row = tuple[int, str, str, float | None]  # message id, session id, role, the original's timestamp


def _collect(conn: sqlite3.Connection, smap: Any, sessions: Iterable[str], plan: Plan, *, users_only: bool,
             after: float | None = None, before: float | None = None, only: int | None = None) -> Plan:
    """Fill ``plan`` from the sessions' turns. ``users_only``: the user turns in range (or the
    exchange holding message ``only``) and the assistant turns answering them; else every turn.

    Every copy of a chosen turn goes with it — the same conversation family and the same words
    (``messages.copy_key``, the rule the search folds copies by) — and a copy is dated by its
    original (the first row with its key): a compaction writes its copies with the time it ran."""
    sessions = set(sessions)
    family = _family(smap.rows, sessions)
    rows = conn.execute(_ROWS.format(eligible=eligible_sql(conn)), (json.dumps(sorted(family)),)).fetchall()
    key_of: dict[int, tuple[str, str]] = {}
    dated: dict[tuple[str, str], float | None] = {}
    first: dict[tuple[str, str], int] = {}  # each turn's original: the first row with its key
    for mid, sid, _role, ts, content, ok in sorted(rows, key=lambda r: r[0]):
        text = message_text(content)
        if ok and text.strip():
            key_of[mid] = copy_key(family.get(sid, sid), text)
            dated.setdefault(key_of[mid], ts)
            first.setdefault(key_of[mid], mid)
    when = {r[0]: dated.get(key_of[r[0]], r[3]) if r[0] in key_of else r[3] for r in rows}
    own = [(r[0], r[1], r[2], when[r[0]], r[5]) for r in rows if r[1] in sessions]
    chosen: list[Row] = []
    if not users_only:
        chosen = [(r[0], r[1], r[2], r[3]) for r in own if r[4] and _in_range(r[3], after, before)]
    else:
        taking, session = False, None
        exchange: list[Row] = []
        for mid, sid, role, ts, ok in [*own, (None, None, "user", None, 0)]:  # sentinel closes the last
            if role == "user" or sid != session:
                if exchange and (only is None or any(e[0] == only for e in exchange)):
                    chosen += exchange
                exchange, session = [], sid
                taking = role == "user" and (only is not None or _in_range(ts, after, before))
            if taking and ok:
                exchange.append((mid, sid, role, ts))
        if only is not None and not any(c[0] == only for c in chosen):
            chosen = []
    keys = {key_of[c[0]] for c in chosen if c[0] in key_of}
    taken = {c[0] for c in chosen}
    copies = [(r[0], r[1], r[2], when[r[0]]) for r in rows
              if r[0] not in taken and r[5] and key_of.get(r[0]) in keys]
    for mid, sid, role, ts in sorted([*chosen, *copies]):
        plan.messages.append((mid, sid))
        plan.copies += mid in key_of and first[key_of[mid]] != mid
        if role == "user":
            plan.user_turns += 1
        else:
            plan.replies += 1
        plan.first = ts if plan.first is None else min(plan.first, ts or 0.0)
        plan.last = ts if plan.last is None else max(plan.last, ts or 0.0)
    return plan


def _member_sessions(smap: Any, chat: str, user_id: str) -> list[str]:
    roots = [sid for sid in smap.rows if member_from_session_id(sid) == (chat, user_id)]
    return sorted({s for sid in roots for s in smap.conversation(sid)} | set(roots))


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
        sessions = _member_sessions(smap, chat, user_id)
        plan = _collect(conn, smap, sessions, Plan({k: v for k, v in scope.items() if v is not None}),
                        users_only=True, after=after, before=before, only=message_id)
        # Whether the group also talks in shared sessions (HERMES_SESSION_SHARE_GROUP): turns there
        # belong to no member, so "nothing of yours" may mean "not attributable" — the bot says which.
        plan.shared_sessions = sum(1 for sid in chat_service.sessions_of_chat(home, chat)
                                   if member_from_session_id(sid) is None)
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
        return _collect(conn, smap, smap.conversation(session_id), Plan(scope), users_only=False)


def plan_chat(home: Path, chat: str, *, after: float | None = None, before: float | None = None) -> Plan:
    """Every turn of the chat's conversations in a time span (a group admin's "everything before")."""
    if after is None and before is None:
        raise ForgetError("give 'before' and/or 'after'", "bad_request")
    reader = reader_for(home)
    with reader.leased() as conn:
        sessions = chat_service.sessions_of_chat(home, chat)
        scope = {k: v for k, v in {"kind": "chat", "chat": chat, "after": after, "before": before}.items()
                 if v is not None}
        return _collect(conn, reader.scope_map(), sessions, Plan(scope), users_only=False, after=after,
                        before=before)


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
        return _collect(conn, smap, sessions, Plan(scope), users_only=False, after=after, before=before)


# -- applying ----------------------------------------------------------------------------------
def apply(home: Path, plan: Plan, *, actor: str, surface: str) -> dict[str, Any]:
    """Record the plan's turns (copies included) as forgotten under one receipt, and delete their
    vectors and latent terms from embeddings.db."""
    entry = forgotten.Entry(actor=actor, surface=surface, action="forget", scope=plan.scope,
                            user_turns=plan.user_turns, replies=plan.replies, sessions=len(plan.sessions),
                            copies=plan.copies)
    receipt = forgotten.forget_messages(home, plan.messages, entry)
    index = purge_vectors(home, [mid for mid, _ in plan.messages])
    log.info("project-history-recall: %s forgot %d turn(s) in %d session(s) by %s (receipt %s)",
             surface, len(plan.messages), len(plan.sessions), actor, receipt)
    return {**plan.summary(), "applied": True, "receipt": receipt, "index": index, "note": STILL_IN_HERMES}


def dry_run(plan: Plan) -> dict[str, Any]:
    return {**plan.summary(), "applied": False, "receipt": None, "note": STILL_IN_HERMES}


def purge_vectors(home: Path, ids: Sequence[int]) -> dict[str, Any]:
    """Delete the vectors (and latent terms) of ``ids`` from embeddings.db, every model's. A chunk
    holds its own message's text only (the indexer's ``alone`` chunking), so no other turn's vector
    carries a forgotten turn's words."""
    from ..host.profile import profile_at

    if not profile_at(home).embeddings_db.exists():
        return {"vectors_deleted": 0}
    conn = sqlite3.connect(profile_at(home).embeddings_db, timeout=30, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        cur = conn.execute("DELETE FROM chunks WHERE message_id IN (SELECT value FROM json_each(?))",
                           (json.dumps([int(i) for i in ids]),))
        deleted = cur.rowcount
        if deleted:  # in-memory matrices reload (store.generation)
            conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()
    return {"vectors_deleted": deleted}


# -- rules: future turns -------------------------------------------------------------------------
def set_optout(home: Path, chat: str, user_id: str, opted_out: bool, *, actor: str, surface: str) -> dict[str, Any]:
    """A member's future turns in the group stay out of recall (``opted_out``) or count again.
    Turns said while opted out stay out after opting in."""
    _check_member(chat, user_id)
    entry = forgotten.Entry(actor=actor, surface=surface, action="optout" if opted_out else "optin",
                            scope={"kind": "member", "chat": chat, "user": user_id})
    changed = forgotten.set_rule(home, "optout", chat, user_id, member_session_patterns(chat, user_id),
                                 opted_out, entry)
    return {"success": True, "chat": chat, "user": user_id, "opted_out": opted_out, "changed": changed,
            "receipt": entry.receipt, "note": OPTOUT_NOTE if opted_out else ""}


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
