"""End to end with real processes: Hermes' state.db written by SessionDB, ``hermes recall serve``,
a real NoneBot process (fastapi driver, OneBot v11 adapter), and this test as the OneBot
implementation over reverse WebSocket.

Run without nonebug's pytest plugin: ``pytest -p no:nonebug tests/e2e``.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from tests.e2e.nonebot_proc import NoneBotProcess
from tests.e2e.onebot import Action, FakeOneBot
from tests.e2e.recall_proc import RecallServer

KEY = "e2e-recall-api-key-0123456789"
ADMIN, MEMBER = 10001, 10002
GROUP_A, GROUP_B = 111111, 222222


def _seed(home: Path, work: Path) -> dict[str, str]:
    """Two projects, each with a CLI session and its group's chat conversation."""
    os.environ["HERMES_HOME"] = str(home)
    from hermes_cli import projects_db
    from hermes_state import SessionDB

    (home / "config.yaml").write_text("plugins:\n  enabled: [project-history-recall]\n")
    ids = {}
    conn = projects_db.connect(home / "projects.db")
    for name in ("apollo", "borealis"):
        folder = work / name
        folder.mkdir(parents=True)
        ids[name] = projects_db.create_project(conn, name=name.title(), folders=[str(folder)])
    conn.close()
    db = SessionDB(db_path=home / "state.db")
    db.create_session("cli-apollo", "cli", cwd=str(work / "apollo"))
    db.append_message("cli-apollo", "user", "Apollo: the deploy pipeline uses blue-green with a kiwi canary")
    db.append_message("cli-apollo", "assistant", "Agreed, kiwi canary first, then the full fleet.")
    db.create_session("cli-borealis", "cli", cwd=str(work / "borealis"))
    db.append_message("cli-borealis", "user", "Borealis: the deploy pipeline ships with a mango feature flag")
    db.append_message("cli-borealis", "assistant", "Yes, mango flag stays off until QA signs off.")
    for group in (GROUP_A, GROUP_B):
        sid = f"hermes-onebotv11+group+{group}"
        db.create_session(sid, "api_server")
        db.append_message(sid, "user", f"group {group} asked about the deploy pipeline")
        db.append_message(sid, "assistant", "see the project notes")
    db.close()
    return ids


def _messages(home: Path) -> list[tuple]:
    conn = sqlite3.connect(f"file:{home / 'state.db'}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT id, session_id, role, content, active FROM messages ORDER BY id").fetchall()
    finally:
        conn.close()


def _all_text(action: Action) -> str:
    return "\n".join([action.text, *action.forward_texts])


async def _recall(ob: FakeOneBot, group: int, query: str) -> str:
    await ob.send_group_message(f"/recall {query} --mode keyword --limit 5", group_id=group, user_id=MEMBER)
    reply = await ob.expect_action(timeout=30)
    assert reply.action in ("send_msg", "send_group_forward_msg"), reply
    return _all_text(reply)


@pytest.fixture
def deployment(tmp_path: Path):
    home = tmp_path / "hermes-home"
    home.mkdir()
    ids = _seed(home, tmp_path / "work")
    api = RecallServer(home, KEY, tmp_path / "recall.log")
    bot_env = {
        "HISTORY_RECALL_API_URL": api.url,
        "HISTORY_RECALL_API_KEY": KEY,
        "HISTORY_RECALL_ADMIN_USERS": json.dumps([f"onebotv11:{ADMIN}"]),
        # Initial links from the bot's config; an admin /move later must win over them.
        "HISTORY_RECALL_GROUPS": json.dumps({f"onebotv11:{GROUP_A}": {"project": "apollo"},
                                             f"onebotv11:{GROUP_B}": {"project": "borealis"}}),
    }
    bot = NoneBotProcess(tmp_path / "bot", env=bot_env)
    yield home, ids, api, bot
    bot.stop()
    api.stop()


async def test_groups_recall_only_their_project_and_admin_moves_survive_restarts(deployment):
    home, ids, api, bot = deployment
    before = _messages(home)
    api.start()
    bot.start()
    async with FakeOneBot(bot.ws_url, bot.access_token) as ob:
        text_a = await _recall(ob, GROUP_A, "deploy pipeline")
        assert "kiwi" in text_a and "mango" not in text_a
        text_b = await _recall(ob, GROUP_B, "deploy pipeline")
        assert "mango" in text_b and "kiwi" not in text_b

        await ob.send_group_message("/move borealis", group_id=GROUP_A, user_id=MEMBER)
        await ob.expect_no_action(2)
        assert api.get(f"/chats/onebotv11:{GROUP_A}/binding")["project"]["id"] == ids["apollo"]

        await ob.send_group_message("/move borealis", group_id=GROUP_A, user_id=ADMIN)
        moved = await ob.expect_action(timeout=30)
        assert "Borealis" in moved.text
        text_a = await _recall(ob, GROUP_A, "deploy pipeline")
        assert "mango" in text_a and "kiwi" not in text_a

    bot.stop()
    api.stop()
    api.start()
    bot.start()
    async with FakeOneBot(bot.ws_url, bot.access_token) as ob:
        text_a = await _recall(ob, GROUP_A, "deploy pipeline")
        assert "mango" in text_a and "kiwi" not in text_a
        text_b = await _recall(ob, GROUP_B, "deploy pipeline")
        assert "mango" in text_b and "kiwi" not in text_b

    assert _messages(home) == before  # nothing lost, nothing changed
    assert KEY not in api.log_text() and KEY not in bot.log_text()
