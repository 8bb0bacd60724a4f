"""The world's plan: projects (sizes, kinds, folders), conversations and their features, planted facts."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .vocab import Vocab, _largest_remainder
from .words import (
    EN_CODENAMES,
    EN_REASONS,
    MAX_SESSION_ROWS,
    SUBDIRS,
    TEAMS,
    TOPICS,
    YEAR_SECONDS,
    YEAR_START,
    ZH_CODE_PREFIX,
    ZH_CODE_SUFFIX,
    ZH_REASONS,
)


@dataclass
class Project:
    key: str  # stable internal key, e.g. "x03"
    kind: str  # explicit | auto | home
    name: str
    slug: str | None
    pid: str | None = None
    folders: list[str] = field(default_factory=list)  # absolute
    git_folders: list[str] = field(default_factory=list)
    repo_root: str | None = None
    topics: list[str] = field(default_factory=list)
    zh_ratio: float = 0.3
    codename: str = ""
    zh_codename: str = ""
    idents: list[str] = field(default_factory=list)
    size: int = 0
    window: tuple = (0.0, 1.0)
    convs: list[Conv] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)


@dataclass
class Conv:
    idx: int
    project: Project
    start: float
    rows: int
    seg_rows: list[int] = field(default_factory=list)
    source: str = "cli"
    lang: str = "en"
    op: str | None = None  # rewind | compact (applies to the tip segment)
    archived: bool = False
    subagent_rows: int = 0
    cwd: str | None = None
    branch: str = ""
    repo_root: str = ""
    facts: list[dict[str, Any]] = field(default_factory=list)  # planted into segment 0
    titled: bool = False



def plan(args, home: Path, vocab: Vocab):
    rng = random.Random(f"plan:{args.seed}")
    M = args.messages
    P = max(1, args.projects)
    C = args.conversations

    # ---- sizes: log-spaced from ~25% down to ~0.05% (before normalisation) ----
    if P == 1:
        ratios = [1.0]
    else:
        hi, lo = 0.25, 0.0005
        ratios = [hi * (lo / hi) ** (i / (P - 1)) for i in range(P)]
    sizes = _largest_remainder(ratios, M, floor=min(30, M // (2 * P)))

    # ---- kinds: anchors (closest ranks to 1k/10k/100k) are explicit; one Home; ~20% auto ----
    kinds = [None] * P
    anchors = []
    for target in (1_000, 10_000, 100_000):
        best = min(range(P), key=lambda i: (abs(math.log(max(sizes[i], 1) / target)), i))
        anchors.append(best)
        kinds[best] = "explicit"
    free = [i for i in range(P) if kinds[i] is None]
    if free:
        home_rank = min(free, key=lambda i: (abs(i - P // 4), i))
        kinds[home_rank] = "home"
        free.remove(home_rank)
    n_auto = min(len(free), max(1 if P >= 3 else 0, round(P * 0.2)))
    for i in rng.sample(free, n_auto):
        kinds[i] = "auto"
    kinds = [k or "explicit" for k in kinds]

    topics_all = sorted(TOPICS)
    en_codes = list(EN_CODENAMES)
    rng.shuffle(en_codes)
    zh_codes = [p + s for p in ZH_CODE_PREFIX for s in ZH_CODE_SUFFIX]
    rng.shuffle(zh_codes)
    projects: list[Project] = []
    used_slugs = set()
    for i in range(P):
        kind = kinds[i]
        topics = rng.sample(topics_all, 2)
        code = en_codes[i % len(en_codes)] + ("" if i < len(en_codes) else str(i // len(en_codes) + 1))
        zcode = zh_codes[i % len(zh_codes)]
        if kind == "home":
            name, slug = "Home", None
        else:
            name = zcode if kind == "explicit" and rng.random() < 0.3 else f"{code} {topics[0].capitalize()}"
            slug = f"{code.lower()}-{topics[0]}"
            while slug in used_slugs:
                slug += "-x"
            used_slugs.add(slug)
        pr = Project(key=f"x{i:02d}", kind=kind, name=name, slug=slug, topics=topics, codename=code,
                     zh_codename=zcode, size=sizes[i])
        pr.zh_ratio = rng.choice((0.05, 0.3, 0.5, 0.85)) if kind != "home" else 0.6
        n_ident = 20 + min(180, sizes[i] // 500)
        pr.idents = [vocab.ident.items[rng.randrange(vocab.ident.n)] for _ in range(n_ident)]
        a = rng.uniform(0.0, 0.7)
        b = min(1.0, a + rng.uniform(0.25, 1.0))
        pr.window = (a, b)
        team = TEAMS[i % len(TEAMS)]
        if kind == "explicit":
            primary = home / "work" / team / slug
            folders = [str(primary)]
            extra = rng.random()
            if extra < 0.3:
                folders.append(str(home / "work" / "notes" / slug))
            if extra < 0.1:
                folders.append(str(home / "work" / team / f"{slug}-docs"))
            pr.folders = folders
            if rng.random() < 0.6:
                pr.git_folders = [folders[0]]
        elif kind == "auto":
            root = home / "work" / "oss" / f"{code.lower()}-{topics[0]}"
            pr.folders = [str(root)]
            pr.git_folders = [str(root)]
            pr.repo_root = str(root)
        projects.append(pr)

    # ---- conversations ----
    C_eff = max(1, min(C, M // 40))
    convs: list[Conv] = []
    for pr in projects:
        n_c = max(1, round(C_eff * pr.size / M))
        n_c = max(1, min(n_c, pr.size // 12))
        weights = [rng.lognormvariate(0.0, 0.8) for _ in range(n_c)]
        lens = _largest_remainder(weights, pr.size, floor=min(6, pr.size // n_c))
        a, b = pr.window
        for L in lens:
            start = YEAR_START + YEAR_SECONDS * rng.uniform(a, b) * 0.97
            c = Conv(idx=-1, project=pr, start=start, rows=L)
            if pr.kind == "home":
                c.source = "api_server" if rng.random() < 0.65 else "telegram"
            elif pr.kind == "auto":
                c.source = "tui" if rng.random() < 0.65 else "cli"
            else:
                c.source = "cli" if rng.random() < 0.55 else "tui"
            c.lang = "zh" if rng.random() < pr.zh_ratio else "en"
            if pr.folders:
                folder = pr.folders[0] if rng.random() < 0.75 else rng.choice(pr.folders)
                c.cwd = folder if rng.random() < 0.6 else str(Path(folder) / rng.choice(SUBDIRS))
                if folder in pr.git_folders:
                    c.repo_root = folder
                    c.branch = "main" if rng.random() < 0.7 else rng.choice(
                        ("feat/", "fix/", "chore/")) + vocab.noun1w.items[rng.randrange(vocab.noun1w.n)]
            c.titled = rng.random() < 0.8  # the title text is made at generation (titles are unique)
            convs.append(c)
            pr.convs.append(c)

    convs.sort(key=lambda c: (c.start, c.project.key))
    for i, c in enumerate(convs):
        c.idx = i

    # ---- features ----
    def elig_sub(c):
        return c.project.kind != "home" and c.rows >= 40

    for c in convs:
        if elig_sub(c) and rng.random() < 0.02:
            c.subagent_rows = 2 * rng.randint(3, 10)
    _guarantee(convs, rng, lambda c: c.subagent_rows > 0, elig_sub,
               lambda c: setattr(c, "subagent_rows", 8))
    for c in convs:
        main = c.rows - c.subagent_rows
        k = 1
        if main > MAX_SESSION_ROWS:
            k = math.ceil(main / (MAX_SESSION_ROWS * 0.9))
        elif main >= 40 and rng.random() < 0.08:
            k = rng.choice((2, 2, 3)) if main >= 60 else 2
        c.seg_rows = _split(main, k, rng)
    _guarantee(convs, rng, lambda c: len(c.seg_rows) > 1, lambda c: c.rows - c.subagent_rows >= 40,
               lambda c: setattr(c, "seg_rows", _split(c.rows - c.subagent_rows, 2, rng)))
    for c in convs:
        tip = c.seg_rows[-1]
        x = rng.random()
        if tip >= 16 and x < 0.06:
            c.op = "compact"
        elif tip >= 10 and x < 0.11:
            c.op = "rewind"
        if rng.random() < 0.03:
            c.archived = True
    _guarantee(convs, rng, lambda c: c.op == "compact", lambda c: c.seg_rows[-1] >= 16 and c.op is None,
               lambda c: setattr(c, "op", "compact"))
    _guarantee(convs, rng, lambda c: c.op == "rewind", lambda c: c.seg_rows[-1] >= 10 and c.op is None,
               lambda c: setattr(c, "op", "rewind"))
    _guarantee(convs, rng, lambda c: c.archived, lambda c: True, lambda c: setattr(c, "archived", True))

    # ---- planted facts: 1 per project, +2 for the bucket projects, +1 for big projects ----
    facts = []
    fact_i = 0
    used = {id(vocab.plant_zh): 0, id(vocab.plant_camel): 0, "codes": 0}
    for rank, pr in enumerate(projects):
        want = 1 + (2 if rank in anchors else 0) + (1 if pr.size >= 20_000 else 0)
        cands = [c for c in pr.convs if not c.archived and c.op != "rewind" and c.seg_rows[0] >= 12]
        rng.shuffle(cands)
        for c in cands[:want]:
            lang = c.lang
            # every planted term is used once (pools are disjoint from what the text generator emits)
            pool = (vocab.plant_zh if lang == "zh" else vocab.plant_camel) if rng.random() < 0.6 else None
            if pool and used[id(pool)] < len(pool):
                term = pool[used[id(pool)]]
                used[id(pool)] += 1
            else:
                term = vocab.plant_codes[used["codes"]]
                used["codes"] += 1
            f = {"id": f"f{fact_i:03d}", "project_key": pr.key, "conv": c.idx, "lang": lang, "term": term,
                 "term_kind": ("zh_term" if term in vocab.plant_zh else
                               "error_code" if term.startswith("E") and term[1:].isdigit() else "identifier"),
                 # a turn is at most 8 rows, so turn <= rows/16 keeps the fact in the first half
                 "turn": rng.randint(0, max(0, c.seg_rows[0] // 16 - 1))}
            fact_i += 1
            if lang == "zh":
                n1 = TOPICS[pr.topics[0]]["zh"][rng.randrange(len(TOPICS[pr.topics[0]]["zh"]))]
                n2 = rng.choice(("方案", "迁移", "上线计划", "重构", "切换", "容量规划"))
                tech = vocab.tech.items[rng.randrange(12)]
                verb = vocab.zv.items[rng.randrange(vocab.zv.n)]
                f["user"] = f"{n1}的{n2}以后怎么处理比较好？我们得定个结论。"
                f["answer"] = (f"最后定下来：{n1}的{n2}统一{verb}到 {tech}，入口保留 {term}，"
                               f"{rng.choice(ZH_REASONS)}。旧的逻辑下个版本删除。")
                f["question"] = rng.choice((f"上次{n1}的{n2}怎么定的？", f"{n1}{n2}最后是怎么决定的",
                                            f"我们之前关于{n1}{n2}的结论是什么"))
                f["keywords"] = [n1, n2]
            else:
                n1 = TOPICS[pr.topics[0]]["en"][rng.randrange(len(TOPICS[pr.topics[0]]["en"]))]
                n2 = rng.choice(("migration", "rollout", "cleanup", "redesign", "cutover", "capacity plan"))
                tech = vocab.tech.items[rng.randrange(12)]
                verb = vocab.verb.items[rng.randrange(vocab.verb.n)][0]
                f["user"] = f"How should we handle the {n1} {n2} going forward? We need a decision."
                f["answer"] = (f"Decision: we {verb} the {n1} {n2} onto {tech} and keep {term} as the single "
                               f"entry point, {rng.choice(EN_REASONS)}. The old path is removed next release.")
                f["question"] = rng.choice((f"what did we decide about the {n1} {n2}?",
                                            f"how did we end up handling the {n1} {n2}",
                                            f"what was the decision on the {n1} {n2} and why"))
                f["keywords"] = [n1, n2]
            c.facts.append(f)
            facts.append(f)
    return projects, convs, facts, anchors, C_eff


def _split(total: int, k: int, rng: random.Random) -> list[int]:
    if k <= 1:
        return [total]
    w = [rng.uniform(0.6, 1.4) for _ in range(k)]
    return _largest_remainder(w, total, floor=min(20, total // k))


def _guarantee(convs, rng, has, eligible, apply):
    if any(has(c) for c in convs):
        return
    el = [c for c in convs if eligible(c)]
    if el:
        apply(el[rng.randrange(len(el))])


