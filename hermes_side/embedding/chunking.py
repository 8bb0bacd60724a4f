"""Split a message into token windows for embedding (pure: no I/O, tokenizer injected).

Most chat turns fit one window and become one chunk holding the whole text. Fenced code blocks
are chunked apart from the prose around them. Longer turns are cut
at natural boundaries (line breaks, sentence ends, then words, then characters for unspaced CJK)
and packed greedily into windows of at most ``chunk_size`` tokens; each window after the first
repeats up to ``overlap`` tokens of the previous one so a sentence on a boundary stays findable.

A chunk is keyed by (message_id, chunk_index) and identified by the SHA-256 of its text, so a
re-run with the same text and model never embeds it again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..text import CJK_CHAR, split_fenced

CountTokens = Callable[[str], int]

_SENTENCE_END = re.compile(r"(?<=[\n。！？!?；;])|(?<=[.])(?=\s)")
_WORDS = re.compile(r"\S+\s*|\s+")


@dataclass(frozen=True)
class Chunk:
    index: int
    text: str
    content_hash: str


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def estimate_tokens(text: str) -> int:
    """Tokenizer-free upper-ish estimate for remote models: a CJK character is about one
    token, other text about one per 3 characters (English averages ~4, so this errs long)."""
    cjk = len(CJK_CHAR.findall(text))
    return cjk + (len(text) - cjk + 2) // 3


def chunk_text(text: str, *, chunk_size: int, overlap: int, count_tokens: CountTokens) -> list[Chunk]:
    """Chunks of ``text``; ``count_tokens`` counts content tokens (no prefix, no specials). Prose
    and fenced code blocks are chunked apart: a turn that explains and then pastes code is found
    by its explanation as well as a turn without the code (agent world of bench_locomo.py)."""
    text = text.strip()
    texts = [w for part in split_fenced(text) for w in _windows(part.strip(), chunk_size, overlap, count_tokens)]
    return [_chunk(i, t) for i, t in enumerate(texts)]


def _windows(text: str, chunk_size: int, overlap: int, count_tokens: CountTokens) -> list[str]:
    if not text:
        return []
    # A token covers at least one character almost always (NFKC expansions are the rare
    # exception), so short texts skip the tokenizer; half the window keeps a safe margin.
    if len(text) * 2 <= chunk_size or count_tokens(text) <= chunk_size:
        return [text]
    windows = _pack(_units(text, chunk_size, overlap, count_tokens), chunk_size, overlap)
    return [w for w in ("".join(parts).strip() for parts in windows) if w]


def _chunk(index: int, text: str) -> Chunk:
    return Chunk(index, text, content_hash(text))


def _units(text: str, limit: int, overlap: int, count: CountTokens) -> list[tuple[str, int]]:
    """(piece, tokens) in order; ``"".join`` of the pieces is ``text``. Pieces that do not
    fit a window are cut finer: sentences -> words -> character runs. Each piece is charged
    one token more than it counts alone: a subword tokenizer splits differently at the joins
    (measured with e5: ~1 token per sentence), and a window must not overrun the model."""
    grain = max(8, min(limit, overlap or limit))
    out: list[tuple[str, int]] = []
    for sentence in _SENTENCE_END.split(text):
        if not sentence:
            continue
        n = count(sentence) + 1
        if n <= limit:
            out.append((sentence, n))
            continue
        for word in _WORDS.findall(sentence):
            n = count(word) + 1
            if n <= limit:
                out.append((word, n))
            else:
                out.extend(_char_runs(word, grain, count))
    return out


def _char_runs(word: str, grain: int, count: CountTokens) -> list[tuple[str, int]]:
    """Cut an unspaced run (CJK, a minified blob) into pieces of about ``grain`` tokens."""
    out = []
    while word:
        lo, hi = 1, len(word)
        while lo < hi:  # longest prefix within the grain
            mid = (lo + hi + 1) // 2
            if count(word[:mid]) <= grain:
                lo = mid
            else:
                hi = mid - 1
        out.append((word[:lo], count(word[:lo]) + 1))
        word = word[lo:]
    return out


def _pack(units: list[tuple[str, int]], limit: int, overlap: int) -> list[list[str]]:
    windows: list[list[str]] = []
    current: list[tuple[str, int]] = []
    used = 0
    for piece, n in units:
        if current and used + n > limit:
            windows.append([p for p, _ in current])
            current = _tail(current, overlap)
            used = sum(k for _, k in current)
            if used + n > limit:  # overlap and next piece cannot share a window
                current, used = [], 0
        current.append((piece, n))
        used += n
    if current:
        windows.append([p for p, _ in current])
    return windows


def _tail(window: list[tuple[str, int]], overlap: int) -> list[tuple[str, int]]:
    """The last pieces of a window that together stay within ``overlap`` tokens."""
    kept: list[tuple[str, int]] = []
    total = 0
    for piece, n in reversed(window):
        if total + n > overlap:
            break
        kept.append((piece, n))
        total += n
    kept.reverse()
    # A window that is all overlap would repeat forever; keep strictly less than the whole.
    return kept if len(kept) < len(window) else kept[1:]
