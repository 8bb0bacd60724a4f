"""project-history-recall: project-scoped recall of past Hermes conversations.

Loaded by Hermes' plugin loader, either as the pip entry point ``project-history-recall`` or as
this directory copied to ``$HERMES_HOME/plugins/project-history-recall/``. ``register`` only
declares tools, hooks and the CLI command — no server, no indexing, no database work — because it
runs in every Hermes process that discovers plugins.
"""

from __future__ import annotations

from typing import Any

from .tools import TOOLS, TOOLSET, check_available

__version__ = "0.1.0"


def register(ctx: Any) -> None:
    for schema, handler, emoji in TOOLS:
        ctx.register_tool(name=schema["name"], toolset=TOOLSET, schema=schema, handler=handler,
                          check_fn=check_available, emoji=emoji)
    from .hooks import HOOKS

    for name, callback in HOOKS:
        ctx.register_hook(name, callback)
    from .cli import run_recall_command, setup_recall_command

    ctx.register_cli_command("recall", "Project history recall: serve, index, status, search, consent",
                             setup_recall_command, run_recall_command,
                             description="Project-scoped recall of past conversations")
