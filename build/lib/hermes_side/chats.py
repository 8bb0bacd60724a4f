"""Recognise which chat group a Hermes session belongs to. Pure.

The NoneBot bridge (nonebot-plugin-hermes) names its transcripts
``hermes-{adapter}+group+{group_id}[+{user_id}][-gN]`` (sent as ``X-Hermes-Session-Id``) and, with
memory keys on, sends ``X-Hermes-Session-Key: agent:<ns>:nonebot-{adapter}:group:{group_id}[:user]``.
Both name the same chat: ``{adapter}:{group_id}``.
"""

from __future__ import annotations

import re

_SESSION_ID = re.compile(r"^hermes-(?P<adapter>[a-z0-9_.-]+?)\+group\+(?P<group>[^+]+?)(?:\+[^+]+?)?(?:-g\d+)?$")
_SESSION_KEY = re.compile(r"^agent:[^:]+:nonebot-(?P<adapter>[a-z0-9_.-]+):group:(?P<group>[^:]+)(?::.*)?$")
_CHAT = re.compile(r"^(?P<adapter>[a-z0-9_-]{1,32}):(?P<group>-?[A-Za-z0-9_.@-]{1,128})$")


def normalize_adapter(name: str) -> str:
    """Same normalisation as nonebot-plugin-hermes: ``"OneBot V11"`` → ``onebotv11``."""
    return name.lower().replace(" ", "").replace(".", "") or "unknown"


def chat_key(adapter: str, group_id: str) -> str:
    return f"{normalize_adapter(adapter)}:{group_id}"


def parse_chat(value: str) -> str | None:
    """Validate an ``{adapter}:{group_id}`` name from outside; ``None`` when it cannot be one."""
    m = _CHAT.match(value or "")
    return f"{m['adapter']}:{m['group']}" if m else None


def chat_from_session_id(session_id: str | None) -> str | None:
    m = _SESSION_ID.match(session_id or "")
    return chat_key(m["adapter"], m["group"]) if m else None


def chat_from_session_key(session_key: str | None) -> str | None:
    m = _SESSION_KEY.match(session_key or "")
    return chat_key(m["adapter"], m["group"]) if m else None
