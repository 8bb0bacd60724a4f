"""History recall for NoneBot2 groups: search a group's Hermes project history from the chat.

``/recall <query>`` asks the recall API (``hermes recall serve``) for conversations of the
project the group is linked to; admins link groups with ``/move``. See ``docs/recall-api.md``.
"""

import asyncio

from nonebot import get_driver, logger, require

require("nonebot_plugin_alconna")
require("nonebot_plugin_localstore")
require("nonebot_plugin_uninfo")  # group owners and admins across adapters (handlers/common.py)

from nonebot.plugin import PluginMetadata, inherit_supported_adapters  # noqa: E402

from .adapters import STORE_ADAPTERS  # noqa: E402
from .config import Config, current_texts, plugin_config  # noqa: E402

# Also [project.urls] Homepage of packaging/nonebot/pyproject.toml (tests/packaging keeps them equal).
HOMEPAGE = "https://github.com/project-history-recall/project-history-recall"

# Every adapter alconna (which renders our replies) supports that the NoneBot store lists: the
# store rejects a name it does not list, and alconna's list can run ahead of the store's.
_INHERITED = inherit_supported_adapters("nonebot_plugin_alconna")  # None would mean "every adapter"
SUPPORTED_ADAPTERS = None if _INHERITED is None else _INHERITED & STORE_ADAPTERS

__plugin_meta__ = PluginMetadata(
    name="项目历史检索",
    description="在群里检索本群关联的 Hermes 项目的历史对话",
    # The help a group member gets from `/recall` alone, in the configured language: admin commands
    # are left out on purpose (non-admins should not learn that they exist; admins see them in `/recall`).
    usage=current_texts().help(is_admin=False),
    type="application",
    homepage=HOMEPAGE,
    config=Config,
    supported_adapters=SUPPORTED_ADAPTERS,
)

# Matchers register under this plugin only when imported after the metadata.
from . import handlers as handlers  # noqa: E402
from .bindings import configured_chats, push_initial_bindings  # noqa: E402
from .client import LOG_PREFIX  # noqa: E402
from .routing import validate_config  # noqa: E402

driver = get_driver()
# Holds the startup push so it is not garbage-collected while it runs.
_background: set[asyncio.Task[None]] = set()


@driver.on_startup
async def _startup() -> None:
    """All runtime side effects live here: importing the plugin does no I/O (nb-cli checks that)."""
    for problem in validate_config():
        logger.warning(f"{LOG_PREFIX} config problem: {problem}")
    chats = configured_chats()
    logger.info(
        f"{LOG_PREFIX} default endpoint {plugin_config.history_recall_api_url}, "
        f"{len(plugin_config.history_recall_groups)} routed groups, {len(chats)} initial bindings, "
        f"{len(plugin_config.history_recall_admin_users)} admins"
    )
    if chats:
        # In the background: a recall API that is down must not hold up the bot's startup.
        task = asyncio.create_task(push_initial_bindings())
        _background.add(task)
        task.add_done_callback(_background.discard)
