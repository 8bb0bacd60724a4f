"""``hermes recall serve``: run the recall API with uvicorn. Refuses to start without a strong key."""

from __future__ import annotations

import argparse
import logging
import logging.handlers
import os
import sys
from pathlib import Path

from ..console import EXIT_USAGE, fail, int_in
from ..host.config import read_key
from ..host.profile import PROFILE_NAME, current_profile
from .access import KEY_NAME, MIN_KEY_CHARS, usable_key

# Every module logs under its own ``__name__``, so the package's logger is the one to hold the
# handlers: ``hermes_side`` when imported by that name (pip entry point, ``python -m hermes_side``),
# ``hermes_plugins.project_history_recall`` when Hermes loads the plugin as a directory.
PACKAGE_LOGGER = __name__.rsplit(".", 2)[0]


def read_api_key(home: Path) -> tuple[str, str]:
    """``(key, where it came from)``: the profile's ``.env`` wins over the environment
    (``host.config.read_key``, the rule of every key the plugin reads)."""
    return read_key(home, KEY_NAME)


def _ignored_environment_key(home: Path, key: str) -> str | None:
    """A warning when the environment holds another ``RECALL_API_KEY`` that the ``.env`` overrides
    (seen only under ``python -m hermes_side``: ``hermes`` has already replaced it by then)."""
    in_env = os.environ.get(KEY_NAME, "").strip()
    if in_env and in_env != key:
        return (f"the environment's {KEY_NAME} is not used: {home / '.env'} sets one, and the profile's .env "
                "wins (Hermes' rule for every key); remove one of the two")
    return None


def _profile_list(value: str) -> list[str]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    bad = [n for n in names if not PROFILE_NAME.match(n)]
    if bad:
        raise argparse.ArgumentTypeError(f"not a profile name: {', '.join(bad)}")
    return names


def setup_serve(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback only)")
    p.add_argument("--port", type=int_in(1, 65535, "a port number"), default=8765,
                   help="TCP port to listen on (default: 8765; the bot's HISTORY_RECALL_API_URL names it)")
    p.add_argument("--share-key-with", type=_profile_list, default=[], metavar="PROFILE[,PROFILE...]",
                   help="other profiles this profile's key may open under /p/<name> (default: none; "
                        "each profile opens with the RECALL_API_KEY of its own .env)")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"],
                   help="what the terminal and the log file show: info (default) = every request and every "
                        f"refused key; warning = refusals and faults only. The log file: {LOG_FILE}")


def run_serve(args: argparse.Namespace) -> None:
    profile = current_profile()
    key, source = read_api_key(profile.home)
    if not usable_key(key):
        where = f" (the one in {source} is too short)" if key else ""
        fail(f"set {KEY_NAME} (at least {MIN_KEY_CHARS} characters) in {profile.env_file} or in the "
             f"environment{where}; the recall API never runs without a key", EXIT_USAGE)
    import uvicorn

    from .app import create_app

    _limit_malloc_arenas()
    shared = list(getattr(args, "share_key_with", []) or [])
    log_file = log_to_terminal_and_file(profile.home, args.log_level)
    log = logging.getLogger(PACKAGE_LOGGER)
    log.warning(
        "recall API for profile '%s' (%s) on http://%s:%s; key: %s from %s%s; log file %s", profile.name,
        profile.home, args.host, args.port, KEY_NAME, source,
        f"; its key also opens: {', '.join(shared)}" if shared else "", log_file)
    if ignored := _ignored_environment_key(profile.home, key):
        log.warning("%s", ignored)
    # Our own request lines (api/app.py) replace uvicorn's access log: one format, and in the file too.
    uvicorn.run(create_app(profile.home, key, share_key_with=shared), host=args.host, port=args.port,
                log_level=args.log_level, access_log=False)


LOG_FILE = "$HERMES_HOME/logs/recall-api.log"
LOG_FORMAT = "%(asctime)s %(levelname)s %(message)s"


def log_to_terminal_and_file(home: Path, level: str) -> Path:
    """The server's own log (requests, refused keys, faults — never a key or a query) on stderr and
    in ``<home>/logs/recall-api.log`` (rotated at 5 MB, 3 old files kept), beside Hermes' own logs."""
    path = Path(home) / "logs" / "recall-api.log"
    logger = logging.getLogger(PACKAGE_LOGGER)
    logger.setLevel(level.upper())
    logger.propagate = False  # Hermes' root handlers (agent.log) get none of it twice
    formatter = logging.Formatter(LOG_FORMAT)
    handlers: list[logging.Handler] = [logging.StreamHandler()]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.handlers.RotatingFileHandler(path, maxBytes=5 << 20, backupCount=3, encoding="utf-8"))
    except OSError as exc:  # a read-only profile or a full disk: searches still answer; the terminal logs
        print(f"warning: the log file {path} cannot be written ({exc.strerror}); logging to the terminal only",
              file=sys.stderr)
    for handler in handlers:
        handler.setFormatter(formatter)
        logger.addHandler(handler)
    return path


def _limit_malloc_arenas() -> None:
    """Keep glibc from giving every worker thread its own malloc arena: each arena keeps the
    memory its thread freed, and 32 concurrent clients grew the API process from 160 to 310 MB.
    And give every block of 1 MB or more its own mapping, returned on free: glibc otherwise raises
    that threshold after the first big free, and the index's load-time temporaries (tens of MB,
    see embedding/terms.py) then stay in the heap for the life of the process."""
    import contextlib
    import ctypes

    with contextlib.suppress(OSError, AttributeError):  # not glibc (macOS, musl): nothing to tune
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-8, 2)  # M_ARENA_MAX = 2
        libc.mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD = 1 MB
