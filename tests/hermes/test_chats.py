"""Chat recognition from the NoneBot bridge's session ids and memory keys (pure)."""

import pytest

from hermes_side.chats import chat_from_session_id, chat_from_session_key, parse_chat


@pytest.mark.parametrize("session_id, chat", [
    ("hermes-onebotv11+group+12345", "onebotv11:12345"),
    ("hermes-onebotv11+group+12345+67890", "onebotv11:12345"),
    ("hermes-onebotv11+group+12345+67890-g3", "onebotv11:12345"),
    ("hermes-telegram+group+-1001234", "telegram:-1001234"),
    ("hermes-telegram+group+-1001234-g2", "telegram:-1001234"),
    ("hermes-onebotv11+private+42", None),
    ("20260901_143022_a1b2", None),
    ("", None),
])
def test_session_ids(session_id, chat):
    assert chat_from_session_id(session_id) == chat


@pytest.mark.parametrize("key, chat", [
    ("agent:main:nonebot-onebotv11:group:12345", "onebotv11:12345"),
    ("agent:work:nonebot-discord:group:998877:42", "discord:998877"),
    ("agent:main:nonebot-onebotv11:dm:42", None),
    ("agent:main:telegram:group:1", None),
])
def test_session_keys(key, chat):
    assert chat_from_session_key(key) == chat


@pytest.mark.parametrize("value, ok", [
    ("onebotv11:123", True), ("telegram:-100123", True), ("../etc:1", False), ("onebotv11", False),
    ("onebotv11:1/2", False), ("OneBotV11:1", False), ("a:" + "1" * 200, False),
])
def test_parse_chat(value, ok):
    assert (parse_chat(value) is not None) is ok
