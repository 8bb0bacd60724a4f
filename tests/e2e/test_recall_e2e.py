"""End to end with real processes: Hermes' state.db written by SessionDB, ``hermes recall serve``,
a real NoneBot process (fastapi driver, OneBot v11 adapter), and this test as the OneBot
implementation over reverse WebSocket.

Run without nonebug's pytest plugin: ``pytest -p no:nonebug tests/e2e``.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
from datetime import datetime
from pathlib import Path

import pytest

from hermes_side.stores.hermes_db import ro_uri
from tests.e2e.nonebot_proc import NoneBotProcess
from tests.e2e.onebot import Action, FakeOneBot
from tests.e2e.recall_proc import RecallServer

pytestmark = pytest.mark.slow  # real processes or load: scripts/test.sh --fast skips it

KEY = "e2e-recall-api-key-0123456789"
ADMIN, MEMBER, SUPERUSER = 10001, 10002, 10003  # SUPERUSER is in NoneBot's SUPERUSERS only
GROUP_A, GROUP_B = 111111, 222222
OLD = datetime(2025, 3, 1, 12, 0).timestamp()
# A fresh member per search: the per-user cooldown is on, and only the cooldown test meets it.
_members = itertools.count(20_001)


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
    db.create_session("cli-apollo-old", "cli", cwd=str(work / "apollo"))
    db.append_message("cli-apollo-old", "user", "Apollo: the walrus migration was rolled back", timestamp=OLD)
    db.append_message("cli-apollo-old", "assistant", "Noted, walrus stays on the old schema.", timestamp=OLD + 60)
    for group in (GROUP_A, GROUP_B):
        sid = f"hermes-onebotv11+group+{group}"
        db.create_session(sid, "api_server")
        db.append_message(sid, "user", f"group {group} asked about the deploy pipeline")
        db.append_message(sid, "assistant", "see the project notes")
    db.close()
    return ids


def _messages(home: Path) -> list[tuple]:
    conn = sqlite3.connect(ro_uri(home / 'state.db'), uri=True)
    try:
        return conn.execute("SELECT id, session_id, role, content, active FROM messages ORDER BY id").fetchall()
    finally:
        conn.close()


def _all_text(action: Action) -> str:
    return "\n".join([action.text, *action.forward_texts])


def _quotes(action: Action, message_id: int) -> bool:
    message = action.params.get("message") or []
    first = message[0] if isinstance(message, list) and message else {}
    return first.get("type") == "reply" and str(first.get("data", {}).get("id")) == str(message_id)


async def _ask(ob: FakeOneBot, group: int, text: str, user: int) -> Action:
    """Send ``text`` as ``user``; the bot's reply, which must quote it when it is a plain message."""
    message_id = await ob.send_group_message(text, group_id=group, user_id=user)
    reply = await ob.expect_action(timeout=30)
    assert reply.action in ("send_msg", "send_group_forward_msg"), reply
    assert reply.action != "send_msg" or _quotes(reply, message_id), reply.params
    return reply


async def _recall(ob: FakeOneBot, group: int, query: str, user: int | None = None) -> str:
    reply = await _ask(ob, group, f"/recall {query} --mode keyword --limit 5", user or next(_members))
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
        "SUPERUSERS": json.dumps([str(SUPERUSER)]),
        # Long enough that no step of a slow run outlives it.
        "HISTORY_RECALL_COOLDOWN": "600",
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

        # /recall-status for an admin: the real status contract, nothing internal in the group.
        await ob.send_group_message("/recall-status", group_id=GROUP_A, user_id=ADMIN)
        status = _all_text(await ob.expect_action(timeout=30))
        assert "「Borealis」" in status and "条消息已建语义索引" in status and "无需授权" in status
        assert api.url not in status and "127.0.0.1" not in status and str(home) not in status
        assert ids["borealis"] not in status and KEY not in status

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


