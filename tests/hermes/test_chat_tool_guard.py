"""The chat tool policy through Hermes' real plugin loader and real ``pre_tool_call`` dispatch.

Another group's secret is planted in state.db, in a log file and in a text file of the profile; a
chat's agent calls the disk tools on them through ``model_tools.handle_function_call`` (registry
tools) and ``resolve_pre_tool_block`` (the agent-loop tools, as the loop asks). The secret must be
in no result; the operator's CLI session must still get its tools.
"""

from __future__ import annotations

import json

import pytest

from hermes_side.stores import bindings
from tests.hermes.world import call_tool_raw

SECRET = "zebrafinch-7731"
G111, G222 = "hermes-onebotv11+group+111", "hermes-onebotv11+group+222"


@pytest.fixture
def chats(world, loaded_plugin):
    w = world
    w.manager = loaded_plugin
    w.alpha = w.project("Alpha", w.folder("alpha"))
    bindings.set_binding(w.home, "onebotv11:111", w.alpha)
    w.session("hello from 111", source="api_server", sid=G111)
    w.session(f"our launch code is {SECRET}", source="api_server", sid=G222)  # the other group
    (w.home / "logs").mkdir(exist_ok=True)
    (w.home / "logs" / "agent.log").write_text(f"turn of group 222: {SECRET}\n")
    (w.home / "notes.txt").write_text(f"home note {SECRET}\n")
    w.cli = w.session("operator at work", cwd=w.folder("alpha"))
    w.tg = w.session("hello", source="telegram", sid="tg-1")
    w.sub = w.session("delegated", source="subagent", parent=G111)
    return w


def block(tool: str, args: dict, session_id: str) -> str | None:
    from hermes_cli.plugins import resolve_pre_tool_block

    return resolve_pre_tool_block(tool, args, task_id="t", session_id=session_id)


def dispatched(tool: str) -> str:
    """The name Hermes runs a call under (and asks pre_tool_call about): 0.22 takes an old name
    such as ``process`` as an alias of its new one (``process_manage``); 0.19 has no aliases."""
    import model_tools

    return getattr(model_tools, "_LEGACY_TOOL_ALIASES", {}).get(tool, tool)


def disk_calls(w) -> list[tuple[str, dict]]:
    return [("read_file", {"path": str(w.home / "notes.txt")}),
            ("search_files", {"pattern": SECRET, "path": str(w.home)}),
            ("terminal", {"command": f"grep -a {SECRET} {w.home}/state.db"}),
            ("execute_code", {"code": f"print(open('{w.home}/notes.txt').read())"}),
            ("write_file", {"path": str(w.home / "memories" / "MEMORY.md"), "content": "x"}),
            ("patch", {"path": str(w.home / "notes.txt"), "old_string": "home", "new_string": "x"}),
            ("process", {"action": "list"})]


@pytest.mark.parametrize("sid", [G111, G222, "tg-1", "api-0123456789abcdef"], ids=["bound", "unbound", "gateway",
                                                                                    "no-chat"])
def test_disk_tools_are_blocked_in_every_chat_session_and_return_no_secret(chats, sid):
    if sid.startswith("api-"):
        chats.session("hi", source="api_server", sid=sid)
    for tool, args in disk_calls(chats):
        raw = call_tool_raw(tool, args, sid)

        assert SECRET not in raw, tool
        assert json.loads(raw) == {"error": json.loads(raw)["error"]}, tool
        assert json.loads(raw)["error"].startswith(f"{dispatched(tool)} is not available in group and private "
                                                   "chats"), tool


def test_a_subagent_of_a_chat_is_blocked_too(chats):
    raw = call_tool_raw("read_file", {"path": str(chats.home / "notes.txt")}, chats.sub)

    assert SECRET not in raw and "not available in group and private chats" in raw


@pytest.mark.parametrize("tool, args", [("session_search", {"query": SECRET}),
                                        ("memory", {"action": "add", "target": "memory", "content": "x"}),
                                        ("delegate_task", {"goal": "read state.db"}),
                                        ("cronjob", {"action": "create", "prompt": "grep state.db"}),
                                        ("skill_manage", {"action": "create", "name": "x"}),
                                        ("browser_navigate", {"url": "file:///etc/passwd"}),
                                        ("mcp_files_read", {"path": "/"})])
def test_agent_loop_and_unverified_tools_are_blocked_in_chats_but_not_for_the_operator(chats, tool, args):
    message = block(tool, args, G111)

    assert message and message.startswith(f"{tool} is not available in group and private chats: ")
    assert block(tool, args, chats.cli) is None


def test_safe_tools_run_in_chats(chats):
    for tool, args in [("web_search", {"query": "x"}), ("todo", {"todos": []}), ("skills_list", {}),
                       ("vision_analyze", {"image_url": "https://example.org/a.png", "question": "?"}),
                       ("project_history_search", {"query": "x"})]:
        assert block(tool, args, G111) is None, tool
    assert block("vision_analyze", {"image_url": str(chats.home / "cache" / "images" / "a.png")}, G111)


