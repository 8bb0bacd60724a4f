"""Turn what a person typed into search terms. Pure functions, no SQL execution.

Hermes' own search ANDs every word, so a question like "what did we decide about the deploy
script?" finds nothing. Here a query becomes content words (stop words dropped) that are OR-ed
and ranked by BM25, plus CJK runs: runs of ≥3 characters go to the trigram index as their
trigrams, shorter runs fall back to LIKE. Every term is emitted double-quoted, so user text can
never be parsed as FTS5 syntax.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

MAX_QUERY_CHARS = 2000

CJK_CHARS = (
    "\u3040-\u30ff"  # kana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    "\uac00-\ud7af"  # hangul
)
_CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
CJK_CHAR = re.compile(f"[{CJK_CHARS}]")
# Split exactly where Hermes' unicode61 tokenizer splits: every non-alphanumeric character.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

# Question scaffolding and function words; they match everything and rank nothing.
EN_STOPWORDS = frozenset((
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at",
    "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "cannot",
    "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had",
    "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i",
    "if", "in", "into", "is", "it", "its", "itself", "me", "more", "most", "my", "myself", "no", "nor", "not",
    "of", "off", "on", "once", "only", "or", "other", "ought", "our", "ours", "ourselves", "out", "over",
    "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them",
    "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until",
    "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why",
    "with", "would", "you", "your", "yours", "yourself", "yourselves", "also", "just", "get", "got", "will",
    "shall", "may", "might", "must", "last", "time", "ever", "recently", "remember", "recall", "tell", "said",
    "say", "says", "thing", "things", "something", "anything", "don", "doesn", "didn", "isn", "aren", "wasn",
    "weren", "hasn", "haven", "hadn", "won", "wouldn", "shouldn", "couldn", "mustn", "shan", "ll", "ve", "re",
    "let",
))

# Chinese function words and question scaffolding stripped from CJK runs before trigramming.
ZH_STOPWORDS = (
    "我们", "你们", "他们", "她们", "上次", "之前", "以前", "当时", "怎么", "什么", "为什么", "哪里",
    "哪个", "是否", "有没有", "是不是", "一下", "一个", "这个", "那个", "的", "了", "吗", "呢", "吧",
    "啊", "是", "在", "和", "与", "及", "或", "把", "被", "让", "给", "对", "就", "都", "也", "还",
)


@dataclass(frozen=True)
class ParsedQuery:
    text: str  # cleaned query text (for embedding and snippets)
    words: tuple[str, ...]  # non-CJK content words, lower-cased, deduplicated, in order
    cjk_long: tuple[str, ...]  # CJK runs of ≥3 chars (trigram index)
    cjk_short: tuple[str, ...]  # CJK runs of 1–2 chars (LIKE fallback)

    @property
    def empty(self) -> bool:
        return not (self.words or self.cjk_long or self.cjk_short)

    def highlight_terms(self) -> list[str]:
        return [*self.cjk_long, *self.cjk_short, *self.words]


class QueryError(ValueError):
    def __init__(self, message: str, code: str = "bad_query") -> None:
        super().__init__(message)
        self.code = code


def clean_text(raw: str) -> str:
    """NFKC, no control characters or lone surrogates, collapsed whitespace."""
    text = raw.encode("utf-8", "replace").decode("utf-8") if _has_surrogates(raw) else raw
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch if ch.isprintable() or ch.isspace() else " " for ch in text)
    return " ".join(text.split())


def _has_surrogates(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def _latin_fold_table() -> dict[int, str]:
    table = {}
    for cp in range(0xC0, 0x250):
        base = "".join(c for c in unicodedata.normalize("NFKD", chr(cp)) if not unicodedata.combining(c))
        if base != chr(cp):
            table[cp] = base
    return table


_LATIN_FOLD = _latin_fold_table()


def fold(text: str) -> str:
    """Lower-case without diacritics on Latin letters, as unicode61 indexes it ('Déploiement' →
    'deploiement'). Other scripts are left whole: decomposing Hangul or voiced kana would break them."""
    return text.lower().translate(_LATIN_FOLD)


def _strip_zh_stopwords(run: str) -> list[str]:
    pieces = [run]
    for stop in ZH_STOPWORDS:
        pieces = [p for piece in pieces for p in piece.split(stop)]
    return [p for p in pieces if p]


def parse_query(raw: str) -> ParsedQuery:
    if len(raw) > MAX_QUERY_CHARS:
        raise QueryError(f"query is too long ({len(raw)} characters; the limit is {MAX_QUERY_CHARS})",
                         code="query_too_long")
    text = clean_text(raw)
    words: list[str] = []
    for token in _WORD.findall(_CJK_RUN.sub(" ", text)):
        word = fold(token)
        if word not in EN_STOPWORDS and word not in words and (len(word) > 1 or word.isdigit()):
            words.append(word)
    long_runs: list[str] = []
    short_runs: list[str] = []
    for run in _CJK_RUN.findall(text):
        for piece in _strip_zh_stopwords(run):
            bucket = long_runs if len(piece) >= 3 else short_runs
            if piece not in bucket:
                bucket.append(piece)
    if words or long_runs:
        # A lone CJK character matches half the corpus; keep it only when it is all there is.
        short_runs = [r for r in short_runs if len(r) > 1]
    if not words and not long_runs and not short_runs:
        short_runs = [r for r in _CJK_RUN.findall(text)][:4]
    if not words and not long_runs and not short_runs:
        # Only stop words ("what is it?"): search for them rather than for nothing.
        words = [fold(t) for t in _WORD.findall(_CJK_RUN.sub(" ", text))][:4]
    return ParsedQuery(text=text, words=tuple(words), cjk_long=tuple(long_runs), cjk_short=tuple(short_runs))


def fts_quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def trigrams(run: str) -> list[str]:
    grams: list[str] = []
    for i in range(len(run) - 2):
        gram = run[i:i + 3]
        if gram not in grams:
            grams.append(gram)
    return grams


def like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
