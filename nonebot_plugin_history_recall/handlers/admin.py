"""Admin commands: ``/move`` (list projects), ``/move <project>``, ``/move --home``, ``/recall-status``.

Like nonebot-plugin-hermes' ``/hermes-status``: only admins get an answer — ``{adapter}:{user_id}``
entries of ``history_recall_admin_users`` and NoneBot's ``SUPERUSERS``; with the opt-in
``history_recall_group_admins_can_move`` also a group's owner and admins, for ``/move`` in that
group — and only to the projects the operator listed for it (``move_projects`` of its routing entry;
``/move`` alone shows them only those). The recall API cannot tell who asked (the bot holds the key),
so the bot is where that policy lives. Everyone else gets silence (logged at DEBUG), so the commands
do not reveal that they exist.

Good citizen in a bot with other plugins: for someone who may not use them the matchers do not
match at all (a rule, checked before the handler), so the event goes on to the next matcher — a
chess plugin's own ``/move`` still answers everyone else. For admins ``block=True`` keeps the
command away from lower priorities. Both names are configurable
(``HISTORY_RECALL_MOVE_COMMAND=recall-move``), with alconna aliases.
"""

from __future__ import annotations

import asyncio

from nonebot import logger
from nonebot.adapters import Bot, Event
from nonebot.rule import Rule
from nonebot_plugin_alconna import Alconna, Args, Arparma, CommandMeta, MultiVar, Option, on_alconna

from .. import client
from ..bindings import forget_pending
from ..client import LOG_PREFIX, ApiResult, admin_error
from ..config import current_texts, plugin_config
from ..outbound import send_reply
from ..render import render_move, render_move_not_allowed, render_projects, render_status
from ..routing import Endpoint, default_endpoint, find_project, group_admin_projects, resolve_endpoint
from ..texts import Texts
from .common import COMMAND_PRIORITY, ChatContext, chat_context, failure_text

_ADMIN_COMMAND = {
    "use_cmd_start": True,
    "skip_for_unmatch": False,
    "auto_send_output": False,  # alconna's own --help output would reveal the command
    "priority": COMMAND_PRIORITY,
    "block": True,
}
MOVE = plugin_config.history_recall_move_command
STATUS = plugin_config.history_recall_status_command


async def _may_move(bot: Bot, event: Event) -> bool:
    ctx = await chat_context(bot, event)
    return _allowed(ctx.can_move, ctx, f"/{MOVE}")


async def _is_admin(bot: Bot, event: Event) -> bool:
    ctx = await chat_context(bot, event)
    return _allowed(ctx.is_admin, ctx, f"/{STATUS}")


move_cmd = on_alconna(
    Alconna(
        MOVE,
        Args["project?", MultiVar(str, "*")],  # a name with spaces, as /move lists it: /move Shop Backend
        Option("--home"),
        meta=CommandMeta(description="move this group's conversations to a project", hide=True),
    ),
    rule=Rule(_may_move),
    aliases=set(plugin_config.history_recall_move_aliases),
    **_ADMIN_COMMAND,
)
status_cmd = on_alconna(
    Alconna(STATUS, meta=CommandMeta(description="recall service status", hide=True)),
    rule=Rule(_is_admin),
    aliases=set(plugin_config.history_recall_status_aliases),
    **_ADMIN_COMMAND,
)


def _allowed(allowed: bool, ctx: ChatContext, command: str) -> bool:
    if not allowed:
        logger.debug(f"{LOG_PREFIX} {command} silent skip for non-admin {ctx.who}")
    return allowed


def _failed(result: ApiResult, ctx: ChatContext, t: Texts, project: str = "") -> str:
    """What an admin command says when the API call failed: a bot admin gets what to check (the
    address tried, the cause); a group's own admin the short sentence, and an unknown project by name."""
    if result.code == "unknown_project" and project:
        return t("unknown_project_named", project=project)
    return failure_text(result, ctx)


