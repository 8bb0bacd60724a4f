"""The seed's failure table (§7), one test per row, plus hostile arguments.

Every answer comes back through Hermes' real dispatch as JSON; nothing escapes the handler as an
exception (Hermes would turn that into ``{"error": "Tool execution failed: …"}``).
"""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from hermes_side.stores import hermes_db
from tests.hermes.world import PLUGIN, call_tool, call_tool_raw, shared_world

NO_CONTEXT = "No project context (no working directory recorded)"
NO_OTHERS = "No other sessions in this project"


def search(sid: str | None, query: str, **extra) -> dict:
    return call_tool("project_history_search", {"query": query, "mode": "keyword", **extra}, sid)


def hit_ids(out: dict) -> list[str]:
    return [r["session_id"] for r in out["results"]]


class TestNoStateDb:
    @pytest.fixture
    def empty_home(self, world, loaded_plugin, tmp_path, monkeypatch):
        # Warm Hermes' lazily imported tool modules first: importing tools.process_registry opens
        # <home>/state.db for its async_delegations table, which would put a state.db in the
        # fresh profile before our handler even runs (see the next test).
        call_tool("project_history_search", {"query": "warm-up"}, None)
        home = tmp_path / "fresh-profile"
        home.mkdir()
        # The plugin is enabled in the new profile, as it must be: 0.22 keeps one plugin manager
        # per profile (a profile that does not enable it has no such tool); 0.19 has one per process.
        (home / "config.yaml").write_text(json.dumps({"plugins": {"enabled": [PLUGIN]}}))
        monkeypatch.setenv("HERMES_HOME", str(home))
        return home

    def test_search_says_no_db(self, empty_home):
        out = search("s001", "kestrel")

        assert out == {"success": False, "error": "session database not found", "code": "no_db"}
        assert not (empty_home / "state.db").exists()  # and did not create one

    def test_state_db_without_a_sessions_table_says_no_db_where_hermes_leaves_one(self, empty_home):
        from tools import async_delegation

        async_delegation._connect().close()  # what importing tools.process_registry does
        assert (empty_home / "state.db").exists()
        # 0.19 creates only its own table there; 0.22 creates Hermes' whole schema — detected.
        conn = sqlite3.connect(empty_home / "state.db")
        try:
            has_sessions = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sessions'").fetchone()
        finally:
            conn.close()

        out = search("s001", "kestrel")

        if has_sessions:  # an empty history: the ordinary answer for a session with no place
            assert out["success"] is True and out["results"] == [] and out["message"].startswith(NO_CONTEXT)
        else:
            assert out["success"] is False and out["code"] == "no_db"

    def test_move_says_no_db(self, empty_home):
        out = call_tool("project_session_move", {"project_id": ""}, "s001")

        assert out["success"] is False and out["code"] == "no_db"
        assert not (empty_home / "state.db").exists()


class TestNoProjectsDb:
    def test_auto_repo_attribution_still_works(self, world, loaded_plugin):
        repo = world.repo("tool")
        world.repo("other")
        first = world.session("kestrel parser notes", cwd=repo)
        world.session("kestrel elsewhere", cwd=world.work / "other")
        cur = world.session("hello", cwd=repo)
        assert not (world.home / "projects.db").exists()

        out = search(cur, "kestrel")

        assert out["success"] is True and out["project"]["kind"] == "auto"
        assert hit_ids(out) == [first]
        assert not (world.home / "projects.db").exists()  # reading never creates it

    def test_recorded_root_alone_is_enough(self, world, loaded_plugin):
        root = str(world.work / "gone-repo")  # recorded by the desktop, no longer on disk
        first = world.session("kestrel parser notes", cwd=root, git_root=root)
        cur = world.session("hello", cwd=root, git_root=root)

        assert hit_ids(search(cur, "kestrel")) == [first]


@pytest.fixture(scope="class")
def no_context_world(tmp_path_factory):
    with shared_world(tmp_path_factory.mktemp("no-context")) as w:
        w.session("kestrel from another chat", source="api_server")
        w.session("kestrel in a folder", cwd=w.folder("plain"))
        w.cur = w.session("hello", source="api_server")
        root = w.session("hello")  # an operator session that never recorded a cwd
        w.tip = w.compress(root, "continued")
        # An operator-surface row descended from a chat session stays a chat session (issue 15 §4).
        w.chat_tip = w.compress(w.session("hello", source="api_server"), "continued")
        yield w


