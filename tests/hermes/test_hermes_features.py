"""Any Hermes from 0.19 on: feature detection instead of a version pin (host/features.py).

Runs against the real hermes-agent 0.19.0. Newer Hermes' shapes are simulated where 0.19 cannot
produce them: state.db columns added with ALTER TABLE in the fixture (only the fixture writes
them — the plugin never writes state.db), a session backend recall cannot read, settings under
``plugins.entries`` in config.yaml, and newer Hermes' ``requires_hermes`` gate in front of 0.19's
own loader.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

import hermes_side
from tests import yamlio as yaml
from tests.hermes import hermes_line
from tests.hermes.world import PLUGIN, TOOL_NAMES, call_tool, load_plugin, unload_plugin

PACKAGE_DIR = Path(hermes_side.__file__).parent


def write_config(home: Path, extra: dict) -> None:
    cfg = {"plugins": {"enabled": [PLUGIN]}}
    for key, value in extra.items():
        if key == "plugins":
            cfg["plugins"].update(value)
        else:
            cfg[key] = value
    (home / "config.yaml").write_text(json.dumps(cfg))


# -- newer Hermes' requires_hermes gate --------------------------------------------------------
# Copied from hermes_cli/plugins_manifest.py (NousResearch/hermes-agent, 0.21+ line):
# ``_version_tuple``, ``version_satisfies`` and ``requires_hermes_error``. Newer Hermes records
# the error and skips the plugin before importing it.
_VERSION_COMPARATOR_RE = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(.+?)\s*$")


def _version_tuple(v: str):
    parts = re.split(r"[-+]", str(v).strip().lstrip("v"), maxsplit=1)[0].split(".")
    parts += ["0"] * (3 - len(parts))
    try:
        return tuple(int(x) for x in parts[:3])
    except ValueError:
        return None


def version_satisfies(spec: str, current: str) -> bool:
    cur = _version_tuple(current)
    if cur is None:
        return True
    ops = {">=": cur.__ge__, "<=": cur.__le__, "==": cur.__eq__, "!=": cur.__ne__, ">": cur.__gt__, "<": cur.__lt__}
    for clause in filter(None, (c.strip() for c in spec.split(","))):
        m = _VERSION_COMPARATOR_RE.match(clause)
        op, target = (m.group(1), m.group(2)) if m else (">=", clause)
        tgt = _version_tuple(target)
        if tgt is not None and not ops[op](tgt):
            return False
    return True


def requires_hermes_error(spec: str, current: str) -> str | None:
    if not spec or version_satisfies(spec, current):
        return None
    return f"requires hermes {spec}, running {current}"


class TestRequiresHermesGate:
    @pytest.mark.parametrize("running", ["0.19.0", "0.21.5", "0.23.5", "1.0.0"])
    def test_the_manifest_passes_newer_hermes_gate(self, running):
        spec = yaml.safe_load((PACKAGE_DIR / "plugin.yaml").read_text(encoding="utf-8"))["requires_hermes"]
        assert requires_hermes_error(spec, running) is None

    def test_the_gate_copy_rejects_what_newer_hermes_rejects(self):
        """The copied check is the real one: the old pin is skipped on every current Hermes."""
        assert requires_hermes_error(">=0.19.0,<0.20", "0.23.5") == "requires hermes >=0.19.0,<0.20, running 0.23.5"
        assert requires_hermes_error(">=0.19.0", "0.18.2") is not None

    @pytest.mark.parametrize("running", ["0.19.0", "0.23.5"])
    def test_directory_install_loads_behind_the_gate(self, world, monkeypatch, running):
        import hermes_cli.plugins as plugins

        shutil.copytree(PACKAGE_DIR, world.home / "plugins" / PLUGIN, ignore=shutil.ignore_patterns("__pycache__"))
        monkeypatch.setattr(plugins.PluginManager, "_scan_entry_points", lambda self: [])
        skipped: list[str] = []
        original = plugins.PluginManager._load_plugin

        def gated(self, manifest):  # newer Hermes: the gate runs before import
            spec = ""
            if manifest.path and (Path(manifest.path) / "plugin.yaml").exists():
                spec = str(yaml.safe_load((Path(manifest.path) / "plugin.yaml").read_text())
                           .get("requires_hermes") or "")
            if error := requires_hermes_error(spec, running):
                skipped.append(f"{manifest.name}: {error}")
                return None
            return original(self, manifest)

        monkeypatch.setattr(plugins.PluginManager, "_load_plugin", gated)
        try:
            manager = load_plugin(world.home)
            (entry,) = [p for p in manager.list_plugins() if p["key"] == PLUGIN]
            assert skipped == [] and entry["enabled"] is True and entry["error"] is None
            assert entry["tools"] == len(TOOL_NAMES)
            cur = world.session("hello", cwd=world.folder("x"))
            assert call_tool("project_history_search", {"query": "hello"}, cur)["success"] is True
        finally:
            unload_plugin()
            for name in [m for m in sys.modules if m.startswith("hermes_plugins.project_history_recall")]:
                del sys.modules[name]


# -- what the running Hermes offers ----------------------------------------------------------------

class TestDetection:
    def test_this_hermes_has_every_piece_and_its_newer_ones_are_detected(self, world):
        """Detects, per line: 0.19 offers none of the newer facts, 0.22 all of them — the report
        names exactly what this Hermes has (probed here through its own code and schema)."""
        import inspect

        import gateway.session_context as sc
        import hermes_state

        from hermes_side.actions.status import hermes_features

        report = hermes_features(world.home)
        assert report["ok"] is True and report["missing"] == [] and report["seal_gaps"] == []
        assert report["backend"] == {"name": "sqlite", "supported": True}
        params = inspect.signature(hermes_state.SessionDB.update_session_cwd).parameters
        expected = {"replace_git_meta": "replace_git_meta" in params,
                    "official_non_messaging_sources": hasattr(sc, "NON_MESSAGING_SESSION_SURFACES")}
        for table, names in (("sessions", ("hidden", "created_source")),
                             ("messages", ("display_kind", "_compressed_summary"))):
            expected.update({f"{table}.{c}": c in hermes_line.state_columns(table) for c in names})
        assert report["optional"] == expected

    def test_a_missing_sessiondb_parameter_is_named(self, monkeypatch):
        import hermes_state

        from hermes_side.host import features

        def update_session_cwd(self, session_id, cwd):  # an older/other shape
            return None

        monkeypatch.setattr(hermes_state.SessionDB, "update_session_cwd", update_session_cwd)
        names = [g.name for g in features.python_gaps()]
        assert names == ["hermes_state.SessionDB.update_session_cwd(git_branch, git_repo_root=…)"]
        assert features.seal_gaps() == []  # moves break; the seal does not depend on them

    def test_a_missing_state_db_column_is_named(self, tmp_path):
        from hermes_side.host import features

        conn = sqlite3.connect(tmp_path / "s.db")
        conn.execute("CREATE TABLE sessions (id TEXT, source TEXT, cwd TEXT)")
        conn.execute("CREATE TABLE messages (id INTEGER, session_id TEXT, role TEXT, content TEXT)")
        gaps = {g.name: g.seal for g in features.schema_gaps(conn)}
        assert gaps["state.db column sessions.parent_session_id"] is True
        assert gaps["state.db column messages.active"] is False
        assert gaps["state.db FTS table messages_fts"] is False

    def test_without_the_block_directive_the_seal_fails_closed(self, world, monkeypatch):
        """A Hermes whose pre_tool_call cannot block: status names it, session_search is refused
        even in the operator's CLI session (the guard cannot be trusted to tell chats apart)."""
        import hermes_cli.plugins as plugins

        from hermes_side.actions.status import profile_status, render_status
        from hermes_side.scope.guard import on_pre_tool_call

        for name in ("get_pre_tool_call_directive", "get_pre_tool_call_block_message"):
            monkeypatch.delattr(plugins, name)
        cli = world.session("hi", cwd=world.folder("a"))
        verdict = on_pre_tool_call(tool_name="session_search", session_id=cli)
        assert verdict["action"] == "block" and "pre_tool_call block directive" in verdict["message"]
        status = profile_status(world.home)
        assert status["hermes"]["seal_gaps"] == ["pre_tool_call block directive is missing "
                                                 "(blocking session_search in chats unavailable)"]
        # The guard's verdict stops nothing without the directive: the report must not say "closed".
        assert status["seal"]["closed"] is False
        assert status["seal"]["open_doors"][0]["door"] == "hermes"
        assert "Seal: OPEN — hermes: this Hermes lacks pre_tool_call block directive" in render_status(status)

    def test_a_missing_sessiondb_call_closes_restricted_tools_everywhere_and_the_report_says_so(
            self, world, monkeypatch):
        from hermes_side.actions.status import profile_status
        from hermes_side.host import features

        (world.home / "config.yaml").write_text("plugins: {enabled: [project-history-recall]}\n")
        monkeypatch.setattr(features, "python_gaps",
                            lambda: [features.Gap("hermes_state.SessionDB.get_session", "every search", True)])
        cli = world.session("hi", cwd=world.folder("a"))
        from hermes_side.scope.guard import on_pre_tool_call

        assert on_pre_tool_call(tool_name="terminal", session_id=cli)["action"] == "block"
        seal = profile_status(world.home)["seal"]
        assert seal["closed"] is True, seal
        assert any("SessionDB.get_session" in note and "every session" in note for note in seal["unverified"])

    def test_register_logs_each_missing_piece(self, monkeypatch, caplog):
        import hermes_cli.plugins as plugins

        monkeypatch.setattr(plugins, "VALID_HOOKS", plugins.VALID_HOOKS - {"pre_llm_call"})

        class Ctx:
            def __getattr__(self, name):
                return lambda *a, **k: None

        with caplog.at_level("WARNING"):
            hermes_side.register(Ctx())
        assert "hook pre_llm_call is missing (placing chat sessions unavailable)" in caplog.text


