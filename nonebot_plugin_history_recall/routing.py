"""Which recall API a group talks to, and what is wrong with the routing config.

Pure: no I/O, no alconna. ``resolve_endpoint`` reads ``plugin_config`` on every call and caches
nothing, so routing always matches the current config (including values patched in tests).
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import plugin_config

# The recall API checks the bearer key like Hermes' API server; shorter keys are guessable.
MIN_KEY_LENGTH = 16
DEFAULT_LABEL = "default"


@dataclass(frozen=True)
class Endpoint:
    url: str
    """Base URL without a trailing slash."""
    key: str
    timeout: float
    label: str
    """``{adapter}:{group_id}`` of the matching routing entry, or ``"default"``."""
    initial_project: str = ""
    move_projects: tuple[str, ...] = ()
    """Projects (ids or slugs) the group's own admins may move it to (``GroupEndpoint.move_projects``)."""


def normalize_adapter(name: str | None) -> str:
    """``"OneBot V11"`` → ``"onebotv11"``, the same rule as nonebot-plugin-hermes' key names."""
    return (name or "").lower().replace(" ", "").replace(".", "") or "unknown"


def chat_key(adapter: str | None, group_id: str) -> str:
    """The chat name the recall API knows a group by: ``{adapter}:{group_id}``."""
    return f"{normalize_adapter(adapter)}:{group_id}"


def default_endpoint() -> Endpoint:
    return Endpoint(
        url=plugin_config.history_recall_api_url.rstrip("/"),
        key=plugin_config.history_recall_api_key,
        timeout=plugin_config.history_recall_timeout,
        label=DEFAULT_LABEL,
    )


def resolve_endpoint(adapter: str | None, group_id: str | None) -> Endpoint:
    """The endpoint of a group; unlisted groups (and private chats) get the default one."""
    base = default_endpoint()
    if not group_id:
        return base
    label = chat_key(adapter, group_id)
    entry = plugin_config.history_recall_groups.get(label)
    if entry is None:
        return base
    return Endpoint(
        url=(entry.url or base.url).rstrip("/"),
        key=entry.key or base.key,
        timeout=entry.timeout or base.timeout,
        label=label,
        initial_project=entry.project.strip(),
        move_projects=tuple(p.strip() for p in entry.move_projects if p.strip()),
    )


def find_project(projects: list[dict], ref: str) -> dict | None:
    """The recall API's own lookup (``hermes_db.find_project``): id, then lower-cased slug, then the
    name as ``/move`` lists it (case-insensitive; a name two projects share matches neither)."""
    by_id = next((p for p in projects if p.get("id") == ref), None)
    wanted = " ".join(ref.split()).lower()
    by_slug = next((p for p in projects if p.get("slug") == wanted), None)
    named = [p for p in projects if " ".join(str(p.get("name") or "").split()).lower() == wanted]
    return by_id or by_slug or (named[0] if len(named) == 1 else None)


def group_admin_projects(projects: list[dict], allowed: tuple[str, ...]) -> list[dict]:
    """The projects of ``projects`` a group's own admins may move it to: those ``allowed`` names."""
    ids = {p["id"] for p in (find_project(projects, ref) for ref in allowed) if p is not None}
    return [p for p in projects if p.get("id") in ids]


def is_admin(adapter: str | None, user_id: str) -> bool:
    return bool(user_id) and f"{normalize_adapter(adapter)}:{user_id}" in plugin_config.history_recall_admin_users


def key_problem(where: str, key_name: str, adapter_key: str) -> str | None:
    """Why ``adapter_key`` (``{adapter}:{id}``) can never match, or None."""
    adapter, sep, ident = adapter_key.partition(":")
    if not sep:
        return f"{where} {adapter_key!r} has no ':'; use '{{adapter}}:{{{key_name}}}', e.g. 'onebotv11:123'"
    if normalize_adapter(adapter) != adapter:
        return (
            f"{where} {adapter_key!r} would never match: write the adapter as "
            f"{normalize_adapter(adapter)!r} (lower case, no spaces or dots)"
        )
    if not ident.strip():
        return f"{where} {adapter_key!r} has an empty {key_name}"
    return None


def _url_problem(where: str, url: str) -> str | None:
    if url.startswith(("http://", "https://")):
        return None
    return f"{where}: url {url!r} is not http(s)://"


def _key_length_problem(where: str, key: str) -> str | None:
    if not key:
        return f"{where}: no API key; the recall API will answer 401"
    if len(key) < MIN_KEY_LENGTH:
        return f"{where}: API key is shorter than {MIN_KEY_LENGTH} characters"
    return None


def _entry_problems(label: str, url: str, key: str, timeout: float, move_projects: list[str] = ()) -> list[str]:
    """Problems in what a routing entry sets itself; inherited values are checked once, globally."""
    where = f"HISTORY_RECALL_GROUPS[{label!r}]"
    problems = [
        key_problem("HISTORY_RECALL_GROUPS key", "group_id", label),
        _url_problem(where, url) if url else None,
        _key_length_problem(where, key) if key else None,
        f"{where}: timeout {timeout} must not be negative (0 = inherit)" if timeout < 0 else None,
        f"{where}: move_projects has an empty entry; list project ids or slugs" if any(
            not p.strip() for p in move_projects) else None,
        (f"{where}: move_projects is not used while HISTORY_RECALL_GROUP_ADMINS_CAN_MOVE is false "
         "(only bot admins move groups)") if move_projects and not plugin_config.history_recall_group_admins_can_move
        else None,
    ]
    return [p for p in problems if p]


def validate_config() -> list[str]:
    """Human-readable problems in the routing table and admin list; empty when all is well."""
    base = default_endpoint()
    problems = [
        _url_problem("HISTORY_RECALL_API_URL", base.url),
        _key_length_problem("HISTORY_RECALL_API_KEY", base.key),
        f"HISTORY_RECALL_TIMEOUT: {base.timeout} must be greater than 0" if base.timeout <= 0 else None,
    ]
    for label, entry in plugin_config.history_recall_groups.items():
        problems.extend(_entry_problems(label, entry.url, entry.key, entry.timeout, entry.move_projects))
    if plugin_config.history_recall_group_admins_can_move and not any(
            e.move_projects for e in plugin_config.history_recall_groups.values()):
        problems.append("HISTORY_RECALL_GROUP_ADMINS_CAN_MOVE is true but no HISTORY_RECALL_GROUPS entry lists "
                        "move_projects: group admins can move no group (list the projects each group's admins "
                        "may choose, e.g. {\"onebotv11:123\": {\"move_projects\": [\"hermes-dev\"]}})")
    for admin in sorted(plugin_config.history_recall_admin_users):
        problems.append(key_problem("HISTORY_RECALL_ADMIN_USERS entry", "user_id", admin))
    return [p for p in problems if p]
