"""Plugin settings, read once through ``get_plugin_config``.

Every field is named ``history_recall_<thing>``; the env var is the upper-cased name
(``HISTORY_RECALL_API_URL``). Dict, set and model fields are JSON in the environment, e.g.::

    HISTORY_RECALL_GROUPS='{"onebotv11:123456": {"project": "hermes-dev"}}'
    HISTORY_RECALL_ADMIN_USERS='["onebotv11:10001", "telegram:7055555877"]'
    HISTORY_RECALL_COOLDOWN=10

Other modules import ``plugin_config`` and read attributes at call time, so a value patched at
runtime (or in a test) is honoured on the next command without any cache to invalidate.
"""

from __future__ import annotations

import json
import re
from typing import Any

from nonebot import get_driver, get_plugin_config, logger
from pydantic import BaseModel, Field, field_validator

from .texts import DEFAULT_LANGUAGE, LANGUAGES, Names, Texts, texts_for

# A command name alconna can match after the command start: no spaces, not empty.
COMMAND_NAME = re.compile(r"^[^\s/]{1,32}$")


class GroupEndpoint(BaseModel):
    """One row of the per-group routing table. Empty values inherit the global setting."""

    url: str = ""
    """Recall API base URL for this group, e.g. ``http://127.0.0.1:8765/p/team-a``. Empty = global."""
    key: str = ""
    """Bearer key for that URL. Empty = ``history_recall_api_key``."""
    timeout: float = 0
    """Seconds per request. 0 = ``history_recall_timeout``."""
    project: str = ""
    """Initial project (id or slug) of the group. Pushed once with ``only_if_unset``: a later
    admin ``/move`` is stored server side and wins, also across bot restarts."""
    move_projects: list[str] = Field(default_factory=list)
    """Projects (ids or slugs) this group's own owner and admins may ``/move`` it to, when
    ``history_recall_group_admins_can_move`` is on; ``/move`` alone shows them only these. Empty =
    the group's admins cannot move it. Bot admins are not limited by it."""


class Config(BaseModel):
    history_recall_language: str = DEFAULT_LANGUAGE
    """What the bot says in groups: ``zh`` (default) or ``en``; one language for every reply."""

    history_recall_api_url: str = "http://127.0.0.1:8765"
    """Default recall API (``hermes recall serve``); ``/p/<profile>`` selects a Hermes profile."""

    history_recall_api_key: str = ""
    """Bearer key of the default recall API (its ``RECALL_API_KEY``); at least 16 characters."""

    history_recall_timeout: float = 15
    """Seconds per request to the recall API."""

    history_recall_groups: dict[str, GroupEndpoint] = Field(default_factory=dict)
    """Routing table keyed ``{adapter}:{group_id}`` (adapter normalised: ``onebotv11``, ``telegram``).
    Groups not listed use the default endpoint and start without a project."""

    # "| str": NoneBot lets a value that is not JSON through only for a union-typed field; then
    # _list_or_words reads it (with a warning) instead of NoneBot's SettingsError traceback.
    history_recall_admin_users: set[str] | str = Field(default_factory=set)
    """``{adapter}:{user_id}`` entries allowed to use ``/move`` and ``/recall-status``.
    NoneBot's ``SUPERUSERS`` always count as admins too. Empty = only superusers."""

    history_recall_group_admins_can_move: bool = False
    """Opt-in: a group's owner and admins may use ``/move`` in that group (OneBot v11
    ``sender.role``; adapters that do not report a role never match), but only to the projects
    its routing entry lists in ``move_projects`` (and ``--home``). Off = bot admins only."""

    history_recall_cooldown: float = Field(default=10, ge=0)
    """Seconds one user waits between two ``/recall`` searches. 0 = off; admins are exempt."""

    history_recall_forward_threshold: int = Field(default=1000, ge=0)
    """Replies longer than this many characters go out as a forward card where the adapter has
    one (OneBot v11, Satori, Milky, Red, Kritor, Mirai); elsewhere they are trimmed to whole results."""

    history_recall_move_command: str = "move"
    """Name of the admin ``/move`` command, e.g. ``recall-move`` when another plugin owns ``/move``."""

    history_recall_move_aliases: set[str] | str = Field(default_factory=set)
    """More names for it (alconna aliases), e.g. ``["绑定项目"]``."""

    history_recall_status_command: str = "recall-status"
    """Name of the admin ``/recall-status`` command."""

    history_recall_status_aliases: set[str] | str = Field(default_factory=set)
    """More names for it."""

    @field_validator("history_recall_admin_users", "history_recall_move_aliases", "history_recall_status_aliases",
                     mode="before")
    @classmethod
    def _list_or_words(cls, value: Any, info: Any) -> Any:
        """A JSON list as documented; a plain ``a,b`` or ``a b`` (a common slip) is read as its
        words with a startup warning, instead of a traceback that takes the whole plugin down."""
        if not isinstance(value, str):
            return set(value) if isinstance(value, list | tuple) else value
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return set(parsed)
        words = [w for w in re.split(r"[,\s]+", value.strip()) if w]
        # The fix is the operator's own words as JSON (never a made-up id they might paste as is).
        logger.warning(
            f"[history-recall] {info.field_name.upper()} is not a JSON list; read as {words!r}. "
            f"Write it as JSON: {info.field_name.upper()}='{json.dumps(words, ensure_ascii=False)}'"
        )
        return set(words)

    @field_validator("history_recall_language", mode="before")
    @classmethod
    def _language(cls, value: Any) -> str:
        """``zh``/``en``; ``zh-CN``, ``en_US`` and upper case read as their language."""
        code = str(value or DEFAULT_LANGUAGE).strip().lower().replace("_", "-").split("-")[0]
        if code not in LANGUAGES:
            raise ValueError(f"HISTORY_RECALL_LANGUAGE must be one of {', '.join(LANGUAGES)}, not {value!r}")
        return code

    @field_validator("history_recall_move_command", "history_recall_status_command")
    @classmethod
    def _command_name(cls, value: str) -> str:
        value = value.strip().lstrip("/")
        if not COMMAND_NAME.match(value):
            raise ValueError("a command name is 1-32 characters without spaces or '/'")
        return value
    history_recall_forget_confirm_seconds: int = Field(default=60, ge=5, le=3600)
    """Seconds a ``/forget`` request waits for its ``/forget confirm`` before it lapses."""


plugin_config = get_plugin_config(Config)


def command_names() -> Names:
    """The command names every text shows: the operator's names, after NoneBot's command start
    ("/" when configured, else the first one)."""
    starts = sorted(get_driver().config.command_start)
    prefix = "/" if "/" in starts or not starts else starts[0]
    return Names(prefix, plugin_config.history_recall_move_command, plugin_config.history_recall_status_command)


def current_texts() -> Texts:
    """Every word the bot says, in the configured language with the operator's command names."""
    return texts_for(plugin_config.history_recall_language, command_names())
