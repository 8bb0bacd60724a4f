"""The local model's query vector and latent terms, kept in a file between runs (``--query-cache``).

An ablation runs the same ~2,500 questions a dozen times, and the model is most of a hybrid search;
with the cache p95 leaves the model out. Nothing of the plugin is patched: ``serve`` asks
``make_embedder`` for the one embedder a search of the home uses (one per configuration and
process) and puts the cache in front of that object's two query calls. The class, and every other
embedder (plain e5's, the indexer's), stay as shipped.
"""

from __future__ import annotations

import atexit
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any


class QueryCache:
    """``(call, model fingerprint, text) → result``, read from ``path`` and written back at exit
    when it grew."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.store: dict[tuple[str, str, str], Any] = pickle.loads(path.read_bytes()) if path.exists() else {}
        self._size = len(self.store)
        self._served: set[int] = set()
        atexit.register(self.save)

    def serve(self, home: Path) -> None:
        """Answer the query calls of the embedder that searches of ``home`` use from the cache."""
        from hermes_side.embedding import load_settings, make_embedder  # noqa: PLC0415

        embedder = make_embedder(home, load_settings(home))
        if embedder.remote or id(embedder) in self._served:
            return  # a remote provider's answers are not ours to keep
        for name in ("embed_query", "query_terms"):
            setattr(embedder, name, self._cached(name, embedder.fingerprint, getattr(embedder, name)))
        self._served.add(id(embedder))

    def _cached(self, name: str, fingerprint: str, call: Callable[[str], Any]) -> Callable[[str], Any]:
        def cached(text: str) -> Any:
            key = (name, fingerprint, text)
            if key not in self.store:
                self.store[key] = call(text)
            return self.store[key]

        return cached

    def save(self) -> None:
        if len(self.store) > self._size:
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(pickle.dumps(self.store))
            os.replace(tmp, self.path)
            self._size = len(self.store)
