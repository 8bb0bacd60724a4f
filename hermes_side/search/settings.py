"""Every constant of the ranking pipeline, each with the measurement that chose it (docs/ranking.md).

Stages: lists (keyword, translated keyword, semantic) → fusion (RRF) → answers → relevance →
conversations. Numbers are LoCoMo dev, ``benchmarks/bench_locomo.py``, unless said otherwise;
``benchmarks/ablate.py`` re-measures what each constant is worth (benchmarks/README.md,
"Ablation"). The modules read ``RANKING`` at call time, so ``overridden`` changes a search
everywhere at once (benchmarks and tests only).

Not here: limits on the input itself (query length and term counts, ``query.py``; the dictionary
segmenter's word length, ``translate.py``), which refuse or cut a query rather than rank it, and
the index's own shape (``embedding/``), which needs a re-index to change.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class Ranking:
    # ---- lists: keyword (keyword.py) --------------------------------------------------------
    # Candidates per list before fusion: 100 instead of 50 moved no dev number by more than 0.003.
    candidates: int = 50
    # Okapi BM25's textbook k1 and b (Robertson & Zaragoza); message length is counted in tokens
    # against a fixed 30 (a chat turn), so a scope's statistics need no length pass.
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    bm25_avg_tokens: float = 30.0
    # Hits kept per conversation in the keyword list. On the dev split it moves nothing beyond
    # noise (ablation; LoCoMo has no conversation with 50 matching turns), but without it one
    # chatty conversation — a log pasted turn after turn — fills the whole candidate list and the
    # others are never seen (tests/hermes/test_keyword_search.py, TestOneResultPerConversation).
    per_conversation: int = 8
    # A CJK piece of n character pairs weighs n^-alpha per pair, so a long piece counts like √n
    # words. Within noise in the ablation (zh msg@1 −2 questions without it), but without it
    # hybrid's Chinese msg@1 (0.929) falls under plain BM25's (0.933): kept for that.
    piece_alpha: float = 0.5
    # A word the stemmer leaves whole ("deploy") still finds its inflections ("deploying"):
    # keyword msg@1 0.326 → 0.342, msg@5 0.450 → 0.464; about 1 ms more per query on 1M.
    inflect_unstemmed: bool = True
    # Words in more than this share of the scope's messages (a project's name, the user's name)
    # rank nothing; they are dropped from the keyword terms and from the embedded question.
    # Not applied in scopes under ``common_min_scope`` messages, where a share says little.
    common_share: float = 0.10
    common_min_scope: int = 50
    # ...and held in more than this share of the scope's conversations (sessions): a name or the
    # project's own word is in nearly every one, a topic in a few — "movies" in 13 % of a direct
    # chat's turns but 2 of its 10 days was dropped, and "Which movies did you share with me?" was
    # searched as "share". Issue 36, third pass (paired, one value tried): FriendsQA keyword
    # sess@5 +0.016 (26/7) per member, sess@1 +0.006 (8/1) shared; LoCoMo identical (its common
    # words are in most sessions). 0: every word over ``common_share`` is common.
    common_spread: float = 0.5
    # A word of a chat member's name (the bridge's sender tags in the scope, keyword.scope_members)
    # is never dropped as common: the tags repeat every name in 22–37 % of a group's rows, and
    # "What did Ross want?" was searched without "Ross" (issue 36; benchmarks/README.md).
    member_names: bool = True

    # ---- lists: translated keyword (translate.py) --------------------------------------------
    # A Chinese query's words searched as their English translations too, as a list of their own
    # (question.py); off: as asked only (``bench_latency.py --ab-translation`` times both arms).
    translated_list: bool = True
    # Senses of a Chinese word whose glosses are searched (LoCoMo-zh dev, cross-lingual msg@5 of
    # the translated list alone: 1 → 0.73, 2 → 0.81, 3 → 0.82, 5 → 0.83).
    senses: int = 3
    max_concepts: int = 16
    # What a Chinese word counts in a message that holds it only through a sense the project's
    # history does not hold, while another sense it does (translate.weigh_senses: 缓存's "buffer
    # memory" in a project that talks of a cache): half, so such a word alone never makes a row
    # high (issue 26), and it still counts for something.
    weak_sense: float = 0.5
    # Weigh a Chinese word's senses by the scope's history at all (translate.weigh_senses); off:
    # every sense of the first ``senses`` counts alike, as before issue 26.
    weigh_senses: bool = True
    # The translated list counts only by the Chinese words it finds that the keyword list did not
    # find as asked (relevance.translated_list_weight); off: by every word it finds, as before.
    # LoCoMo dev zhmix (Chinese evidence among English turns), removed → kept: hybrid msg@1 1 gained
    # / 35 lost, keyword 1 / 49 (ablate.py; benchmarks/README.md, "zhmix diagnosed"); xl (English
    # history) is unchanged by construction, every other suite within ±1 question.
    translated_adds: bool = True
    # An English query's words searched as their Chinese dictionary words too, in a scope whose
    # history holds Chinese (translate.english_concepts): the same list, the other way. Only the
    # Chinese words the scope holds are searched; ``reverse_min_cjk``: the share of the scope's
    # sampled messages with Chinese text under which an English question is not translated.
    reverse_translation: bool = True
    reverse_min_cjk: float = 0.05
    # An English word's Chinese words past its own entry's first sixteen, and its uninflected
    # form's ("friends" → 朋友 as "friend", "methods" → 方法): searched, and held at ``weak_sense``
    # in the labels (translate._lookup). Off: only the entry's first sixteen, as before. Dev, keyword,
    # paired against off (benchmarks/README.md, "Twelfth pass"): rev conv@1 +0.041 (32/16, p 0.029),
    # revpool conv@1 +0.036 (25/11, p 0.029); no loss beyond noise on any set; hybrid identical.
    # Counted whole in the labels instead: MemoryBank's wrong-project quiet −0.130 (0/13).
    reverse_lemmas: bool = True
    # What that list counts beside the semantic list (hybrid), which reads an English question
    # against Chinese turns by meaning already.
    reverse_beside_semantic: float = 0.0

    # ---- lists: semantic (semantic.py) --------------------------------------------------------
    # The latent terms of a query cost a second model pass as long as the query: a query of more
    # than ~64 estimated tokens (1 of 1,013 dev questions; a pasted paragraph) is searched by its
    # dense vector alone, whose many words reach keyword search anyway (~200 ms saved at 600 words).
    terms_budget: int = 64

    # ---- fusion (fusion.py, for messages, the semantic half and conversations) ----------------
    # RRF k. Far below the textbook 60: with ~50 candidates per list a small k lets the top hits
    # of either list lead (hybrid recall@5/@10: k=60 0.530/0.614, k=10 0.586/0.690, k=5
    # 0.600/0.691). Inside the semantic half (dense + latent terms), xl msg@1/@5 k=5 0.561/0.802,
    # k=20 0.569/0.759. Conversations: k = 1…30 within 0.005 of each other on hit@1.
    rrf_k: int = 5
    # A keyword list counts fully once its hits hold 1/scale of the query's words, less below: a
    # Chinese question over English history matches a name or two, and at full weight that noise
    # cost xl msg@5 0.03 (0.783 → 0.810 with it). Ablation: plain worlds within noise, but the
    # agent world's Chinese questions lose msg@1/@5 0.020/0.027 without it. The words counted by
    # their rarity in the scope (relevance.keyword_list_weight), not one each: rev hybrid sess@1
    # 56 gained / 13 lost, friends_shared msg@5 6 / 0, no set lost (issue 36, fifth pass).
    keyword_coverage_scale: float = 2.0

    # ---- answers (answers.py) ----------------------------------------------------------------
    # Top fused hits whose text is read to tell a question, which then brings its reply along.
    expand_top: int = 30
    # Rows read past a question to find its reply: an agent's reply can follow a run of tool
    # calls; 64 rows is far more than one turn makes, and one indexed read of the session.
    answer_lookahead: int = 64

    # ---- relevance (relevance.py) ------------------------------------------------------------
    # Meaning: the cosine's margin over small talk, mapped linearly so that sem_zero → 0 and
    # sem_one → 1 (medium ≈ a margin of 0.065 before coverage scaling).
    sem_zero: float = 0.01
    sem_one: float = 0.11
    # A query and a message in different scripts agree less under e5 even when one answers the
    # other: measured evidence margins are ~0.03 lower across scripts.
    cross_script: float = 0.02
    # The least score of a hit that is shown: what a hit keyword search found scores at least
    # (it holds a query word, maybe in a form the relevance check misses), and what a hit that
    # passed the floor keeps after coverage scaling. Always "low".
    min_shown: float = 0.01
    # Levels of the score after it is scaled by how much of the question the scope holds at all.
    # Chosen on LoCoMo dev, hybrid, as the threshold meeting both "right project: every row low
    # for ≤ 10 % of questions" and "wrong project: empty or all-low for ≥ 80 %" (benchmarks/
    # README.md, "Relevance calibrated by what the project holds").
    medium: float = 0.30
    # A row in another script than the question (a Chinese question over English history). Re-chosen
    # with the labels fitted to the order (results.in_order; issue 26 follow-up), xl hybrid, right
    # project all-low / wrong project quiet: 0.35 0.119 / 0.909 (fails ≤ 0.10), 0.34 0.111 / 0.905,
    # 0.33 0.091 / 0.866, 0.32 0.079 / 0.842, 0.30 0.075 / 0.814, 0.28 0.063 / 0.791 (fails ≥ 0.80):
    # 0.32 holds both checks by ≥ 5 questions of 253 (the English medium 0.30 by 3 only).
    medium_cross_script: float = 0.32
    # Where words cannot tell (an English question over Chinese history, or semantic mode with a
    # Chinese question: no coverage), the unscaled score and the earlier calibration: 0.55 put the
    # wrong-project rate at 0.89 / 0.98 / 0.90 (en / zh / xl) with leave-one-conversation-out folds.
    medium_unscaled: float = 0.55
    high: float = 0.8

    # ---- conversations (results.py, conversations.py, episodes.py) ----------------------------
    # A pause of more than this many seconds in a lineage's turns starts another conversation (a
    # row of its own): the bridge keeps a group's session until /clear, so one session holds weeks
    # of talk, and grouped by session all of it was one row. Not tuned: an hour is longer than any
    # pause inside a dev chat's scene or day (at most 19 minutes) and shorter than any pause
    # between them (5 hours, a day); every dev world written a session per scene or day is
    # identical by construction. 0: a conversation is a session lineage, as before.
    conversation_pause: float = 3600.0
    # A line of the group's buffer (the bridge's ``<recent_messages>``) stored in a turn more than
    # ``conversation_pause`` earlier counts for the query's words only there, not again in a later
    # turn that carries it (buffered.py): the first @ of the morning carries last night's lines.
    # Off: every turn counts every line it holds, as before.
    buffer_once: bool = True
    # A conversation's best messages: its top 3 fused scores, each worth a tenth of the one before
    # (session hit@3 0.861 alone → 0.870; ½ per hit let loosely related conversations lead on the
    # Chinese history, row msg@1 0.905 → 0.779).
    conversation_hits: int = 3
    conversation_decay: float = 0.1
    # A day named without its year ("5月2日", "May 2nd") names that day of any year, as a dated day
    # names one (conversations.named_time): MemoryBank names one in a third of its questions,
    # always an evidence day (issue 36).
    day_without_year: bool = True
    # The conversations held in the time a question names (a day, with its year or without, or a
    # month with its year) lead the ranking, in its order (results.group_by_conversation): someone
    # who says "on May 2nd" means that day. With the day of any year, paired against main f6d16c2
    # (issue 36, fifth pass): hybrid conversation hit@1 mbcn 10 gained / 0 lost, mben 9 / 0, en 5 / 2;
    # keyword mbcn 8 / 0, mben 5 / 0, rev 5 / 0; no set lost. Off: the time's conversations are one
    # list of the fusion (weight 1), as before.
    named_time_leads: bool = True
    # ...in a small project too, where labels lead the order (``level_order``): the time's
    # conversations are shown first, each part in the order of its levels. Off: labels first, and
    # "在4月29日我们聊了哪些话题？" in a chat of a few dozen turns showed that evening last. Paired against
    # off (issue 36, thirteenth pass): 1 gained / 0 lost on mbcn, mbxl, mbcn_long (conv@1) and mbrev
    # (quiet), both modes — few dev projects are that small; every other set identical.
    named_time_over_labels: bool = True
    # A conversation held in the time a question names joins the ranking even when none of its turns
    # holds the question's words or meaning ("What did we talk about on April 27th?" asks for that
    # day's conversation, whatever was said): shown by its first turn held then, ``score_source``
    # "date" (ranker.held_then), when they all fit in the rows. Paired against main 7bc5e38 (issue 36,
    # sixth pass): keyword conversation hit@1 mben 7 gained / 0 lost (p 0.016), hit@5 en 6 / 0
    # (p 0.031), mbcn 3 / 0; hybrid mben 2 / 0; every other set identical, quiet unchanged.
    held_then_unfound: bool = True
    # A conversation's best passage by meaning: the mean dense cosine of its best run of
    # ``passage_turns`` consecutive turns (a question and its answer, a topic over a few turns),
    # a list of conversations fused with ``passage_weight`` (conversations.passage_order; issue
    # 26). LoCoMo dev, hybrid, conversation hit@1, replayed (gained/lost questions): en 3 turns
    # w 0.15 19/9, 0.25 28/11, 0.35 31/15, 0.5 36/17; 2 turns 27/11, 4 turns 24/11 (w 0.25);
    # agent world 3 turns w 0.25 22/11; one best turn instead (w 0.25 14/9) and the mean of
    # the whole conversation (20/21) do not carry it. Measured by the tool: benchmarks/README.md.
    passage_turns: int = 3
    passage_weight: float = 0.25
    # Other messages of a conversation shown in its row ("more"), its best after the row's own.
    more_per_row: int = 2
    # Where they come from: the conversation's hits among the top ``expand_top`` fused (those the
    # ranker reads to find replies), not only among the ``limit`` best overall, where a
    # conversation's second turn was hidden because other conversations' hits ranked 3rd to 5th.
    # LoCoMo dev hybrid, one run each side: en msg@1 0.587 → 0.630 (33 gained / 0 lost), msg@5
    # 0.718 → 0.789 (54 / 0), zh msg@1 +2, xl msg@5 +4; the row label is the surest of what it
    # shows, so wrong-project quiet fell en 0.879 → 0.868 (8 lost), xl 0.842 → 0.814 (7)
    # (benchmarks/README.md, "zhmix diagnosed"). Off: the ``limit`` best only.
    more_from_read: bool = True
    # One order, one label (issue 26, results.in_order). In a scope under ``common_min_scope``
    # messages labels lead: rows stand in the order of their level, the conversation ranking
    # deciding within a level, before ``limit`` cuts, and a conversation is as related as its hits'
    # words together (``conversation_words``). In bigger scopes the ranking leads and the rows'
    # scores are fitted to its order (pooled where a lower row judged stronger): on LoCoMo dev (all
    # scopes > 50) labels leading cost English conversation hit@1 0.737 → 0.697 and, with
    # conversation words, wrong-project quiet 0.855 → 0.750 (en) and 0.850 → 0.632 (xl); moving only
    # a row that is a level stronger above a weaker one cost en sess@1 12 gained / 47 lost.
    # Off: the conversation ranking alone everywhere.
    level_order: bool = True
    conversation_words: bool = True

    # ---- budgets: as fast as recall allows on a 1M-message profile ----------------------------
    # (benchmarks/README.md, "Constants chosen by measurement"). They decide which messages a big
    # scope's keyword search reads, never how those are ordered.
    rowid_budget: int = 6_000  # newest matching rowids fetched over all FTS probes of a query
    min_per_probe: int = 500
    scan_scope_max: int = 3000  # scopes up to this many messages are scored whole
    recent_fallback: int = 5000  # 1–2 character CJK pieces in a big scope: newest messages read
    candidates_max: int = 120  # FTS candidates read and scored with BM25
    max_grams: int = 16  # trigram probes per query, spread over its CJK pieces
    max_escaped: int = 4  # FTS phrases looking for non-ASCII terms inside multimodal JSON
    # Terms whose substrings choose which messages a scan reads (the rarest of a long query): each
    # is an instr() over every message looked at (LoCoMo dev en + zh: same msg@1/@5 with 8, 16, all).
    scan_needle_terms: int = 8
    window_needle_terms: int = 8  # 1–2 character CJK pieces looked for in a big scope's newest rows
    stats_sample: int = 2000  # newest scope messages whose document frequencies stand for a big scope
    stats_refresh: float = 1.25  # rebuild those statistics when the scope has grown by a quarter


RANKING = Ranking()


@contextmanager
def overridden(**changes: object) -> Iterator[Ranking]:
    """Run with some constants changed (``benchmarks/ablate.py``, tests). The one ``RANKING`` is
    changed in place, because every module holds that object; an unknown name is an error."""
    names = {f.name for f in dataclasses.fields(Ranking)}
    unknown = sorted(set(changes) - names)
    if unknown:
        raise KeyError(f"no ranking constant named {', '.join(unknown)} (settings.Ranking)")
    before = {name: getattr(RANKING, name) for name in changes}
    for name, value in changes.items():
        object.__setattr__(RANKING, name, value)  # frozen for everyone else
    try:
        yield RANKING
    finally:
        for name, value in before.items():
            object.__setattr__(RANKING, name, value)
