"""Character classes shared by the query parser (search/) and the chunker (embedding/). Pure."""

from __future__ import annotations

import re

CJK_CHARS = (
    "\u3040-\u30ff"  # kana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    "\uac00-\ud7af"  # hangul
)
CJK_CHAR = re.compile(f"[{CJK_CHARS}]")
