"""Which copy of this plugin Hermes loads, and how the operator reaches its commands.

Two facts differ between Hermes lines, so both are asked of the running Hermes, never assumed:

* **Precedence.** With a directory copy in ``$HERMES_HOME/plugins/`` *and* a pip install (the
  ``hermes_agent.plugins`` entry point) of the same plugin, Hermes loads one of them: 0.19 lets
  the entry point win (scanned last, later source wins), 0.22 keeps the directory copy and drops
  the entry point. Which one is loaded is read from Hermes' own plugin manager (``list_plugins()``'s
  ``source``); status warns with both versions, since the other copy silently does nothing.
* **Isolation.** Under ``plugins.isolation: host`` (newer Hermes, ``hermes_cli.plugin_isolation``)
  the plugin runs in a plugin host where ``ctx.register_cli_command()`` is skipped, so
  ``hermes recall`` does not exist; the same commands run as ``python -m hermes_side <command>``.

Read-only: nothing here writes anything. No absolute paths in what it returns (status goes to
chat admins over the recall API too).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
from pathlib import Path
from typing import Any

from . import config
from .profile import PLUGIN_KEY

DISTRIBUTION = "project-history-recall"  # the wheel's name (pyproject.toml)
ENTRY_POINT_GROUP = "hermes_agent.plugins"
OPERATOR_COMMAND = "python -m hermes_side"
_FIELD = re.compile(r"^(name|version)\s*:\s*['\"]?([^'\"#\s]+)", re.MULTILINE)


def pip_version() -> str | None:
    """The pip-installed distribution's version when it offers Hermes the plugin entry point."""
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None
    if not any(ep.group == ENTRY_POINT_GROUP for ep in dist.entry_points):
        return None
    return dist.version


def _manifest(path: Path) -> dict[str, str]:
    """``name`` and ``version`` of a plugin.yaml: two top-level scalars, read without a YAML library."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    return {key: value for key, value in _FIELD.findall(text)}


def directory_copy(home: Path | str) -> tuple[str, str] | None:
    """(folder name, version) of a copy of this plugin under ``$HERMES_HOME/plugins``, or None."""
    root = Path(home) / "plugins"
    try:
        folders = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        return None
    for folder in folders:
        manifest = _manifest(folder / "plugin.yaml")
        if manifest.get("name") == PLUGIN_KEY:
            return folder.name, manifest.get("version", "unknown")
    return None


def loaded_copy(discover: bool = False) -> str | None:
    """``"directory"`` or ``"pip"``: the copy Hermes' plugin manager loaded in this process;
    ``discover`` runs Hermes' own discovery first when nothing is loaded yet (``python -m
    hermes_side status``). None when Hermes did not load this plugin."""
    try:
        plugins = importlib.import_module("hermes_cli.plugins")
        entries = _ours(plugins.get_plugin_manager().list_plugins())
        if not entries and discover:
            plugins.discover_plugins()
            entries = _ours(plugins.get_plugin_manager().list_plugins())
    except Exception:  # an unloadable Hermes: status reports that elsewhere (host/features.py)
        return None
    loaded = [e for e in entries if e.get("enabled") and not e.get("error")]
    if not loaded:
        return None
    return "pip" if str(loaded[0].get("source") or "") == "entrypoint" else "directory"


def _ours(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if PLUGIN_KEY in (e.get("key"), e.get("name"))]


def isolation_note(home: Path | str) -> str | None:
    """One sentence when Hermes runs this plugin in a plugin host and so skips ``hermes recall``."""
    try:
        isolation = importlib.import_module("hermes_cli.plugin_isolation")
    except ImportError:  # 0.19: every plugin runs in Hermes' own process
        return None
    try:
        doc = config.read_config(home)
    except config.ConfigError:
        return None
    try:
        host = isolation.isolation_mode(doc) == isolation.ISOLATION_HOST
    except Exception:
        return None
    if not host or "register_cli_command" not in getattr(isolation, "HOST_SKIPPED_CTX_METHODS", {}):
        return None
    return ("plugins.isolation is 'host': Hermes runs this plugin in a plugin host and skips its "
            f"`hermes recall` command; run the operator commands as `{OPERATOR_COMMAND} <command>` "
            f"with the Python that runs Hermes (e.g. `{OPERATOR_COMMAND} status`)")


def report(home: Path | str, *, discover: bool = False) -> dict[str, Any]:
    """For status: the installed copies with their versions, the one Hermes loads, and warnings."""
    pip, folder = pip_version(), directory_copy(home)
    out: dict[str, Any] = {"pip": pip, "directory": folder[1] if folder else None, "warnings": []}
    if pip and folder:
        loaded = loaded_copy(discover=discover)
        out["loaded"] = loaded
        where = f"$HERMES_HOME/plugins/{folder[0]}"
        copies = f"a directory copy (version {folder[1]}) in {where} and a pip install (version {pip})"
        if loaded == "directory":
            verdict = "Hermes loads the directory copy, so the pip install is not used"
        elif loaded == "pip":
            verdict = "Hermes loads the pip install, so the directory copy is not used"
        else:
            verdict = "Hermes loads only one of them"
        out["warnings"].append(f"two copies of {PLUGIN_KEY} are installed: {copies}; {verdict} "
                               "— remove the one you do not mean to run")
    if note := isolation_note(home):
        out["warnings"].append(note)
    return out
