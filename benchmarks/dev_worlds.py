"""The dev sets' Hermes homes, each built once and cached (``locomo_homes``), and the question sets
asked in each: LoCoMo (``en``, ``xl``, ``zh``, ``rev``, ``zhpool``, ``zhmix``, ``revpool``, ``revmix``,
``agent``, ``agentxl``), FriendsQA (``friends``, ``friends_shared``) and MemoryBank (``mbcn``, ``mben``, and their
questions in the other language, ``mbrev``, ``mbxl``).

A world is one home; a set is a list of questions asked in it. ``FAMILIES`` names the data each set
comes from: two sets of one family share their conversations, so a change that moves both has
moved one thing (the paired protocol, ``paired.py``, says so beside its verdict).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.locomo_homes import cached_corpus, loader_fingerprint
from benchmarks.worlds import bridge, friendsqa, locomo, locomo_zh, memorybank
from benchmarks.worlds.locomo import Corpus, Question

LOCOMO_SETS = ("en", "zh", "zhpool", "zhmix", "xl", "rev", "revpool", "revmix", "agent", "agentxl")
CHAT_SETS = ("friends", "friends_shared", "mbcn", "mben", "mbrev", "mbxl")
# The chats again as the bridge writes them when nobody types /clear: one session for a group (or a
# direct chat) over the whole history, a conversation being its scene or day (ChatCorpus.conversation_of).
LONG_SETS = ("friends_long", "mbcn_long", "mben_long")
# (the agent worlds: on demand)
DEV_SETS = ("en", "zh", "zhpool", "zhmix", "xl", "rev", "revpool", "revmix", *CHAT_SETS, *LONG_SETS)
FAMILIES = {"en": "locomo", "xl": "locomo", "zh": "locomo-zh", "zhpool": "locomo-zh", "zhmix": "locomo-zh",
            "rev": "locomo-zh", "revpool": "locomo-zh", "revmix": "locomo-zh", "agent": "locomo", "agentxl": "locomo",
            "friends": "friendsqa",
            "friends_shared": "friendsqa", "mbcn": "memorybank", "mben": "memorybank", "mbrev": "memorybank",
            "mbxl": "memorybank", "friends_long": "friendsqa", "mbcn_long": "memorybank", "mben_long": "memorybank"}
# sets asked in the next conversation's project too (wrong-project quiet): a world whose projects
# are different people. FriendsQA's seasons are the same six friends, so a question is related there.
WRONG_SETS = ("en", "zh", "xl", "rev", "mbcn", "mben", "mbrev", "mbxl")


@dataclass
class World:
    name: str
    corpus: Corpus
    sets: list[tuple[str, list[Question], bool]] = field(default_factory=list)  # (set, questions, ranked r@k)
    plain: bool = True  # the plain baselines run here (not in the agent-transcript world)


def build(args: argparse.Namespace, sets: set[str], files: list[str] | None) -> list[World]:
    """The worlds ``sets`` need (``wrong`` asks the sets of WRONG_SETS in another project)."""
    out = _locomo(args, sets, files)
    out += _chat(args, sets)
    return out


def _say(world: str, reused: bool, text: str) -> None:
    print(f"{world} home ({'reused' if reused else 'built'}): {text}", flush=True)


def _locomo(args: argparse.Namespace, sets: set[str], files: list[str] | None) -> list[World]:
    tag = "-".join(files) if files else "all"
    # wrong-project quiet: LoCoMo's worlds too unless only chat-shaped sets were asked for
    wrong = "wrong" in sets and bool(sets & set(LOCOMO_SETS) or not sets & set(CHAT_SETS))
    worlds: list[World] = []
    if sets & {"en", "xl", "rev", "revpool", "revmix"} or wrong:
        corpus, reused = cached_corpus((args.cache_dir / f"en-{tag}").resolve(), loader_fingerprint(args.data_dir),
                                       lambda h: locomo.load_locomo(h, args.data_dir, files))
        xl = locomo_zh.zh_questions(corpus, args.zh_dir) if sets & {"xl"} or wrong else []
        worlds.append(World("en", corpus, [("en", corpus.questions, True), ("xl", xl, False)]))
        _say("English", reused, f"{corpus.message_count()} messages, {len(corpus.questions)} English and"
                                f" {len(xl)} Chinese questions")
    if sets & {"zh", "rev"} or wrong:
        corpus, reused = cached_corpus((args.cache_dir / f"zh-{tag}").resolve(),
                                       loader_fingerprint(args.data_dir, args.zh_dir),
                                       lambda h: locomo_zh.load_locomo_zh(h, args.data_dir, args.zh_dir, files))
        rev = locomo_zh.questions_over(corpus, worlds[0].corpus.questions) if worlds and "rev" in sets else []
        worlds.append(World("zh", corpus, [("zh", corpus.questions, False), ("rev", rev, False)]))
        _say("Chinese", reused, f"{corpus.message_count()} messages, {len(corpus.questions)} Chinese and"
                                f" {len(rev)} English questions")
    # The Chinese history again: all five conversations in one project (zhpool), or each
    # conversation's other turns kept beside its Chinese ones in English (zhmix; issue 26). Asked in
    # English too, as `rev` asks the Chinese history (revpool, revmix; issue 36, twelfth pass).
    for name, across, shape in (("zhpool", "revpool", {"pooled": True}), ("zhmix", "revmix", {"mixed": True})):
        if not sets & {name, across}:
            continue
        corpus, reused = cached_corpus((args.cache_dir / f"{name}-{tag}").resolve(),
                                       loader_fingerprint(args.data_dir, args.zh_dir),
                                       lambda h, shape=shape: locomo_zh.load_locomo_zh(h, args.data_dir, args.zh_dir,
                                                                                         files, **shape))
        english = locomo_zh.questions_over(corpus, worlds[0].corpus.questions) if across in sets else []
        worlds.append(World(name, corpus, [(name, corpus.questions if name in sets else [], False),
                                           (across, english, False)]))
        chinese = sum("：" in t.text.split(" ", 1)[0] for t in corpus.by_message.values())
        _say(name, reused, f"{corpus.message_count()} messages ({chinese} Chinese) in"
                           f" {len(set(corpus.projects.values()))} project(s), {len(corpus.questions)} questions,"
                           f" {len(english)} asked in English")
    if sets & {"agent", "agentxl"}:
        corpus, reused = cached_corpus((args.cache_dir / f"agent-{tag}").resolve(), loader_fingerprint(args.data_dir),
                                       lambda h: locomo.load_locomo(h, args.data_dir, files, agent=True))
        axl = locomo_zh.zh_questions(corpus, args.zh_dir) if "agentxl" in sets else []
        worlds.append(World("agent", corpus, [("agent", corpus.questions, True), ("agentxl", axl, False)], plain=False))
        _say("Agent-transcript", reused, f"{corpus.message_count()} turns (+ tool rows, {len(corpus.copies)}"
                                         f" compaction copies), {len(corpus.questions)} + {len(axl)} questions")
    return worlds


def _chat(args: argparse.Namespace, sets: set[str]) -> list[World]:
    worlds: list[World] = []
    split = getattr(args, "friendsqa_split", "dev")
    chat_modules = (bridge, friendsqa, memorybank, locomo)
    # mbrev / mbxl: the other language's questions over mbcn's / mben's history (questions_over).
    for name, lang, across in (("mbcn", "cn", "mbrev"), ("mben", "en", "mbxl")):
        if name not in sets and across not in sets:
            continue
        corpus, reused = cached_corpus((args.cache_dir / name).resolve(),
                                       loader_fingerprint(args.memorybank_dir / lang, memorybank.LABELS,
                                                          worlds=chat_modules),
                                       lambda h, lang=lang: memorybank.load_memorybank(h, args.memorybank_dir, lang))
        other = memorybank.questions_over(corpus, args.memorybank_dir, "en" if lang == "cn" else "cn") \
            if across in sets else []
        worlds.append(World(name, corpus, [(name, corpus.questions if name in sets else [], False),
                                           (across, other, False)]))
        _say(name, reused, f"{corpus.message_count()} messages in {len(corpus.when)} sessions,"
                           f" {len(corpus.questions)} questions ({len(corpus.dropped_questions)} without a label),"
                           f" {len(other)} asked in the other language")
    for name, lang in (("mbcn_long", "cn"), ("mben_long", "en")):
        if name not in sets:
            continue
        corpus, reused = cached_corpus((args.cache_dir / name).resolve(),
                                       loader_fingerprint(args.memorybank_dir / lang, memorybank.LABELS,
                                                          worlds=chat_modules),
                                       lambda h, lang=lang: memorybank.load_memorybank(h, args.memorybank_dir, lang,
                                                                                       one_session=True))
        worlds.append(World(name, corpus, [(name, corpus.questions, False)]))
        _say(name, reused, f"{corpus.message_count()} messages in one session per chat, {len(corpus.questions)}"
                           " questions")
    for name, shared, one in (("friends", False, False), ("friends_shared", True, False),
                              ("friends_long", True, True)):
        if name not in sets:
            continue
        data = args.friendsqa_dir / f"friendsqa_{split}.json"
        suffix = "" if split == "dev" else f"-{split}"
        corpus, reused = cached_corpus((args.cache_dir / f"{name}{suffix}").resolve(),
                                       loader_fingerprint(data, worlds=chat_modules),
                                       lambda h, shared=shared, one=one: friendsqa.load_friendsqa(
                                           h, args.friendsqa_dir, split=split, shared=shared, one_session=one))
        worlds.append(World(name, corpus, [(name, corpus.questions, False)]))
        _say(f"{name} ({split})", reused, f"{corpus.message_count()} messages in {len(corpus.when)} sessions,"
                                          f" {len(corpus.questions)} questions ({len(corpus.dropped_questions)}"
                                          " without an evidence row)")
    return worlds


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The data folders of the chat-shaped sets (LoCoMo's are bench_locomo's own)."""
    ap.add_argument("--friendsqa-dir", type=Path, default=friendsqa.default_data_dir())
    ap.add_argument("--friendsqa-split", choices=("dev", "tst"), default="dev",
                    help="tst is held back: run it once, at the end, and report it apart")
    ap.add_argument("--memorybank-dir", type=Path, default=memorybank.default_data_dir())
