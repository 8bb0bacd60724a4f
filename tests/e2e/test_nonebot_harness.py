"""The e2e harness itself: a real NoneBot process, a fake OneBot client, and no recall API.

Run on its own, without nonebug's pytest plugin:
``.venv/bin/python -m pytest -p no:nonebug tests/e2e/test_nonebot_harness.py -q``
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.nonebot_proc import NoneBotProcess, free_port
from tests.e2e.onebot import FakeOneBot

pytestmark = pytest.mark.slow  # real processes or load: scripts/test.sh --fast skips it

ADMIN, MEMBER, GROUP = 10001, 10002, 20002


@pytest.fixture
def bot_process(tmp_path: Path) -> Iterator[NoneBotProcess]:
    dead_api = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    env = {
        "HISTORY_RECALL_API_URL": dead_api,
        "HISTORY_RECALL_API_KEY": "e2e-recall-key-0123456789",
        "HISTORY_RECALL_ADMIN_USERS": json.dumps([f"onebotv11:{ADMIN}"]),
    }
    with NoneBotProcess(tmp_path / "bot", env=env) as proc:
        yield proc


async def test_recall_with_api_down_and_silent_move_for_members(bot_process: NoneBotProcess):
    async with FakeOneBot(bot_process.ws_url, bot_process.access_token) as ob:
        await ob.send_group_message("/recall foo", group_id=GROUP, user_id=MEMBER)
        reply = await ob.expect_action(timeout=15)
        assert reply.action == "send_msg", reply
        assert reply.params["group_id"] == GROUP
        assert reply.text == "⚠️ 暂时连不上检索服务，请稍后再试。"  # a member: one short sentence

        await ob.send_group_message("/move x", group_id=GROUP, user_id=MEMBER)
        await ob.expect_no_action(2)

        # The same command from an admin does get through, so the silence above was deliberate.
        await ob.send_group_message("/move x", group_id=GROUP, user_id=ADMIN)
        reply = await ob.expect_action(timeout=15)
        # A bot admin: what to check, the address tried first.
        assert reply.action == "send_msg" and reply.text.startswith("连不上检索服务 http://127.0.0.1:")

    log = bot_process.log_text()
    assert "/move silent skip for non-admin onebotv11:10002" in log
    assert "e2e-recall-key-0123456789" not in log
