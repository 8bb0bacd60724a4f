"""Reciprocal rank fusion (Cormack et al., 2009). Pure."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

RRF_K = 60


def rrf(ranked_lists: Sequence[Sequence[Hashable]], *, k: int = RRF_K,
        weights: Sequence[float] | None = None) -> list[tuple[Hashable, float]]:
    """Fuse best-first lists of ids; returns ``(id, score)`` best first, ties keep first-seen order."""
    scores: dict[Hashable, float] = {}
    for i, ranked in enumerate(ranked_lists):
        weight = weights[i] if weights else 1.0
        for rank, item in enumerate(ranked, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    order = {item: n for n, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))
