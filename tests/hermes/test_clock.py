"""The calendar a profile's days are read in (``host/clock.py``): Hermes' own time zone setting."""

from __future__ import annotations

import logging

import pytest
import yaml

from hermes_side.host import clock


def _zone_db() -> None:
    from zoneinfo import ZoneInfo

    try:
        ZoneInfo("Asia/Shanghai")
    except Exception:  # noqa: BLE001 — a machine without a tz database cannot name a zone
        pytest.skip("no tz database on this machine")


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.delenv("HERMES_TIMEZONE", raising=False)
    return tmp_path


def test_without_a_setting_the_machines_own_time_is_the_calendar(home):
    assert clock.zone(home) is None
    (home / "config.yaml").write_text(yaml.safe_dump({"timezone": ""}))  # Hermes' default: server-local
    assert clock.zone(home) is None


def test_hermes_timezone_in_config_yaml_names_it(home):
    _zone_db()
    (home / "config.yaml").write_text(yaml.safe_dump({"timezone": "Asia/Shanghai"}))
    assert str(clock.zone(home)) == "Asia/Shanghai"


def test_hermes_timezone_in_the_profiles_env_wins_over_config_yaml_as_in_hermes(home, monkeypatch):
    _zone_db()
    (home / "config.yaml").write_text(yaml.safe_dump({"timezone": "Europe/Berlin"}))
    (home / ".env").write_text("HERMES_TIMEZONE=Asia/Shanghai\n")
    assert str(clock.zone(home)) == "Asia/Shanghai"
    (home / ".env").unlink()
    monkeypatch.setenv("HERMES_TIMEZONE", "America/New_York")  # the environment, where the .env has none
    assert str(clock.zone(home)) == "America/New_York"


def test_a_name_no_tz_database_knows_falls_back_to_the_machines_time_and_says_so(home, caplog):
    (home / "config.yaml").write_text(yaml.safe_dump({"timezone": "Mars/Olympus_Mons"}))
    with caplog.at_level(logging.WARNING, logger="hermes_side.host.clock"):
        assert clock.zone(home) is None
    assert "Mars/Olympus_Mons" in caplog.text


def test_a_broken_config_yaml_is_the_machines_time_not_an_error(home):
    (home / "config.yaml").write_text("timezone: [unclosed\n")
    assert clock.zone(home) is None
