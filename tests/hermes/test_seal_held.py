"""The guard decides with what Hermes actually uses (issue 35, door 3).

Hermes resolves ``allow_private_urls`` once per process (``tools/url_safety.py``,
``_cached_allow_private``). The red-team probe: after the operator turned the switch off while
Hermes ran, the guard — re-reading config.yaml — reopened ``vision_analyze`` to chats while Hermes
still fetched loopback URLs for them, and the seal report said closed. A real loopback service,
the real tool through Hermes' dispatch, Hermes' own cache; "restarting Hermes" is Hermes' own
``_reset_allow_private_cache`` (what a new process starts with).
"""

from __future__ import annotations

import json

import pytest

from hermes_side.stores import bindings
from tests.hermes.loopback import service
from tests.hermes.world import PLUGIN, call_tool_raw

G111 = "hermes-onebotv11+group+111"
SECRET = b"\x89PNG\r\n\x1a\n" + b"loopback-only-secret"


@pytest.fixture
def hermes_cache():
    """Hermes' own process-wide cache, cleared before and after (a fresh process each side)."""
    from tools import url_safety

    url_safety._reset_allow_private_cache()
    yield url_safety
    url_safety._reset_allow_private_cache()


@pytest.fixture
def loopback():
    """A service only this machine can reach, counting who fetched it."""
    hits: list[str] = []
    served = service(SECRET, hits)
    yield f"http://127.0.0.1:{served.port}/cat.png", hits
    served.close()


def write_config(home, allow_private: bool | str) -> None:
    (home / "config.yaml").write_text(json.dumps({"plugins": {"enabled": [PLUGIN]},
                                                  "security": {"allow_private_urls": allow_private}}))


@pytest.fixture
def chat(world, loaded_plugin):
    bindings.set_binding(world.home, "onebotv11:111", world.project("Alpha", world.folder("alpha")))
    world.session("hello", source="api_server", sid=G111)
    world.cli = world.session("operator", cwd=world.folder("alpha"))
    return world


def test_switched_off_while_hermes_runs_the_guard_keeps_vision_closed_and_status_says_restart(
        chat, hermes_cache, loopback, capsys):
    from hermes_side.actions.status import profile_status
    from hermes_side.cli import main

    url, hits = loopback
    write_config(chat.home, True)
    assert hermes_cache.is_safe_url(url)  # Hermes' first URL check of this process: it holds "allowed"
    write_config(chat.home, False)  # ...the operator turns the switch off while Hermes runs
    assert hermes_cache.is_safe_url(url)  # Hermes still fetches loopback addresses

    raw = call_tool_raw("vision_analyze", {"image_url": url, "question": "what is it?"}, G111)

    assert hits == [] and "loopback-only-secret" not in raw
    assert "not available in group and private chats" in raw and "restart Hermes" in raw
    seal = profile_status(chat.home)["seal"]
    assert seal["closed"] is True  # true: the guard keeps the door shut
    assert any(n.startswith("restart Hermes") and "allow_private_urls: true" in n for n in seal["unverified"])
    main(["status"])
    assert "restart Hermes" in capsys.readouterr().out

    hermes_cache._reset_allow_private_cache()  # Hermes restarted: it reads the file again at its first check
    raw = call_tool_raw("vision_analyze", {"image_url": url, "question": "?"}, G111)
    assert hits == [] and "not available in group and private chats" not in raw  # open again, and Hermes refuses
    assert hermes_cache._global_allow_private_urls() is False
    call_tool_raw("project_history_search", {"query": "x"}, G111)  # the guard sees what Hermes holds now
    assert profile_status(chat.home)["seal"]["unverified"] == []


def test_switched_on_while_hermes_runs_the_guard_closes_at_once_and_status_says_restart(chat, hermes_cache,
                                                                                       loopback):
    from hermes_side.actions.status import profile_status
    from hermes_side.scope.guard import on_pre_tool_call

    url, _ = loopback
    write_config(chat.home, False)
    assert not hermes_cache.is_safe_url(url)  # Hermes holds "not allowed"
    write_config(chat.home, True)

    out = on_pre_tool_call("vision_analyze", {"image_url": "https://example.org/a.png"}, session_id=G111)

    assert out and "allowed in this profile" in out["message"]
    assert any("allow_private_urls: false" in n and "now says true" in n
               for n in profile_status(chat.home)["seal"]["unverified"])


@pytest.mark.parametrize("env, value", [
    (None, True), (None, "on"), (None, "YES"), (None, 2), (None, "off"), (None, None),
    ("maybe", True), ("on", False), ("no", True), ("true", False), ("1", None),
])
def test_the_guard_reads_the_switch_exactly_as_hermes_resolves_it(chat, hermes_cache, monkeypatch, env, value):
    """Hermes' rules (env true/1/yes or false/0/no decide, anything else falls through to
    config.yaml, where ``is_truthy_value`` decides): a value Hermes reads as on and the guard as
    off was an open door ("on", "YES", 2 in config.yaml; an env value Hermes ignores)."""
    from hermes_side.scope.guard import on_pre_tool_call

    if env is None:
        monkeypatch.delenv("HERMES_ALLOW_PRIVATE_URLS", raising=False)
    else:
        monkeypatch.setenv("HERMES_ALLOW_PRIVATE_URLS", env)
    write_config(chat.home, value)

    # The guard decides before Hermes' first URL check of the process, from the file alone...
    closed = on_pre_tool_call("vision_analyze", {"image_url": "https://example.org/a.png"}, session_id=G111)
    # ...and must close the tool exactly when Hermes, reading the same file, allows private addresses.
    assert (closed is not None) is hermes_cache._global_allow_private_urls()
