"""Red-team hole (issue 15 §4): the ranking side channel.

Keyword weights used to be counted over the whole profile, so a group could plant two messages of
its own — one with a word it wants to probe, one with a control word — search for both, and learn
from their order whether the probed word occurs in other chats or in Home. Statistics that shape a
chat's ranking now come only from what that chat may read.

The check: two profiles that differ only in other chats' and Home's messages give the group the
identical answer, through the real recall API (the bot's path), on the scan path of a small
project and on the FTS path of a big one.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from hermes_side.actions import chat_service
from hermes_side.api.app import create_app
from tests.hermes.world import World

KEY = "side-channel-key-0123456789"
PROBE, CONTROL = "zircon", "quartz"  # the group asks: does anyone else say "zircon"?


def _world(root, foreign: bool) -> World:
    (root / "home").mkdir(parents=True)
    w = World(root / "home", root / "work")
    alpha, beta, user_home = w.folder("alpha"), w.folder("beta"), w.folder("user-home")
    w.project("Alpha", alpha)
    w.project("Beta", beta)
    w.session("alpha deploy notes: the fleet goes last", cwd=alpha, sid="op-alpha")
    # The group's own planted messages, one per session of the group (per-user sessions).
    w.session(f"{CONTROL} was mentioned in the standup", source="api_server", sid="hermes-onebotv11+group+111+2")
    w.session(f"{PROBE} was mentioned in the standup", source="api_server", sid="hermes-onebotv11+group+111+1")
    w.session("another planted line without either word", source="api_server", sid="hermes-onebotv11+group+111+3")
    chat_service.move_chat(w.home, "onebotv11:111", "alpha")
    # Another group bound to Beta, and the operator's Home: in one world they say the probe word a lot.
    w.session("beta hello", source="api_server", sid="hermes-onebotv11+group+222")
    chat_service.move_chat(w.home, "onebotv11:222", "beta")
    for i in range(40):
        text = f"{PROBE} secret {i} of group two" if foreign else f"ordinary chatter {i} of group two"
        w.session(text, "and a reply", source="api_server", sid=f"hermes-onebotv11+group+222+{i}")
        w.session(f"home note {i} {PROBE if foreign else 'nothing'}", cwd=user_home, sid=f"home-{i}")
    chat_service.move_chat(w.home, "onebotv11:222", "beta")
    return w


def _answer(w: World) -> list[tuple]:
    client = TestClient(create_app(w.home, KEY))
    response = client.post("/search", headers={"Authorization": f"Bearer {KEY}"},
                           json={"query": f"{PROBE} {CONTROL}", "chat": "onebotv11:111", "mode": "keyword",
                                 "limit": 10})
    assert response.status_code == 200, response.text
    out = response.json()
    return [(r["session_id"], r["message_id"], r.get("score"), r["snippet"]) for r in out["results"]]


@pytest.mark.parametrize("path", ["scan", "fts"])
def test_foreign_messages_do_not_change_a_chats_ranking(tmp_path, ranking, path):
    if path == "fts":  # the path of a project too big to scan whole
        ranking(scan_scope_max=0)
    quiet, loud = _world(tmp_path / "quiet", foreign=False), _world(tmp_path / "loud", foreign=True)
    try:
        quiet_answer, loud_answer = _answer(quiet), _answer(loud)
    finally:
        quiet.close()
        loud.close()
    # The group finds both of its planted messages and nothing of group two or Home...
    assert {row[0] for row in quiet_answer} == {"hermes-onebotv11+group+111+1", "hermes-onebotv11+group+111+2"}
    assert all("secret" not in row[3] and "home note" not in row[3] for row in loud_answer)
    # ...and the order (and every score) is the same whether or not others say the probe word.
    assert loud_answer == quiet_answer
