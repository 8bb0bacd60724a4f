"""``/recall <query> [--mode …] [--limit N] [--after …] [--before …]`` and ``/recall --open N``.

For everyone in a group. The search is always scoped by the group's chat key; the API answers
``chat_unbound`` for a group without a project, and that answer is passed on as is: there is no
global fallback. ``--open N`` shows the turns around result N of the group's last search, read
through the API's ``/context``, which checks the message lies in the group's project again.
"""

from __future__ import annotations

from dataclasses import dataclass

from arclet.alconna.exceptions import SpecialOptionTriggered
from nonebot import logger
from nonebot.adapters import Bot, Event
from nonebot_plugin_alconna import Alconna, Args, Arparma, CommandMeta, MultiVar, Option, on_alconna

from .. import client, cooldown, last_results
from ..bindings import ensure_initial_binding
from ..client import LOG_PREFIX
from ..config import current_texts, plugin_config
from ..outbound import send_blocks, send_reply
from ..render import CONTEXT_TURNS, context_blocks, result_blocks, server_now
from ..routing import resolve_endpoint
from ..texts import DEFAULT_LIMIT, DEFAULT_MODE, LIMIT_MAX, LIMIT_MIN, MODES, Texts
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


def _help(ctx: ChatContext, t: Texts) -> str:
    return t.help(ctx.is_admin, can_move=ctx.can_move, cooldown=plugin_config.history_recall_cooldown)


def parse_request(arp: Arparma, ctx: ChatContext, t: Texts) -> RecallRequest | OpenRequest | str:
    """The validated request, or the text to answer instead (help or a usage error)."""
    if not arp.matched:
        if isinstance(arp.error_info, SpecialOptionTriggered):
            return _help(ctx, t)
        return t.usage()
    args = arp.all_matched_args
    query = " ".join(str(part) for part in args.get("query") or ()).strip()
    if "open" in args:
        raw = str(args["open"]).strip()
        if query or not raw.isdigit():
            return t("bad_open")
        return OpenRequest(int(raw))
    if not query or query.lower() in HELP_WORDS:  # the bridge owns /help; ours is /recall help
        return _help(ctx, t)
    mode = str(args.get("mode", DEFAULT_MODE)).lower()
    if mode not in MODES:
        return t("bad_mode", value=args.get("mode"))
    raw_limit = str(args.get("limit", DEFAULT_LIMIT)).strip()
    if not raw_limit.isdigit() or not LIMIT_MIN <= int(raw_limit) <= LIMIT_MAX:
        return t.bad_limit(raw_limit)
    limit = int(raw_limit)
    return RecallRequest(query, mode, limit, str(args.get("after", "")).strip(), str(args.get("before", "")).strip())


async def _search(bot: Bot, ctx: ChatContext, chat: str, request: RecallRequest, t: Texts) -> None:
    if not ctx.can_move:  # admins are exempt from the cooldown
        wait = cooldown.check(ctx.who)
        if wait == 0:
            logger.debug(f"{LOG_PREFIX} /recall cooldown: silent for {ctx.who}, already told")
            return
        if wait is not None:
            await send_reply(t("cooldown", seconds=wait))
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
        await send_reply(t.bad_dates(request.after, request.before, result.cause) if dated else result.error)
        return

    data = result.data or {}
    results = [r for r in data.get("results") or [] if isinstance(r, dict)]
    last_results.remember(chat, results)
    logger.info(
        f"{LOG_PREFIX} /recall in {chat}: {len(results)} results "
        f"(mode {request.mode}, semantic {data.get('semantic_status', '-')})"
    )
    blocks = result_blocks(data, request.query, server_now(data), t, request.after, request.before)
    await send_blocks(bot, blocks, in_group=True, t=t)


async def _open(bot: Bot, ctx: ChatContext, chat: str, request: OpenRequest, t: Texts) -> None:
    hits = last_results.recall_hits(chat)
    if not 1 <= request.index <= len(hits):
        await send_reply(t.open_unavailable(len(hits)))
        return
    hit = hits[request.index - 1]
    endpoint = resolve_endpoint(ctx.adapter, ctx.group_id)
    result = await client.context(endpoint, chat, hit.message_id, CONTEXT_TURNS, CONTEXT_TURNS)
    if not result.ok:
        # not_found is the API's answer for a message outside the group's project (or gone);
        # no_route means the route itself is missing (an older server), which is not the same.
        gone = result.code == "not_found" and result.error != t("no_route")
        await send_reply(t("open_gone") if gone else result.error)
        return
    logger.info(f"{LOG_PREFIX} /recall --open {request.index} in {chat}")
    data = result.data or {}
    await send_blocks(bot, context_blocks(data, request.index, server_now(data), t), in_group=True, t=t)


@recall_cmd.handle()
async def handle_recall(bot: Bot, event: Event, arp: Arparma) -> None:
    ctx = await chat_context(bot, event)
    t = current_texts()
    if ctx.chat is None:
        await send_reply(t("private_chat"))
        await recall_cmd.finish()
    request = parse_request(arp, ctx, t)
    if isinstance(request, str):
        await send_reply(request)
    elif isinstance(request, OpenRequest):
        await _open(bot, ctx, ctx.chat, request, t)
    else:
        await _search(bot, ctx, ctx.chat, request, t)
    await recall_cmd.finish()
