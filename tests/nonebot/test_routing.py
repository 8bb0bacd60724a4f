"""Group → endpoint routing and the startup config check."""

from __future__ import annotations

import pytest

from tests.nonebot.nb_helpers import API_KEY, API_URL, ROUTED_GROUP, TEAM_KEY, TEAM_URL


@pytest.fixture
def routing(nonebug_init):
    from nonebot_plugin_history_recall import routing

    return routing


@pytest.fixture
def GroupEndpoint(nonebug_init):
    from nonebot_plugin_history_recall.config import GroupEndpoint

    return GroupEndpoint


@pytest.mark.parametrize(
    ("name", "expected"),
    [("OneBot V11", "onebotv11"), ("Telegram", "telegram"), ("OneBot V12", "onebotv12"), ("QQ", "qq"), ("", "unknown")],
)
def test_adapter_names_are_normalised_like_the_peer_plugin(routing, name, expected):
    assert routing.normalize_adapter(name) == expected


def test_routed_group_gets_its_own_url_and_key(routing):
    endpoint = routing.resolve_endpoint("OneBot V11", str(ROUTED_GROUP))

    assert (endpoint.url, endpoint.key, endpoint.label) == (TEAM_URL, TEAM_KEY, f"onebotv11:{ROUTED_GROUP}")
    assert endpoint.timeout == 7  # inherited


def test_same_group_number_on_another_adapter_uses_the_default(routing):
    endpoint = routing.resolve_endpoint("Telegram", str(ROUTED_GROUP))

    assert (endpoint.url, endpoint.key, endpoint.label) == (API_URL, API_KEY, "default")


def test_entry_inherits_empty_values_and_loses_trailing_slash(routing, GroupEndpoint, plugin_config, monkeypatch):
    monkeypatch.setattr(
        plugin_config,
        "history_recall_groups",
        {"telegram:-100": GroupEndpoint(url="http://h:1/p/x/", timeout=3, project=" alpha ")},
    )
    endpoint = routing.resolve_endpoint("Telegram", "-100")

    assert endpoint.url == "http://h:1/p/x"
    assert endpoint.key == API_KEY
    assert endpoint.timeout == 3
    assert endpoint.initial_project == "alpha"


def test_routing_follows_config_changes_without_restart(routing, GroupEndpoint, plugin_config, monkeypatch):
    assert routing.resolve_endpoint("OneBot V11", "555").label == "default"
    monkeypatch.setattr(plugin_config, "history_recall_groups", {"onebotv11:555": GroupEndpoint(url="http://new:1")})

    assert routing.resolve_endpoint("OneBot V11", "555").url == "http://new:1"


def test_admin_check_uses_adapter_and_user(routing):
    assert routing.is_admin("OneBot V11", "10001")
    assert not routing.is_admin("Telegram", "10001")
    assert not routing.is_admin("OneBot V11", "10002")
    assert not routing.is_admin("OneBot V11", "")


def test_valid_config_has_no_problems(routing):
    assert routing.validate_config() == []


def test_every_kind_of_config_problem_is_reported(routing, GroupEndpoint, plugin_config, monkeypatch):
    monkeypatch.setattr(plugin_config, "history_recall_api_url", "127.0.0.1:8765")
    monkeypatch.setattr(plugin_config, "history_recall_api_key", "")
    monkeypatch.setattr(
        plugin_config,
        "history_recall_groups",
        {
            "12345": GroupEndpoint(project="a"),
            "OneBot V11:123": GroupEndpoint(project="a"),
            "onebotv11:456": GroupEndpoint(url="ftp://h", key="short"),
        },
    )
    monkeypatch.setattr(plugin_config, "history_recall_admin_users", {"10001", "OneBotV11:1", "telegram:"})

    problems = "\n".join(routing.validate_config())

    assert "HISTORY_RECALL_API_URL: url '127.0.0.1:8765' is not http(s)://" in problems
    assert "HISTORY_RECALL_API_KEY: no API key" in problems
    assert "'12345' has no ':'" in problems
    assert "'OneBot V11:123' would never match" in problems and "'onebotv11'" in problems
    assert "'onebotv11:456']: url 'ftp://h' is not http(s)://" in problems
    assert "'onebotv11:456']: API key is shorter than 16" in problems
    assert "entry '10001' has no ':'" in problems
    assert "'OneBotV11:1' would never match" in problems
    assert "'telegram:' has an empty user_id" in problems
    assert len(routing.validate_config()) == 9


def test_initial_bindings_skip_keys_that_can_never_match(GroupEndpoint, plugin_config, monkeypatch, nonebug_init):
    from nonebot_plugin_history_recall.bindings import configured_chats

    monkeypatch.setattr(
        plugin_config,
        "history_recall_groups",
        {
            "onebotv11:1": GroupEndpoint(project="alpha"),
            "OneBot V11:2": GroupEndpoint(project="beta"),
            "onebotv11:3": GroupEndpoint(url="http://h:1"),
        },
    )
    assert configured_chats() == ["onebotv11:1"]
