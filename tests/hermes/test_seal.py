"""Issue 8: a chat's history never leaves its project — through any surface, on any failure.

Every scenario runs through Hermes' own plugin loader and tool dispatch
(``model_tools.handle_function_call``), with chat sessions written by Hermes' ``SessionDB``: NoneBot
bridge ids on api_server rows, a messaging-gateway row (``record_gateway_session_peer``), a private
chat, an api_server session known only by its session key. Each chat says one word nobody else
says; every answer is checked for the words of the chats it must not show.
"""

from __future__ import annotations

import json

import pytest

from hermes_side.actions import chat_service
from hermes_side.stores import bindings
from tests.hermes.world import call_tool, call_tool_raw

# One word per place; a leak shows up as a word in the raw tool output.
WORDS = {
    "alpha": "alphaword", "beta": "betaword", "home": "homeword",
    "g111": "walrus", "g222": "narwhal", "dm42": "pelican", "tg": "toucan", "apikey": "marmot",
}
G111, G222 = "hermes-onebotv11+group+111", "hermes-onebotv11+group+222"
DM42, TG = "hermes-onebotv11+private+42", "tg-session-1"
TG_CHAT = "telegram:-100555"


def search(sid: str, query: str = "kestrel") -> tuple[dict, str]:
    raw = call_tool_raw("project_history_search", {"query": query, "mode": "keyword", "limit": 10}, sid)
    return json.loads(raw), raw


def leaked(raw: str, *allowed: str) -> list[str]:
    return [word for key, word in WORDS.items() if key not in allowed and word in raw]


def first_turn(manager, session_id: str) -> None:
    manager.invoke_hook("pre_llm_call", session_id=session_id, task_id="t", turn_id="1", user_message="hi",
                        conversation_history=[], is_first_turn=True, model="m", platform="api_server",
                        sender_id="")


@pytest.fixture
def sealed(world, loaded_plugin, tmp_path, monkeypatch):
    """Alpha and Beta projects, operator sessions in each and in Home, and five chats."""
    user_home = tmp_path / "user-home"
    user_home.mkdir()
    monkeypatch.setenv("HOME", str(user_home))
    w = world
    w.manager = loaded_plugin
    w.a, w.b = w.folder("alpha"), w.folder("beta")
    w.alpha, w.beta = w.project("Alpha", w.a), w.project("Beta", w.b)
    w.cli_alpha = w.session(f"kestrel {WORDS['alpha']} plan", cwd=w.a, title="Alpha plan")
    w.cli_beta = w.session(f"kestrel {WORDS['beta']} plan", cwd=w.b, title="Beta plan")
    w.cli_home = w.session(f"kestrel {WORDS['home']} notes", cwd=user_home, title="Home notes")
    # Group 111 is bound to Alpha and its session was placed there by the first-turn hook.
    bindings.set_binding(w.home, "onebotv11:111", w.alpha)
    w.session(f"kestrel {WORDS['g111']} question", source="api_server", sid=G111)
    first_turn(loaded_plugin, G111)
    # Group 222 and a private chat are unbound; their sessions have no cwd (api_server rows).
    w.session(f"kestrel {WORDS['g222']} question", source="api_server", sid=G222)
    w.session(f"kestrel {WORDS['dm42']} question", source="api_server", sid=DM42)
    # A Telegram group served by Hermes' own gateway: the row carries platform, key and chat id.
    w.session(f"kestrel {WORDS['tg']} question", source="telegram", sid=TG)
    w.db.record_gateway_session_peer(TG, source="telegram", session_key="agent:main:telegram:group:-100555",
                                     chat_id="-100555", chat_type="group")
    # An api_server session whose chat is known only from the X-Hermes-Session-Key header.
    w.session(f"kestrel {WORDS['apikey']} question", source="api_server", sid="api-0123456789abcdef")
    w.cur_home = w.session("hello", cwd=user_home)
    w.cur_alpha = w.session("hello", cwd=w.a)
    w.cur_beta = w.session("hello", cwd=w.b)
    return w


