"""Who is asking, and from which chat: everything the handlers derive from one event."""

from __future__ import annotations

from dataclasses import dataclass

from nonebot import logger
from nonebot.adapters import Bot, Event
from nonebot.permission import SUPERUSER
from nonebot_plugin_alconna.uniseg import SerializeFailed, get_target
from nonebot_plugin_uninfo import get_session

from ..client import LOG_PREFIX, ApiResult, admin_error
from ..config import plugin_config
from ..routing import chat_key, is_admin, normalize_adapter

# Commands share one priority; block=True keeps "/recall …" away from chat handlers further down
# (nonebot-plugin-hermes answers ordinary messages at priority 98).
COMMAND_PRIORITY = 10


# A group's owner and admins, in nonebot-plugin-uninfo's role ids across adapters (its own ADMIN()
# permission: OneBot v11 owner/admin, Telegram creator/administrator, Discord, Kook, QQ guilds, …).
GROUP_ADMIN_ROLES = frozenset({"OWNER", "ADMINISTRATOR"})


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


async def is_group_admin(bot: Bot, event: Event) -> bool:
    """The sender is an owner or admin of this group, as nonebot-plugin-uninfo reports it for the
    adapter (on OneBot v11 from ``sender.role``; uninfo caches a member for ``UNINFO_CACHE_EXPIRE``
    seconds). An adapter uninfo cannot read, or a lookup that fails, counts as no role: fail closed."""
    try:
        session = await get_session(bot, event)
    except Exception as exc:  # an adapter's API call failing (timeout, network): no role, say why
        logger.warning(f"{LOG_PREFIX} group role of {event.get_user_id()} unknown ({exc!r}); treated as a member")
        return False
    member = session.member if session is not None else None
    return member is not None and any(role.id in GROUP_ADMIN_ROLES for role in member.roles)


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
    # Asked only when it matters: the opt-in is on and the sender is not a bot admin already (on
    # OneBot v11 uninfo asks the client for the group and the member once per cache period).
    group_admin = (
        plugin_config.history_recall_group_admins_can_move
        and group_id is not None
        and not admin
        and await is_group_admin(bot, event)
    )
    return ChatContext(adapter, group_id, user_id, is_admin=admin, is_group_admin=group_admin)


def failure_text(result: ApiResult, ctx: ChatContext) -> str:
    """A failed API call as the asker should read it: a bot admin gets what to check (the address
    tried, the cause; ``client.admin_error``), everyone else the one short sentence."""
    return admin_error(result) if ctx.is_admin else result.error
