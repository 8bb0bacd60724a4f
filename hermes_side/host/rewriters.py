"""Who else in this Hermes can change a tool's arguments after the guard judged them.

The guard (``scope/guard.py``) judges a call's arguments in its ``pre_tool_call`` hook, but the
tool does not always run with those:

- **0.22 merges "modify"**: every hook may return ``{"action": "modify", "args": {…}}`` and Hermes
  merges them all *after* every hook ran (``hermes_cli/plugins.py::_get_pre_tool_call_directive_details``,
  whose dispatcher ``_dispatch_pre_tool_call_hooks`` hands back the merged arguments) — the guard
  never sees another plugin's change, whichever order the hooks run in;
- **both lines, in place**: every hook gets the same ``args`` dict the tool then runs with, so a
  hook registered after the guard can change it in place;
- **both lines, execution middleware**: a ``tool_execution`` middleware wraps the tool and may call
  it with other arguments; on ``model_tools.handle_function_call``'s path it runs after the hooks.

Hermes has no seam after all of these (on 0.22's agent loop the hooks even run inside the
execution middleware), so the guard cannot judge the final arguments; instead, in a chat, it
refuses a tool whose arguments it checks while any such callback is registered
(:func:`argument_rewriters`). Read from the running plugin manager on every call (cheap: two lists).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from . import features

MERGED_MODIFY = "_dispatch_pre_tool_call_hooks"  # returns (block message, merged "modify" args)


def merges_modify() -> bool:
    """Whether this Hermes applies hooks' ``"modify"`` arguments (0.22; 0.19 ignores them)."""
    try:
        plugins = importlib.import_module("hermes_cli.plugins")
    except ImportError:
        return False
    return callable(getattr(plugins, MERGED_MODIFY, None))


def _callbacks(kind: str, name: str) -> list[Callable[..., Any]]:
    plugins = importlib.import_module("hermes_cli.plugins")
    if kind == "hook" and callable(getattr(plugins, "iter_hook_callbacks", None)):
        return list(plugins.iter_hook_callbacks(name))
    manager = plugins.get_plugin_manager()
    return list(getattr(manager, "_hooks" if kind == "hook" else "_middleware", {}).get(name, []))


def _named(callback: Callable[..., Any]) -> str:
    return str(getattr(callback, "__module__", None) or getattr(callback, "__qualname__", None) or "a plugin")


def argument_rewriters(own: Callable[..., Any]) -> list[str] | None:
    """The plugins whose callbacks can change a call's arguments after ``own`` (the guard's
    ``pre_tool_call``) judged them, by module; ``[]`` when none; None when this process cannot
    tell (a plugin host, or the guard is not among the hooks it can see)."""
    if features.in_plugin_host():
        return None  # a plugin host: the hooks that run are the parent process's
    try:
        hooks = _callbacks("hook", "pre_tool_call")
        middleware = _callbacks("middleware", "tool_execution")
    except Exception:
        return None
    if own not in hooks:
        return None
    at = hooks.index(own)
    others = [*hooks[:at], *hooks[at + 1:]] if merges_modify() else hooks[at + 1:]
    return sorted({_named(cb) for cb in [*others, *middleware] if cb is not own})
