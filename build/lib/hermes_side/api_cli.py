"""``hermes recall serve``: run the recall API with uvicorn. Refuses to start without a strong key."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

MIN_KEY_CHARS = 16


def read_api_key(home: Path) -> str:
    """``RECALL_API_KEY`` from the environment, else from the profile's ``.env``."""
    key = os.environ.get("RECALL_API_KEY", "").strip()
    if key:
        return key
    env_file = Path(home) / ".env"
    if env_file.exists():
        from dotenv import dotenv_values

        key = (dotenv_values(env_file).get("RECALL_API_KEY") or "").strip()
    return key


def setup_serve(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback only)")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])


def run_serve(args: argparse.Namespace) -> None:
    from hermes_constants import get_hermes_home

    home = Path(get_hermes_home())
    key = read_api_key(home)
    if len(key) < MIN_KEY_CHARS:
        print(f"error: set RECALL_API_KEY (at least {MIN_KEY_CHARS} characters) in the environment or in "
              f"{home / '.env'}; the recall API never runs without a key", file=sys.stderr)
        sys.exit(2)
    import uvicorn

    from .api import create_app

    _limit_malloc_arenas()
    profile = _profile_name(home)
    print(f"recall API for profile '{profile}' ({home}) on http://{args.host}:{args.port}", file=sys.stderr)
    uvicorn.run(create_app(home, key, profile), host=args.host, port=args.port, log_level=args.log_level,
                access_log=args.log_level == "debug")


def _profile_name(home: Path) -> str:
    return home.name if home.parent.name == "profiles" else "default"


def _limit_malloc_arenas() -> None:
    """Keep glibc from giving every worker thread its own malloc arena: each arena keeps the
    memory its thread freed, and 32 concurrent clients grew the API process from 160 to 310 MB."""
    import contextlib
    import ctypes

    with contextlib.suppress(OSError, AttributeError):  # not glibc (macOS, musl): nothing to tune
        ctypes.CDLL("libc.so.6").mallopt(-8, 2)  # M_ARENA_MAX = 2

