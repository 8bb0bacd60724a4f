"""``/recall <query> [--mode hybrid|keyword|semantic] [--limit N]`` — for everyone in a group.

The search is always scoped by the group's chat key; the API answers ``chat_unbound`` for a group
without a project, and that answer is passed on as is: there is no global fallback.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from arclet.alconna.exceptions import SpecialOptionTriggered
from nonebot import logger
from nonebot.adapters import Bot, Event
from nonebot_plugin_alconna import Alconna, Args, Arparma, CommandMeta, MultiVar, Option, on_alconna

from .. import client
from ..bindings import ensure_initial_binding
from ..client import LOG_PREFIX
from ..outbound import deliver
from ..render import (
    BAD_LIMIT,
    BAD_MODE,
    DEFAULT_LIMIT,
    DEFAULT_MODE,
    LIMIT_MAX,
    LIMIT_MIN,
    MODES,
    PRIVATE_CHAT,
    help_text,
    result_blocks,
    usage_error,
)
from ..routing import resolve_endpoint
from .common import COMMAND_PRIORITY, chat_context, command_prefix

recall_cmd = on_alconna(
    Alconna(
        "recall",
        Args["query?", MultiVar(str, "*")],
        # Values are taken as text and checked below, so a typo gets a precise answer.
        Option("--mode|-m", Args["mode", str]),
        Option("--limit|-n", Args["limit", str]),
        meta=CommandMeta(description="search this group's project history"),
    ),
    use_cmd_start=True,
    skip_for_unmatch=False,  # a malformed /recall gets the usage line instead of silence
    auto_send_output=False,
    priority=COMMAND_PRIORITY,
    block=True,
)


@dataclass(frozen=True)
class RecallRequest:
    query: str
    mode: str
    limit: int


def parse_request(arp: Arparma, is_admin: bool, prefix: str) -> RecallRequest | str:
    """The validated request, or the text to answer instead (help or a usage error)."""
    if not arp.matched:
        if isinstance(arp.error_info, SpecialOptionTriggered):
            return help_text(is_admin, prefix)
        return usage_error(prefix)
    args = arp.all_matched_args
    query = " ".join(str(part) for part in args.get("query") or ()).strip()
    if not query:
        return help_text(is_admin, prefix)
    mode = str(args.get("mode", DEFAULT_MODE)).lower()
    if mode not in MODES:
        return BAD_MODE
    try:
        limit = int(args.get("limit", DEFAULT_LIMIT))
    except ValueError:
        return BAD_LIMIT
    if not LIMIT_MIN <= limit <= LIMIT_MAX:
        return BAD_LIMIT
    return RecallRequest(query, mode, limit)


@recall_cmd.handle()
async def handle_recall(bot: Bot, event: Event, arp: Arparma) -> None:
    ctx = chat_context(bot, event)
    if ctx.chat is None:
        await recall_cmd.finish(PRIVATE_CHAT)
    request = parse_request(arp, ctx.is_admin, command_prefix())
    if isinstance(request, str):
        await recall_cmd.finish(request)

    endpoint = resolve_endpoint(ctx.adapter, ctx.group_id)
    result = await ensure_initial_binding(ctx.chat, endpoint)
    if result is None:
        result = await client.search(endpoint, ctx.chat, request.query, request.mode, request.limit)
    if not result.ok:
        await recall_cmd.finish(result.error)

    data = result.data or {}
    logger.info(
        f"{LOG_PREFIX} /recall in {ctx.chat}: {len(data.get('results') or [])} results "
        f"(mode {request.mode}, semantic {data.get('semantic_status', '-')})"
    )
    blocks = result_blocks(data, request.query, datetime.now())
    await recall_cmd.finish(await deliver(bot, ctx.adapter, ctx.group_id, blocks))