async def test_chat_essentials_dates_open_projects_superuser_and_cooldown(deployment):
    home, ids, api, bot = deployment
    # Low enough that an opened hit (a header and three turns) goes out as a forward card.
    bot.extra_env["HISTORY_RECALL_FORWARD_THRESHOLD"] = "150"  # the opened hit (3 short turns) goes out as a card
    api.start()
    bot.start()
    async with FakeOneBot(bot.ws_url, bot.access_token) as ob:
        # --after / --before reach the search; a bad date gets the API's own sentence.
        assert "在 --after 7d 的范围里" in await _recall(ob, GROUP_A, "walrus --after 7d")
        old = await _recall(ob, GROUP_A, "walrus --before 2025-06-01")
        assert "【walrus】" in old and "2025年3月1日" in old
        assert "--after 的值「yesterday」不是日期" in await _recall(ob, GROUP_A, "walrus --after yesterday")  # ours

        # --open N shows the turns around a hit of the group's last /recall, for anyone in the group.
        listed = await _recall(ob, GROUP_A, "kiwi canary")
        assert "--open" in listed
        card = await _ask(ob, GROUP_A, "/recall --open 1", next(_members))
        # alconna's Reference/CustomNode on the real OneBot v11 path: one node per block, sent as the bot.
        assert card.action == "send_group_forward_msg" and card.params["group_id"] == GROUP_A
        nodes = card.params["messages"]
        assert all(n["type"] == "node" and str(n["data"]["user_id"]) == str(ob.self_id) for n in nodes)
        opened = _all_text(card)
        assert len(card.forward_texts) >= 3 and "第 1 条" in card.forward_texts[0]
        assert "👉" in opened and "blue-green" in opened and "full fleet" in opened
        assert "mango" not in opened and "@session" not in opened  # sealed; no internal id shown

        # /move alone lists the profile's projects for an admin, the group's own marked.
        projects = _all_text(await _ask(ob, GROUP_A, "/move", ADMIN))
        apollo_line = next(line for line in projects.splitlines() if "Apollo" in line)
        assert "✅" in apollo_line and "Borealis" in projects
        assert str(home) not in projects and "/work" not in projects  # no folders of the Hermes machine

        # A NoneBot SUPERUSER (not in HISTORY_RECALL_ADMIN_USERS) moves the group.
        moved = _all_text(await _ask(ob, GROUP_A, "/move borealis", SUPERUSER))
        assert "Borealis" in moved
        assert api.get(f"/chats/onebotv11:{GROUP_A}/binding")["project"]["id"] == ids["borealis"]
        # The old list points into Apollo, which this group no longer sees: sealed, not shown.
        gone = _all_text(await _ask(ob, GROUP_A, "/recall --open 1", next(_members)))
        assert "不在本群关联的项目里" in gone and "blue-green" not in gone

        # Cooldown: a member's second search is told to wait once, the third gets silence.
        assert "mango" in await _recall(ob, GROUP_A, "mango", user=MEMBER)
        assert "秒后再试" in await _recall(ob, GROUP_A, "mango", user=MEMBER)
        await ob.send_group_message("/recall mango", group_id=GROUP_A, user_id=MEMBER)
        await ob.expect_no_action(1.5)
        assert "mango" in await _recall(ob, GROUP_A, "mango", user=ADMIN)  # admins are exempt

    assert KEY not in bot.log_text()


async def test_a_member_forgets_their_words_through_the_real_bot_and_it_survives_a_restart(deployment):
    home, ids, api, bot = deployment
    from hermes_state import SessionDB

    db = SessionDB(db_path=home / "state.db")
    for user, words in ((MEMBER, "my locker code is pomegranate-42"), (10004, "the pomegranate pie is on friday")):
        sid = f"hermes-onebotv11+group+{GROUP_A}+{user}"
        db.create_session(sid, "api_server", cwd=str(home.parent / "work" / "apollo"))
        db.append_message(sid, "user", words)
        db.append_message(sid, "assistant", f"noted: {words}")
    db.close()
    before = _messages(home)
    api.start()
    bot.start()
    async with FakeOneBot(bot.ws_url, bot.access_token) as ob:
        found = await _recall(ob, GROUP_A, "pomegranate")
        assert "locker" in found and "pie" in found
        preview = _all_text(await _ask(ob, GROUP_A, "/forget", MEMBER))
        assert "1 条发言" in preview and "/forget confirm" in preview
        assert "只有管理员" in _all_text(await _ask(ob, GROUP_A, "/forget --session cli-apollo", MEMBER))
        done = _all_text(await _ask(ob, GROUP_A, "/forget confirm", MEMBER))
        assert "回执 fg-" in done and "state.db" in done
        found = await _recall(ob, GROUP_A, "pomegranate")
        assert "locker" not in found and "pie" in found  # the other member's words stay

        await ob.send_group_message("/recall-off", group_id=GROUP_A, user_id=MEMBER)
        await ob.expect_no_action(1.5)  # admins only, silent for others
        assert "已关闭" in _all_text(await _ask(ob, GROUP_A, "/recall-off", ADMIN))
        assert "已被管理员关闭" in await _recall(ob, GROUP_A, "pomegranate")
        assert "重新打开" in _all_text(await _ask(ob, GROUP_A, "/recall-on", ADMIN))

    bot.stop()
    api.stop()
    api.start()
    bot.start()
    async with FakeOneBot(bot.ws_url, bot.access_token) as ob:
        found = await _recall(ob, GROUP_A, "pomegranate")
        assert "locker" not in found and "pie" in found
    assert _messages(home) == before  # Hermes' messages table is never written
    log = api.get("/chats/onebotv11:111111/recall")
    assert log["recall"] == "on"
