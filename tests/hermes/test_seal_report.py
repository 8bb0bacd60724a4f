"""The seal report (scope/seal.py) in GET /status and `hermes recall status`: true only when every
known door is shut, read fresh from the profile's files on every call, no path in it."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from hermes_side.api.app import create_app
from hermes_side.scope.seal import seal_report
from tests import yamlio as yaml

KEY = "seal-report-test-key-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}
ENABLED = {"plugins": {"enabled": ["project-history-recall"]}}


def write(home, config: dict | str) -> None:
    (home / "config.yaml").write_text(config if isinstance(config, str) else yaml.safe_dump(config))


def with_settings(**section) -> dict:
    return {"plugins": {"enabled": ["project-history-recall"], "project-history-recall": section}}


def doors(home) -> list[str]:
    return [d["door"] for d in seal_report(home)["open_doors"]]


@pytest.fixture
def client(world):
    write(world.home, ENABLED)
    world.session("hello", cwd=world.folder("a"))
    return TestClient(create_app(world.home, KEY))


def status_seal(client) -> dict:
    response = client.get("/status", headers=AUTH)
    assert response.status_code == 200
    return response.json()["seal"]


def test_default_config_is_closed(client):
    assert status_seal(client) == {"closed": True, "open_doors": [], "unverified": []}


def test_every_call_reads_the_files_again(world, client):
    assert status_seal(client)["closed"] is True
    write(world.home, with_settings(chat_tools={"allow": ["terminal"]}))

    seal = status_seal(client)

    assert seal["closed"] is False and [d["door"] for d in seal["open_doors"]] == ["terminal"]
    assert "could read other chats' history" in seal["open_doors"][0]["why"]
    write(world.home, ENABLED)
    assert status_seal(client)["closed"] is True


def test_a_config_yaml_that_does_not_parse_is_an_open_door(world, client):
    write(world.home, "plugins:\n  enabled: [project-history-recall\n")

    seal = status_seal(client)

    assert seal["closed"] is False and seal["open_doors"][0]["door"] == "config.yaml"
    assert "Hermes would load no plugins" in seal["open_doors"][0]["why"]
    assert str(world.home) not in json.dumps(seal)


def test_the_plugin_not_enabled_is_an_open_door(world, client):
    write(world.home, {"plugins": {"enabled": [], "project-history-recall": {}}})

    assert doors(world.home) == ["plugin"]


def test_the_policy_turned_off_names_the_tools_chats_get(world):
    write(world.home, with_settings(chat_tools={"sealed": False}))

    (door,) = seal_report(world.home)["open_doors"]

    assert door["door"] == "chat tool policy"
    assert all(t in door["why"] for t in ("terminal", "read_file", "session_search", "memory"))
    assert "web_search" not in door["why"]  # safe tools are no door


def test_the_old_switch_is_a_door_too(world):
    write(world.home, with_settings(block_session_search=False))

    assert doors(world.home) == ["session_search"]


def test_an_allowed_tool_no_chat_platform_offers_is_no_door(world):
    from hermes_cli.tools_config import PLATFORMS

    config = with_settings(chat_tools={"allow": ["terminal", "mcp_db_query"]})
    config["platform_toolsets"] = {p: ["web"] for p in PLATFORMS if p not in ("cli", "cron")}
    write(world.home, config)

    # terminal is offered on no chat platform; an unverified tool is counted open all the same
    assert doors(world.home) == ["mcp_db_query"]


def test_a_tool_allowed_by_name_whose_arguments_are_checked_is_an_open_door(world):
    """By name the guard runs text_to_speech with any output_path (it could overwrite config.yaml):
    the operator's choice, but a door; a safe tool whose arguments name nothing stays no door."""
    from hermes_cli.tools_config import PLATFORMS

    config = with_settings(chat_tools={"allow": ["text_to_speech", "web_search"]})
    config["platform_toolsets"] = {p: ["tts", "web"] for p in PLATFORMS if p not in ("cli", "cron")}
    write(world.home, config)

    seal = seal_report(world.home)

    assert [d["door"] for d in seal["open_doors"]] == ["text_to_speech"]
    assert "arguments are not checked" in seal["open_doors"][0]["why"]
    assert "output_path" in seal["open_doors"][0]["why"] and str(world.home) not in json.dumps(seal)
    write(world.home, with_settings())
    assert seal_report(world.home)["closed"] is True  # allow-listed, its arguments checked: closed


def test_a_sandbox_backend_does_not_close_the_terminal_door_and_says_why(world):
    config = with_settings(chat_tools={"allow": ["terminal"]})
    config["terminal"] = {"backend": "docker"}
    write(world.home, config)

    (door,) = seal_report(world.home)["open_doors"]

    assert door["door"] == "terminal" and "docker sandbox" in door["why"] and "every chat" in door["why"]


def test_other_plugins_mcp_servers_and_memory_providers_are_unverified_but_closed(world):
    config = {"plugins": {"enabled": ["project-history-recall", "spotify-extra"]},
              "mcp_servers": {"github": {"command": "x"}}, "memory": {"provider": "honcho"}}
    write(world.home, config)

    seal = seal_report(world.home)

    assert seal["closed"] is True
    assert [u.split(":")[0] for u in seal["unverified"]] == ["plugin spotify-extra", "MCP server github",
                                                            "memory provider honcho"]


def test_invalid_settings_are_reported_not_silently_dropped(world):
    write(world.home, with_settings(chat_tools={"allow": "terminal"}))

    seal = seal_report(world.home)

    assert seal["closed"] is True and "chat_tools.allow must be a list" in seal["unverified"][0]


def test_a_routed_profile_without_the_plugin_is_an_open_door(world):
    work = world.home / "profiles" / "work"
    work.mkdir(parents=True)
    write(work, {"plugins": {"enabled": []}})
    config = dict(ENABLED)
    config["gateway"] = {"profile_routes": [{"platform": "discord", "guild_id": "1", "profile": "work"}]}
    write(world.home, config)

    assert doors(world.home) == ["profile work: plugin"]
    write(work, "plugins: {enabled: [project-history-recall]")  # broken there too
    assert doors(world.home) == ["profile work: config.yaml"]
    write(work, ENABLED)
    assert doors(world.home) == []


def test_hermes_recall_status_prints_the_seal(world, capsys):
    from hermes_side.cli import main

    write(world.home, ENABLED)
    world.session("hello", cwd=world.folder("a"))
    main(["status"])
    assert "Seal: closed" in capsys.readouterr().out

    write(world.home, with_settings(chat_tools={"allow": ["memory"]}))
    main(["status"])
    out = capsys.readouterr().out
    assert "Seal: OPEN — memory: allowed in chats (chat_tools.allow): writes the assistant's shared memory" in out
