"""``/recall <query> [--mode …] [--limit N] [--after …] [--before …]`` and ``/recall --open N``.

For everyone in a group. The search is always scoped by the group's chat key; the API answers
``chat_unbound`` for a group without a project, and that answer is passed on as is: there is no
global fallback. ``--open N`` shows the turns around result N of the group's last search, read
through the API's ``/context``, which checks the message lies in the group's project again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from arclet.alconna.exceptions import SpecialOptionTriggered
from nonebot import logger
from nonebot.adapters import Bot, Event
from nonebot_plugin_alconna import Alconna, Args, Arparma, CommandMeta, MultiVar, Option, on_alconna

from .. import client, cooldown, last_results
from ..bindings import ensure_initial_binding
from ..client import LOG_PREFIX
from ..config import command_names, plugin_config
from ..outbound import send_blocks, send_reply
from ..render import CONTEXT_TURNS, context_blocks, result_blocks
from ..routing import resolve_endpoint
from ..texts import (
    BAD_DATE,
    BAD_LIMIT,
    BAD_MODE,
    BAD_OPEN,
    DEFAULT_LIMIT,
    DEFAULT_MODE,
    LIMIT_MAX,
    LIMIT_MIN,
    MODES,
    OPEN_GONE,
    PRIVATE_CHAT,
    Names,
    cooldown_text,
    help_text,
    open_unavailable,
    usage_error,
)
from .common import COMMAND_PRIORITY, ChatContext, chat_context

recall_cmd = on_alconna(
    Alconna(
        "recall",
        Args["query?", MultiVar(str, "*")],
        # Values are taken as text and checked below (dates by the API), so a typo gets a precise answer.
        Option("--mode|-m", Args["mode", str]),
        Option("--limit|-n", Args["limit", str]),
        Option("--after", Args["after", str]),
        Option("--before", Args["before", str]),
        Option("--open|-o", Args["open", str]),
        meta=CommandMeta(description="search this group's project history"),
    ),
    use_cmd_start=True,
    skip_for_unmatch=False,  # a malformed /recall gets the usage line instead of silence
    auto_send_output=False,
    priority=COMMAND_PRIORITY,
    block=True,
)


HELP_WORDS = frozenset({"help", "帮助"})


@dataclass(frozen=True)
class RecallRequest:
    query: str
    mode: str
    limit: int
    after: str = ""
    before: str = ""


@dataclass(frozen=True)
class OpenRequest:
    index: int
    """1-based number of the result in the group's last list."""


def _help(ctx: ChatContext, names: Names) -> str:
    return help_text(ctx.is_admin, names, can_move=ctx.can_move, cooldown=plugin_config.history_recall_cooldown)


def parse_request(arp: Arparma, ctx: ChatContext, names: Names) -> RecallRequest | OpenRequest | str:
    """The validated request, or the text to answer instead (help or a usage error)."""
    if not arp.matched:
        if isinstance(arp.error_info, SpecialOptionTriggered):
            return _help(ctx, names)
        return usage_error(names)
    args = arp.all_matched_args
    query = " ".join(str(part) for part in args.get("query") or ()).strip()
    if "open" in args:
        raw = str(args["open"]).strip()
        if query or not raw.isdigit():
            return BAD_OPEN
        return OpenRequest(int(raw))
    if not query or query.lower() in HELP_WORDS:  # the bridge owns /help; ours is /recall help
        return _help(ctx, names)
    mode = str(args.get("mode", DEFAULT_MODE)).lower()
    if mode not in MODES:
        return BAD_MODE
    try:
        limit = int(args.get("limit", DEFAULT_LIMIT))
    except ValueError:
        return BAD_LIMIT
    if not LIMIT_MIN <= limit <= LIMIT_MAX:
        return BAD_LIMIT
    return RecallRequest(query, mode, limit, str(args.get("after", "")).strip(), str(args.get("before", "")).strip())


async def _search(bot: Bot, ctx: ChatContext, chat: str, request: RecallRequest, names: Names) -> None:
    if not ctx.can_move:  # admins are exempt from the cooldown
        wait = cooldown.check(ctx.who)
        if wait == 0:
            logger.debug(f"{LOG_PREFIX} /recall cooldown: silent for {ctx.who}, already told")
            return
        if wait is not None:
            await send_reply(cooldown_text(wait))
            return
        cooldown.start(ctx.who)

    endpoint = resolve_endpoint(ctx.adapter, ctx.group_id)
    result = await ensure_initial_binding(chat, endpoint)
    if result is None:
        result = await client.search(
            endpoint, chat, request.query, request.mode, request.limit, request.after, request.before
        )
    if not result.ok:
        cooldown.cancel(ctx.who)  # no answer, no wait: "try again later" must not be met by a cooldown
        # The server's own sentence is never shown; a refused request with dates is about the dates.
        dated = result.code == "bad_request" and (request.after or request.before)
        await send_reply(BAD_DATE if dated else result.error)
        return

    data = result.data or {}
    results = [r for r in data.get("results") or [] if isinstance(r, dict)]
    last_results.remember(chat, results)
    logger.info(
        f"{LOG_PREFIX} /recall in {chat}: {len(results)} results "
        f"(mode {request.mode}, semantic {data.get('semantic_status', '-')})"
    )
    await send_blocks(bot, result_blocks(data, request.query, datetime.now(), names), in_group=True)


async def _open(bot: Bot, ctx: ChatContext, chat: str, request: OpenRequest, names: Names) -> None:
    hits = last_results.recall_hits(chat)
    if not 1 <= request.index <= len(hits):
        await send_reply(open_unavailable(len(hits), names))
        return
    hit = hits[request.index - 1]
    endpoint = resolve_endpoint(ctx.adapter, ctx.group_id)
    result = await client.context(endpoint, chat, hit.message_id, CONTEXT_TURNS, CONTEXT_TURNS)
    if not result.ok:
        # not_found is the API's answer for a message outside the group's project (or gone);
        # MSG_NOT_FOUND means the route itself is missing (an older server), which is not the same.
        gone = result.code == "not_found" and result.error != client.MSG_NOT_FOUND
        await send_reply(OPEN_GONE if gone else result.error)
        return
    logger.info(f"{LOG_PREFIX} /recall --open {request.index} in {chat}")
    await send_blocks(bot, context_blocks(result.data or {}, request.index, datetime.now()), in_group=True)


@recall_cmd.handle()
async def handle_recall(bot: Bot, event: Event, arp: Arparma) -> None:
    ctx = await chat_context(bot, event)
    if ctx.chat is None:
        await send_reply(PRIVATE_CHAT)
        await recall_cmd.finish()
    names = command_names()
    request = parse_request(arp, ctx, names)
    if isinstance(request, str):
        await send_reply(request)
    elif isinstance(request, OpenRequest):
        await _open(bot, ctx, ctx.chat, request, names)
    else:
        await _search(bot, ctx, ctx.chat, request, names)
    await recall_cmd.finish()
