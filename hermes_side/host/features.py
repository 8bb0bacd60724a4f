"""Which Hermes internals this plugin uses are present in the running Hermes — instead of a
version pin.

``plugin.yaml``'s ``requires_hermes`` only says ``>=0.19.0``: newer Hermes enforces that field
before import (hermes_cli/plugins_manifest.py, ``requires_hermes_error``), so an upper bound
would skip the plugin on every newer release. What the plugin really depends on is checked here,
each piece by name, at load (``register``) and in ``hermes recall status``:

* Python: the ``SessionDB`` methods moves call (and their parameters), ``projects_db``,
  ``git_probe``, the session context, the home override, the config reader;
* hooks: ``pre_llm_call`` and ``pre_tool_call`` are hooks this Hermes knows, and its
  ``pre_tool_call`` honours a ``{"action": "block"}`` directive;
* the session backend Hermes really opens (its own resolver where it has one; a
  ``database.backend`` key it does not implement is reported as ignored): only SQLite
  ``state.db`` is read;
* state.db: the tables, columns and FTS tables the searches read (:func:`schema_gaps`, given a
  connection, since opening one is the stores' job).

A missing piece the seal depends on (the chat rule, the ``session_search`` block) is in
:func:`seal_gaps`: callers fail closed on any of them. Newer, optional facts (official
non-messaging sources, hidden rows, ``replace_git_meta`` …) are in :func:`optional_features`;
they are used when present, and the 0.19 path is kept otherwise.

Pure detection: nothing here writes anything, and every check is cheap (imports Hermes already
made, ``inspect.signature``, ``PRAGMA table_info``).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import config


@dataclass(frozen=True)
class Gap:
    """One missing Hermes internal: what it is, what it breaks, and whether the seal needs it."""

    name: str  # e.g. "hermes_state.SessionDB.update_session_cwd"
    needed_for: str  # e.g. "moves"
    seal: bool = False

    def sentence(self) -> str:
        return f"{self.name} is missing ({self.needed_for} unavailable)"


# (module, attribute path, parameters it must accept, what needs it, seal)
PYTHON_INTERNALS: tuple[tuple[str, str, tuple[str, ...], str, bool], ...] = (
    ("hermes_state", "SessionDB", ("db_path",), "moves", False),
    ("hermes_state", "SessionDB.get_session", ("session_id",), "moves", False),
    ("hermes_state", "SessionDB.get_compression_lineage", ("session_id",), "moves", False),
    ("hermes_state", "SessionDB.update_session_cwd", ("session_id", "cwd", "git_branch", "git_repo_root"),
     "moves", False),
    ("hermes_cli.projects_db", "list_projects", ("conn", "include_archived"), "projects", True),
    ("tui_gateway.git_probe", "branch", ("cwd",), "moves", False),
    ("tui_gateway.git_probe", "common_repo_root", ("cwd",), "repository attribution", False),
    ("gateway.session_context", "get_session_env", ("name",), "telling chats from the operator", True),
    ("hermes_constants", "get_hermes_home", (), "profiles", True),
    ("hermes_constants", "set_hermes_home_override", (), "per-profile recall API", False),
    ("hermes_constants", "reset_hermes_home_override", (), "per-profile recall API", False),
    ("hermes_cli.config", "read_raw_config", (), "per-profile recall API", False),
)
HOOKS = ("pre_llm_call", "pre_tool_call")  # what hooks.py registers
# Newer and 0.19 names of the helper that turns a pre_tool_call return into a block.
BLOCK_DIRECTIVE = ("get_pre_tool_call_directive", "get_pre_tool_call_block_message")

# What the searches, the chat rule and the indexer read from state.db (0.19.0, schema 22).
TABLES: dict[str, tuple[str, ...]] = {
    "sessions": ("id", "source", "cwd", "git_repo_root", "git_branch", "parent_session_id", "end_reason",
                 "archived", "started_at", "title", "session_key", "chat_id", "chat_type", "message_count"),
    "messages": ("id", "session_id", "role", "content", "timestamp", "active", "compacted"),
}
FTS_TABLES = ("messages_fts", "messages_fts_trigram")
SEAL_COLUMNS = {"sessions": ("id", "source", "parent_session_id", "session_key", "chat_id", "chat_type")}

# Newer Hermes' optional columns, used when present (stores/messages.py, scope/chat_rule.py).
OPTIONAL_COLUMNS: dict[str, tuple[str, ...]] = {
    "sessions": ("hidden", "created_source"),
    "messages": ("display_kind", "_compressed_summary"),
}


def _resolve(module: str, path: str) -> Any:
    obj: Any = importlib.import_module(module)
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _accepts(func: Any, params: Iterable[str]) -> list[str]:
    """The parameters of ``params`` that ``func`` does not accept by name."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):  # a C function without a signature: trust its name
        return []
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()):
        return []
    return [p for p in params if p not in sig.parameters]


