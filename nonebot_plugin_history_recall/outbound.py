"""How a result reply reaches the chat: plain text, or a merged forward on OneBot v11 groups.

A long list in a group window buries the conversation, so on OneBot v11 a reply longer than
``history_recall_forward_threshold`` goes out as one merged-forward card (one node per result),
like nonebot-plugin-hermes does for long answers. If the forward fails, and on every other
adapter, the reply is plain text trimmed to whole results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nonebot import logger
from nonebot.adapters import Bot

from .client import LOG_PREFIX
from .config import plugin_config
from .render import join_blocks, trim_blocks

# Fits Discord's 2000-character limit, Telegram's 4096 and QQ's.
PLAIN_TEXT_LIMIT = 1800
FORWARD_ADAPTER = "onebotv11"
FALLBACK_NICKNAME = "Bot"

_nicknames: dict[str, str] = {}


def forward_nodes(blocks: Sequence[str], name: str, uin: str) -> list[dict[str, Any]]:
    """OneBot v11 ``send_group_forward_msg`` nodes, one per block."""
    return [
        {"type": "node", "data": {"name": name, "uin": uin, "content": [{"type": "text", "data": {"text": b}}]}}
        for b in blocks
    ]


async def _nickname(bot: Bot) -> str:
    """The bot's own nickname for the forward nodes, asked once per account."""
    if bot.self_id not in _nicknames:
        try:
            info = await bot.call_api("get_login_info")
            name = str(info.get("nickname") or "") if isinstance(info, dict) else ""
        except Exception as exc:  # any adapter failure only costs the nice name
            logger.debug(f"{LOG_PREFIX} get_login_info failed: {exc!r}")
            name = ""
        _nicknames[bot.self_id] = name or FALLBACK_NICKNAME
    return _nicknames[bot.self_id]


async def _send_forward(bot: Bot, group_id: str, blocks: Sequence[str]) -> bool:
    nodes = forward_nodes(blocks, await _nickname(bot), bot.self_id)
    try:
        await bot.call_api("send_group_forward_msg", group_id=int(group_id), messages=nodes)
    except Exception as exc:  # ActionFailed, NetworkError, ...: fall back to text
        logger.warning(f"{LOG_PREFIX} merged forward to group {group_id} failed, sending text: {exc!r}")
        return False
    return True


async def deliver(bot: Bot, adapter: str, group_id: str | None, blocks: Sequence[str]) -> str | None:
    """Send long replies as a merged forward where possible.

    Returns the text the handler should still send, or None when the forward went out.
    """
    text = join_blocks(blocks)
    if len(text) <= plugin_config.history_recall_forward_threshold and len(text) <= PLAIN_TEXT_LIMIT:
        return text
    if (
        adapter == FORWARD_ADAPTER
        and group_id
        and len(text) > plugin_config.history_recall_forward_threshold
        and await _send_forward(bot, group_id, blocks)
    ):
        return None
    return trim_blocks(blocks, PLAIN_TEXT_LIMIT)
