"""Character classes and text shapes shared by the query parser and keyword scorer (search/) and
the chunker (embedding/). Pure."""

from __future__ import annotations

import re

CJK_CHARS = (
    "\u3040-\u30ff"  # kana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    "\uac00-\ud7af"  # hangul
)
CJK_CHAR = re.compile(f"[{CJK_CHARS}]")

# A fenced code block (Markdown ```), to the next fence or the end of the text. An agent's long
# answer is often prose and then code: the code is its own kind of text, so it gets its own
# embedding chunk and does not count in the prose's BM25 length (benchmarks/README.md, agent world).
FENCED_CODE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)


def split_fenced(text: str) -> list[str]:
    """``text`` as its prose and fenced-code parts, in order, blank parts dropped."""
    if "```" not in text:
        return [text]
    parts, at = [], 0
    for m in FENCED_CODE.finditer(text):
        parts += [text[at:m.start()], m.group(0)]
        at = m.end()
    parts.append(text[at:])
    return [p for p in parts if p.strip()]


def without_code(text: str) -> str:
    """``text`` with its fenced code blocks cut out."""
    return FENCED_CODE.sub(" ", text) if "```" in text else text