def python_gaps() -> list[Gap]:
    gaps = []
    for module, path, params, needed_for, seal in PYTHON_INTERNALS:
        name = f"{module}.{path}"
        try:
            obj = _resolve(module, path)
        except (ImportError, AttributeError):
            gaps.append(Gap(name, needed_for, seal))
            continue
        missing = _accepts(obj, params)
        if missing:
            gaps.append(Gap(f"{name}({', '.join(missing)}=…)", needed_for, seal))
    return gaps


def hook_gaps() -> list[Gap]:
    try:
        plugins = importlib.import_module("hermes_cli.plugins")
    except ImportError:
        return [Gap("hermes_cli.plugins", "every hook", True)]
    known = getattr(plugins, "VALID_HOOKS", None)
    gaps = [Gap(f"hook {hook}", "placing chat sessions" if hook == "pre_llm_call" else "blocking session_search",
                hook == "pre_tool_call")
            for hook in HOOKS if known is not None and hook not in known]
    if not any(hasattr(plugins, name) for name in BLOCK_DIRECTIVE):
        gaps.append(Gap("pre_tool_call block directive", "blocking session_search in chats", True))
    return gaps


# Upstream 0.23.3+ resolves a profile's session store here (``DatabaseSettings.backend``: sqlite
# or postgres); 0.19 and 0.22 have no such module and open ``state.db`` whatever config.yaml says.
BACKEND_MODULE = "hermes_state_backend"
BACKEND_RESOLVERS = ("resolve_database_settings", "load_database_settings")
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Backend:
    """The session store Hermes opens for a profile, and what config.yaml's key asks for."""

    name: str  # what Hermes opens: "sqlite", "postgres" …, or "unknown" (Hermes cannot resolve it)
    configured: str  # ``database.backend`` in config.yaml ("sqlite" when absent or unreadable)

    @property
    def ignored(self) -> str | None:
        """One sentence when config.yaml names a backend this Hermes does not implement."""
        if self.configured == self.name or self.name != config.SQLITE:
            return None
        return (f"database.backend '{self.configured}' in config.yaml is ignored: this Hermes has no such "
                "backend and keeps its sessions in state.db, which recall reads")


@functools.cache
def _backend_module() -> Any:
    """Hermes' backend resolver module, or ``None`` (looked up once: the guard asks on every tool call)."""
    try:
        return importlib.import_module(BACKEND_MODULE)
    except ImportError:
        return None


def _resolved_backend(home: Path) -> str | None:
    """What this Hermes' own resolver says it opens for ``home`` (``None``: this Hermes has no
    resolver, so it opens SQLite ``state.db``); ``UNKNOWN`` when the resolver refuses the profile's
    settings (then Hermes itself opens no sessions from them)."""
    module = _backend_module()
    if module is None:
        return None
    for name in BACKEND_RESOLVERS:
        resolver = getattr(module, name, None)
        if resolver is None:
            continue
        try:  # only the backend's name is read: the settings also carry the database URL
            settings = resolver(home / "state.db") if name == "resolve_database_settings" else resolver(home)
        except Exception:
            return UNKNOWN
        return str(getattr(settings, "backend", "") or config.SQLITE).strip().lower()
    return None


