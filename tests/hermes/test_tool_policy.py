"""The chat tool policy as a pure decision (scope/tool_policy.py): closed by default, an allow-list."""

from __future__ import annotations

import pytest

from hermes_side.scope import tool_arguments, tool_policy
from hermes_side.scope.tool_policy import Settings, decide, settings_from

DEFAULT = Settings()
DISK_TOOLS = ["terminal", "process", "read_file", "write_file", "patch", "search_files", "execute_code"]
SHARED_STORES = ["session_search", "memory", "skill_manage", "delegate_task", "cronjob", "browser_navigate",
                 "browser_console", "browser_cdp", "kanban_create", "computer_use", "read_terminal"]


def cfg(**section) -> dict:
    return {"plugins": {"enabled": ["project-history-recall"], "project-history-recall": section}}


@pytest.mark.parametrize("tool", DISK_TOOLS + SHARED_STORES)
def test_tools_that_reach_the_disk_or_shared_stores_are_closed_with_one_sentence(tool):
    message = decide(tool, {}, DEFAULT)

    assert message is not None and message.startswith(f"{tool} is not available in group and private chats: ")
    assert message.count(". ") == 0 and message.endswith(".")  # one sentence, no traceback


@pytest.mark.parametrize("tool", ["terminal", "read_file", "search_files", "execute_code", "session_search"])
def test_the_sentence_says_it_could_read_other_chats_history(tool):
    assert "could read other chats' history" in decide(tool, {}, DEFAULT)


@pytest.mark.parametrize("tool", ["web_search", "web_extract", "image_generate", "todo", "todo_list", "clarify",
                                  "skills_list",
                                  "skill_view", "text_to_speech", "project_history_search",
                                  "project_history_open", "project_session_move"])
def test_known_safe_tools_run(tool):
    assert decide(tool, {}, DEFAULT) is None


@pytest.mark.parametrize("tool", ["mcp_github_search_code", "honcho_search", "some_plugin_tool", "future_tool"])
def test_an_unknown_tool_is_closed_by_default_and_called_unverified(tool):
    message = decide(tool, {}, DEFAULT)

    assert message is not None and "not verified" in message
    assert not tool_policy.is_known(tool)


@pytest.mark.parametrize("url, allowed", [("https://example.org/cat.png", True), ("data:image/png;base64,AA", True),
                                          ("/root/.hermes/cache/images/other-chat.png", False),
                                          ("file:///etc/passwd", False), ("cache/images/x.png", False)])
def test_vision_takes_urls_but_not_local_files(url, allowed):
    message = decide("vision_analyze", {"image_url": url}, DEFAULT)

    assert (message is None) is allowed
    if not allowed:
        assert "another chat's upload" in message


def test_private_urls_allowed_closes_the_fetching_tools():
    assert decide("web_extract", {"urls": ["https://example.org"]}, DEFAULT, private_urls=True) is not None
    assert decide("vision_analyze", {"image_url": "https://x.org/a.png"}, DEFAULT, private_urls=True) is not None
    assert decide("web_search", {"query": "x"}, DEFAULT, private_urls=True) is None


def test_switches_allow_a_named_tool_or_turn_the_policy_off():
    allow_terminal = settings_from(cfg(chat_tools={"allow": ["terminal"]}))
    assert decide("terminal", {}, allow_terminal) is None and decide("read_file", {}, allow_terminal) is not None

    off = settings_from(cfg(chat_tools={"sealed": False}))
    assert all(decide(t, {}, off) is None for t in DISK_TOOLS + SHARED_STORES)


def test_the_old_block_session_search_switch_keeps_working():
    assert decide("session_search", {}, settings_from(cfg(block_session_search=False))) is None
    assert decide("session_search", {}, settings_from(cfg(block_session_search=True))) is not None
    assert decide("terminal", {}, settings_from(cfg(block_session_search=False))) is not None


def test_newer_hermes_settings_entry_is_read_and_wins():
    config = {"plugins": {"project-history-recall": {"chat_tools": {"allow": ["terminal"]}},
                          "entries": {"project-history-recall": {"settings": {"chat_tools": {"allow": ["memory"]}}}}}}
    settings = settings_from(config)

    assert settings.allow == frozenset({"memory"})


@pytest.mark.parametrize("section", [{"chat_tools": "off"}, {"chat_tools": {"sealed": "no"}},
                                     {"chat_tools": {"allow": "terminal"}}, {"chat_tools": {"alow": ["terminal"]}}])
def test_invalid_settings_are_named_and_keep_the_policy_closed(section):
    settings = settings_from(cfg(**section))

    assert settings.problems and settings.sealed is True and "terminal" not in settings.allow
    assert decide("terminal", {}, settings) is not None


def test_a_config_that_does_not_parse_gives_the_default_closed_policy():
    assert settings_from(None) == DEFAULT


def offered_tools() -> set[str]:
    """Every tool the running Hermes (0.19.0 or 0.22.2) puts in any toolset."""
    import toolsets

    offered = set(getattr(toolsets, "_HERMES_CORE_TOOLS", ())) | set(toolsets.resolve_toolset("hermes-api-server"))
    for name in toolsets.TOOLSETS:
        offered |= set(toolsets.resolve_toolset(name))
    return offered