class TestChatSearchesOnlyItsProject:
    def test_bound_group_sees_its_project_and_nothing_else(self, sealed):
        w = sealed
        cur = w.session("what did we say?", source="api_server", sid=G111 + "+7")  # per-user session
        out, raw = search(cur)

        assert out["success"] is True and out["project"]["id"] == w.alpha
        assert {r["session_id"] for r in out["results"]} == {w.cli_alpha, G111}
        assert leaked(raw, "alpha", "g111") == []
        assert "primary_path" not in out["project"] and str(w.a) not in raw  # no server folder in a group

    def test_bound_group_before_its_session_was_placed_still_searches_the_bound_project(self, sealed):
        w = sealed
        cur = w.session("new turn", source="api_server", sid=G111 + "-g2")  # after /clear, not placed yet
        assert w.db.get_session(cur)["cwd"] is None

        out, raw = search(cur)

        assert out["project"]["id"] == w.alpha and leaked(raw, "alpha", "g111") == []

    @pytest.mark.parametrize("sid", [G222, DM42, "api-0123456789abcdef"], ids=["group", "private", "no-chat"])
    def test_unbound_chats_are_refused_never_home(self, sealed, sid):
        out, raw = search(sid)

        assert out == {"success": False, "error": out["error"], "code": "chat_unbound"}
        assert leaked(raw) == []

    def test_gateway_session_is_a_chat_session(self, sealed):
        w = sealed
        out, raw = search(TG)
        assert out["code"] == "chat_unbound" and leaked(raw) == []

        chat_service.move_chat(w.home, TG_CHAT, "beta")
        out, raw = search(TG)

        assert out["success"] is True and out["project"]["id"] == w.beta
        assert [r["session_id"] for r in out["results"]] == [w.cli_beta]
        assert leaked(raw, "beta", "tg") == []

    def test_gateway_peer_recorded_after_the_row_is_seen_at_once(self, sealed):
        w = sealed
        bindings.set_binding(w.home, "discord:777", w.beta)
        sid = w.session("hello", source="discord", sid="dc-session-1")  # the gateway creates the row...
        assert search(sid)[0]["code"] == "chat_unbound"  # ...no chat yet: refused (and the map is cached)

        w.db.record_gateway_session_peer(sid, source="discord", session_key="agent:main:discord:group:777",
                                         chat_id="777", chat_type="group")  # ...then records its peer
        out, raw = search(sid)

        assert out["project"]["id"] == w.beta and leaked(raw, "beta") == []

    def test_session_key_header_names_the_chat_of_an_api_server_session(self, sealed):
        from gateway.session_context import clear_session_vars, set_session_vars

        w = sealed
        bindings.set_binding(w.home, "telegram:-100999", w.beta)
        sid = "api-fedcba9876543210"
        w.session("hello", source="api_server", sid=sid)
        token = set_session_vars(platform="api_server", session_key="agent:main:nonebot-telegram:group:-100999",
                                 session_id=sid)
        try:
            first_turn(w.manager, sid)
            out, raw = search(sid)
        finally:
            clear_session_vars(token)

        assert out["project"]["id"] == w.beta and leaked(raw, "beta") == []

    def test_compression_child_of_a_group_session_keeps_the_group(self, sealed):
        w = sealed
        w.db.end_session(G111, "compression")  # Hermes rotates: the child gets a new id, no cwd, no key
        child = w.session("continued", source="api_server", sid="20261201_120000_abcdef", parent=G111)

        out, raw = search(child)

        assert out["project"]["id"] == w.alpha
        assert [r["session_id"] for r in out["results"]] == [w.cli_alpha]  # its own conversation excluded
        assert leaked(raw, "alpha") == []

    def test_subagent_of_a_chat_session_is_sealed_too(self, sealed):
        w = sealed
        child = w.session("delegated", source="subagent", parent=G222, cwd=w.b)

        out, raw = search(child)

        assert out["code"] == "chat_unbound" and leaked(raw) == []

    def test_cli_search_of_a_chat_session_follows_the_same_rule(self, sealed, capsys):
        from hermes_side.cli import main

        with pytest.raises(SystemExit) as err:
            main(["search", "kestrel", "--session", G222, "--mode", "keyword", "--json"])

        captured = capsys.readouterr()
        assert err.value.code == 2 and "not linked to a project" in captured.err
        assert leaked(captured.out + captured.err) == []


