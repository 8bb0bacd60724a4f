"""Seed-ranked word pools: which words are common is decided by the seed (Zipf ranks)."""

from __future__ import annotations

import bisect
import random

from .words import (
    ADJS,
    CAMEL_SUFFIXES,
    ERRNO,
    EXCEPTIONS,
    GENERIC_NOUNS,
    JARGON,
    TECH,
    TOPICS,
    VERBS,
    ZH_NOUNS,
    ZH_PLANT_PREFIX,
    ZH_PLANT_SUFFIX,
    ZH_PROBLEMS,
    ZH_VERBS,
)


class Zipf:
    """Items in rank order; pick() draws rank r with probability ~ 1/r^s."""

    __slots__ = ("items", "cw", "total", "n")

    def __init__(self, items, s: float = 1.05):
        self.items = list(items)
        self.n = len(self.items)
        acc = 0.0
        cw = []
        for r in range(1, self.n + 1):
            acc += 1.0 / (r ** s)
            cw.append(acc)
        self.cw = cw
        self.total = acc

    def pick(self, rng: random.Random):
        i = bisect.bisect_left(self.cw, rng.random() * self.total)
        return self.items[i if i < self.n else self.n - 1]


def _largest_remainder(weights: list[float], total: int, floor: int = 0) -> list[int]:
    n = len(weights)
    if n == 0:
        return []
    floor = min(floor, total // n)
    rest = total - floor * n
    s = sum(weights) or 1.0
    raw = [w / s * rest for w in weights]
    out = [int(x) for x in raw]
    order = sorted(range(n), key=lambda i: (-(raw[i] - out[i]), i))
    for i in order[: rest - sum(out)]:
        out[i] += 1
    return [o + floor for o in out]


def _fmt_dur(sec: float) -> str:
    sec = max(0, int(sec))
    if sec >= 3600:
        return f"{sec // 3600}h{(sec % 3600) // 60:02d}m"
    if sec >= 60:
        return f"{sec // 60}m{sec % 60:02d}s"
    return f"{sec}s"


def _camel(noun: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in noun.replace("-", " ").split())


def _snake(noun: str) -> str:
    return noun.replace("-", "_").replace(" ", "_")


class Vocab:
    """Global, seed-ranked vocabulary (which words are common is decided by the seed)."""

    def __init__(self, seed: int):
        rng = random.Random(f"vocab:{seed}")
        en_nouns = sorted({w for t in TOPICS.values() for w in t["en"]} | set(GENERIC_NOUNS))
        rng.shuffle(en_nouns)
        self.en_nouns = en_nouns
        self.noun = Zipf(en_nouns, 1.1)
        one_word = [n for n in en_nouns if " " not in n and "-" not in n]
        self.one_word_nouns = one_word
        self.noun1w = Zipf(one_word, 1.0)
        verbs = list(VERBS)
        rng.shuffle(verbs)
        self.verb = Zipf(verbs, 1.0)
        adjs = list(ADJS)
        rng.shuffle(adjs)
        self.adj = Zipf(adjs, 1.0)
        tech = list(TECH)
        rng.shuffle(tech)
        self.tech = Zipf(tech, 1.1)
        jar = list(JARGON)
        rng.shuffle(jar)
        self.jargon = Zipf(jar, 1.0)
        exc = list(EXCEPTIONS)
        rng.shuffle(exc)
        self.exc = Zipf(exc, 1.2)

        # Identifiers: snake_case verb_noun(+_adj) and CamelCase noun+suffix; a long Zipf tail.
        snake = [f"{v[0]}_{_snake(n)}" for v in VERBS for n in en_nouns]
        snake += [f"{v[0]}_{a.replace('-', '_')}_{_snake(n)}" for v in VERBS[:20] for a in ADJS[:15]
                  for n in one_word[:40]]
        camel = [_camel(n) + s for n in en_nouns for s in CAMEL_SUFFIXES]
        rng.shuffle(camel)
        # Reserve some CamelCase names for planted facts: the general generator never emits them.
        self.plant_camel = camel[:300]
        camel = camel[300:]
        self.snake_pool = snake
        self.camel_pool = camel
        ident = snake + camel
        rng.shuffle(ident)
        self.ident = Zipf(ident, 1.0)
        rng.shuffle(snake)
        self.snake = Zipf(snake, 1.0)
        self.camel = Zipf(camel, 1.0)
        # Error codes: E1000-E5999 general (Zipf), E6000-E9999 reserved for planted facts.
        codes = [f"E{i}" for i in range(1000, 6000)]
        rng.shuffle(codes)
        errs = codes + [f"ERR_{_snake(n).upper()}_{a.replace('-', '_').upper()}" for n in one_word for a in ADJS]
        rng.shuffle(errs)
        errs = list(ERRNO) + errs  # errno-style names are the most common ones
        self.err = Zipf(errs, 1.0)
        self.plant_codes = [f"E{i}" for i in range(6000, 10000)]
        rng.shuffle(self.plant_codes)
        self.plant_zh = [p + s for p in ZH_PLANT_PREFIX for s in ZH_PLANT_SUFFIX]
        rng.shuffle(self.plant_zh)

        zn = list(ZH_NOUNS) + sorted({w for t in TOPICS.values() for w in t["zh"]} - set(ZH_NOUNS))
        rng.shuffle(zn)
        self.zh_nouns = zn
        self.zn = Zipf(zn, 1.1)
        zv = list(ZH_VERBS)
        rng.shuffle(zv)
        self.zv = Zipf(zv, 1.0)
        zp = list(ZH_PROBLEMS)
        rng.shuffle(zp)
        self.zp = Zipf(zp, 1.0)
        compounds = [a + b for a in zn for b in zn if a != b and len(a + b) <= 7]
        rng.shuffle(compounds)
        self.zc = Zipf(compounds, 1.0)