async def _list_projects(ctx: ChatContext, chat: str, t: Texts) -> str:
    endpoint = resolve_endpoint(ctx.adapter, ctx.group_id)
    projects, binding = await asyncio.gather(client.projects(endpoint), client.get_binding(endpoint, chat))
    if not projects.ok:
        return _failed(projects, ctx, t)
    data = projects.data or {}
    if not ctx.is_admin:  # the group's own admin: only what the operator opened to this group
        allowed = group_admin_projects(list(data.get("projects") or []), endpoint.move_projects)
        if not allowed:
            return render_move_not_allowed([], t)
        data = {**data, "projects": allowed}
    return render_projects(data, binding.data, t)


async def _group_admin_target(endpoint: Endpoint, ref: str, ctx: ChatContext, t: Texts) -> tuple[str | None, str]:
    """(the project id a group's own admin may move the group to, "") or (None, the reply)."""
    projects = await client.projects(endpoint)
    if not projects.ok:
        return None, _failed(projects, ctx, t)
    allowed = group_admin_projects(list((projects.data or {}).get("projects") or []), endpoint.move_projects)
    project = find_project(allowed, ref)
    if project is None:
        return None, render_move_not_allowed(allowed, t)
    return str(project["id"]), ""  # by id: the server moves to exactly the project that was checked


@move_cmd.handle()
async def handle_move(bot: Bot, event: Event, arp: Arparma) -> None:
    ctx = await chat_context(bot, event)
    if not _allowed(ctx.can_move, ctx, f"/{MOVE}"):  # the rule already said no; kept as the last word
        await move_cmd.finish()
    t = current_texts()
    if ctx.chat is None:
        await send_reply(t("in_group_only", command=t.names.cmd(t.names.move)))
        await move_cmd.finish()
    project = " ".join(str(part) for part in arp.all_matched_args.get("project") or ()).strip()
    home = arp.find("home")
    if arp.matched and not home and not project:  # /move alone: what can this group be linked to?
        await send_reply(await _list_projects(ctx, ctx.chat, t))
        await move_cmd.finish()
    if not arp.matched or home == bool(project):  # exactly one of <project> and --home
        await send_reply(t("move_usage"))
        await move_cmd.finish()

    endpoint = resolve_endpoint(ctx.adapter, ctx.group_id)
    target = "" if home else project
    if not ctx.is_admin and not home:  # --home only unlinks the group itself: always allowed
        checked, refusal = await _group_admin_target(endpoint, project, ctx, t)
        if checked is None:
            logger.info(f"{LOG_PREFIX} {ctx.who} may not move {ctx.chat} to {project!r} (not in its move_projects)")
            await send_reply(refusal)
            await move_cmd.finish()
        target = checked
    result = await client.move_chat(endpoint, ctx.chat, target)
    if not result.ok:
        await send_reply(_failed(result, ctx, t, project))
        await move_cmd.finish()
    forget_pending(ctx.chat)  # the admin's choice is on the server now; the config's is moot
    data = result.data or {}
    logger.info(
        f"{LOG_PREFIX} {ctx.who} moved {ctx.chat} to {project or 'Home'}: {data.get('moved_sessions', 0)} conversations"
    )
    await send_reply(render_move(data, t))
    await move_cmd.finish()


def _pair(result: ApiResult) -> tuple[dict | None, str]:
    return result.data, (admin_error(result) if not result.ok else "")


@status_cmd.handle()
async def handle_status(bot: Bot, event: Event) -> None:
    ctx = await chat_context(bot, event)
    if not _allowed(ctx.is_admin, ctx, f"/{STATUS}"):
        await status_cmd.finish()
    endpoint = resolve_endpoint(ctx.adapter, ctx.group_id)
    health, status = await asyncio.gather(client.health(endpoint), client.status(endpoint))
    binding = await client.get_binding(endpoint, ctx.chat) if ctx.chat and health.ok else None
    logger.info(f"{LOG_PREFIX} /recall-status by {ctx.who} via {endpoint.label} ({endpoint.url})")
    await send_reply(
        render_status(
            endpoint.url != default_endpoint().url,  # the group's entry names its own address
            _pair(health),
            _pair(status),
            _pair(binding) if binding else None,
            current_texts(),
        )
    )
    await status_cmd.finish()