class TestOpenIsSealedLikeSearch:
    """``project_history_open`` reads around a hit: the same scope rule, the same refusals."""

    def message_of(self, w, session_id: str) -> int:
        return w.db.get_messages(session_id)[0]["id"]

    def test_bound_group_opens_its_project_but_not_another_chat_or_project(self, sealed):
        w = sealed
        cur = w.session("what did we say?", source="api_server", sid=G111 + "+8")

        own = call_tool("project_history_open", {"message_id": self.message_of(w, w.cli_alpha)}, cur)
        assert own["success"] is True and "primary_path" not in own["project"]
        assert leaked(json.dumps(own, ensure_ascii=False), "alpha") == []
        for other in (w.cli_beta, w.cli_home, G222, DM42, TG):
            raw = call_tool_raw("project_history_open", {"message_id": self.message_of(w, other)}, cur)
            assert json.loads(raw)["code"] == "not_found" and leaked(raw) == []

    def test_unbound_chat_cannot_open_anything(self, sealed):
        w = sealed
        raw = call_tool_raw("project_history_open", {"message_id": self.message_of(w, w.cli_home)}, G222)
        assert json.loads(raw)["success"] is False and leaked(raw) == []

    def test_session_key_only_chat_is_sealed_for_open(self, sealed):
        from gateway.session_context import clear_session_vars, set_session_vars

        w = sealed
        bindings.set_binding(w.home, "telegram:-100998", w.beta)
        sid = "api-00112233445566ff"
        w.session("hello", source="api_server", sid=sid)
        token = set_session_vars(platform="api_server", session_key="agent:main:nonebot-telegram:group:-100998",
                                 session_id=sid)
        try:
            first_turn(w.manager, sid)
            inside = call_tool("project_history_open", {"message_id": self.message_of(w, w.cli_beta)}, sid)
            outside = call_tool_raw("project_history_open", {"message_id": self.message_of(w, w.cli_alpha)}, sid)
        finally:
            clear_session_vars(token)

        assert inside["success"] is True and inside["project"]["id"] == w.beta
        assert json.loads(outside)["code"] == "not_found" and leaked(outside) == []


class TestHomeNeverHoldsChatHistory:
    def test_home_cli_session_sees_no_chat(self, sealed):
        out, raw = search(sealed.cur_home)

        assert out["project"]["kind"] == "home"
        assert [r["session_id"] for r in out["results"]] == [sealed.cli_home]
        assert leaked(raw, "home") == []

    def test_project_cli_session_sees_only_chats_bound_to_that_project(self, sealed):
        w = sealed
        out_a, raw_a = search(w.cur_alpha)
        out_b, raw_b = search(w.cur_beta)

        assert leaked(raw_a, "alpha", "g111") == [] and WORDS["g111"] in raw_a
        assert leaked(raw_b, "beta") == []

    def test_a_chat_session_in_a_project_its_chat_is_not_bound_to_is_invisible_there(self, sealed):
        from hermes_side.actions.move import move_sessions

        w = sealed
        move_sessions(w.home, [G222], w.beta)  # e.g. POST /move {"session_id"} by hand; chat still unbound

        out, raw = search(w.cur_beta)

        assert [r["session_id"] for r in out["results"]] == [w.cli_beta] and leaked(raw, "beta") == []


class TestAgentCannotMoveAChat:
    @pytest.mark.parametrize("sid, target", [(G111, "beta"), (G222, ""), (TG, "alpha")],
                             ids=["bound-to-other-project", "unbound-to-home", "gateway"])
    def test_move_in_a_chat_session_is_admin_only(self, sealed, sid, target):
        w = sealed
        before = w.db.get_session(sid)["cwd"]

        out = call_tool("project_session_move", {"project_id": target}, sid)

        assert out == {"success": False, "error": "only an admin can move this chat (/move in the group)",
                       "code": "admin_only"}
        assert w.db.get_session(sid)["cwd"] == before
        again, raw = search(sid)
        assert leaked(raw, "alpha", "g111") == []  # still Alpha (or still refused)

    def test_cli_sessions_keep_moving(self, sealed):
        w = sealed
        out = call_tool("project_session_move", {"project_id": "beta"}, w.cur_alpha)

        assert out["success"] is True and w.db.get_session(w.cur_alpha)["cwd"] == str(w.b)