def test_cli_sessions_keep_the_disk_tools(chats):
    raw = call_tool_raw("read_file", {"path": str(chats.home / "notes.txt")}, chats.cli)

    assert SECRET in raw  # the operator reads their own files
    for tool, args in disk_calls(chats):
        assert block(tool, args, chats.cli) is None, tool


def test_a_switch_opens_one_named_door_only(chats):
    cfg = {"plugins": {"enabled": ["project-history-recall"],
                       "project-history-recall": {"chat_tools": {"allow": ["read_file"]}}}}
    (chats.home / "config.yaml").write_text(json.dumps(cfg))

    assert SECRET in call_tool_raw("read_file", {"path": str(chats.home / "notes.txt")}, G111)  # opened...
    assert block("terminal", {"command": "ls"}, G111) is not None  # ...and nothing else


def test_a_broken_config_yaml_keeps_the_loaded_guard_closed(chats):
    (chats.home / "config.yaml").write_text("plugins: [unclosed\n  chat_tools: {sealed: false\n")

    raw = call_tool_raw("read_file", {"path": str(chats.home / "notes.txt")}, G222)

    assert SECRET not in raw and "not available" in raw


def test_the_guard_fails_closed_when_it_cannot_classify(chats, monkeypatch):
    from hermes_side.scope import guard

    def broken(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr(guard, "is_chat_session", broken)

    message = block("read_file", {"path": "/etc/hostname"}, chats.cli)

    assert message and "could not be identified" in message and "Traceback" not in message


# -- a tool allowed in chats is only as safe as its arguments (issue 24) --------------------------
def test_text_to_speech_cannot_write_the_profiles_files_from_a_chat(chats):
    """The red-team probe: output_path=<HERMES_HOME>/config.yaml overwrote the config, so the next
    start loaded no plugins and no guard. In a chat the argument is refused; the default
    audio_cache/ is what a chat needs, and the operator keeps the argument."""
    config = chats.home / "config.yaml"
    before = config.read_bytes()
    for target in [config, chats.home / "state.db", chats.home / "memories" / "MEMORY.md",
                   chats.home / "project-history-recall" / "forgotten.db"]:
        args = {"text": "hi", "output_path": str(target)}
        raw = call_tool_raw("text_to_speech", args, G111)

        assert "output_path is not allowed" in json.loads(raw)["error"], target
        assert block("text_to_speech", args, chats.cli) is None  # the operator's own session
    assert config.read_bytes() == before
    assert block("text_to_speech", {"text": "hi"}, G111) is None


@pytest.mark.parametrize("field", ["image_url", "reference_image_urls"])
def test_image_generate_reads_no_local_file_and_no_private_address_from_a_chat(chats, field):
    """The red-team probe: an edit-capable provider's image_url read another chat's upload from
    cache/images/ and fetched a loopback URL. Only data: images and public https addresses pass
    (Hermes' own url_safety.is_safe_url decides what is public)."""
    upload = chats.home / "cache" / "images" / "other-chat.png"
    upload.parent.mkdir(parents=True, exist_ok=True)
    upload.write_bytes(b"\x89PNG" + SECRET.encode())
    refused = [str(upload), f"file://{upload}", "cache/images/other-chat.png", "http://127.0.0.1:8642/v1/x.png",
               "https://127.0.0.1/x.png", "https://localhost/x.png", "https://10.0.0.7/x.png",
               "https://169.254.169.254/latest/meta-data", "http://93.184.216.34/x.png"]
    for source in refused:
        args = {"prompt": "make it blue", field: source if field == "image_url" else [source]}
        raw = call_tool_raw("image_generate", args, G111)

        assert SECRET not in raw and f"{field} must be" in json.loads(raw)["error"], source
        assert block("image_generate", args, chats.cli) is None
    public = "https://93.184.216.34/cat.png"  # a public literal IP
    assert block("image_generate", {"prompt": "x", field: "data:image/png;base64,iVBORw0KGgo=" if field == "image_url"
                                    else ["data:image/png;base64,iVBORw0KGgo="]}, G111) is None
    # A public https address only where Hermes' download checks every redirect too (issue 35:
    # test_seal_redirects.py); elsewhere it could redirect to loopback.
    from hermes_side.host.features import redirects_checked

    message = block("image_generate", {"prompt": "x", field: public if field == "image_url" else [public]}, G111)
    assert (message is None) is redirects_checked(), message
    assert block("image_generate", {"prompt": "a cat"}, G111) is None


def test_an_argument_the_policy_never_read_is_refused_in_a_chat(chats):
    message = block("web_search", {"query": "x", "backend_url": "http://127.0.0.1:9"}, G111)

    assert message and "'backend_url' has not been checked" in message
    assert block("web_search", {"query": "x", "backend_url": "http://127.0.0.1:9"}, chats.cli) is None