# -- newer state.db shapes ----------------------------------------------------------------------

NEWER_COLUMNS = (("sessions", "hidden", "INTEGER DEFAULT 0"), ("sessions", "created_source", "TEXT"),
                 ("messages", "display_kind", "TEXT"), ("messages", "_compressed_summary", "INTEGER DEFAULT 0"))


def add_newer_columns(conn: sqlite3.Connection, *wanted: str) -> None:
    """Give a state.db newer Hermes' columns where this Hermes' schema lacks them (0.19); a
    Hermes that has them (0.22) already made them. ``wanted``: column names (default all)."""
    for table, column, decl in NEWER_COLUMNS:
        if wanted and column not in wanted:
            continue
        if column not in {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")


@pytest.fixture
def newer_db(world):
    """A state.db with newer Hermes' columns (0.22 has them; on 0.19 the fixture adds them) and
    rows that use them (the fixture writes them; the plugin never does)."""
    a = world.folder("a")
    world.project("A", a)
    seen = world.session("the walrus migration plan is approved", cwd=a)
    hidden_session = world.session("walrus notes from a hidden kanban worker", cwd=a)
    scaffold = world.session("walrus question from the user", cwd=a)
    world.db.append_message(scaffold, "user", "walrus scaffolding the agent injected")
    world.db.append_message(scaffold, "assistant", "walrus summary of earlier turns")
    cur = world.session("hello", cwd=a)
    conn = sqlite3.connect(world.home / "state.db")
    try:
        add_newer_columns(conn)
        conn.execute("UPDATE sessions SET hidden = 1 WHERE id = ?", (hidden_session,))
        conn.execute("UPDATE messages SET display_kind = 'hidden' WHERE content LIKE 'walrus scaffolding%'")
        conn.execute("UPDATE messages SET _compressed_summary = 1 WHERE content LIKE 'walrus summary%'")
        conn.commit()
    finally:
        conn.close()
    return {"seen": seen, "hidden": hidden_session, "scaffold": scaffold, "current": cur}


class TestNewerRows:
    def test_hidden_sessions_scaffolding_and_summaries_are_not_returned(self, newer_db, loaded_plugin):
        found = call_tool("project_history_search", {"query": "walrus", "mode": "keyword", "limit": 10},
                          newer_db["current"])
        texts = json.dumps(found["results"], ensure_ascii=False)
        assert found["success"] is True
        assert {r["session_id"] for r in found["results"]} == {newer_db["seen"], newer_db["scaffold"]}
        assert "scaffolding" not in texts and "summary of earlier" not in texts and "hidden kanban" not in texts

    def test_a_hidden_scaffolding_row_after_a_question_is_never_shown_as_its_answer(self, world, loaded_plugin):
        a = world.folder("a")
        world.project("A", a)
        asked = world.session("Which bucket does the walrus feeder use?", cwd=a)
        world.db.append_message(asked, "assistant", "walrus feeder routing note the agent injected")
        world.db.append_message(asked, "assistant", "It uses bucket nine, next to the gate.")
        cur = world.session("hello", cwd=a)
        conn = sqlite3.connect(world.home / "state.db")
        try:
            add_newer_columns(conn, "display_kind")
            conn.execute("UPDATE messages SET display_kind = 'hidden' WHERE content LIKE '%routing note%'")
            conn.commit()
        finally:
            conn.close()
        found = call_tool("project_history_search", {"query": "walrus feeder bucket", "mode": "keyword"}, cur)
        (row,) = [r for r in found["results"] if r["session_id"] == asked]
        assert "bucket nine" in row["answer"]["snippet"].replace(">>>", "").replace("<<<", "")
        assert "routing note" not in json.dumps(found, ensure_ascii=False)

    def test_status_counts_only_eligible_rows_and_names_the_newer_features(self, world, newer_db):
        from hermes_side.actions.status import profile_status

        status = profile_status(world.home)
        (row,) = status["projects"]
        assert row["messages"] == 3  # seen, the scaffold session's user turn, current; not the hidden rows
        optional = status["hermes"]["optional"]
        assert all(optional[k] for k in ("sessions.hidden", "messages.display_kind", "messages._compressed_summary"))

    def test_the_predicate_filters_by_exactly_the_columns_this_state_db_has(self, world):
        """Detects: Hermes' own new state.db (0.19: none of the newer columns, the 0.19 predicate;
        0.22: all of them, each filtered)."""
        from hermes_side.stores.messages import ELIGIBLE_MESSAGE_SQL, eligible_sql

        conn = sqlite3.connect(world.home / "state.db")
        try:
            sql = eligible_sql(conn)
        finally:
            conn.close()
        assert sql.startswith(ELIGIBLE_MESSAGE_SQL)
        for table, column, _decl in NEWER_COLUMNS:
            if column == "created_source":
                continue  # the chat rule's column, not a message filter
            assert (f".{column}" in sql) == (column in hermes_line.state_columns(table)), column


# -- config: settings under plugins.entries, a postgres backend ------------------------------------

class TestConfig:
    def test_settings_under_plugins_entries_are_read(self, world):
        from hermes_side.embedding.settings import SettingsError, load_settings
        from hermes_side.scope.seal import seal_report

        write_config(world.home, {"plugins": {"entries": {PLUGIN: {"settings": {
            "block_session_search": False, "embedding": {"latent_terms": False}}}}}})
        assert load_settings(world.home).latent_terms is False
        assert [d["door"] for d in seal_report(world.home)["open_doors"]] == ["session_search"]
        write_config(world.home, {"plugins": {"entries": {PLUGIN: {"settings": {"embedding": {"chunk_sise": 1}}}}}})
        with pytest.raises(SettingsError, match=rf"plugins\.entries\.{PLUGIN}\.settings\.embedding: unknown key"):
            load_settings(world.home)

    def test_the_old_place_still_counts(self, world):
        from hermes_side.embedding.settings import load_settings
        from hermes_side.scope.seal import seal_report

        write_config(world.home, {"plugins": {PLUGIN: {"block_session_search": False,
                                                       "embedding": {"latent_terms": False}}}})
        assert load_settings(world.home).latent_terms is False
        assert [d["door"] for d in seal_report(world.home)["open_doors"]] == ["session_search"]

    def test_a_backend_key_this_hermes_does_not_implement_changes_nothing(self, world, capsys):
        """``database: {backend: postgres}`` on a Hermes without that backend (0.19, 0.22): Hermes
        keeps state.db, so recall still reads it, the operator's CLI keeps terminal, a chat does
        not, and status says the key is ignored."""
        import importlib.util

        from hermes_side.actions.status import profile_status
        from hermes_side.cli import main
        from hermes_side.scope.guard import on_pre_tool_call

        if importlib.util.find_spec("hermes_state_backend") is not None:
            pytest.skip("this Hermes implements database.backend (0.23.3+): the key is not stray here")
        a = world.folder("a")
        world.project("A", a)
        world.session("kestrel decision", cwd=a)
        cli = world.session("hello", cwd=a)
        chat = world.session("hi", source="api_server")
        try:
            load_plugin(world.home)  # writes config.yaml: the key goes in after
            write_config(world.home, {"database": {"backend": "postgres"}})
            found = call_tool("project_history_search", {"query": "kestrel"}, cli)
            assert found["success"] is True and found["results"], found
            assert on_pre_tool_call(tool_name="terminal", session_id=cli) is None
            assert on_pre_tool_call(tool_name="terminal", session_id=chat)["action"] == "block"
            status = profile_status(world.home)
            assert status["history"]["state"] == "ready"
            backend = status["hermes"]["backend"]
            assert backend["name"] == "sqlite" and backend["supported"] is True
            assert backend["configured"] == "postgres" and "ignored" in backend["ignored"]
            assert status["hermes"]["seal_gaps"] == [] and status["seal"]["closed"] is True
            assert not any("CLI" in note for note in status["seal"]["unverified"])
            main(["status"])
            out = capsys.readouterr().out
            assert ("database.backend 'postgres' in config.yaml is ignored: this Hermes has no such backend "
                    "and keeps its sessions in state.db, which recall reads") in out
            assert "not supported" not in out and "lacks" not in out
        finally:
            unload_plugin()

    def test_a_backend_hermes_really_opens_elsewhere_is_reported_never_silent_emptiness(
            self, world, monkeypatch, capsys):
        """Upstream 0.23.3+ with PostgreSQL sessions (simulated: its resolver is not installable
        here): searches say why they find nothing; the guard, with no readable row, treats a
        session without hints as a chat — the CLI included — and status says so in one sentence."""
        from hermes_side.actions.status import profile_status
        from hermes_side.cli import main
        from hermes_side.host import features
        from hermes_side.scope.guard import on_pre_tool_call

        a = world.folder("a")
        world.project("A", a)
        world.session("kestrel decision", cwd=a)
        cur = world.session("hello", cwd=a)
        try:
            load_plugin(world.home)
            write_config(world.home, {"database": {"backend": "postgres"}})
            monkeypatch.setattr(features, "_resolved_backend", lambda home: "postgres")
            found = call_tool("project_history_search", {"query": "kestrel"}, cur)
            assert found["success"] is False and found["code"] == "backend_unsupported"
            assert "in postgres, which recall cannot read yet" in found["error"]
            assert on_pre_tool_call(tool_name="terminal", session_id=cur)["action"] == "block"
            status = profile_status(world.home)
            assert status["history"]["state"] == "backend_unsupported"
            assert status["hermes"]["backend"] == {"name": "postgres", "supported": False,
                                                   "detail": features.backend_problem(world.home)}
            assert status["hermes"]["seal_gaps"] == []  # not a missing piece: the guard still decides
            assert features.guard_blind(world.home) in status["seal"]["unverified"]
            with pytest.raises(SystemExit) as exited:  # recall cannot work here: a script must see it
                main(["status"])
            assert exited.value.code == 1
            out = capsys.readouterr().out
            assert "History: Hermes keeps this profile's sessions in postgres, which recall cannot read yet" in out
            assert "the guard cannot tell your CLI session from a chat" in out
        finally:
            unload_plugin()

    def test_a_backend_recall_cannot_read_over_the_api_is_a_clear_503(self, world, monkeypatch):
        from fastapi.testclient import TestClient

        from hermes_side.api.app import create_app
        from hermes_side.host import features
        from hermes_side.stores import bindings

        bindings.set_binding(world.home, "onebotv11:1", world.project("A", world.folder("a")))
        monkeypatch.setattr(features, "_resolved_backend", lambda home: "postgres")
        key = "k" * 24
        client = TestClient(create_app(world.home, key))
        answer = client.post("/search", json={"query": "kestrel", "chat": "onebotv11:1"},
                             headers={"Authorization": f"Bearer {key}"})
        assert answer.status_code == 503 and answer.json()["code"] == "backend_unsupported"


def test_under_plugin_isolation_status_says_how_to_run_the_operator_commands(world, capsys):
    """``plugins.isolation: host`` (newer Hermes: the plugin runs in a plugin host, which skips
    ``ctx.register_cli_command`` — no ``hermes recall``): ``python -m hermes_side status`` says
    how to run the commands. A Hermes without plugin isolation (0.19) ignores the key: no note."""
    import importlib.util

    from hermes_side.cli import main

    write_config(world.home, {"plugins": {"isolation": "host"}})
    main(["status"])
    out = capsys.readouterr().err
    note = "run the operator commands as `python -m hermes_side <command>`"
    if importlib.util.find_spec("hermes_cli.plugin_isolation") is None:
        assert "plugins.isolation" not in out
    else:
        from hermes_cli.plugin_isolation import HOST_SKIPPED_CTX_METHODS

        assert "register_cli_command" in HOST_SKIPPED_CTX_METHODS  # what makes `hermes recall` vanish
        assert "warning: plugins.isolation is 'host'" in out and note in out
    write_config(world.home, {})
    main(["status"])
    assert "plugins.isolation" not in capsys.readouterr().err


def test_status_on_a_brand_new_profile_is_friendly(tmp_path, monkeypatch, capsys):
    from hermes_side.cli import main

    home = tmp_path / "fresh"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    main(["status"])  # exits 0: nothing wrong with a profile that has not talked yet
    out = capsys.readouterr().out
    assert "History: no conversations yet" in out and "error" not in out.lower()
    assert not (home / "state.db").exists()  # status created nothing of Hermes'


# -- newer facts used when present ------------------------------------------------------------------

class TestNewerFacts:
    @pytest.mark.parametrize("source", ["codex", "local", "gateway", "kanban", "cli", "tui"])
    def test_hermes_operator_surfaces_are_not_chats(self, source):
        from hermes_side.scope.chat_rule import origin_of

        assert origin_of("s1", {"s1": {"source": source}}, {}).chat is False

    @pytest.mark.parametrize("source", ["api_server", "webhook", "msgraph_webhook", "telegram", "somethingnew"])
    def test_surfaces_that_carry_outsiders_stay_chats(self, source):
        from hermes_side.scope.chat_rule import origin_of

        assert origin_of("s1", {"s1": {"source": source}}, {}).chat is True

    def test_the_official_list_is_used_when_hermes_has_it(self, monkeypatch):
        import gateway.session_context as sc

        from hermes_side.scope import chat_rule

        official = getattr(sc, "NON_MESSAGING_SESSION_SURFACES", None)  # 0.22 has it; 0.19 not
        if official is None:  # the copied list is used
            assert chat_rule._non_messaging() == chat_rule.UPSTREAM_NON_MESSAGING
        else:  # Hermes' own list is used
            assert chat_rule._non_messaging() == {str(x).strip().lower() for x in official}
        monkeypatch.setattr(sc, "NON_MESSAGING_SESSION_SURFACES", frozenset({"cli", "Robot"}), raising=False)
        assert chat_rule._non_messaging() == {"cli", "robot"}

    def test_created_source_keeps_a_chat_a_chat(self, world):
        """A session created by Telegram whose source now reads 'gateway' is still a chat."""
        from hermes_side.scope.chat_rule import origin_of
        from hermes_side.stores import hermes_db

        sid = world.session("hi", source="gateway")
        conn = sqlite3.connect(world.home / "state.db")
        add_newer_columns(conn, "created_source")
        conn.execute("UPDATE sessions SET created_source = 'telegram', chat_id = '-100', chat_type = 'group'"
                     " WHERE id = ?", (sid,))
        conn.commit()
        conn.close()
        ro = hermes_db.connect_ro(world.home / "state.db")
        try:
            rows = hermes_db.load_session_rows(ro)
        finally:
            ro.close()
        assert origin_of(sid, rows, {}).name == "telegram:-100"
        rows[sid]["created_source"] = None
        assert origin_of(sid, rows, {}).chat is False  # without the column: 'gateway' is the operator's

    def test_parent_session_id_of_pre_llm_call_places_a_rotated_bridge_session(self, world):
        from hermes_side.hooks import on_pre_llm_call
        from hermes_side.stores import bindings

        a = world.folder("a")
        pid = world.project("A", a)
        bindings.set_binding(world.home, "onebotv11:123", pid)
        parent = world.session("first turn", source="api_server", sid="hermes-onebotv11+group+123")
        child = world.session("after compression", source="api_server", parent=parent)
        on_pre_llm_call(session_id=child, parent_session_id=parent)
        assert world.db.get_session(child)["cwd"] == str(a)

    def test_replace_git_meta_is_passed_when_hermes_accepts_it(self, world, monkeypatch):
        import hermes_state

        from hermes_side.actions.move import move_sessions
        from hermes_side.host import features

        calls = []
        original = hermes_state.SessionDB.update_session_cwd

        def newer(self, session_id, cwd, git_branch=None, git_repo_root=None, replace_git_meta=False):
            calls.append(replace_git_meta)
            return original(self, session_id, cwd, git_branch, git_repo_root)

        monkeypatch.setattr(hermes_state.SessionDB, "update_session_cwd", newer)
        assert features.optional_features()["replace_git_meta"] is True
        b = world.folder("b")
        pid = world.project("B", b)
        sid = world.session("x", cwd=world.folder("a"))
        move_sessions(world.home, [sid], pid)
        assert calls == [True] and world.db.get_session(sid)["cwd"] == str(b)
