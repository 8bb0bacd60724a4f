"""The profile's ``config.yaml`` and ``.env``, read in one place.

Every setting of this plugin (the embedding section, the chat tool policy's switches, the Home
folder for moves, whether a profile enabled the plugin) and every key in a ``.env`` (the recall
API's, the embedding provider's) is read here, so each file has one parser and one answer to
"what if it is broken": :class:`ConfigError`, which each caller turns into its own safe default.

Where the plugin's own settings live depends on the Hermes: 0.19 has no settings API for plugins,
so they were ``plugins.<id>``; newer Hermes (``ctx.get_config`` / ``hermes plugins config``,
hermes_cli/plugins_manifest.py ``validate_config_schema``) keeps them under
``plugins.entries.<id>.settings``. :func:`plugin_settings` merges both (the newer place wins key
by key), so a config migrated by a newer Hermes and a hand-written 0.19 config both work.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from ..errors import RecallError
from .profile import PLUGIN_KEY, profile_at


class ConfigError(RecallError):
    """config.yaml exists but cannot be read or parsed. The message names the file, not its folder."""

    code = "config_unreadable"


_lock = threading.Lock()
_PARSED: dict[str, tuple[bytes, dict[str, Any] | ConfigError]] = {}


def read_config(home: Path | str) -> dict[str, Any]:
    """``home/config.yaml`` as a mapping; ``{}`` when there is none (or it holds no mapping).

    Cached by file content: Hermes configs are several KB of YAML, which the pure-Python parser
    takes milliseconds to read, and every search asks. (Not by mtime: a rewrite within the same
    clock tick would go unnoticed.) The mapping is shared: callers only read it."""
    path = profile_at(home).config_file
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path.name}: cannot read ({exc.__class__.__name__})", detail=str(path)) from None
    with _lock:
        cached = _PARSED.get(str(path))
    if cached is None or cached[0] != raw:
        cached = (raw, _parse(path, raw))
        with _lock:
            _PARSED[str(path)] = cached
    if isinstance(cached[1], ConfigError):
        raise ConfigError(str(cached[1]), detail=cached[1].detail)
    return cached[1]


def yaml_reader() -> tuple[Any, type[Exception]]:
    """(safe_load, its error class) from the YAML library this Hermes reads its own config with.

    Newer Hermes (0.22+) reads config.yaml through its ``hermes_yaml`` module (ruamel.yaml with a
    YAML 1.1 policy) and no longer brings PyYAML; 0.19 reads it with PyYAML. Using Hermes' own reader
    means the plugin loads wherever Hermes does and parses the file exactly as Hermes does.
    Raises ImportError naming both when neither is there (``host/deps.py`` reports it)."""
    try:
        import hermes_yaml
    except ImportError:
        pass
    else:
        return hermes_yaml.safe_load, hermes_yaml.YAMLError
    try:
        import yaml
    except ImportError:
        raise ImportError("no YAML reader: neither Hermes' hermes_yaml (0.22+) nor PyYAML (0.19) "
                          "is importable") from None
    return yaml.safe_load, yaml.YAMLError


def _parse(path: Path, raw: bytes) -> dict[str, Any] | ConfigError:
    safe_load, yaml_error = yaml_reader()
    try:
        doc = safe_load(raw.decode("utf-8"))
    except (yaml_error, UnicodeDecodeError) as exc:
        return ConfigError(f"{path.name}: cannot read YAML ({exc.__class__.__name__})", detail=str(path))
    return doc if isinstance(doc, dict) else {}


def section(doc: Any, *keys: str) -> Any:
    """``doc[k1][k2]…``, or None as soon as a level is missing or not a mapping."""
    for key in keys:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    return doc


OLD_PLACE = f"plugins.{PLUGIN_KEY}"  # Hermes 0.19
NEW_PLACE = f"plugins.entries.{PLUGIN_KEY}.settings"  # newer Hermes
SQLITE = "sqlite"


def plugin_settings(doc: Any) -> dict[str, Any]:
    """The plugin's own settings in a parsed config: ``plugins.project-history-recall`` merged with
    ``plugins.entries.project-history-recall.settings`` (where newer Hermes keeps plugin settings,
    ``hermes plugins config``), the latter winning key by key."""
    legacy = section(doc, "plugins", PLUGIN_KEY)
    newer = section(doc, "plugins", "entries", PLUGIN_KEY, "settings")
    return {**(legacy if isinstance(legacy, dict) else {}), **(newer if isinstance(newer, dict) else {})}


def plugin_section(home: Path | str, *keys: str) -> Any:
    """``plugins.project-history-recall[.keys…]`` of the profile's config.yaml (None when absent),
    read through :func:`plugin_settings`."""
    return section(plugin_settings(read_config(home)), *keys) if keys else plugin_settings(read_config(home))


def settings_place(home: Path | str) -> str:
    """Where the plugin's settings are kept in this profile, as a dotted path for messages that
    name a key: the newer place when config.yaml has it, else the 0.19 one."""
    try:
        newer = section(read_config(home), "plugins", "entries", PLUGIN_KEY, "settings")
    except ConfigError:
        return OLD_PLACE
    return NEW_PLACE if isinstance(newer, dict) else OLD_PLACE


def session_backend(doc: dict[str, Any]) -> str:
    """Hermes' session store: ``database.backend`` (newer Hermes; absent = SQLite state.db)."""
    backend = section(doc, "database", "backend")
    return str(backend).strip().lower() if backend not in (None, "") else SQLITE


def read_env(home: Path | str) -> dict[str, str]:
    """The profile's ``.env`` as Hermes reads it (python-dotenv); ``{}`` when absent or unreadable.
    Values are never logged."""
    path = profile_at(home).env_file
    try:
        if not path.is_file():
            return {}
        from dotenv import dotenv_values

        return {k: v for k, v in dotenv_values(path).items() if v is not None}
    except (OSError, UnicodeDecodeError):
        return {}


def read_key(home: Path | str, name: str, environment: bool = True) -> tuple[str, str]:
    """``(value, where it came from)`` of a key the plugin reads (``RECALL_API_KEY``,
    ``PROJECT_HISTORY_EMBEDDING_API_KEY``). One rule, Hermes' own for every key: the profile's
    ``.env`` wins over the environment — ``hermes`` loads that file over the environment before any
    plugin runs, so under ``hermes`` nothing else could hold — and the environment counts when the
    ``.env`` has none (only with ``environment``: the process's own profile). ``where`` is the
    file's path or "the environment", never the value; ``("", "")`` when neither has it."""
    path = profile_at(home).env_file
    in_file = (read_env(home).get(name) or "").strip()
    if in_file:
        return in_file, str(path)
    in_env = os.environ.get(name, "").strip() if environment else ""
    return (in_env, f"the environment ({path} has none)") if in_env else ("", "")


def plugin_enabled(home: Path | str) -> bool:
    """Hermes' own rule (``hermes_cli.plugins``): listed in ``plugins.enabled`` of that profile's
    config.yaml and not in ``plugins.disabled``; a missing or unreadable config enables nothing
    (Hermes' reader answers ``{}`` for a broken file, too). Reads the given home's file only, so
    asking about another profile never touches this process's ``HERMES_HOME``."""
    try:
        plugins = section(read_config(home), "plugins")
    except ConfigError:
        return False
    if not isinstance(plugins, dict):
        return False
    enabled, disabled = plugins.get("enabled"), plugins.get("disabled")
    return (isinstance(enabled, list) and PLUGIN_KEY in enabled
            and not (isinstance(disabled, list) and PLUGIN_KEY in disabled))
