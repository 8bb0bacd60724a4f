"""The calendar a profile's days are read in: the time zone Hermes tells its agent the time in.

Hermes (``hermes_time``) resolves it as ``HERMES_TIMEZONE``, else config.yaml's ``timezone`` (an
IANA name, "Asia/Shanghai"), else the machine's local time — a server kept in UTC is told its
users' zone that way. Recall reads the same, per profile (the recall API serves several): the
profile's ``.env`` or the environment, then its config.yaml. A day a question names ("5月3日"), a
date given as ``after``/``before`` and the time a row shows are all read in it, so "3 May" is the
day the agent and the group call 3 May. ``None``: the machine's local time.
"""

from __future__ import annotations

import logging
from datetime import tzinfo
from functools import lru_cache
from pathlib import Path

from .config import ConfigError, read_config, read_key

log = logging.getLogger(__name__)


def zone(home: Path | str) -> tzinfo | None:
    """The profile's configured time zone, or None for the machine's local time (also when the
    name is not one the time zone database knows: logged, as Hermes does, never an error)."""
    name = read_key(home, "HERMES_TIMEZONE")[0]
    if not name:
        try:
            configured = read_config(home).get("timezone")
        except ConfigError:  # reported where the configuration matters (status, the seal)
            configured = None
        name = configured.strip() if isinstance(configured, str) else ""
    return _named(name) if name else None


@lru_cache(maxsize=32)
def _named(name: str) -> tzinfo | None:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        log.warning("time zone %r is not one this machine knows (%s); days are read in its local time",
                    name, exc.__class__.__name__)
        return None
