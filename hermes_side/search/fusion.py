"""Reciprocal rank fusion (Cormack et al., 2009). Pure."""

from __future__ import annotations

from collections.abc import Hashable, Sequence


def rrf(ranked_lists: Sequence[Sequence[Hashable]], *, k: int,
        weights: Sequence[float] | None = None) -> list[tuple[Hashable, float]]:
    """Fuse best-first lists of ids; returns ``(id, score)`` best first, ties keep first-seen order.
    ``k``: the pipeline's ``settings.Ranking.rrf_k`` (no default, so no second k can creep in)."""
    scores: dict[Hashable, float] = {}
    for i, ranked in enumerate(ranked_lists):
        weight = weights[i] if weights else 1.0
        for rank, item in enumerate(ranked, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    order = {item: n for n, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))