def session_backend(home: Path | str) -> Backend:
    """The backend Hermes really opens for the profile at ``home`` — asked of Hermes, not read from
    the key: a ``database.backend`` this Hermes does not implement changes nothing (it is reported
    as ignored)."""
    home = Path(home)
    try:
        configured = config.session_backend(config.read_config(home))
    except config.ConfigError:  # Hermes reads a broken config.yaml as {}: its default, SQLite
        configured = config.SQLITE
    return Backend(_resolved_backend(home) or config.SQLITE, configured)


def backend(home: Path | str) -> str:
    """The name of the session backend Hermes opens in this profile."""
    return session_backend(home).name


def backend_problem(home: Path | str) -> str | None:
    """A sentence when Hermes keeps the sessions somewhere other than SQLite ``state.db`` (upstream
    0.23.3+'s PostgreSQL): this plugin reads ``state.db`` only, so it would otherwise find nothing."""
    name = backend(home)
    if name == config.SQLITE:
        return None
    if name == UNKNOWN:
        return ("Hermes cannot resolve this profile's session backend from its database settings, so "
                "recall has no sessions to read")
    return f"Hermes keeps this profile's sessions in {name}, which recall cannot read yet (it reads state.db)"


def guard_blind(home: Path | str) -> str | None:
    """One sentence when the guard cannot tell the operator's CLI from a chat: the session rows
    are in a backend recall cannot read, and the classic CLI sets no session hints (platform,
    session key), so a CLI session looks like an unidentified chat and is treated as one."""
    if backend_problem(home) is None:
        return None
    return ("the session rows are in a backend recall cannot read, so the guard cannot tell your CLI "
            "session from a chat: tools closed in chats are closed in CLI sessions too")


_COLUMNS: dict[tuple[int, str, int, str], frozenset[str]] = {}
_COLUMNS_LOCK = threading.Lock()


def columns(conn: sqlite3.Connection, table: str) -> frozenset[str]:
    """The columns of ``table``, read again whenever the file's schema changes (a newer Hermes
    migrates state.db under a running reader): two header reads, where ``table_info`` built its
    rows for every statement of a search (a tenth of a keyword search's time)."""
    version = conn.execute("PRAGMA schema_version").fetchone()[0]
    files = conn.execute("PRAGMA database_list").fetchall()
    key = (id(conn), "|".join(str(f[2]) for f in files), version, table)
    with _COLUMNS_LOCK:
        have = _COLUMNS.get(key)
    if have is None:
        have = frozenset(r[1] for r in conn.execute(f"PRAGMA table_info({table})"))
        with _COLUMNS_LOCK:
            if len(_COLUMNS) > 512:  # connections come and go
                _COLUMNS.clear()
            _COLUMNS[key] = have
    return have


def schema_gaps(conn: sqlite3.Connection) -> list[Gap]:
    """Tables, columns and FTS tables of state.db this plugin reads that ``conn``'s file lacks."""
    gaps = []
    for table, wanted in TABLES.items():
        have = columns(conn, table)
        if not have:
            gaps.append(Gap(f"state.db table {table}", "every search", True))
            continue
        sealed = set(SEAL_COLUMNS.get(table, ()))
        gaps += [Gap(f"state.db column {table}.{c}", "every search", c in sealed) for c in wanted if c not in have]
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    gaps += [Gap(f"state.db FTS table {t}", "keyword search", False) for t in FTS_TABLES if t not in names]
    return gaps


