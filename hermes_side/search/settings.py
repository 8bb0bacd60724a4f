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
    # Relevance levels (relevance.py) of the score after it is scaled by how much of the question
    # the scope holds at all. Chosen on LoCoMo dev, hybrid, as the threshold meeting both "right
    # project: every row low for ≤ 10 % of questions" and "wrong project: empty or all-low for
    # ≥ 80 %": en 0.079 / 0.879 (760 questions), zh 0.091 / 0.996 (253; 2 questions of margin)
    # at 0.30. Chinese questions over English history separate worse (no threshold meets both:
    # 0.30 gives 0.099 / 0.696), so rows in another script than the question need 0.35
    # (0.162 / 0.818). Unscaled, 0.55 gave en 0.255 / 0.909.
    medium: float = 0.30
    medium_cross_script: float = 0.35
    # Where words cannot tell (an English question over Chinese history, or semantic mode with a
    # Chinese question: no coverage), the unscaled score and the earlier calibration: 0.55 put the
    # wrong-project rate at 0.89 / 0.98 / 0.90 (en / zh / xl) with leave-one-conversation-out folds.
    medium_unscaled: float = 0.55
    high: float = 0.8


RANKING = Ranking()