class TestNoProjectContext:
    """Current session with no cwd and no root: success, nothing, and no peeking elsewhere."""

    def expect_no_context(self, out: dict) -> None:
        assert out["success"] is True
        assert out["results"] == []
        assert out["message"] == NO_CONTEXT
        assert out["sessions_in_scope"] == 0

    def test_api_server_session_is_a_chat_and_is_refused(self, no_context_world):
        # Issue 8 changed this row: an api_server session is a chat session; with no chat to
        # tell and no binding it gets the chat refusal (no search), not the seed's "no context".
        raw = call_tool_raw("project_history_search", {"query": "kestrel", "mode": "keyword"}, no_context_world.cur)

        out = json.loads(raw)
        assert out["success"] is False and out["code"] == "chat_unbound"
        assert "kestrel" not in raw

    def test_rotated_lineage_without_any_cwd(self, no_context_world):
        self.expect_no_context(search(no_context_world.tip, "kestrel"))

    def test_cli_row_descended_from_a_chat_session_is_refused_like_the_chat(self, no_context_world):
        raw = call_tool_raw("project_history_search", {"query": "kestrel", "mode": "keyword"},
                            no_context_world.chat_tip)
        assert json.loads(raw)["code"] == "chat_unbound" and "kestrel" not in raw

    def test_session_row_not_written_yet(self, no_context_world):
        self.expect_no_context(search("20260910_120000_abcdef", "kestrel"))

    def test_no_session_id_at_all(self, no_context_world):
        self.expect_no_context(search(None, "kestrel"))


class TestNoOtherSessions:
    def test_only_the_current_session_in_the_project(self, world, loaded_plugin):
        proj = world.folder("proj")
        world.project("Proj", proj)
        world.session("kestrel elsewhere", cwd=world.folder("elsewhere"))
        cur = world.session("kestrel here", cwd=proj)

        out = search(cur, "kestrel")

        assert out["success"] is True and out["results"] == []
        assert out["message"] == NO_OTHERS and out["sessions_in_scope"] == 1

    def test_current_lineage_archived_and_machinery_sessions_do_not_count(self, world, loaded_plugin):
        proj = world.folder("proj")
        world.project("Proj", proj)
        archived = world.session("kestrel archived", cwd=proj)
        world.db.set_session_archived(archived, True)
        world.session("kestrel subagent", cwd=proj, source="subagent")
        root = world.session("kestrel earlier in this conversation", cwd=proj)
        tip = world.compress(root, "kestrel now")

        out = search(tip, "kestrel")

        assert out["results"] == []
        assert out["message"] == NO_OTHERS and out["sessions_in_scope"] == 1


HOSTILE_HITS = [
    ("foo AND (", "the foo module leaks handles"),
    ('"unbalanced', "an unbalanced tree rotation"),
    ("NEAR(", "near the edge of the map"),
    ("col:val", "set col:val in the config"),
    ("-x", "pass the -x flag to tar"),
    ("deploy*", "deploy went fine"),
    ("{rsync}", "rsync with checksums"),
    ("(zeppelin OR", "zeppelin hangar doors"),
    ("数据库 AND (", "数据库迁移先加列"),
]


@pytest.fixture(scope="class")
def syntax_world(tmp_path_factory):
    with shared_world(tmp_path_factory.mktemp("fts-syntax")) as w:
        proj = w.folder("proj")
        w.project("Proj", proj)
        w.hits = {stored: w.session(stored, cwd=proj) for _, stored in HOSTILE_HITS}
        w.session("glob * and (parens) and ^carets", cwd=proj)
        w.cur = w.session("hello", cwd=proj)
        yield w


class TestFtsSyntaxFallsBack:
    @pytest.fixture
    def w(self, syntax_world):
        return syntax_world

    @pytest.mark.parametrize(("query", "stored"), HOSTILE_HITS)
    def test_hostile_query_still_finds_the_message(self, w, query, stored):
        raw = call_tool_raw("project_history_search", {"query": query, "mode": "keyword"}, w.cur)

        out = json.loads(raw)
        assert out["success"] is True, out
        assert hit_ids(out) == [w.hits[stored]]

    @pytest.mark.parametrize("query", ["*", "()", "^", ":", '"', "a OR", "NOT"])
    def test_pure_syntax_is_answered_not_refused_or_crashed(self, w, query):
        raw = call_tool_raw("project_history_search", {"query": query, "mode": "keyword"}, w.cur)

        out = json.loads(raw)
        assert "Tool execution failed" not in raw
        assert out["success"] is True and isinstance(out["results"], list)
        assert out["sessions_in_scope"] == len(HOSTILE_HITS) + 2


