"""Relevance and answers through the real tool: Hermes' own dispatch, a real state.db and
projects.db, the plugin loaded by Hermes' loader and the real local e5 model.

- ``limit`` is a maximum: a question about something the project never discussed gets nothing
  back, while a related one still finds its conversation, with a relevance level.
- When the best match is a question, its row shows the reply that answered it.
- Semantic search crosses languages: a Chinese question finds the English conversation.
"""

from __future__ import annotations

import pytest

from hermes_side.embedding import build_index, load_settings
from hermes_side.embedding.vectors import drop_indexes
from tests.hermes.world import call_tool, shared_world

BOT_Q = "群机器人半夜掉线了怎么办？"
BOT_A = "查了日志，是 OneBot 反向 WebSocket 的心跳超时；把 heartbeat 间隔调到 30 秒以后就没再掉线。"
TOKEN_Q = "token 轮换的流程是什么？"
TOKEN_A = "每 90 天在管理后台生成新的 access token，旧 token 保留一天再作废，机器人重启后读取新值。"
DB_Q = "Which database should we use for the orders service, Postgres or MySQL?"
DB_A = "We went with Postgres because we need JSONB columns and partial indexes for the order history."
OTHER = ("The CI cache key now includes the lockfile hash, so builds stopped restoring stale "
         "dependencies after upgrades.")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with shared_world(tmp_path_factory.mktemp("relevance")) as w:
        folder = w.folder("bot")
        w.project("bot-ops", folder)
        sessions = {
            "bot": w.session(BOT_Q, BOT_A, cwd=folder, title="掉线排查"),
            "token": w.session(TOKEN_Q, TOKEN_A, cwd=folder, title="token 轮换"),
            "db": w.session(DB_Q, DB_A, cwd=folder, title="orders database"),
            "ci": w.session("Why did the build restore old packages?", OTHER, cwd=folder, title="CI cache"),
            "asker": w.session(cwd=folder),  # the conversation asking: empty, in the project
        }
        drop_indexes()
        stats = build_index(w.home, load_settings(w.home))
        assert stats.status == "done"
        yield w, sessions
        drop_indexes()


def search(world, query: str, mode: str = "hybrid", limit: int = 5) -> dict:
    _, sessions = world
    out = call_tool("project_history_search", {"query": query, "mode": mode, "limit": limit}, sessions["asker"])
    assert out["success"] is True, out
    assert out.get("semantic_status") in (None, "ready")
    return out


@pytest.mark.parametrize("query", ["how do I bake sourdough bread at home", "周末去哪里爬山看日出"])
def test_a_question_about_something_never_discussed_gets_nothing(world, query):
    out = search(world, query)
    assert out["results"] == [], [(r["title"], r["relevance"]) for r in out["results"]]
    assert out["message"] == "No matching messages in this project"


def test_a_related_question_finds_its_conversation_first_with_a_level(world):
    _, sessions = world
    out = search(world, "bot disconnected at night")
    assert out["results"], out
    first = out["results"][0]
    assert first["session_id"] == sessions["bot"]
    assert first["relevance"]["level"] in ("high", "medium")
    assert 0 < first["relevance"]["score"] <= 1
    # the token-rotation thread mentions the bot too, but it is not what was asked
    assert all(r["relevance"]["score"] <= first["relevance"]["score"] for r in out["results"][1:])


def test_limit_is_a_maximum_not_a_quota(world):
    out = search(world, "机器人掉线", limit=5)
    assert 1 <= len(out["results"]) < 4  # four conversations in scope; the unrelated ones stay out


def test_a_question_hit_shows_the_reply_that_answered_it(world):
    _, sessions = world
    out = search(world, "群机器人半夜掉线", mode="keyword")
    first = out["results"][0]
    assert first["session_id"] == sessions["bot"]
    assert first["role"] == "user" and "掉线" in first["snippet"]
    assert first["answer"]["role"] == "assistant"
    assert "heartbeat" in first["answer"]["snippet"]
    assert " → " in first["snippet"] and "heartbeat" in first["snippet"].split(" → ", 1)[1]


def test_an_answer_hit_has_no_answer_of_its_own(world):
    out = search(world, "JSONB partial indexes", mode="keyword")
    first = out["results"][0]
    assert first["role"] == "assistant" and "answer" not in first
    assert " → " not in first["snippet"]


def test_a_chinese_question_finds_the_english_conversation(world):
    _, sessions = world
    out = search(world, "订单服务最后选了哪个数据库", mode="semantic")
    assert out["results"] and out["results"][0]["session_id"] == sessions["db"]
