"""Who is asking, and from which chat: everything the handlers derive from one event."""

from __future__ import annotations

from dataclasses import dataclass

from nonebot.adapters import Bot, Event
from nonebot.permission import SUPERUSER
from nonebot_plugin_alconna.uniseg import SerializeFailed, get_target

from ..client import ApiResult, admin_error
from ..config import plugin_config
from ..routing import chat_key, is_admin, normalize_adapter

# Commands share one priority; block=True keeps "/recall …" away from chat handlers further down
# (nonebot-plugin-hermes answers ordinary messages at priority 98).
COMMAND_PRIORITY = 10


# Group roles that may /move when history_recall_group_admins_can_move is on (OneBot v11 sender.role).
GROUP_ADMIN_ROLES = frozenset({"owner", "admin"})


@dataclass(frozen=True)
class ChatContext:
    adapter: str
    """Normalised adapter name, e.g. ``onebotv11``."""
    group_id: str | None
    """None in private chats."""
    user_id: str
    is_admin: bool = False
    """A bot admin: listed in ``history_recall_admin_users`` or one of NoneBot's ``SUPERUSERS``."""
    is_group_admin: bool = False
    """Owner or admin of this group *and* the opt-in ``history_recall_group_admins_can_move`` is on."""

    @property
    def chat(self) -> str | None:
        """``{adapter}:{group_id}``, the name the recall API knows the group by."""
        return chat_key(self.adapter, self.group_id) if self.group_id else None

    @property
    def can_move(self) -> bool:
        return self.is_admin or self.is_group_admin

    @property
    def who(self) -> str:
        return f"{self.adapter}:{self.user_id or '?'}"


def group_role(adapter: str, event: Event) -> str:
    """The sender's role in the group where the adapter reports one (OneBot v11), else ``""``.

    Other adapters (and alconna) expose no portable role, so their group admins never match.
    """
    if adapter != "onebotv11":
        return ""
    return str(getattr(getattr(event, "sender", None), "role", None) or "")


async def chat_context(bot: Bot, event: Event) -> ChatContext:
    try:
        user_id = event.get_user_id()
    except ValueError:
        user_id = ""
    try:
        target = get_target(event, bot)
    except (SerializeFailed, NotImplementedError):  # no chat alconna can name: not a group
        adapter, group_id = normalize_adapter(bot.adapter.get_name()), None
    else:
        adapter = normalize_adapter(str(getattr(target.adapter, "value", target.adapter or bot.adapter.get_name())))
        group_id = None if target.private else str(target.id)
    admin = is_admin(adapter, user_id) or (bool(user_id) and await SUPERUSER(bot, event))
    group_admin = (
        plugin_config.history_recall_group_admins_can_move
        and group_id is not None
        and group_role(adapter, event) in GROUP_ADMIN_ROLES
    )
    return ChatContext(adapter, group_id, user_id, is_admin=admin, is_group_admin=group_admin)


def failure_text(result: ApiResult, ctx: ChatContext) -> str:
    """A failed API call as the asker should read it: a bot admin gets what to check (the address
    tried, the cause; ``client.admin_error``), everyone else the one short sentence."""
    return admin_error(result) if ctx.is_admin else result.error
