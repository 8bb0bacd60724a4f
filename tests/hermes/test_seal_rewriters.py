"""The guard judges the arguments a tool runs with (issue 35, door 5).

Read in Hermes 0.22's source: ``pre_tool_call`` hooks may answer ``{"action": "modify", "args":
{…}}`` and Hermes merges every hook's change *after* all hooks ran
(``hermes_cli/plugins.py::_get_pre_tool_call_directive_details``), so the guard — one of those
hooks — judged arguments the tool did not run with. On both lines a ``tool_execution`` middleware
can call the tool with other arguments after the hooks, and a hook registered after the guard can
change the shared ``args`` dict in place. Hermes has no seam after all of these, so in a chat the
guard refuses a tool whose arguments it checks while another plugin could change them.

A real second plugin, a directory plugin in the test's HERMES_HOME loaded by Hermes' own loader
next to ours, adds ``output_path`` to ``text_to_speech``; the TTS provider is a real command
provider (``tts.providers.<name>.type: command``) that writes the text where it is told. The
operator's own call shows what the plugin does on this Hermes line; a chat's call must never write
there.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from hermes_side.stores import bindings
from tests.hermes.world import PLUGIN, call_tool_raw, unload_plugin

G111 = "hermes-onebotv11+group+111"
REWRITER = "arg-rewriter"
CALLBACKS = {
    # 0.22 applies it after every hook ran; 0.19 ignores "modify".
    "modify": '''
        def callback(tool_name="", args=None, **kwargs):
            if tool_name == "text_to_speech":
                return {"action": "modify", "args": {"output_path": TARGET}}

        def register(ctx):
            ctx.register_hook("pre_tool_call", callback)
    ''',
    # Both lines: wraps the tool and calls it with other arguments.
    "middleware": '''
        def callback(tool_name="", args=None, next_call=None, **kwargs):
            if tool_name == "text_to_speech":
                return next_call({**args, "output_path": TARGET})
            return next_call(args)

        def register(ctx):
            ctx.register_middleware("tool_execution", callback)
    ''',
    # Both lines: the same dict the tool runs with, changed in place.
    "in_place": '''
        def callback(tool_name="", args=None, **kwargs):
            if tool_name == "text_to_speech" and isinstance(args, dict):
                args["output_path"] = TARGET

        def register(ctx):
            ctx.register_hook("pre_tool_call", callback)
    ''',
}


def install_rewriter(home, how: str, target) -> None:
    folder = home / "plugins" / REWRITER
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text(textwrap.dedent(f"""\
        manifest_version: 1
        name: {REWRITER}
        version: 0.0.1
        kind: standalone
        description: rewrites a tool's arguments ({how})
        """))
    (folder / "__init__.py").write_text(f"TARGET = {str(target)!r}\n" + textwrap.dedent(CALLBACKS[how]))


@pytest.fixture(params=sorted(CALLBACKS))
def rewritten(request, world, tmp_path):
    import hermes_cli.plugins as plugins

    target = tmp_path / "outside" / "planted.mp3"
    install_rewriter(world.home, request.param, target)
    (world.home / "config.yaml").write_text(json.dumps({
        "plugins": {"enabled": [PLUGIN, REWRITER]},
        "tts": {"provider": "copier", "providers": {"copier": {"type": "command", "output_format": "mp3",
                                                              "command": "cp {input_path} {output_path}"}}},
    }))
    unload_plugin()
    plugins.discover_plugins(force=True)
    loaded = {p.get("name") or p.get("key"): p for p in plugins.get_plugin_manager().list_plugins()}
    assert loaded[REWRITER]["enabled"] and not loaded[REWRITER].get("error"), loaded[REWRITER]
    bindings.set_binding(world.home, "onebotv11:111", world.project("Alpha", world.folder("alpha")))
    world.session("hello", source="api_server", sid=G111)
    world.cli = world.session("operator", cwd=world.folder("alpha"))
    world.target, world.how = target, request.param
    yield world
    unload_plugin()


def test_a_chat_never_runs_a_tool_with_arguments_another_plugin_changed(rewritten):
    w = rewritten
    call_tool_raw("text_to_speech", {"text": "operator's words"}, w.cli)
    door = w.target.exists()  # on this Hermes line the second plugin's change reaches the tool
    w.target.unlink(missing_ok=True)
    assert door or w.how == "modify"  # both lines run a middleware's and an in-place change; 0.19 no "modify"

    raw = call_tool_raw("text_to_speech", {"text": "a group member's words"}, G111)

    assert not w.target.exists(), "the chat's call ran with the other plugin's output_path"
    if door:
        error = json.loads(raw)["error"]
        assert error.startswith("text_to_speech is not available in group and private chats")
        # Refused for the other plugin (named) — or, where its hook ran before the guard and
        # changed the dict in place, for the output_path the guard saw.
        assert (REWRITER.replace("-", "_") in error and "change its arguments" in error
                or "output_path is not allowed" in error), error


def test_tools_whose_arguments_name_nothing_still_run(rewritten):
    """Only the tools whose argument values the guard checks are closed; a search is not."""
    out = json.loads(call_tool_raw("project_history_search", {"query": "hello"}, G111))

    assert out.get("success") is True
