"""``/forget`` (with a confirmation step), ``/recall-off`` / ``/recall-on`` and ``/recall-optout`` /
``/recall-optin``.

Who may do what (the API keeps every scope inside the group; the bot decides who asks for which):

- everyone: ``/forget`` their own turns in this group — all of them, ``--after/--before`` like
  ``/recall``, or ``--result N`` of the group's last ``/recall`` (the API refuses a result that is
  not the asker's own); ``/recall-optout`` / ``/recall-optin`` for their own future turns;
- admins (the same people who may ``/move`` this group): ``/forget --session <id>``,
  ``/forget --all --before <date>``, ``/forget --member <user id>``, ``/recall-off`` / ``/recall-on``.
  A non-admin asking for an admin form of ``/forget`` is told it is for admins; ``/recall-off`` and
  ``/recall-on`` stay silent for others, like every admin command.

Every ``/forget`` first asks the API for a dry run and shows the counts; only ``/forget confirm``
from the same person in the same group within ``history_recall_forget_confirm_seconds`` applies it.
A pending request lives in memory only: a bot restart drops it (nothing was forgotten yet).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from nonebot import logger
from nonebot.adapters import Bot, Event
from nonebot_plugin_alconna import Alconna, Args, Arparma, CommandMeta, Option, on_alconna

from .. import client, last_results
from ..client import LOG_PREFIX
from ..config import current_texts, plugin_config
from ..outbound import send_reply
from ..render import forget_done, forget_preview, optout_done, recall_switched
from ..routing import resolve_endpoint
from ..texts import Texts
from .common import COMMAND_PRIORITY, ChatContext, chat_context, failure_text

_COMMAND = {
    "use_cmd_start": True,
    "skip_for_unmatch": False,
    "auto_send_output": False,
    "priority": COMMAND_PRIORITY,
    "block": True,
}

forget_cmd = on_alconna(
    Alconna(
        "forget",
        Args["action?", str],
        Option("--after", Args["after", str]),
        Option("--before", Args["before", str]),
        Option("--result|-r", Args["result", str]),
        Option("--session", Args["session", str]),
        Option("--member", Args["member", str]),
        Option("--all"),
        meta=CommandMeta(description="take your own words in this group out of recall"),
    ),
    **_COMMAND,
)
recall_off_cmd = on_alconna(Alconna("recall-off", meta=CommandMeta(hide=True)), **_COMMAND)
recall_on_cmd = on_alconna(Alconna("recall-on", meta=CommandMeta(hide=True)), **_COMMAND)
optout_cmd = on_alconna(Alconna("recall-optout", meta=CommandMeta(description="keep my future turns out")), **_COMMAND)
optin_cmd = on_alconna(Alconna("recall-optin", meta=CommandMeta(description="let my turns count again")), **_COMMAND)


@dataclass(frozen=True)
class Pending:
    request: dict[str, Any]
    own: bool
    deadline: float


_pending: dict[tuple[str, str], Pending] = {}


def forget_pending_requests() -> None:
    """Drop every waiting confirmation (tests)."""
    _pending.clear()


def _request(arp: Arparma, ctx: ChatContext, chat: str, t: Texts) -> dict[str, Any] | str:
    """The API request (``client.forget`` keywords) or the sentence to answer instead."""
    args = arp.all_matched_args
    after, before = str(args.get("after", "")).strip(), str(args.get("before", "")).strip()
    session, member = str(args.get("session", "")).strip(), str(args.get("member", "")).strip()
    every = arp.find("all")
    admin_forms = [bool(session), bool(member), every]
    if any(admin_forms):
        if not ctx.can_move:
            return t("forget_admin_only")
        if sum(admin_forms) > 1 or ("result" in args) or (session and (after or before)):
            return t("forget_usage")
        if session:
            return {"scope": "session", "session_id": session}
        if member:
            return {"scope": "member", "user": member, "after": after, "before": before}
        if not (after or before):
            return t("forget_usage")
        return {"scope": "chat", "after": after, "before": before}
    if "result" in args:
        raw = str(args["result"]).strip()
        hits = last_results.recall_hits(chat)
        if after or before or not raw.isdigit():
            return t("forget_usage")
        if not 1 <= int(raw) <= len(hits):
            return t.open_unavailable(len(hits))
        return {"scope": "member", "user": ctx.user_id, "message_id": hits[int(raw) - 1].message_id}
    return {"scope": "member", "user": ctx.user_id, "after": after, "before": before}


@forget_cmd.handle()
async def handle_forget(bot: Bot, event: Event, arp: Arparma) -> None:
    ctx = await chat_context(bot, event)
    t = current_texts()
    if ctx.chat is None:
        await send_reply(t("in_group_only", command=f"{t.names.prefix}forget"))
        await forget_cmd.finish()
    if not arp.matched:
        await send_reply(t("forget_usage"))
        await forget_cmd.finish()
    action = str(arp.all_matched_args.get("action") or "").strip().lower()
    key = (ctx.chat, ctx.user_id)
    endpoint = resolve_endpoint(ctx.adapter, ctx.group_id)
    if action in ("confirm", "cancel"):
        pending = _pending.pop(key, None)
        if pending is None or pending.deadline < time.monotonic():
            await send_reply(t("forget_nothing_pending"))
        elif action == "cancel":
            await send_reply(t("forget_cancelled"))
        else:
            result = await client.forget(endpoint, ctx.chat, actor=ctx.who, apply=True, **pending.request)
            if result.ok:
                data = result.data or {}
                logger.info(f"{LOG_PREFIX} /forget by {ctx.who} in {ctx.chat}: {data.get('messages')} turns, "
                            f"receipt {data.get('receipt')}")
            await send_reply(forget_done(result.data or {}, pending.own, t) if result.ok else failure_text(result, ctx))
        await forget_cmd.finish()
    if action:
        await send_reply(t("forget_usage"))
        await forget_cmd.finish()
    request = _request(arp, ctx, ctx.chat, t)
    if isinstance(request, str):
        await send_reply(request)
        await forget_cmd.finish()
    own = request["scope"] == "member" and request.get("user") == ctx.user_id
    result = await client.forget(endpoint, ctx.chat, actor=ctx.who, apply=False, **request)
    if not result.ok:
        after, before = request.get("after") or "", request.get("before") or ""
        dated = result.code == "bad_request" and (after or before)
        await send_reply(t.bad_dates(after, before, result.cause) if dated else failure_text(result, ctx))
        await forget_cmd.finish()
    data = result.data or {}
    seconds = plugin_config.history_recall_forget_confirm_seconds
    if data.get("messages"):
        _pending[key] = Pending(request, own, time.monotonic() + seconds)
    await send_reply(forget_preview(data, own, seconds, t))
    await forget_cmd.finish()


async def _switch(bot: Bot, event: Event, enabled: bool, matcher) -> None:
    ctx = await chat_context(bot, event)
    if not ctx.can_move or ctx.chat is None:
        logger.debug(f"{LOG_PREFIX} /recall-{'on' if enabled else 'off'} silent skip for {ctx.who}")
        await matcher.finish()
    result = await client.set_recall(resolve_endpoint(ctx.adapter, ctx.group_id), ctx.chat, enabled, ctx.who)
    if result.ok:
        logger.info(f"{LOG_PREFIX} {ctx.who} switched recall {'on' if enabled else 'off'} in {ctx.chat}")
    await send_reply(recall_switched(result.data or {}, current_texts()) if result.ok else failure_text(result, ctx))
    await matcher.finish()


@recall_off_cmd.handle()
async def handle_recall_off(bot: Bot, event: Event) -> None:
    await _switch(bot, event, False, recall_off_cmd)


@recall_on_cmd.handle()
async def handle_recall_on(bot: Bot, event: Event) -> None:
    await _switch(bot, event, True, recall_on_cmd)


async def _optout(bot: Bot, event: Event, opted_out: bool, matcher) -> None:
    ctx = await chat_context(bot, event)
    t = current_texts()
    if ctx.chat is None or not ctx.user_id:
        await send_reply(t("in_group_only", command=f"{t.names.prefix}recall-opt{'out' if opted_out else 'in'}"))
        await matcher.finish()
    endpoint = resolve_endpoint(ctx.adapter, ctx.group_id)
    result = await client.set_optout(endpoint, ctx.chat, ctx.user_id, opted_out, ctx.who)
    if result.code == "not_attributable":  # a shared conversation: the member's turns cannot be told apart
        await send_reply(t("optout_not_attributable"))
        await matcher.finish()
    await send_reply(optout_done(result.data or {}, t) if result.ok else result.error)
    await matcher.finish()


@optout_cmd.handle()
async def handle_optout(bot: Bot, event: Event) -> None:
    await _optout(bot, event, True, optout_cmd)


@optin_cmd.handle()
async def handle_optin(bot: Bot, event: Event) -> None:
    await _optout(bot, event, False, optin_cmd)