@pytest.fixture(scope="class")
def move_failures_world(tmp_path_factory):
    with shared_world(tmp_path_factory.mktemp("move-failures")) as w:
        w.here = w.folder("here")
        w.cur = w.session("hello", cwd=w.here)
        w.pid_live = w.project("Live", w.folder("live"))
        yield w


def places(w) -> dict[str, tuple]:
    """Every session's cwd and git columns: what a move writes."""
    conn = hermes_db.connect_state(w.home)
    try:
        return {r[0]: tuple(r[1:]) for r in conn.execute("SELECT id, cwd, git_branch, git_repo_root FROM sessions")}
    finally:
        conn.close()


class TestMoveFailures:
    @pytest.fixture
    def w(self, move_failures_world):
        return move_failures_world

    def move(self, w, project_id: str, sid: str | None = "cur") -> dict:
        out = call_tool("project_session_move", {"project_id": project_id}, w.cur if sid == "cur" else sid)
        assert out["success"] is False and out["code"]
        assert w.db.get_session(w.cur)["cwd"] == str(w.here)  # nothing moved
        return out

    def test_unknown_project(self, w):
        assert self.move(w, "p_nope1234")["error"] == "project not found: p_nope1234"

    def test_unknown_slug(self, w):
        assert self.move(w, "no-such-slug")["error"] == "project not found: no-such-slug"

    def test_archived_project(self, w):
        pid = w.project("Old", w.folder("old"), archived=True)

        assert self.move(w, pid)["error"] == f"project not found: {pid}"

    def test_project_folder_missing(self, w):
        gone = w.folder("gone")
        pid = w.project("Gone", gone)
        os.rmdir(gone)

        assert self.move(w, pid)["error"] == f"project folder not found: {gone}"

    # These two name no session of the world, so ``move``'s "w.cur did not move" cannot fail for
    # them: what they specify is the refusal itself, and that no session anywhere moved.
    def test_no_current_session(self, w):
        before = places(w)
        out = self.move(w, w.pid_live, sid=None)
        assert out["code"] == "no_session" and out["error"] == "no current session to move"
        assert places(w) == before

    def test_unknown_session_moves_nothing(self, w):
        before = places(w)
        out = self.move(w, w.pid_live, sid="no-such-session")
        assert out["code"] == "not_found" and out["error"].startswith("session not found")
        assert places(w) == before


@pytest.fixture(scope="class")
def semantic_off_world(tmp_path_factory):
    with shared_world(tmp_path_factory.mktemp("semantic-off")) as w:
        proj = w.folder("proj")
        w.project("Proj", proj)
        w.hit = w.session("the kestrel deploy script uses rsync", cwd=proj)
        w.cur = w.session("hello", cwd=proj)
        yield w


class TestSemanticHalfDown:
    """Seed §7: whatever state the embedding half is in, the keyword results still come back."""

    @pytest.mark.parametrize(("embedding", "status"), [
        ({"enabled": False}, "disabled"),
        ({"provider": "openai", "base_url": "http://127.0.0.1:9/v1"}, "consent_required"),  # nothing sent
        ({"chunk_sise": 128}, "unavailable"),  # a typo in config.yaml
    ])
    @pytest.mark.parametrize("mode", ["hybrid", "semantic"])
    def test_keyword_results_still_returned(self, semantic_off_world, embedding, status, mode):
        w = semantic_off_world
        cfg = {"plugins": {"enabled": [PLUGIN], PLUGIN: {"embedding": embedding}}}
        (w.home / "config.yaml").write_text(json.dumps(cfg))

        out = call_tool("project_history_search", {"query": "kestrel deploy", "mode": mode}, w.cur)

        assert out["success"] is True and out["semantic_status"] == status
        assert hit_ids(out) == [w.hit] and out["results"][0]["score_source"] == "keyword"
        # Only a remote provider needs consent, and then the agent is told how to ask for it.
        assert ("consent" in out) is (status == "consent_required")
        if status == "consent_required":
            assert "hermes recall consent grant --projects p_" in out["consent"]["ask_user"]


