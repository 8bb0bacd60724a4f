"""What the running Hermes holds of ``allow_private_urls`` — a setting it reads once per process.

Hermes resolves ``HERMES_ALLOW_PRIVATE_URLS`` / ``security.allow_private_urls`` /
``browser.allow_private_urls`` at its first URL check and keeps the answer for the life of the
process (``tools/url_safety.py``: ``_allow_private_resolved``, ``_cached_allow_private``, both
lines). A guard that re-read config.yaml on every call reopened ``vision_analyze`` to chats after
the switch was turned off, while Hermes still fetched loopback URLs for them. So the guard asks
both (:func:`private_urls`): the file now (what a restart would use) and what this process's
Hermes holds; either one allowing private addresses closes the fetching tools in chats. Where the
held value cannot be seen — the guard running in a plugin host (``plugins.isolation: host``),
another process than the Hermes it guards, or a Hermes that keeps the value elsewhere — it counts
as allowed (closed).

Each process where the guard saw a held value records it once (``<plugin dir>/held/<pid>.json``:
the value and the environment variable it saw, nothing else), so that status — always another
process — can say "restart Hermes" while a running Hermes holds what config.yaml no longer says
(:func:`restart_notes`). Records of processes that are gone are ignored and pruned.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import features
from .config import ConfigError, read_config
from .profile import profile_at

log = logging.getLogger(__name__)
ENV = "HERMES_ALLOW_PRIVATE_URLS"
# tools/url_safety.py (0.19 and 0.22): these values of the variable decide; any other falls through
# to config.yaml, where a value counts as Hermes' utils.is_truthy_value says.
ENV_TRUE, ENV_FALSE = frozenset({"true", "1", "yes"}), frozenset({"false", "0", "no"})
TRUTHY = frozenset({"1", "true", "yes", "on"})  # utils.TRUTHY_STRINGS, where Hermes has no utils


@dataclass(frozen=True)
class PrivateUrls:
    configured: bool  # config.yaml now and this process's environment, by Hermes' own rules
    held: bool | None  # what Hermes resolved in this process; None: not resolved yet
    visible: bool = True  # False: what Hermes holds cannot be seen from here

    @property
    def allowed(self) -> bool:
        """What the guard decides with: allowed when anything that counts may allow them."""
        return self.configured or bool(self.held) or not self.visible

    @property
    def why(self) -> str:
        """Why private addresses count as allowed (for the block message; no path)."""
        if self.configured:
            return "private addresses are allowed in this profile (allow_private_urls)"
        if self.held:
            return ("the running Hermes still allows private addresses (it read allow_private_urls as on; "
                    "restart Hermes)")
        return "this guard cannot see whether the running Hermes allows private addresses (a plugin host)"


def private_urls_allowed(config: Mapping[str, Any] | None, env: str | None = None) -> bool:
    """Hermes' own resolution of the switch (``url_safety._global_allow_private_urls``): the
    environment variable when it says yes or no, else ``security.``, then ``browser.allow_private_urls``."""
    value = (env or "").strip().lower()
    if value in ENV_TRUE or value in ENV_FALSE:
        return value in ENV_TRUE
    for section in ("security", "browser"):
        block = config.get(section) if isinstance(config, Mapping) else None
        if isinstance(block, Mapping) and _truthy(block.get("allow_private_urls")):
            return True
    return False


def _truthy(value: Any) -> bool:
    try:
        from utils import is_truthy_value
    except ImportError:
        return value.strip().lower() in TRUTHY if isinstance(value, str) else bool(value)
    return bool(is_truthy_value(value, default=False))


def held_value() -> tuple[bool | None, bool]:
    """(what Hermes in this process holds, whether it can be seen)."""
    if features.in_plugin_host():
        return None, False  # a plugin host: the Hermes that fetches is the parent process
    module = sys.modules.get("tools.url_safety")
    if module is None:
        return None, True  # never imported here: nothing resolved, the next check reads the file
    if not hasattr(module, "_allow_private_resolved"):
        return None, not hasattr(module, "_global_allow_private_urls")  # cached elsewhere: unseen
    if not module._allow_private_resolved:
        return None, True
    return bool(getattr(module, "_cached_allow_private", True)), True


def private_urls(home: Path, config: Mapping[str, Any] | None) -> PrivateUrls:
    """The switch as config.yaml says it now and as this process's Hermes holds it; records the
    held value for status (once per process and value)."""
    env = os.environ.get(ENV)
    held, visible = held_value()
    _record(home, held, env)
    return PrivateUrls(private_urls_allowed(config, env), held, visible)


_recorded: dict[tuple[str, int], bool | None] = {}
_lock = threading.Lock()


def _record(home: Path, held: bool | None, env: str | None) -> None:
    """Write this process's held value when it changed (nothing held: no record)."""
    key = (str(home), os.getpid())
    with _lock:
        if _recorded.get(key) is held:
            return
        _recorded[key] = held
    folder = profile_at(home).plugin_dir / "held"
    path = folder / f"{os.getpid()}.json"
    try:
        if held is None:  # Hermes dropped what it held (its own reset): nothing to report
            path.unlink(missing_ok=True)
            return
        folder.mkdir(parents=True, exist_ok=True)
        _prune(folder)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"pid": os.getpid(), "started": _started(os.getpid()),
                                   "allow_private_urls": held, "env": env}), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # the record only feeds status; the guard has decided already
        log.warning("project-history-recall: could not record what Hermes holds", exc_info=True)


def _started(pid: int) -> int | float | None:
    """A start-time fingerprint that tells a live process from a recycled pid (Hermes' own)."""
    try:
        from gateway.status import get_process_start_time

        return get_process_start_time(pid)
    except Exception:
        return None


def _alive(record: Mapping[str, Any]) -> bool:
    pid = record.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass  # exists, owned by another user
    started = record.get("started")
    return started is None or _started(pid) in (None, started)


def _records(folder: Path) -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(record, dict):
            out.append((path, record))
    return out


def _prune(folder: Path) -> None:
    for path, record in _records(folder):
        if not _alive(record):
            path.unlink(missing_ok=True)


def restart_notes(home: Path) -> list[str]:
    """One sentence per running Hermes process that holds ``allow_private_urls`` other than what
    config.yaml (with that process's environment) says now. No path."""
    try:
        config = read_config(home)
    except ConfigError:
        return []  # the report names the broken file already: that is the door
    notes = []
    for _, record in _records(profile_at(home).plugin_dir / "held"):
        held = record.get("allow_private_urls")
        if not isinstance(held, bool) or not _alive(record):
            continue
        now = private_urls_allowed(config, record.get("env") if isinstance(record.get("env"), str) else None)
        if held != now:
            notes.append(f"restart Hermes: a running Hermes (process {record['pid']}) still holds "
                         f"allow_private_urls: {str(held).lower()} from when it first read it, and the "
                         f"configuration now says {str(now).lower()}; until it restarts the guard keeps "
                         "the tools that fetch addresses closed in chats")
    return notes
