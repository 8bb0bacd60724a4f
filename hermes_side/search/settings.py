"""The ranking pipeline's constants, each with the measurement that chose it (docs/ranking.md).

Stages: lists (keyword, translated keyword, semantic) → fusion (RRF) → answers → relevance →
conversations. Numbers are LoCoMo dev, ``benchmarks/bench_locomo.py``, unless said otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ranking:
    # Candidates per list before fusion: 100 instead of 50 moved no dev number by more than 0.003.
    candidates: int = 50
    # RRF k, for messages and for conversations alike. Far below the textbook 60: with ~50
    # candidates per list a small k lets the top hits of either list lead (hybrid recall@5/@10:
    # k=60 0.530/0.614, k=10 0.586/0.690, k=5 0.600/0.691). Conversations: k = 1…30 within 0.005
    # of each other on conversation hit@1, so the same k serves both.
    rrf_k: int = 5
    # A conversation's best messages: its top 3 fused scores, each worth a tenth of the one before
    # (session hit@3 0.861 alone → 0.870; ½ per hit let loosely related conversations lead on the
    # Chinese history, row msg@1 0.905 → 0.779).
    conversation_hits: int = 3
    conversation_decay: float = 0.1
    # Lexical conversation list: a term in every conversation still counts a little (deja-vu's
    # floor), so a conversation holding more of the question's words leads among equals.
    min_rarity: float = 0.1
    # A named date or month also matches conversations this many days around it (things are told
    # days after they happen): windows of 2–8 days either side were within 2 questions of each
    # other on English conversation hit@1 (79 dated questions).
    period_slack_days: int = 7
    # Other messages of a conversation among the ``limit`` best hits shown in its row ("more").
    more_per_row: int = 2


RANKING = Ranking()
