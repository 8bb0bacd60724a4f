"""The embedding index over Hermes history: settings, providers, chunking, embeddings.db, consent
and incremental indexing. The semantic half of search reads it from ``search/semantic.py``.
"""

from .consent import consent_state, read_consent, record_consent, revoke_consent
from .indexer import IndexProgress, IndexStats, build_index
from .providers import Embedder, LocalE5, OpenAICompatible, ProviderError, make_embedder
from .settings import EmbeddingSettings, SettingsError, load_settings
from .status import index_status

__all__ = [
    "Embedder",
    "EmbeddingSettings",
    "IndexProgress",
    "IndexStats",
    "LocalE5",
    "OpenAICompatible",
    "ProviderError",
    "SettingsError",
    "build_index",
    "consent_state",
    "index_status",
    "load_settings",
    "make_embedder",
    "read_consent",
    "record_consent",
    "revoke_consent",
]
