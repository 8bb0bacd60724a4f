"""Chat recognition from the NoneBot bridge's session ids, session keys and gateway rows (pure)."""

import pytest

from hermes_side.scope.chats import chat_from_row, chat_from_session_id, chat_from_session_key, parse_chat


@pytest.mark.parametrize("session_id, chat", [
    ("hermes-onebotv11+group+12345", "onebotv11:12345"),
    ("hermes-onebotv11+group+12345+67890", "onebotv11:12345"),
    ("hermes-onebotv11+group+12345+67890-g3", "onebotv11:12345"),
    ("hermes-telegram+group+-1001234", "telegram:-1001234"),
    ("hermes-telegram+group+-1001234-g2", "telegram:-1001234"),
    # issue 8: private chats are chats too, and never the group with the same number
    ("hermes-onebotv11+private+42", "onebotv11:private:42"),
    ("hermes-onebotv11+private+42-g5", "onebotv11:private:42"),
    # issue 8: only the bridge's own -gN is stripped; group "team-g1" is not group "team"
    ("hermes-discord+group+team-g1", "discord:team-g1"),
    ("hermes-discord+group+team-g1+42", "discord:team-g1"),
    ("hermes-discord+group+team-g1+42-g2", "discord:team-g1"),
    ("hermes-onebotv11+group+unknown+42", None),
    ("20260901_143022_a1b2", None),
    ("", None),
])
def test_session_ids(session_id, chat):
    assert chat_from_session_id(session_id) == chat


@pytest.mark.parametrize("key, chat", [
    ("agent:main:nonebot-onebotv11:group:12345", "onebotv11:12345"),
    ("agent:work:nonebot-discord:group:998877:42", "discord:998877"),
    ("agent:main:nonebot-onebotv11:dm:42", "onebotv11:private:42"),
    # Hermes' own messaging gateway (gateway/session.py build_session_key)
    ("agent:main:telegram:group:-1001", "telegram:-1001"),
    ("agent:main:discord:thread:5551:777", "discord:5551"),
    ("agent:main:qqbot:dm:u42", "qqbot:private:u42"),
    ("agent:main:telegram:dm", None),
    ("agent:main:test", None),
    ("20260901_143022_a1b2", None),
])
def test_session_keys(key, chat):
    assert chat_from_session_key(key) == chat


@pytest.mark.parametrize("source, chat_id, chat_type, chat", [
    ("telegram", "-1001", "group", "telegram:-1001"),
    ("discord", "5551", "channel", "discord:5551"),
    ("telegram", "42", "dm", "telegram:private:42"),
    ("telegram", None, "group", None),
])
def test_gateway_rows(source, chat_id, chat_type, chat):
    assert chat_from_row(source, chat_id, chat_type) == chat


@pytest.mark.parametrize("value, ok", [
    ("onebotv11:123", True), ("telegram:-100123", True), ("onebotv11:private:42", True),
    ("../etc:1", False), ("onebotv11", False),
    ("onebotv11:1/2", False), ("OneBotV11:1", False), ("a:" + "1" * 200, False),
])
def test_parse_chat(value, ok):
    assert (parse_chat(value) is not None) is ok
