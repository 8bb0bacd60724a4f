"""Per-user ``/recall`` cooldown: one search per ``history_recall_cooldown`` seconds.

A user who asks too soon is told once how long to wait; further tries inside the same wait get
silence. Telling once beats silence (the user would think the bot is broken and ask again), and
staying silent afterwards keeps a spammer from turning the bot into a spammer. Only searches that
reach the API and are answered start a wait: help, usage errors, ``--open`` (a cheap read of a
list the group already has) and a search that failed (the service down, a date the API refused)
do not — the wait starts when the search goes out (so a burst cannot slip through) and is taken
back when it fails. Kept in memory: a bot restart forgets every wait, which costs nothing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from .config import plugin_config

_clock: Callable[[], float] = time.monotonic


@dataclass
class _Wait:
    until: float
    told: bool = False


_waits: dict[str, _Wait] = {}


def check(user: str) -> int | None:
    """None when ``user`` may search now; else the whole seconds left, or 0 when already told."""
    wait = _waits.get(user)
    now = _clock()
    if wait is None or now >= wait.until:
        return None
    if wait.told:
        return 0
    wait.told = True
    return max(1, math.ceil(wait.until - now))


def start(user: str) -> None:
    """A search by ``user`` went out: the next one waits ``history_recall_cooldown`` seconds."""
    seconds = plugin_config.history_recall_cooldown
    now = _clock()
    if seconds <= 0:
        return
    # Forget finished waits now and then, so the dict does not grow with every user ever seen.
    if len(_waits) > 1000:
        for key in [k for k, w in _waits.items() if now >= w.until]:
            del _waits[key]
    _waits[user] = _Wait(now + seconds)


def cancel(user: str) -> None:
    """The search ``user`` started did not get an answer: they may try again at once."""
    _waits.pop(user, None)


def reset() -> None:
    _waits.clear()