def seal_gaps(home: Path | str | None = None, conn: sqlite3.Connection | None = None) -> list[str]:
    """Everything the seal (chat sessions see only their chat's project; ``session_search``
    blocked in chats) depends on that this Hermes lacks, one sentence each; ``[]`` = intact.

    For scope/guard.py and the seal report: any entry means "fail closed". ``home`` adds the
    session-backend check, ``conn`` (a read-only state.db connection) the schema check.
    """
    gaps = [g for g in python_gaps() + hook_gaps() if g.seal]
    out = [g.sentence() for g in gaps]
    # ``home`` is kept for callers; the session backend is not a seal gap: where its rows cannot be
    # read the guard still tells sessions apart by their hints and fails closed without (guard_blind).
    if conn is not None:
        out += [g.sentence() for g in schema_gaps(conn) if g.seal]
    return out


def _update_cwd_accepts_replace() -> bool:
    try:
        return not _accepts(_resolve("hermes_state", "SessionDB.update_session_cwd"), ("replace_git_meta",))
    except (ImportError, AttributeError):
        return False


def _official_surfaces() -> bool:
    try:
        return hasattr(importlib.import_module("gateway.session_context"), "NON_MESSAGING_SESSION_SURFACES")
    except ImportError:
        return False


def optional_features(conn: sqlite3.Connection | None = None) -> dict[str, bool]:
    """Newer Hermes facts the plugin uses when present (False = the 0.19 path is used)."""
    out = {"replace_git_meta": _update_cwd_accepts_replace(),
           "official_non_messaging_sources": _official_surfaces()}
    if conn is not None:
        for table, names in OPTIONAL_COLUMNS.items():
            have = columns(conn, table)
            out.update({f"{table}.{c}": c in have for c in names})
    return out


def report(home: Path | str, conn: sqlite3.Connection | None = None) -> dict[str, Any]:
    """For ``hermes recall status`` / ``GET /status``: each missing piece by name, what the seal
    lacks, the session backend, and which newer features are in use. No paths."""
    gaps = python_gaps() + hook_gaps() + (schema_gaps(conn) if conn is not None else [])
    used = session_backend(home)
    problem = backend_problem(home)
    described = {"name": used.name, "supported": problem is None}
    if used.configured != used.name:
        described["configured"] = used.configured
    if used.ignored:
        described["ignored"] = used.ignored
    if problem:
        described["detail"] = problem
    return {"ok": not gaps and problem is None,
            "backend": described,
            "missing": [g.sentence() for g in gaps],
            "seal_gaps": seal_gaps(home, conn),
            "optional": optional_features(conn)}


HOST_PROCESS_ENV = "HERMES_PLUGIN_HOST_PROCESS"  # hermes_cli.plugin_isolation.HOST_PROCESS_ENV (0.22)


def in_plugin_host() -> bool:
    """Whether this process is a plugin host (``plugins.isolation: host``, newer Hermes): then the
    guard runs here while the Hermes it guards — its hooks, its held settings — is the parent."""
    try:
        name = str(importlib.import_module("hermes_cli.plugin_isolation").HOST_PROCESS_ENV)
    except (ImportError, AttributeError):  # 0.19: every plugin runs in Hermes' own process
        name = HOST_PROCESS_ENV
    return os.environ.get(name) == "1"


def redirects_checked() -> bool:
    """Whether this Hermes fetches a chat's image source through a client that checks every
    connection, redirects included (``tools.url_safety.create_ssrf_safe_client``: 0.22's OpenAI
    image providers download through it). Without it (0.19's provider downloads with
    ``requests.get``, following redirects unchecked) a public https address can answer
    ``302 → http://127.0.0.1:…``: only ``data:`` sources are safe."""
    try:
        module = importlib.import_module("tools.url_safety")
    except ImportError:
        return False
    return callable(getattr(module, "create_ssrf_safe_client", None))


def load_problems() -> list[str]:
    """What ``register`` logs at load: the Python and hook gaps (no file is opened at load)."""
    return [g.sentence() for g in python_gaps() + hook_gaps()]
