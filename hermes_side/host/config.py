"""Where this plugin's settings live in a profile's ``config.yaml``, and Hermes' session backend.

Hermes 0.19 has no settings API for plugins, so the plugin's section was ``plugins.<id>``.
Newer Hermes (``ctx.get_config`` / ``hermes plugins config``, hermes_cli/plugins_manifest.py
``validate_config_schema``) keeps them under ``plugins.entries.<id>.settings``. Both are read
here, and only here: the newer place wins when it holds a mapping, otherwise the old one counts,
so a config migrated by a newer Hermes and a hand-written 0.19 config both work.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

PLUGIN_KEY = "project-history-recall"  # Hermes' registry key: plugins.enabled and the settings id
SQLITE = "sqlite"


class ConfigError(ValueError):
    """config.yaml exists but cannot be read as YAML; the message names no secret."""


@dataclass(frozen=True)
class PluginSettings:
    values: dict[str, Any]  # the plugin's settings mapping ({} when none)
    where: str  # dotted path they were read from, for error messages that name the key


OLD_PLACE = f"plugins.{PLUGIN_KEY}"
NEW_PLACE = f"plugins.entries.{PLUGIN_KEY}.settings"

_CACHE: dict[str, tuple[bytes, Any]] = {}


def read_config(home: Path | str) -> dict[str, Any]:
    """``home/config.yaml`` as a mapping ({} when absent). Cached by content: every search asks,
    and the pure-Python YAML parser takes milliseconds on a Hermes config."""
    path = Path(home) / "config.yaml"
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path.name}: cannot read ({exc.__class__.__name__})") from None
    cached = _CACHE.get(str(path))
    if cached is None or cached[0] != raw:
        try:
            doc = yaml.safe_load(raw.decode("utf-8")) or {}
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            doc = ConfigError(f"{path.name}: cannot read YAML ({exc.__class__.__name__})")
        cached = _CACHE[str(path)] = (raw, doc if isinstance(doc, (dict, ConfigError)) else {})
    if isinstance(cached[1], ConfigError):
        raise ConfigError(str(cached[1]))
    return cached[1]


def _get(doc: Any, *keys: str) -> Any:
    for key in keys:
        doc = doc.get(key) if isinstance(doc, dict) else None
    return doc


def plugin_settings(doc: dict[str, Any]) -> PluginSettings:
    """The plugin's settings in a parsed config: ``plugins.entries.<id>.settings`` when that is a
    mapping, else ``plugins.<id>``."""
    new = _get(doc, "plugins", "entries", PLUGIN_KEY, "settings")
    if isinstance(new, dict):
        return PluginSettings(new, NEW_PLACE)
    old = _get(doc, "plugins", PLUGIN_KEY)
    return PluginSettings(old if isinstance(old, dict) else {}, OLD_PLACE)


def settings_of(home: Path | str) -> PluginSettings:
    return plugin_settings(read_config(home))


def session_backend(doc: dict[str, Any]) -> str:
    """Hermes' session store: ``database.backend`` (newer Hermes; absent = SQLite state.db)."""
    backend = _get(doc, "database", "backend")
    return str(backend).strip().lower() if backend not in (None, "") else SQLITE
