"""The seal report: is every door between chats shut in this profile, and if not, which is open.

``{"closed": bool, "open_doors": [{"door", "why"}], "unverified": [str]}`` — part of ``GET
/status``, ``hermes recall status`` and the bot's ``/recall-status``. Computed from the profile's
files on every call (never cached from start-up), because the guard reads them on every tool call
too: what the report says is what the next chat turn gets. No path or URL in it: group admins
read it.

A door is open when a chat's agent can reach another chat's history: the guard is not loaded
(config.yaml does not parse, the plugin is not enabled — here or in a profile that
``gateway.profile_routes`` sends chats to), the policy is turned off, or the operator allowed a
tool the policy closes, or allowed by name a tool whose arguments the policy checks (by name the
guard runs it with any: ``text_to_speech`` could write anywhere). ``unverified`` names tool
sources this plugin has not read (other plugins, MCP servers, memory providers): their tools are
closed in chats unless allowed.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..host import features, held
from ..host.config import plugin_enabled
from ..host.profile import PLUGIN_KEY, named_profile, profiles_root
from . import tool_arguments, tool_policy
from .guard import config_or_error

log = logging.getLogger(__name__)

# Where chats come from: every platform Hermes serves except the operator's own (cli) and cron
# (the operator's scheduled jobs; their sessions are still treated as chats by the guard).
NOT_CHAT_PLATFORMS = frozenset({"cli", "cron"})
SANDBOXES = frozenset({"docker", "singularity", "modal", "daytona", "ssh"})


def offered_in_chats(config: Mapping[str, Any]) -> frozenset[str] | None:
    """Every tool name Hermes would offer on some chat platform with this config (Hermes' own
    resolver, ``hermes_cli.tools_config._get_platform_tools``), or None when it cannot tell."""
    try:
        from hermes_cli.tools_config import PLATFORMS, _get_platform_tools
        from toolsets import resolve_toolset

        names: set[str] = set()
        for platform in PLATFORMS:
            if platform in NOT_CHAT_PLATFORMS:
                continue
            for toolset in _get_platform_tools(dict(config), platform):
                names.update(resolve_toolset(toolset))
        return frozenset(names)
    except Exception:  # cannot tell: count every known tool as offered (the report errs open)
        log.warning("project-history-recall: could not resolve the chat platforms' toolsets", exc_info=True)
        return None


def _backend(config: Mapping[str, Any]) -> str:
    terminal = config.get("terminal")
    backend = terminal.get("backend") if isinstance(terminal, Mapping) else None
    return str(backend or "local").strip().lower()


def _why_open(tool: str, backend: str) -> str:
    why = tool_policy.why_closed(tool)
    if backend in SANDBOXES and tool in tool_policy.SANDBOXED_TOOLS:
        why = (f"it runs in the {backend} sandbox, which Hermes shares between every chat (one container "
               "for all sessions) and which holds the profile's caches of uploads, so it could read other "
               "chats' history")
    return why[3:] if why.startswith("it ") else why


def _doors_of(home: Path, *, routes: bool) -> tuple[list[dict[str, str]], list[str]]:
    config, error = config_or_error(home)
    if config is None:
        return [{"door": "config.yaml",
                 "why": f"{error}: Hermes would load no plugins in this profile, so no guard runs and "
                        "chats get every tool"}], []
    if not plugin_enabled(home):
        return [{"door": "plugin",
                 "why": f"{PLUGIN_KEY} is not enabled in this profile: Hermes would load no guard here, "
                        "so chats get every tool (add it to plugins.enabled)"}], []
    settings = tool_policy.settings_from(config)
    offered = offered_in_chats(config)
    backend = _backend(config)
    doors: list[dict[str, str]] = []
    unverified = [f"{problem} (ignored: the policy stays closed)" for problem in settings.problems]
    if not settings.sealed:
        known = [*tool_policy.CLOSED_IN_CHATS, *tool_arguments.ARGUMENTS]
        tools = sorted(t for t in (offered if offered is not None else known)
                       if not tool_policy.safe_in_chats(t) or tool_arguments.checked_arguments(t))
        doors.append({"door": "chat tool policy",
                      "why": "turned off (chat_tools.sealed: false): chats get every tool Hermes offers them"
                             + (f" ({', '.join(tools)})" if tools else "")})
    else:
        for tool in sorted(settings.allow):
            if offered is not None and tool not in offered and tool_policy.is_known(tool):
                continue  # no chat platform offers it: the door is bricked up by the toolsets
            if tool_policy.safe_in_chats(tool):
                # Allowed anyway, but by name the guard no longer checks its arguments.
                if checked := tool_arguments.checked_arguments(tool):
                    doors.append({"door": tool, "why": "allowed by name in chats (chat_tools.allow), so its "
                                  "arguments are not checked: " + "; ".join(f"{name}: {why}" for name, (_, why)
                                                                           in sorted(checked.items()))})
                continue
            doors.append({"door": tool, "why": f"allowed in chats (chat_tools.allow): {_why_open(tool, backend)}"})
    unverified += _unverified_sources(config) + held.restart_notes(home)
    if isolation_host(config):
        unverified.append(HOST_NOTE)
    if routes:
        for name in _routed_profiles(config):
            other = named_profile(profiles_root(home), name)
            if other is None or Path(other.home) == Path(home):
                continue
            if not Path(other.home).is_dir():
                doors.append({"door": f"profile {name}",
                              "why": "gateway.profile_routes sends chats to a profile that does not exist"})
                continue
            their_doors, their_unverified = _doors_of(other.home, routes=False)
            doors += [{"door": f"profile {name}: {d['door']}", "why": d["why"]} for d in their_doors]
            unverified += [f"profile {name}: {u}" for u in their_unverified]
    return doors, unverified


HOST_NOTE = ("plugins.isolation is 'host': the guard runs in a plugin host, where it cannot see what the running "
             "Hermes holds of allow_private_urls nor which hooks can change a tool's arguments, so the tools that "
             "fetch addresses and those whose arguments it checks are closed in chats")


def isolation_host(config: Mapping[str, Any]) -> bool:
    """Whether Hermes runs general plugins (this one) in a plugin host (newer Hermes' own rule)."""
    try:
        from hermes_cli import plugin_isolation
    except ImportError:  # 0.19: every plugin runs in Hermes' own process
        return False
    try:
        return plugin_isolation.isolation_mode(dict(config)) == plugin_isolation.ISOLATION_HOST
    except Exception:
        return False


def _unverified_sources(config: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    plugins = config.get("plugins")
    enabled = plugins.get("enabled") if isinstance(plugins, Mapping) else None
    for name in enabled if isinstance(enabled, list) else []:
        if isinstance(name, str) and name != PLUGIN_KEY:
            out.append(f"plugin {name}: its tools are closed in chats unless allowed; if it can change other "
                       "tools' arguments (a pre_tool_call hook, a tool_execution middleware), the tools whose "
                       "arguments the guard checks are closed in chats too")
    servers = config.get("mcp_servers")
    for name in servers if isinstance(servers, Mapping) else {}:
        out.append(f"MCP server {name}: its tools are closed in chats unless allowed")
    memory = config.get("memory")
    provider = memory.get("provider") if isinstance(memory, Mapping) else None
    if isinstance(provider, str) and provider.strip() and provider.strip().lower() not in ("builtin", "none"):
        out.append(f"memory provider {provider.strip()}: its tools are closed in chats; what it recalls into "
                   "a chat's prompt is not checked by this plugin")
    return out


def _routed_profiles(config: Mapping[str, Any]) -> list[str]:
    gateway = config.get("gateway")
    routes = gateway.get("profile_routes") if isinstance(gateway, Mapping) else None
    names = []
    for route in routes if isinstance(routes, list) else []:
        name = route.get("profile") if isinstance(route, Mapping) else None
        if isinstance(name, str) and name.strip() and name.strip() not in names:
            names.append(name.strip())
    return names


def _hermes_doors(home: Path) -> tuple[list[dict[str, str]], list[str]]:
    """What the running Hermes lacks of the seal's pieces (host/features.py). Without the
    ``pre_tool_call`` hook or its block directive the guard's verdict stops nothing: an open door.
    Any other gap (a SessionDB call, a state.db column) makes the guard block
    the restricted tools in every session: still closed, and the report says why tools are gone.
    Session rows in a backend recall cannot read leave the guard with the turn's hints only: a
    note says the CLI is treated as a chat then."""
    hooks = [g.sentence() for g in features.hook_gaps() if g.seal]
    doors = [{"door": "hermes", "why": f"this Hermes lacks {'; '.join(hooks)}: the guard cannot stop a tool, "
                                       "so chats get every tool"}] if hooks else []
    rest = [g for g in features.seal_gaps(home) if g not in hooks]
    notes = [f"this Hermes lacks {'; '.join(rest)}: tools closed in chats are closed in every session, "
             "the operator's included"] if rest else []
    if blind := features.guard_blind(home):
        notes.append(blind)
    return doors, notes


def seal_report(home: Path) -> dict[str, Any]:
    """The seal of the profile at ``home``, read fresh from its files and the running Hermes."""
    doors, unverified = _doors_of(Path(home), routes=True)
    hermes_doors, notes = _hermes_doors(Path(home))
    doors = hermes_doors + doors
    return {"closed": not doors, "open_doors": doors, "unverified": notes + unverified}


def render_seal(seal: Mapping[str, Any]) -> str:
    """``Seal: closed`` or ``Seal: OPEN — <door>: <why>; …`` (the CLI's line)."""
    if seal.get("closed"):
        return "Seal: closed"
    doors = "; ".join(f"{d.get('door')}: {d.get('why')}" for d in seal.get("open_doors") or [])
    return f"Seal: OPEN — {doors}"