def test_every_tool_the_running_hermes_offers_is_classified_with_a_reason():
    """A Hermes upgrade that adds a tool fails here: classify it (until then it is closed as unverified).
    Runs on both lines: 0.22 adds todo_list, process_manage, cronjob_manage, manage_connections, …"""
    offered = offered_tools()

    assert sorted(t for t in offered if not tool_policy.is_known(t)) == []
    assert all(tool_policy.why_closed(t) != tool_policy.UNVERIFIED for t in offered
               if not tool_policy.safe_in_chats(t))


def schema_arguments(tool: str) -> set[str] | None:
    """The argument names the running Hermes' registry gives ``tool``: its static schema and, where
    the schema is built per provider (0.22's image_generate), every argument that builder can add."""
    from tools.registry import registry

    entry = registry.get_entry(tool) if hasattr(registry, "get_entry") else registry._tools.get(tool)
    if entry is None:
        return None
    names = set(entry.schema.get("parameters", {}).get("properties", {}))
    if tool == "image_generate":
        import tools.image_generation_tool as image

        names |= {"image_url", "reference_image_urls"}  # added when the provider can edit
        names |= {"upscale"} | set(getattr(image, "_CREATIVE_CONTROL_PARAMS", {}))
    return names


def test_every_argument_of_every_tool_allowed_in_chats_is_in_the_argument_table():
    """A Hermes upgrade that gives an allowed tool a new argument fails here: read what it can name (a
    file, a URL, another session) and put it in tool_arguments.ARGUMENTS (until then it is refused)."""
    import model_tools  # noqa: F401  (registers every tool)

    unread = {}
    for tool in sorted(offered_tools() | set(tool_policy.SAFE_IN_CHATS)):
        if not tool_policy.safe_in_chats(tool):
            continue
        names = schema_arguments(tool)
        assert tool in tool_arguments.ARGUMENTS, tool
        if names is not None and (missing := names - set(tool_arguments.ARGUMENTS[tool])):
            unread[tool] = sorted(missing)

    assert unread == {}


def test_an_argument_nobody_read_is_refused():
    message = decide("web_search", {"query": "x", "proxy_url": "http://127.0.0.1"}, DEFAULT)

    assert message is not None and "'proxy_url' has not been checked" in message


@pytest.mark.parametrize("args, allowed", [({"text": "hi"}, True), ({"text": "hi", "output_path": ""}, True),
                                           ({"text": "hi", "output_path": "/root/.hermes/config.yaml"}, False),
                                           ({"text": "hi", "output_path": "voice.mp3"}, False)])
def test_text_to_speech_runs_only_without_an_output_path(args, allowed):
    message = decide("text_to_speech", args, DEFAULT)

    assert (message is None) is allowed
    if not allowed:
        assert "output_path is not allowed" in message and "config.yaml" in message


def public(url: str) -> bool:  # stands in for Hermes' is_safe_url: only 93.184.216.34 is public here
    return url.startswith("https://93.184.216.34/")


@pytest.mark.parametrize("args, allowed", [
    ({"prompt": "a cat"}, True),
    ({"prompt": "a cat", "image_url": "data:image/png;base64,AA"}, True),
    ({"prompt": "a cat", "image_url": "https://93.184.216.34/cat.png"}, True),
    ({"prompt": "a cat", "reference_image_urls": ["data:image/png;base64,AA", "https://93.184.216.34/b.png"]}, True),
    ({"prompt": "a cat", "image_url": "/root/.hermes/cache/images/other-chat.png"}, False),
    ({"prompt": "a cat", "image_url": "http://93.184.216.34/cat.png"}, False),  # not https
    ({"prompt": "a cat", "image_url": "https://127.0.0.1:8642/x.png"}, False),
    ({"prompt": "a cat", "reference_image_urls": ["https://93.184.216.34/b.png", "cache/images/a.png"]}, False),
    ({"prompt": "a cat", "image_url": 7}, False),
])
def test_image_generate_takes_no_local_file_and_no_private_address(args, allowed):
    message = decide("image_generate", args, DEFAULT, url_check=public)

    assert (message is None) is allowed


def test_image_generate_takes_only_data_images_when_private_addresses_are_allowed():
    args = {"prompt": "a cat", "image_url": "https://93.184.216.34/cat.png"}

    assert decide("image_generate", args, DEFAULT, url_check=public, private_urls=True) is not None
    assert decide("image_generate", {"prompt": "a", "image_url": "data:image/png;base64,AA"}, DEFAULT,
                  private_urls=True) is None
    assert decide("image_generate", args, DEFAULT) is not None  # no url check at hand: data: only


def test_a_tool_allowed_by_name_runs_with_any_arguments():
    """The operator's explicit choice; the seal report counts it as an open door (test_seal_report)."""
    settings = settings_from(cfg(chat_tools={"allow": ["text_to_speech"]}))

    assert decide("text_to_speech", {"text": "x", "output_path": "/tmp/x.mp3"}, settings) is None


def test_every_setting_of_the_plugin_is_read_from_both_places():
    """host/config.plugin_settings is the one reader (the embedding section uses it too)."""
    from hermes_side.host.config import plugin_settings

    config = {"plugins": {"project-history-recall": {"embedding": {"enabled": False}, "chat_tools": {}},
                          "entries": {"project-history-recall": {"settings": {"chat_tools": {"sealed": True}}}}}}

    assert plugin_settings(config) == {"embedding": {"enabled": False}, "chat_tools": {"sealed": True}}
    assert plugin_settings({"plugins": ["not", "a", "mapping"]}) == {} and plugin_settings(None) == {}
