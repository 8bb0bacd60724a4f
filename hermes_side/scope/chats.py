"""Recognise which chat a Hermes session belongs to. Pure.

Chat names: ``{adapter}:{group_id}`` for a group, ``{adapter}:private:{user_id}`` for a private
chat (user and group ids live in different namespaces on most platforms, so they must not meet).

Where they come from:
- the NoneBot bridge (nonebot-plugin-hermes) names its transcripts
  ``hermes-{adapter}+group+{group_id}[+{user_id}][-gN]`` / ``hermes-{adapter}+private+{user_id}[-gN]``
  (sent as ``X-Hermes-Session-Id``; ``-gN`` counts ``/clear``), and with memory keys on sends
  ``X-Hermes-Session-Key: agent:<ns>:nonebot-{adapter}:group:{group_id}[:user]``;
- Hermes' own messaging gateway keys its sessions ``agent:<ns>:<platform>:<chat_type>:<chat_id>[:…]``
  and stores ``source`` (the platform), ``chat_id`` and ``chat_type`` on the session row.
"""

from __future__ import annotations

import functools
import re

_SESSION_ID = re.compile(r"^hermes-(?P<adapter>[a-z0-9_.-]+?)\+(?P<kind>group|private)\+(?P<rest>.+)$")
_GENERATION = re.compile(r"^(?P<base>.+?)-g(?P<n>\d+)$")
_NUMERIC = re.compile(r"^-?\d+$")
_SESSION_KEY = re.compile(r"^agent:[^:]+:(?P<platform>[A-Za-z0-9_.-]+):(?P<type>[A-Za-z_]+):(?P<chat>[^:]+)(?::.*)?$")
_CHAT = re.compile(r"^(?P<adapter>[a-z0-9_-]{1,32}):(?P<private>private:)?(?P<group>-?[A-Za-z0-9_.@-]{1,128})$")
PRIVATE_TYPES = frozenset({"dm", "private"})


@functools.lru_cache(maxsize=256)
def normalize_adapter(name: str) -> str:
    """Same normalisation as nonebot-plugin-hermes: ``"OneBot V11"`` → ``onebotv11``."""
    return name.lower().replace(" ", "").replace(".", "") or "unknown"


def chat_key(adapter: str, group_id: str, *, private: bool = False) -> str:
    return f"{normalize_adapter(adapter)}:{'private:' if private else ''}{group_id}"


def parse_chat(value: str) -> str | None:
    """Validate a chat name from outside; ``None`` when it cannot be one."""
    m = _CHAT.match(value or "")
    return f"{m['adapter']}:{m['private'] or ''}{m['group']}" if m else None


def _strip_generation(last: str) -> str:
    """Drop the bridge's ``-gN``. It is appended to the whole id, so it can only be told from a
    group or user id ending in ``-gN`` when what precedes it is a platform id (numeric on every
    platform the bridge serves). ``team-g1`` therefore stays ``team-g1``: a misread makes a new,
    unbound chat (refused), never another chat's."""
    m = _GENERATION.match(last)
    return m["base"] if m and _NUMERIC.match(m["base"]) else last


def chat_from_session_id(session_id: str | None) -> str | None:
    if not session_id or not session_id.startswith("hermes-"):  # the common case, cheaply
        return None
    m = _SESSION_ID.match(session_id)
    if not m:
        return None
    parts = m["rest"].split("+")
    if m["kind"] == "private":
        return chat_key(m["adapter"], _strip_generation(parts[0]), private=True) if len(parts) == 1 else None
    if len(parts) == 1:  # one shared session per group
        group = _strip_generation(parts[0])
    elif len(parts) == 2:  # per user: the generation follows the user id, the group is intact
        group = parts[0]
    else:
        return None
    return None if group in ("", "unknown") else chat_key(m["adapter"], group)


def chat_from_session_key(session_key: str | None) -> str | None:
    """Chat of a gateway-style key; the bridge's ``nonebot-`` prefix names the same platform."""
    m = _SESSION_KEY.match(session_key or "")
    if not m:
        return None
    platform = m["platform"].removeprefix("nonebot-")
    return chat_key(platform, m["chat"], private=m["type"].lower() in PRIVATE_TYPES)


def chat_from_row(source: str | None, chat_id: str | None, chat_type: str | None) -> str | None:
    """Chat of a messaging-gateway session row (``record_gateway_session_peer`` fills these)."""
    if not source or not chat_id:
        return None
    return chat_key(source, str(chat_id), private=(chat_type or "").lower() in PRIVATE_TYPES)


# -- members: whose words a session holds ----------------------------------------------------------
_MEMBER_ID = re.compile(r"^[A-Za-z0-9_.@-]{1,128}$")  # no GLOB metacharacters (see member_session_patterns)


def valid_member_id(user_id: str) -> bool:
    return bool(_MEMBER_ID.match(user_id or ""))


def member_from_session_id(session_id: str | None) -> tuple[str, str] | None:
    """``(chat, user id)`` of the bridge's per-member group session
    ``hermes-{adapter}+group+{group_id}+{user_id}[-gN]``: every user turn in it is that member's.
    ``None`` for a shared group session (``HERMES_SESSION_SHARE_GROUP=true``: its turns cannot be
    told apart, Hermes records no per-message sender), a private chat, or any other id."""
    m = _SESSION_ID.match(session_id or "") if (session_id or "").startswith("hermes-") else None
    if not m or m["kind"] != "group":
        return None
    parts = m["rest"].split("+")
    if len(parts) != 2 or parts[0] in ("", "unknown"):
        return None
    user = _strip_generation(parts[1])
    return (chat_key(m["adapter"], parts[0]), user) if valid_member_id(user) else None


def member_session_patterns(chat: str, user_id: str) -> tuple[str, ...]:
    """SQLite GLOB patterns of every per-member session of ``user_id`` in the group ``chat``, also
    those a later ``/clear`` starts (``-gN``, numeric ids only, as :func:`_strip_generation` reads them)."""
    adapter, _, group = chat.partition(":")
    if not group or group.startswith("private:") or not valid_member_id(user_id) or not valid_member_id(group):
        raise ValueError(f"not a group member: {chat} {user_id}")
    base = f"hermes-{adapter}+group+{group}+{user_id}"
    return (base, base + "-g[0-9]*") if _NUMERIC.match(user_id) else (base,)


def chat_session_patterns(chat: str) -> tuple[str, ...]:
    """GLOB patterns of every session the bridge names for the group ``chat`` (shared or per member)."""
    adapter, _, group = chat.partition(":")
    if not group or group.startswith("private:") or not valid_member_id(group):
        raise ValueError(f"not a group chat: {chat}")
    base = f"hermes-{adapter}+group+{group}"
    return (base, base + "-g[0-9]*", base + "+*")
