"""Reciprocal rank fusion (Cormack et al., 2009). Pure."""

from __future__ import annotations

from collections.abc import Hashable, Sequence


def rrf(ranked_lists: Sequence[Sequence[Hashable]], *, k: int) -> list[tuple[Hashable, float]]:
    """Fuse best-first lists of ids, each weighing the same; returns ``(id, score)`` best first,
    ties keep first-seen order. ``k``: the pipeline's ``settings.Ranking.rrf_k`` (no default, so no
    second k can creep in)."""
    scores: dict[Hashable, float] = {}
    for ranked in ranked_lists:
        for rank, item in enumerate(ranked, start=1):
            scores[item] = scores.get(item, 0.0) + 1 / (k + rank)
    order = {item: n for n, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))