SEARCH_BAD_ARGS = [
    pytest.param({"query": "kestrel", "colour": "red"}, id="unknown-extra-argument"),
    pytest.param({"query": "kestrel", "session_id": "s001"}, id="session-id-is-not-an-argument"),
    pytest.param({"query": 123}, id="query-number"),
    pytest.param({"query": ["kestrel"]}, id="query-list"),
    pytest.param({"query": None}, id="query-null"),
    pytest.param({}, id="query-missing"),
    pytest.param({"query": ""}, id="query-empty"),
    pytest.param({"query": "  \n\t "}, id="query-whitespace"),
    pytest.param({"query": "x" * 100_000}, id="query-100k-chars"),
    pytest.param({"query": "kestrel", "limit": "abc"}, id="limit-text"),
    pytest.param({"query": "kestrel", "limit": True}, id="limit-bool"),
    pytest.param({"query": "kestrel", "limit": [3]}, id="limit-list"),
    pytest.param({"query": "kestrel", "mode": "fuzzy"}, id="mode-unknown"),
    pytest.param({"query": "kestrel", "mode": 7}, id="mode-number"),
    pytest.param({"query": "kestrel", "after": "last tuesday"}, id="after-not-a-date"),
    pytest.param({"query": "kestrel", "before": 1700000000}, id="before-number"),
    pytest.param({"query": "kestrel", "after": "2026-09-02", "before": "2026-09-01"}, id="empty-range"),
    pytest.param(["kestrel"], id="arguments-not-an-object"),
]

MOVE_BAD_ARGS = [
    pytest.param({}, id="project-id-missing"),
    pytest.param({"project_id": 123}, id="project-id-number"),
    pytest.param({"project_id": None}, id="project-id-null"),
    pytest.param({"project_id": "", "cwd": "/etc"}, id="unknown-extra-argument"),
]


@pytest.fixture(scope="class")
def bad_args_world(tmp_path_factory):
    with shared_world(tmp_path_factory.mktemp("bad-args")) as w:
        proj = w.folder("proj")
        w.project("Proj", proj)
        w.session("kestrel notes", cwd=proj)
        w.cur = w.session("hello", cwd=proj)
        yield w


class TestBadArgumentsGetAClearError:
    @pytest.fixture
    def world(self, bad_args_world):
        return bad_args_world

    @pytest.fixture
    def cur(self, bad_args_world):
        return bad_args_world.cur

    def assert_clear_error(self, raw: str) -> dict:
        assert "Tool execution failed" not in raw
        out = json.loads(raw)
        assert out["success"] is False
        assert isinstance(out["code"], str) and out["code"]
        assert isinstance(out["error"], str) and out["error"]
        return out

    @pytest.mark.parametrize("args", SEARCH_BAD_ARGS)
    def test_search(self, cur, args):
        raw = call_tool_raw("project_history_search", args, cur)

        self.assert_clear_error(raw)
        assert len(raw) < 2000  # the error does not echo a huge query back

    def test_too_long_query_has_its_own_code(self, cur):
        out = search(cur, "kestrel " * 20_000)

        assert out["success"] is False and out["code"] == "query_too_long"

    @pytest.mark.parametrize("args", MOVE_BAD_ARGS)
    def test_move(self, world, cur, args):
        before = world.db.get_session(cur)["cwd"]

        self.assert_clear_error(call_tool_raw("project_session_move", args, cur))

        assert world.db.get_session(cur)["cwd"] == before

    @pytest.mark.parametrize("query", ["kestrel\x00", "\ud800kestrel", "kestrel\u202e", "k\u0301estrel"])
    def test_odd_characters_do_not_crash(self, cur, query):
        raw = call_tool_raw("project_history_search", {"query": query, "mode": "keyword"}, cur)

        assert "Tool execution failed" not in raw
        assert json.loads(raw)["success"] is True


class TestHermesWritingAtTheSameTime:
    def test_search_answers_from_the_last_commit_while_a_write_is_open(self, world, loaded_plugin):
        import sqlite3
        import time

        proj = world.folder("proj")
        world.project("Proj", proj)
        committed = world.session("kestrel committed", cwd=proj)
        cur = world.session("hello", cwd=proj)
        writer = sqlite3.connect(world.home / "state.db", timeout=1, isolation_level=None)
        try:
            writer.execute("BEGIN IMMEDIATE")  # what SessionDB._execute_write holds while writing
            writer.execute("INSERT INTO sessions (id, source, cwd, started_at) VALUES ('open', 'cli', ?, ?)",
                           (str(proj), time.time()))
            writer.execute("INSERT INTO messages (session_id, role, content, timestamp, active)"
                           " VALUES ('open', 'user', 'kestrel not committed yet', ?, 1)", (time.time(),))

            during = search(cur, "kestrel")

            writer.execute("COMMIT")
        finally:
            writer.close()

        assert during["success"] is True and hit_ids(during) == [committed]
        assert sorted(hit_ids(search(cur, "kestrel"))) == sorted([committed, "open"])
