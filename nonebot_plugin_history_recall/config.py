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

from nonebot import get_plugin_config
from pydantic import BaseModel, Field


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
    history_recall_api_url: str = "http://127.0.0.1:8765"
    """Default recall API (``hermes recall serve``); ``/p/<profile>`` selects a Hermes profile."""

    history_recall_api_key: str = ""
    """Bearer key of the default recall API (its ``RECALL_API_KEY``); at least 16 characters."""

    history_recall_timeout: float = 15
    """Seconds per request to the recall API."""

    history_recall_groups: dict[str, GroupEndpoint] = Field(default_factory=dict)
    """Routing table keyed ``{adapter}:{group_id}`` (adapter normalised: ``onebotv11``, ``telegram``).
    Groups not listed use the default endpoint and start without a project."""

    history_recall_admin_users: set[str] = Field(default_factory=set)
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

    history_recall_forget_confirm_seconds: int = Field(default=60, ge=5, le=3600)
    """Seconds a ``/forget`` request waits for its ``/forget confirm`` before it lapses."""


plugin_config = get_plugin_config(Config)
