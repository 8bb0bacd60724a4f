"""The embedding index over Hermes history: settings, providers, chunking, embeddings.db, consent
and incremental indexing. The semantic half of search reads it from ``search/semantic.py``.

The names below are loaded when first used (PEP 562): registering ``hermes recall index`` and
``consent`` imports this package, and a keyword search must not pay for numpy to start.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "consent_state": "consent", "read_consent": "consent", "record_consent": "consent", "revoke_consent": "consent",
    "IndexProgress": "indexer", "IndexStats": "indexer", "build_index": "indexer",
    "Embedder": "providers", "LocalE5": "providers", "OpenAICompatible": "providers", "ProviderError": "providers",
    "make_embedder": "providers",
    "EmbeddingSettings": "settings", "SettingsError": "settings", "load_settings": "settings",
    "index_status": "status",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    module = _HOMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
