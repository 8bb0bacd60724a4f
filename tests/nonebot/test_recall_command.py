"""/recall as a group member sees it: what reaches the recall API and what comes back."""

from __future__ import annotations

import json

import httpx
from nb_helpers import (
    ADMIN_ID,
    API_KEY,
    API_URL,
    PLAIN_GROUP,
    ROUTED_GROUP,
    TEAM_KEY,
    Captured,
    FakeRecallApi,
    group_message,
    private_message,
)
from nonebug import App

SEARCH_ANSWER = {
    "success": True,
    "mode": "keyword",
    "project": {"id": "p_1", "slug": "hermes-dev", "name": "Hermes Dev"},
    "results": [
        {
            "session_id": "20260901_143022_a1b2",
            "link": "@session:20260901_143022_a1b2",
            "title": "数据库迁移讨论",
            "message_id": 47,
            "snippet": "最后决定 >>>数据库迁移<<< 用 alembic，\n分两步上线",
            "score_source": "keyword",
            "when": "2026-09-01 14:30",
        }
    ],
    "sessions_in_scope": 12,
    "semantic_status": "ready",
}


async def test_recall_in_routed_group_sends_chat_key_and_shows_results(app: App, api: FakeRecallApi, bot_factory):
    api.route("POST", "/p/team-a/search", json_body=SEARCH_ANSWER)
    event = group_message("/recall 数据库 迁移 --mode keyword --limit 2", group_id=ROUTED_GROUP)
    reply = Captured()
    async with app.test_matcher() as ctx:
        bot = bot_factory(ctx)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, reply, result={"message_id": 1})

    (request,) = api.requests
    assert str(request.url) == "http://recall.test/p/team-a/search"
    assert request.headers["Authorization"] == f"Bearer {TEAM_KEY}"
    assert json.loads(request.content) == {
        "query": "数据库 迁移",
        "mode": "keyword",
        "limit": 2,
        "chat": f"onebotv11:{ROUTED_GROUP}",
    }
    assert "Hermes Dev" in reply.text
    assert "数据库迁移讨论" in reply.text
    assert "最后决定 【数据库迁移】 用 alembic， 分两步上线" in reply.text  # one line, hit kept visible
    assert "@session:20260901_143022_a1b2" in reply.text
