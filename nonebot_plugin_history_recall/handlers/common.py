"""Who is asking, and from which chat: everything the handlers derive from one event."""

from __future__ import annotations

from dataclasses import dataclass

from nonebot import get_driver
from nonebot.adapters import Bot, Event
from nonebot_plugin_alconna.uniseg import SerializeFailed, get_target

from ..routing import chat_key, is_admin, normalize_adapter

# Commands share one priority; block=True keeps "/recall …" away from chat handlers further down
# (nonebot-plugin-hermes answers ordinary messages at priority 98).
COMMAND_PRIORITY = 10


@dataclass(frozen=True)
class ChatContext:
    adapter: str
    """Normalised adapter name, e.g. ``onebotv11``."""
    group_id: str | None
    """None in private chats."""
    user_id: str

    @property
    def chat(self) -> str | None:
        """``{adapter}:{group_id}``, the name the recall API knows the group by."""
        return chat_key(self.adapter, self.group_id) if self.group_id else None

    @property
    def is_admin(self) -> bool:
        return is_admin(self.adapter, self.user_id)

    @property
    def who(self) -> str:
        return f"{self.adapter}:{self.user_id or '?'}"


def chat_context(bot: Bot, event: Event) -> ChatContext:
    try:
        user_id = event.get_user_id()
    except ValueError:
        user_id = ""
    try:
        target = get_target(event, bot)
    except (SerializeFailed, NotImplementedError):  # no chat alconna can name: not a group
        return ChatContext(normalize_adapter(bot.adapter.get_name()), None, user_id)
    adapter = normalize_adapter(str(getattr(target.adapter, "value", target.adapter or bot.adapter.get_name())))
    return ChatContext(adapter, None if target.private else str(target.id), user_id)


def command_prefix() -> str:
    """The command start to show in help texts: "/" when configured, else the first one."""
    starts = sorted(get_driver().config.command_start)
    return "/" if "/" in starts or not starts else starts[0]
