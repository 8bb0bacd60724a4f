"""Semantic search over Hermes history: settings, providers, chunking, embeddings.db, consent,
incremental indexing and the search itself. The plugin's search and CLI call only these names.
"""

from .consent import consent_state, read_consent, record_consent, revoke_consent
from .indexer import IndexProgress, IndexStats, build_index
from .providers import Embedder, LocalE5, OpenAICompatible, ProviderError, make_embedder
from .semantic import SemanticHits, semantic_search
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
    "SemanticHits",
    "SettingsError",
    "build_index",
    "consent_state",
    "index_status",
    "load_settings",
    "make_embedder",
    "read_consent",
    "record_consent",
    "revoke_consent",
    "semantic_search",
]
