"""Typed records that the pure helpers can still read as mappings (``hit["session_id"]``).

``results.group_by_conversation`` and ``scope.attribution`` take plain mappings, from tests and
other callers too; a frozen dataclass that reads as a mapping of its set fields goes through
them as it is, while the code that builds it gets named, typed fields.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .relevance import Relevance


class FieldMapping(Mapping[str, Any]):
    """A dataclass read as the mapping of its fields that are not None."""

    def __getitem__(self, name: str) -> Any:
        value = getattr(self, name, None) if name in self._names() else None
        if value is None:
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        return (name for name in self._names() if getattr(self, name) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    @classmethod
    def _names(cls) -> tuple[str, ...]:
        names = cls.__dict__.get("_field_names")
        if names is None:
            names = tuple(f.name for f in fields(cls))  # type: ignore[arg-type]
            cls._field_names = names  # type: ignore[attr-defined]
        return names


@dataclass(frozen=True)
class RankedHit(FieldMapping):
    """One ranked message: which lists found it (``score_source``: keyword, semantic or both;
    "date": held when the question says, found by nothing else, ranker.held_then), its meaning
    score where semantic search scored it, its fused score, the question it answers when
    it was pulled in after one (``reply_to``), and how related it is once judged."""

    message_id: int
    session_id: str
    score_source: str
    cosine: float | None = None
    score: float = 0.0
    reply_to: int | None = None
    relevance: Relevance | None = None
