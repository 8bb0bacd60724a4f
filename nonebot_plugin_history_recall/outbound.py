"""How a reply reaches the chat: quoting the asker, and long lists as a forward card.

Every reply quotes the message that asked (alconna's ``Reply`` segment; adapters without quotes
get the text alone), so in a busy group it is clear whose ``/recall`` it answers. A reply longer
than ``history_recall_forward_threshold`` in a group goes out as one forward card through alconna's
cross-adapter ``Reference``/``CustomNode`` (one node per block) on every adapter that has forwards
(OneBot v11, Satori, Milky, Red, Kritor, Mirai). Where the adapter has none, or the forward fails,
the reply is plain text trimmed to whole blocks.
"""

from __future__ import annotations

from collections.abc import Sequence

from nonebot import get_driver, logger
from nonebot.adapters import Bot
from nonebot_plugin_alconna.uniseg import CustomNode, FallbackStrategy, Reference, SerializeFailed, UniMessage

from .client import LOG_PREFIX
from .config import plugin_config
from .render import ZH, join_blocks, trim_blocks
from .texts import Texts

# Fits Discord's 2000-character limit, Telegram's 4096 and QQ's.
PLAIN_TEXT_LIMIT = 1800


def forward_name(t: Texts) -> str:
    """The sender name on forward nodes: the bot's configured ``NICKNAME``, else a fixed label."""
    names = sorted(get_driver().config.nickname)
    return names[0] if names else t("forward_name")


async def send_reply(text: str) -> None:
    """Send ``text`` to the current event's chat, quoting the asker's message."""
    await UniMessage.text(text).send(reply_to=True)


async def _send_forward(bot: Bot, blocks: Sequence[str], t: Texts) -> bool:
    nodes = [CustomNode(uid=str(bot.self_id), name=forward_name(t), content=block) for block in blocks]
    try:
        # forbid: an adapter without forwards must fail here, not flatten the card into one long text.
        await UniMessage(Reference(nodes=nodes)).send(fallback=FallbackStrategy.forbid)
    except SerializeFailed:
        logger.debug(f"{LOG_PREFIX} {bot.adapter.get_name()} has no forward messages; sending trimmed text")
        return False
    except Exception as exc:  # ActionFailed, NetworkError, ...: the text still gets through
        logger.warning(f"{LOG_PREFIX} forward message failed, sending text: {exc!r}")
        return False
    return True


async def send_blocks(bot: Bot, blocks: Sequence[str], in_group: bool, t: Texts = ZH) -> None:
    """Short replies as quoted text; long ones as a forward card in groups, else trimmed text."""
    text = join_blocks(blocks)
    threshold = plugin_config.history_recall_forward_threshold
    if len(text) <= threshold and len(text) <= PLAIN_TEXT_LIMIT:
        await send_reply(text)
        return
    if in_group and len(text) > threshold and await _send_forward(bot, blocks, t):
        return
    await send_reply(trim_blocks(blocks, PLAIN_TEXT_LIMIT, t))
