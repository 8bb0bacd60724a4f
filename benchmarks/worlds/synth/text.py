"""Text of one project's turns: templates filled from the seed-ranked pools."""

from __future__ import annotations

import json
import random

from .plan import Project
from .vocab import Vocab, Zipf
from .words import (
    EN_ASSIST,
    EN_CODE,
    EN_FILLERS,
    EN_REASONS,
    EN_USER,
    SUMMARY_PREFIX_FALLBACK,
    TOOL_CALL_INTRO_EN,
    TOOL_CALL_INTRO_ZH,
    TOOL_NAMES,
    TOOL_OUT,
    TOPICS,
    ZH_ASSIST,
    ZH_FILLERS,
    ZH_REASONS,
    ZH_TIMES,
    ZH_USER,
)


class TextGen:
    def __init__(self, vocab: Vocab, project: Project, rng: random.Random):
        self.v = vocab
        self.p = project
        self.rng = rng
        self.topic_en = Zipf([w for t in project.topics for w in TOPICS[t]["en"]], 0.8)
        self.topic_zh = Zipf([w for t in project.topics for w in TOPICS[t]["zh"]], 0.8)
        self.proj_ident = Zipf(project.idents, 0.9) if project.idents else None
        self.used_idents: list[str] = []

    # -- slots --
    def slot(self, key: str) -> str:
        base = key.rstrip("0123456789")
        r = self.rng
        v = self.v
        if base == "n":
            return self.topic_en.pick(r) if r.random() < 0.55 else v.noun.pick(r)
        if base == "n1w":
            return v.noun1w.pick(r)
        if base == "v":
            return v.verb.pick(r)[0]
        if base == "V":
            return v.verb.pick(r)[0].capitalize()
        if base == "vp":
            return v.verb.pick(r)[1]
        if base == "vs":
            return v.verb.pick(r)[2]
        if base == "adj":
            return v.adj.pick(r)
        if base == "tech":
            return v.tech.pick(r)
        if base == "jar":
            return v.jargon.pick(r)
        if base == "exc":
            return v.exc.pick(r)
        if base == "err":
            return v.err.pick(r)
        if base == "id":
            s = self.proj_ident.pick(r) if self.proj_ident is not None and r.random() < 0.5 else v.ident.pick(r)
            if len(self.used_idents) < 64:
                self.used_idents.append(s)
            return s
        if base == "snake":
            return v.snake.pick(r)
        if base == "cls":
            if self.proj_ident is not None and r.random() < 0.3:
                s = self.proj_ident.pick(r)
                if "_" not in s:
                    return s
            return v.camel.pick(r)
        if base == "path":
            d = r.choice(("src", "app", "lib", "services/api", "tests", "pkg", "internal"))
            ext = r.choice((".py", ".py", ".py", ".ts", ".go", ".rs", ".sql", ".yaml"))
            return f"{d}/{v.noun1w.pick(r)}/{v.snake.pick(r)}{ext}"
        if base == "num":
            return str(int(10 ** r.uniform(1, 4)))
        if base == "small":
            return str(r.randint(1, 9))
        if base == "sha":
            return f"{r.getrandbits(28):07x}"
        if base == "ver":
            return f"v{r.randint(0, 4)}.{r.randint(0, 20)}.{r.randint(0, 9)}"
        if base == "reason":
            return r.choice(EN_REASONS)
        if base == "code":
            return self.p.codename
        if base == "zn":
            return self.topic_zh.pick(r) if r.random() < 0.55 else v.zn.pick(r)
        if base == "zv":
            return v.zv.pick(r)
        if base == "zp":
            return v.zp.pick(r)
        if base == "zt":
            return r.choice(ZH_TIMES)
        if base == "zr":
            return r.choice(ZH_REASONS)
        if base == "zc":
            return v.zc.pick(r)
        if base == "zcode":
            return self.p.zh_codename
        raise KeyError(key)

    def fill(self, template: str) -> str:
        return template.format_map(_Slots(self))

    # -- messages --
    def user_text(self, lang: str) -> str:
        r = self.rng
        if r.random() < 0.07:
            return r.choice(ZH_FILLERS if lang == "zh" else EN_FILLERS)
        tpl = ZH_USER if lang == "zh" else EN_USER
        out = self.fill(r.choice(tpl))
        if r.random() < 0.3:
            out += (" " if lang == "en" else "") + self.fill(r.choice(tpl))
        return out

    def assistant_text(self, lang: str) -> str:
        r = self.rng
        tpl = ZH_ASSIST if lang == "zh" else EN_ASSIST
        k = 1 + min(4, int(r.expovariate(0.6)))
        parts = [self.fill(r.choice(tpl)) for _ in range(k)]
        block = False
        if r.random() < 0.12:
            parts.append(self.fill(r.choice(EN_CODE)))
            block = True
        elif r.random() < 0.15:
            parts.append("\n".join("- " + self.fill(r.choice(tpl)) for _ in range(r.randint(2, 4))))
            block = True
        if block or len(parts) >= 3:
            return "\n\n".join(parts)
        return ("" if lang == "zh" else " ").join(parts)

    def tool_exchange(self, lang: str):
        r = self.rng
        tool = r.choice(TOOL_NAMES[:4]) if r.random() < 0.8 else r.choice(TOOL_NAMES)
        call_id = f"call_{r.getrandbits(48):012x}"
        if tool == "terminal":
            args = {"command": self.fill(r.choice(("pytest -q tests/test_{snake}.py", "git log --oneline -3",
                                                    "docker ps", "grep -rn {snake} src/",
                                                    "python -m {n1w}.{snake} --dry-run")))}
        elif tool in ("read_file", "write_file", "patch"):
            args = {"path": self.slot("path")}
        elif tool == "search_files":
            args = {"pattern": self.slot("snake"), "path": "src"}
        elif tool == "web_search":
            args = {"query": self.fill("{tech} {v} {n} {exc}")}
        else:
            args = {"url": self.fill("https://docs.{n1w}.dev/{snake}")}
        intro = self.fill(r.choice(TOOL_CALL_INTRO_ZH if lang == "zh" else TOOL_CALL_INTRO_EN))
        calls = [{"id": call_id, "type": "function",
                  "function": {"name": tool, "arguments": json.dumps(args, ensure_ascii=False)}}]
        out = self.fill(r.choice(TOOL_OUT[tool]))
        if lang == "zh" and r.random() < 0.15:
            out += "\n" + self.fill("错误：{zn}{zp}")
        return intro, calls, tool, call_id, out

    def summary_text(self, lang: str) -> str:
        r = self.rng
        idents = sorted(set(self.used_idents))[:6]
        tpl = ZH_ASSIST if lang == "zh" else EN_ASSIST
        body = [self.fill(r.choice(tpl)) for _ in range(r.randint(2, 4))]
        lines = [SUMMARY_PREFIX, "", "## Historical Task Snapshot", *body, "",
                 "## Historical Remaining Work", "- " + self.fill(r.choice(tpl))]
        if idents:
            lines += ["", "Touched identifiers: " + ", ".join(idents)]
        lines += ["", SUMMARY_END]
        return "\n".join(lines)


class _Slots(dict):
    __slots__ = ("g",)

    def __init__(self, g: TextGen):
        super().__init__()
        self.g = g

    def __missing__(self, key):
        val = self.g.slot(key)
        self[key] = val
        return val


SUMMARY_PREFIX = SUMMARY_PREFIX_FALLBACK
SUMMARY_END = "--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---"


def use_hermes_markers() -> None:
    """The compaction summary's first and last lines as this Hermes writes them (``run`` calls it
    once HERMES_HOME is set, before any text is made)."""
    global SUMMARY_PREFIX, SUMMARY_END
    try:  # the real strings Hermes writes
        from agent import context_compressor as _cc

        SUMMARY_PREFIX = _cc.SUMMARY_PREFIX
        SUMMARY_END = getattr(_cc, "_SUMMARY_END_MARKER", SUMMARY_END)
    except Exception:  # pragma: no cover - older Hermes
        pass

