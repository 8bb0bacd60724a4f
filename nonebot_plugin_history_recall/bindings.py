"""Initial chat → project bindings from the config, pushed to the recall API.

Bindings live on the server. The config only gives a group its *first* project: the push uses
``only_if_unset``, so a later admin ``/move`` (stored server side) wins and survives restarts.
A push that cannot reach the server is retried once more on that group's next ``/recall``.
"""

from __future__ import annotations

import asyncio

from nonebot import logger

from . import client
from .client import LOG_PREFIX, ApiResult
from .config import plugin_config
from .routing import Endpoint, key_problem, resolve_endpoint

# Chats whose configured initial binding has not reached the server yet.
_pending: set[str] = set()


def configured_chats() -> list[str]:
    """Chat keys of routing entries that name an initial project (keys that can match only)."""
    return [
        label
        for label, entry in plugin_config.history_recall_groups.items()
        if entry.project.strip() and key_problem("", "group_id", label) is None
    ]


def _endpoint_of(chat: str) -> Endpoint:
    adapter, _, group_id = chat.partition(":")
    return resolve_endpoint(adapter, group_id)


async def _push(chat: str, endpoint: Endpoint) -> ApiResult:
    result = await client.set_binding(endpoint, chat, endpoint.initial_project, only_if_unset=True)
    if result.ok:
        _pending.discard(chat)
        data = result.data or {}
        project = (data.get("project") or {}).get("slug") or "-"
        logger.info(f"{LOG_PREFIX} initial binding of {chat}: state={data.get('state')} project={project}")
    elif result.retryable:
        logger.warning(f"{LOG_PREFIX} initial binding of {chat} not pushed yet; will retry on its next /recall")
    else:
        # The server answered and said no (unknown project, bad key): retrying will not help.
        _pending.discard(chat)
        logger.warning(f"{LOG_PREFIX} initial binding of {chat} to {endpoint.initial_project!r} was refused")
    return result


async def push_initial_bindings() -> None:
    """Push every configured initial binding; failures are logged, never raised."""
    chats = configured_chats()
    _pending.update(chats)
    await asyncio.gather(*(_push(chat, _endpoint_of(chat)) for chat in chats))


async def ensure_initial_binding(chat: str, endpoint: Endpoint) -> ApiResult | None:
    """Retry a pending initial binding; returns the failure if the server is still out of reach."""
    if chat not in _pending or not endpoint.initial_project:
        return None
    result = await _push(chat, endpoint)
    return result if result.retryable else None


def forget_pending(chat: str) -> None:
    """An admin set the binding by hand; the configured initial one must not be retried."""
    _pending.discard(chat)
