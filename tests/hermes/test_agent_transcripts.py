"""Answers and hits in a session written the way Hermes writes an agent's work.

An agent's turn is often an ``assistant`` row with ``tool_calls`` and no text, then ``tool`` rows
(JSON, code), sometimes an assistant "let me check" that also calls a tool, and only then the
answer the person read. Real Hermes writer (``SessionDB.append_message``), real tool dispatch.
"""

from __future__ import annotations

import json

import pytest

from tests.hermes.world import call_tool, shared_world

QUESTION = "Why does the nightly invoice export time out?"
ANSWER = ("The export timed out because the invoices query had no index on customer_id; "
          "I added the index and the nightly run now finishes in forty seconds.")
TOOL_OUTPUT = json.dumps({
    "path": "billing/export.py",
    "content": "def export_invoices(db):\n    rows = db.execute('SELECT * FROM invoices WHERE customer_id = ?')\n"
               "    return [serialize(r) for r in rows]  # nightly invoice export\n",
    "exit_code": 0})
CALL = [{"id": "call_1", "type": "function",
         "function": {"name": "read_file", "arguments": json.dumps({"path": "billing/export.py"})}}]
CALL2 = [{"id": "call_2", "type": "function",
          "function": {"name": "terminal", "arguments": json.dumps({"command": "grep -rn timeout logs/nightly.log"})}}]


def agent_session(w, cwd, *, empty: str | None, final: str | None, title: str) -> str:
    sid = w.session(cwd=cwd, title=title)
    db = w.db
    db.append_message(sid, "user", QUESTION)
    db.append_message(sid, "assistant", empty, tool_calls=CALL)  # tool-call turn, no text
    db.append_message(sid, "tool", TOOL_OUTPUT, tool_call_id="call_1", tool_name="read_file")
    db.append_message(sid, "assistant", "Let me check the nightly log too.", tool_calls=CALL2)
    db.append_message(sid, "tool", '{"output": "nightly invoice export: timeout after 600s", "exit_code": 0}',
                      tool_call_id="call_2", tool_name="terminal")
    if final:
        db.append_message(sid, "assistant", final)
    db.append_message(sid, "user", "Thanks, that fixed it.")
    return sid


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with shared_world(tmp_path_factory.mktemp("agent")) as w:
        billing = w.folder("billing")
        w.project("billing", billing)
        sessions = {
            "none": agent_session(w, billing, empty=None, final=ANSWER, title="export timeout"),
            "empty": agent_session(w, billing, empty="", final=ANSWER, title="export timeout again"),
            "unfinished": agent_session(w, billing, empty="", final=None, title="export timeout, no answer"),
            "ask": w.session(cwd=billing),
        }
        yield w, sessions


def plain(snippet: str) -> str:
    return snippet.replace(">>>", "").replace("<<<", "")


def search(world, query: str, mode: str = "keyword") -> list[dict]:
    _, sessions = world
    out = call_tool("project_history_search", {"query": query, "mode": mode, "limit": 5}, sessions["ask"])
    assert out["success"] is True, out
    return out["results"]


def test_the_answer_shown_after_tool_calls_is_the_text_the_person_read(world):
    w, sessions = world
    rows = {r["session_id"]: r for r in search(world, "nightly invoice export time out")}
    for name in ("none", "empty"):
        row = rows[sessions[name]]
        assert row["role"] == "past_user" and "invoice export" in plain(row["snippet"])
        answer = next(m for m in w.messages(sessions[name]) if m["content"] == ANSWER)
        assert row["answer"]["message_id"] == answer["id"], row
        assert "customer_id" in row["answer"]["snippet"]
        assert "customer_id" in row["snippet"].split(" → ", 1)[1]


def test_a_run_that_ends_in_a_tool_call_shows_what_the_agent_said(world):
    _, sessions = world
    row = next(r for r in search(world, "nightly invoice export time out") if r["session_id"] == sessions["unfinished"])
    assert plain(row["answer"]["snippet"]) == "Let me check the nightly log too."


def test_tool_results_are_never_shown_as_a_result_or_an_answer(world):
    w, sessions = world
    tool_ids = {m["id"] for sid in sessions.values() for m in w.messages(sid) if m["role"] == "tool"}
    empty_ids = {m["id"] for sid in sessions.values() for m in w.messages(sid) if not (m["content"] or "").strip()}
    # words that only tool output holds
    for query in ("serialize rows exit_code", "timeout after 600s", "invoice export"):
        for row in search(world, query):
            shown = {row["message_id"], (row.get("answer") or {}).get("message_id"),
                     *(m["message_id"] for m in row.get("more") or [])}
            assert not shown & (tool_ids | empty_ids), (query, row)


def test_the_answer_after_a_long_run_of_tool_calls_is_found(tmp_path):
    """Answers are read for all asking hits at once, from the few rows after each question
    (answers.replies_to); an agent that worked through many tool calls first answers beyond them,
    and that answer must still be the one shown."""
    with shared_world(tmp_path) as w:
        billing = w.folder("billing")
        w.project("billing", billing)
        sid = w.session(cwd=billing, title="long export investigation")
        w.db.append_message(sid, "user", QUESTION)
        for i in range(12):  # 24 rows of machinery, more than one window of rows
            call = [{**CALL[0], "id": f"call_{i}"}]
            w.db.append_message(sid, "assistant", "", tool_calls=call)
            w.db.append_message(sid, "tool", TOOL_OUTPUT, tool_call_id=f"call_{i}", tool_name="read_file")
        w.db.append_message(sid, "assistant", ANSWER)
        ask = w.session(cwd=billing)
        out = call_tool("project_history_search", {"query": "nightly invoice export time out", "mode": "keyword"}, ask)
        row = next(r for r in out["results"] if r["session_id"] == sid)
        answer = next(m for m in w.messages(sid) if m["content"] == ANSWER)
        assert row["answer"]["message_id"] == answer["id"], row