class TestAdminMoveToHomeCloses:
    def test_after_move_home_the_group_is_refused(self, sealed):
        w = sealed
        chat_service.move_chat(w.home, "onebotv11:111", "")

        out, raw = search(G111)

        assert out["code"] == "chat_unbound" and "Home" in out["error"]
        assert leaked(raw) == []
        # ...and the group's session is not in Home for the operator either.
        _, home_raw = search(w.cur_home)
        assert leaked(home_raw, "home") == []


class TestFailClosed:
    def test_archived_bound_project_refuses_and_does_not_widen(self, sealed):
        from hermes_cli import projects_db

        w = sealed
        conn = projects_db.connect(w.home / "projects.db")
        projects_db.archive_project(conn, w.alpha)
        conn.close()

        out, raw = search(G111)
        assert out["code"] == "chat_unbound" and "archived" in out["error"]
        assert leaked(raw) == []
        _, home_raw = search(w.cur_home)  # Alpha's folder is plain: its sessions now resolve to Home
        assert leaked(home_raw, "home", "alpha") == []
        with pytest.raises(Exception) as err:
            chat_service.chat_project(w.home, "onebotv11:111")  # the API's /search {"chat"} path
        assert getattr(err.value, "code", None) == "chat_unbound"

    def test_unreadable_projects_db_is_an_error_and_is_not_cached(self, sealed):
        w = sealed
        path = w.home / "projects.db"
        good = path.read_bytes()
        assert search(G111)[0]["success"] is True  # the scope map is cached now

        path.write_bytes(b"this is not a database" * 100)
        for sid in (G111, w.cur_home):
            out, raw = search(sid)
            assert out["success"] is False and out["code"] == "unavailable"
            assert leaked(raw) == [] and str(w.home) not in raw
        moved = call_tool("project_session_move", {"project_id": "beta"}, w.cur_alpha)
        assert moved["code"] == "unavailable" and w.db.get_session(w.cur_alpha)["cwd"] == str(w.a)
        # A group's agent asking to move fails before it is known to be a chat's: no server path.
        raw = call_tool_raw("project_session_move", {"project_id": "beta"}, G111)
        assert json.loads(raw)["code"] == "unavailable" and "projects.db" in raw and str(w.home) not in raw, raw

        path.write_bytes(good)
        out, raw = search(G111)
        assert out["success"] is True and out["project"]["id"] == w.alpha and leaked(raw, "alpha", "g111") == []

    def test_status_still_reports_the_seal_when_projects_db_is_unreadable(self, sealed):
        # The seal does not rest on projects.db (chats are told by their session source): its
        # report stays, and says the same as before, while the project rows say they are unreadable.
        from hermes_side.actions.status import next_steps, profile_status, render_status

        w = sealed
        path = w.home / "projects.db"
        good, before = path.read_bytes(), profile_status(w.home)["seal"]
        path.write_bytes(b"this is not a database" * 100)
        try:
            status = profile_status(w.home)
        finally:
            path.write_bytes(good)
        assert status["seal"] == before and status["projects"] == []
        assert status["projects_unavailable"].startswith("the project list (projects.db) cannot be read: "
                                                         "the file is damaged")
        assert str(w.home) not in str(status["projects_unavailable"])
        assert "cannot be read" in render_status(status) and "No projects yet" not in render_status(status)
        # The operator is told what fixes it, once: projects.db is Hermes' file, restored from a backup.
        assert [(s["file"], s["problem"]) for s in status["stores"]] == [("projects.db", "damaged")]
        steps = next_steps(status)
        assert [s for s in steps if s.endswith("# projects.db")] == [
            "projects.db is Hermes' own file: restore it from a backup (recall only reads it)   # projects.db"]
        shown = render_status(status, steps=steps).splitlines()
        assert [line.split(":")[0] for line in shown if "projects.db" in line] == [
            "Store projects.db", "  projects.db is Hermes' own file"]

    def test_unreadable_bindings_are_an_error_not_unbound_everything(self, sealed):
        w = sealed
        path = bindings.bindings_path(w.home)
        for suffix in ("-wal", "-shm"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
        path.write_bytes(b"not a database either" * 100)

        out, raw = search(G111)

        assert out["success"] is False and out["code"] == "unavailable" and leaked(raw) == []

    def test_load_projects_raises_but_a_missing_file_is_no_projects(self, world):
        from hermes_side.stores import hermes_db

        assert hermes_db.load_projects(world.home) == []
        (world.home / "projects.db").write_bytes(b"\x00garbage" * 64)
        with pytest.raises(hermes_db.Unavailable):
            hermes_db.load_projects(world.home)


class TestSessionSearchDoor:
    def block(self, session_id: str):
        from hermes_cli.plugins import resolve_pre_tool_block

        return resolve_pre_tool_block("session_search", {"query": "kestrel"}, task_id="t", session_id=session_id)

    @pytest.mark.parametrize("sid", [G111, G222, DM42, TG, "api-0123456789abcdef"])
    def test_blocked_in_every_chat_session(self, sealed, sid):
        message = self.block(sid)

        assert message and "project_history_search" in message

    def test_cli_sessions_keep_session_search(self, sealed):
        assert self.block(sealed.cur_home) is None
        assert self.block(sealed.cur_alpha) is None

    def test_gateway_turn_before_its_row_exists_is_blocked(self, sealed):
        from gateway.session_context import clear_session_vars, set_session_vars

        token = set_session_vars(platform="telegram", session_key="agent:main:telegram:group:-1", session_id="")
        try:
            assert self.block("20261201_000000_abcdef") is not None
        finally:
            clear_session_vars(token)

    def test_operator_switch_and_status(self, sealed, capsys):
        from hermes_side.actions.status import profile_status
        from hermes_side.cli import main

        w = sealed
        assert profile_status(w.home)["seal"] == {"closed": True, "open_doors": [], "unverified": []}
        main(["status"])  # hermes recall status
        assert "Seal: closed" in capsys.readouterr().out
        cfg = {"plugins": {"enabled": ["project-history-recall"],
                           "project-history-recall": {"block_session_search": False}}}
        (w.home / "config.yaml").write_text(json.dumps(cfg))

        assert self.block(G222) is None  # the old switch still opens the door...
        seal = profile_status(w.home)["seal"]
        assert seal["closed"] is False and [d["door"] for d in seal["open_doors"]] == ["session_search"]
        main(["status"])
        assert "Seal: OPEN — session_search: allowed in chats" in capsys.readouterr().out
        (w.home / "config.yaml").write_text(json.dumps({"plugins": {"enabled": []}}))
        seal = profile_status(w.home)["seal"]  # plugin off: nothing guards the door
        assert seal["closed"] is False and [d["door"] for d in seal["open_doors"]] == ["plugin"]

    def test_guard_fails_closed_when_the_session_row_is_missing_and_no_hint_is_present(self, sealed):
        assert self.block("20261201_000000_nosuch") is not None  # no row, no key, no platform
        assert self.block("") is not None  # no session named at all
        assert self.block(sealed.cur_home) is None  # an operator's row still decides


class TestMovesAllOrNothing:
    def test_a_failed_write_restores_the_whole_lineage(self, sealed):
        w = sealed
        root = w.session("start", cwd=w.a)
        mid = w.compress(root, "middle")
        tip = w.compress(mid, "tip")
        for sid in (mid, tip):  # rotated children get their own cwd once moved; give them one now
            w.db.update_session_cwd(sid, str(w.a))
        # The disk "fills up" when the last session of the lineage is written.
        w.db._conn.execute(f"CREATE TRIGGER fail_move BEFORE UPDATE OF cwd ON sessions WHEN NEW.id = '{tip}'"
                           " BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")

        out = call_tool("project_session_move", {"project_id": "beta"}, root)

        # A full disk is a known fault (issue 39): the file and the cause, and nothing half-written.
        assert out["success"] is False and out["code"] == "unavailable"
        assert "(state.db) cannot be written: the disk is full" in out["error"]
        assert [w.db.get_session(s)["cwd"] for s in (root, mid, tip)] == [str(w.a)] * 3

    def test_chat_move_failure_keeps_the_old_binding(self, sealed):
        w = sealed
        w.db._conn.execute(f"CREATE TRIGGER fail_move BEFORE UPDATE OF cwd ON sessions WHEN NEW.id = '{G111}'"
                           " BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")

        with pytest.raises(Exception) as err:
            chat_service.move_chat(w.home, "onebotv11:111", "beta")

        assert getattr(err.value, "code", None) == "unavailable" and "(state.db)" in str(err.value)
        assert str(w.home) not in str(err.value) and "disk is full" in err.value.detail
        assert bindings.get_binding(w.home, "onebotv11:111")["project_id"] == w.alpha
        out, raw = search(G111)
        assert out["project"]["id"] == w.alpha and leaked(raw, "alpha", "g111") == []

    def test_folder_missing_keeps_the_path_out_of_the_message(self, sealed):
        from hermes_side.actions.move import MoveError

        w = sealed
        gone = w.folder("gone")
        w.project("Gone", gone)
        gone.rmdir()
        with pytest.raises(MoveError) as err:
            chat_service.move_chat(w.home, "onebotv11:111", "gone")

        assert err.value.code == "folder_missing" and str(gone) not in str(err.value)
        assert err.value.detail == str(gone)


class TestPlacementAndAdminMoveDoNotInterleave:
    def test_placement_waits_for_a_move_in_another_process_and_retries(self, sealed, monkeypatch):
        import subprocess
        import sys

        w = sealed
        monkeypatch.setattr(bindings, "LOCK_WAIT", 0.3)
        sid = G111 + "-g3"  # a new session of group 111 (after /clear)
        w.session("hello again", source="api_server", sid=sid)
        # Another process (the recall API doing /move) holds the chat's lock.
        holder = subprocess.Popen(
            [sys.executable, "-c",
             "import sys; from pathlib import Path; from hermes_side.stores import bindings\n"
             "with bindings.chat_lock(Path(sys.argv[1]), 'onebotv11:111'):\n"
             "    print('held', flush=True); sys.stdin.readline()", str(w.home)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout.readline().strip() == "held"
            first_turn(w.manager, sid)  # cannot take the lock: nothing written, not marked done
            assert w.db.get_session(sid)["cwd"] is None
            bindings.set_binding(w.home, "onebotv11:111", w.beta)  # what the move finishes with
        finally:
            holder.communicate("\n", timeout=60)

        first_turn(w.manager, sid)  # the next turn retries and reads the binding now in force

        assert w.db.get_session(sid)["cwd"] == str(w.b)


    def test_a_chat_bound_after_its_first_turn_is_placed_on_a_later_turn(self, sealed):
        w = sealed
        first_turn(w.manager, G222)  # unbound: nothing to do yet
        assert w.db.get_session(G222)["cwd"] is None
        bindings.set_binding(w.home, "onebotv11:222", w.beta, only_if_unset=True)  # the bot's initial link

        first_turn(w.manager, G222)

        assert w.db.get_session(G222)["cwd"] == str(w.b)
        out, raw = search(w.cur_beta)
        assert WORDS["g222"] in raw and leaked(raw, "beta", "g222") == []


class TestReadOnlyUri:
    def test_home_with_uri_characters_opens_its_own_file_read_only(self, tmp_path, monkeypatch):
        from hermes_side.stores import hermes_db
        from tests.hermes.world import World, load_plugin, unload_plugin

        home = tmp_path / "we?ird#ho%25me"
        home.mkdir()
        monkeypatch.setenv("HERMES_HOME", str(home))
        w = World(home, tmp_path / "work")
        try:
            load_plugin(home)
            proj = w.folder("p")
            w.project("P", proj)
            hit = w.session("kestrel notes", cwd=proj)
            cur = w.session("hello", cwd=proj)
            before = sorted(p.name for p in tmp_path.iterdir())

            out = call_tool("project_history_search", {"query": "kestrel", "mode": "keyword"}, cur)

            assert [r["session_id"] for r in out["results"]] == [hit]
            assert sorted(p.name for p in tmp_path.iterdir()) == before  # no stray "we" database
            conn = hermes_db.connect_ro(home / "state.db")
            with pytest.raises(Exception, match="readonly"):
                conn.execute("CREATE TABLE x (y)")
            conn.close()
        finally:
            unload_plugin()
            w.close()
