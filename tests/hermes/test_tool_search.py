"""The model reaches ``project_history_search`` by the path this Hermes offers it.

Hermes 0.19 offers a plugin's tools to the model directly. Newer Hermes (0.22+, Tool Search on by
default) defers every plugin tool behind ``tool_search`` / ``tool_describe`` / ``tool_call``: there
a model that calls our tool by name is told it does not exist, so it must find it with a plain
query, read a catalog line that says what it is for, and call it through ``tool_call`` — which
still passes our ``pre_tool_call`` guard with the inner tool's name. Each test detects which path
the running Hermes offers and walks that one, with the real loader, registry and dispatch.
"""

from __future__ import annotations

import json

import pytest

from tests.hermes.world import call_tool

QUERIES = ["search past conversations", "find what we decided", "history", "what did we discuss before"]


def offered(platform: str) -> tuple[list[str], dict[str, dict]]:
    """(the platform's toolsets, the tool definitions the model is sent) — after Hermes' own assembly."""
    import model_tools
    from hermes_cli.config import load_config
    from hermes_cli.tools_config import _get_platform_tools

    toolsets = sorted(_get_platform_tools(load_config(), platform))
    defs = model_tools.get_tool_definitions(enabled_toolsets=toolsets, quiet_mode=True)
    return toolsets, {d["function"]["name"]: d["function"] for d in defs}


def bridge(name: str, args: dict, session_id: str, toolsets: list[str]) -> dict:
    import model_tools

    return json.loads(model_tools.handle_function_call(name, args, task_id="test-task", session_id=session_id,
                                                       enabled_toolsets=toolsets))


@pytest.fixture
def history(world):
    a = world.folder("a")
    world.project("A", a)
    past = world.session("we decided the kestrel cache expires after ten minutes", cwd=a)
    current = world.session("hello", cwd=a)
    return past, current


@pytest.mark.parametrize("platform", ["cli", "api_server", "telegram"])
def test_the_model_reaches_the_search_tool(history, loaded_plugin, platform):
    past, current = history
    toolsets, defs = offered(platform)
    if "project_history_search" in defs:  # offered directly (0.19, or Tool Search off)
        found = call_tool("project_history_search", {"query": "kestrel", "mode": "keyword"}, current)
        assert [r["session_id"] for r in found["results"]] == [past]
        return
    assert "tool_search" in defs, f"{platform}: neither project_history_search nor tool_search is offered"
    # Plain queries a model would write find it among the few tools offered for them (beside
    # Hermes' own session_search, which the chat guard closes in groups).
    for query in QUERIES:
        result = bridge("tool_search", {"queries": [query]}, current, toolsets)
        matches = result["results"][0]["matches"]
        assert "project_history_search" in matches[:3], (query, matches)
    # What the model reads about it says what it is for.
    described = bridge("tool_describe", {"names": ["project_history_search"]}, current, toolsets)
    description = described["tools"]["project_history_search"]["description"]
    assert description.startswith("Search past conversations in the SAME project")
    # The call through the bridge reaches our handler (and our guard: the session is a CLI one).
    called = bridge("tool_call", {"calls": [{"name": "project_history_search",
                                             "arguments": {"query": "kestrel", "mode": "keyword"}}]},
                    current, toolsets)
    assert called["success"] is True and [r["session_id"] for r in called["results"]] == [past]

