"""Admin commands: ``/move <project>``, ``/move --home`` and ``/recall-status``.

Like nonebot-plugin-hermes' ``/hermes-status``: only ``{adapter}:{user_id}`` entries of
``history_recall_admin_users`` get an answer. Everyone else gets silence (logged at DEBUG), so
the commands do not reveal that they exist; ``block=True`` still keeps the text away from chat
handlers with a lower priority.
"""

from __future__ import annotations

import asyncio

from nonebot import logger
from nonebot.adapters import Bot, Event
from nonebot_plugin_alconna import Alconna, Args, Arparma, CommandMeta, Option, on_alconna

from .. import client
from ..bindings import forget_pending
from ..client import LOG_PREFIX, ApiResult
from ..render import MOVE_IN_GROUP, move_usage, render_move, render_status
from ..routing import resolve_endpoint
from .common import COMMAND_PRIORITY, ChatContext, chat_context, command_prefix

_ADMIN_COMMAND = {
    "use_cmd_start": True,
    "skip_for_unmatch": False,
    "auto_send_output": False,  # alconna's own --help output would reveal the command
    "priority": COMMAND_PRIORITY,
    "block": True,
}

move_cmd = on_alconna(
    Alconna(
        "move",
        Args["project?", str],
        Option("--home"),
        meta=CommandMeta(description="move this group's conversations to a project", hide=True),
    ),
    **_ADMIN_COMMAND,
)
status_cmd = on_alconna(
    Alconna("recall-status", meta=CommandMeta(description="recall service status", hide=True)),
    **_ADMIN_COMMAND,
)


def _admin(ctx: ChatContext, command: str) -> bool:
    if not ctx.is_admin:
        logger.debug(f"{LOG_PREFIX} {command} silent skip for non-admin {ctx.who}")
    return ctx.is_admin


@move_cmd.handle()
async def handle_move(bot: Bot, event: Event, arp: Arparma) -> None:
    ctx = chat_context(bot, event)
    if not _admin(ctx, "/move"):
        return
    if ctx.chat is None:
        await move_cmd.finish(MOVE_IN_GROUP)
    project = str(arp.all_matched_args.get("project") or "").strip()
    home = arp.find("home")
    if not arp.matched or home == bool(project):  # exactly one of <project> and --home
        await move_cmd.finish(move_usage(command_prefix()))

    endpoint = resolve_endpoint(ctx.adapter, ctx.group_id)
    result = await client.move_chat(endpoint, ctx.chat, "" if home else project)
    if not result.ok:
        await move_cmd.finish(result.error)
    forget_pending(ctx.chat)  # the admin's choice is on the server now; the config's is moot
    data = result.data or {}
    logger.info(
        f"{LOG_PREFIX} {ctx.who} moved {ctx.chat} to {project or 'Home'}: {data.get('moved_sessions', 0)} conversations"
    )
    await move_cmd.finish(render_move(data))


def _pair(result: ApiResult) -> tuple[dict | None, str]:
    return result.data, result.error


@status_cmd.handle()
async def handle_status(bot: Bot, event: Event) -> None:
    ctx = chat_context(bot, event)
    if not _admin(ctx, "/recall-status"):
        return
    endpoint = resolve_endpoint(ctx.adapter, ctx.group_id)
    health, status = await asyncio.gather(client.health(endpoint), client.status(endpoint))
    binding = await client.get_binding(endpoint, ctx.chat) if ctx.chat and health.ok else None
    logger.info(f"{LOG_PREFIX} /recall-status by {ctx.who} via {endpoint.label} ({endpoint.url})")
    await status_cmd.finish(
        render_status(
            endpoint.label,
            _pair(health),
            _pair(status),
            _pair(binding) if binding else None,
        )
    )
