"""Turn what a person typed into search terms. Pure functions, no SQL execution.

Hermes' own search ANDs every word, so a question like "what did we decide about the deploy
script?" finds nothing. Here a query becomes content words (stop words dropped) that are OR-ed
and ranked by BM25. Chinese has no spaces, so a CJK run is cut at question scaffolding and
particles into pieces, and each piece is searched as its overlapping character bigrams (a lone
character stays a unigram): "数据库迁移" → 数据 据库 库迁 迁移. Bigrams are the classic unit of
Chinese full-text search — every two-character word is one, a longer word is matched by all of
its bigrams — so a Chinese word of any length is ranked by BM25 like an English word. Every term
reaching FTS5 is double-quoted, so user text can never be parsed as FTS5 syntax.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property

from ..errors import RecallError
from ..text import CJK_CHAR, CJK_CHARS
from .settings import RANKING

MAX_QUERY_CHARS = 2000

_CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
# Split exactly where Hermes' unicode61 tokenizer splits: every non-alphanumeric character.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?;:。！？；：\n]+")

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

# Question scaffolding, pronouns and particles: a CJK run is cut where they stand (they are not
# searched). Characters that also start or end content words (在线, 对象, 还原, 了解, 和平) stay:
# cutting at them lost the word itself (LoCoMo-zh dev, one project: msg@1 0.901 → 0.909).
ZH_STOPWORDS = (
    "我们", "你们", "他们", "她们", "上次", "之前", "以前", "当时", "怎么", "什么", "为什么", "哪里",
    "哪个", "是否", "有没有", "是不是", "一下", "一个", "这个", "那个", "的", "吗", "呢", "吧", "啊",
)

# Distinct terms a query may bring to the keyword search; beyond it the most informative are kept
# (keyword.py), so a pasted wall of text costs a bounded amount of work.
MAX_TERMS = 32
EMBED_BUDGET = 80  # model tokens of the query the embedder reads: the longest LoCoMo dev question (en, zh) is 66
MAX_HIGHLIGHT_PIECES = 32
MAX_HIGHLIGHT_PIECE_CHARS = 12  # a longer CJK piece highlights its first 12 characters' substrings


@dataclass(frozen=True)
class ParsedQuery:
    text: str  # cleaned query text for the embedder: at most EMBED_BUDGET tokens (see embed_text)
    words: tuple[str, ...]  # non-CJK content words, lower-cased, deduplicated, in order
    cjk: tuple[str, ...] = ()  # CJK pieces (runs cut at scaffolding), deduplicated, in order
    full_text: str = ""  # the whole cleaned query, when ``text`` is a cut of it

    @property
    def empty(self) -> bool:
        return not (self.words or self.cjk)

    @property
    def cjk_long(self) -> tuple[str, ...]:
        """Pieces of ≥3 characters: Hermes' trigram index can find them."""
        return tuple(p for p in self.cjk if len(p) >= 3)

    @property
    def cjk_short(self) -> tuple[str, ...]:
        return tuple(p for p in self.cjk if len(p) < 3)

    @cached_property
    def cjk_grams(self) -> tuple[str, ...]:
        """The CJK search terms: every piece's bigrams (a one-character piece as itself)."""
        return tuple(dict.fromkeys(g for piece in self.cjk for g in bigrams(piece)))

    @property
    def term_count(self) -> int:
        return len(self.words) + len(self.cjk_grams)

    def notice(self, mode: str = "hybrid") -> str | None:
        """What a ``mode`` search should say when only part of the query was searched."""
        parts = []
        if mode != "semantic" and self.term_count > MAX_TERMS:
            parts.append(f"the query has {self.term_count} distinct search terms; only the {MAX_TERMS} "
                         "most distinctive were used")
        if mode != "keyword" and self.full_text and self.full_text != self.text:
            parts.append(f"semantic search read its first {len(self.text)} characters")
        return "; ".join(parts) or None

    @cached_property
    def names(self) -> tuple[str, ...]:
        """The content words written with a capital inside a sentence ("When did *Caroline* go…"),
        folded: mostly the people and places the question is about."""
        out = []
        for sentence in _SENTENCE_END.split(self.full_text or self.text):
            tokens = _WORD.findall(_CJK_RUN.sub(" ", sentence))
            out += [fold(t) for t in tokens[1:] if len(t) > 1 and t.istitle() and fold(t) in self.words]
        return tuple(dict.fromkeys(out))

    @cached_property
    def highlights(self) -> tuple[str, ...]:
        """What a snippet marks: whole words and whole CJK pieces, longest first. A piece also
        marks its substrings of ≥2 characters, so a message holding only part of a long piece
        ("部署" of "蓝绿部署") shows that word — never scattered single characters."""
        terms: dict[str, None] = dict.fromkeys(self.words[:MAX_HIGHLIGHT_PIECES])
        for piece in self.cjk[:MAX_HIGHLIGHT_PIECES]:
            head = piece[:MAX_HIGHLIGHT_PIECE_CHARS]
            if len(head) == 1:
                terms[head] = None
            for size in range(len(head), 1, -1):
                for i in range(len(head) - size + 1):
                    terms[head[i:i + size]] = None
        return tuple(sorted(terms, key=len, reverse=True))

    @cached_property
    def terms(self) -> tuple[Term, ...]:
        """Every distinct term of the query, in order (``keyword.select_terms`` bounds how many are
        used): worked out once per query, whichever stage asks first."""
        typed = {fold(t): t.lower() for t in TOKEN.findall(self.full_text or self.text)}
        words = [Term("word", w, typed.get(w, w) if typed.get(w, w) != w else "") for w in self.words]
        weight: dict[str, float] = {}
        for piece in self.cjk:
            grams = bigrams(piece)
            for g in grams:
                weight[g] = max(weight.get(g, 0.0), 1 / len(grams) ** RANKING.piece_alpha)
        return (*words, *(Term("cjk", g, weight=w) for g, w in weight.items()))


class QueryError(RecallError, ValueError):
    """Query text that cannot be searched (too long)."""

    code = "bad_query"


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
_ACCENTED = re.compile("[" + "".join(map(chr, sorted(_LATIN_FOLD))) + "]")


def fold(text: str) -> str:
    """Lower-case without diacritics on Latin letters, as unicode61 indexes it ('Déploiement' →
    'deploiement'). Other scripts are left whole: decomposing Hangul or voiced kana would break them."""
    lower = text.lower()
    return lower if lower.isascii() or not _ACCENTED.search(lower) else lower.translate(_LATIN_FOLD)


_ZH_STOP = re.compile("|".join(sorted(map(re.escape, ZH_STOPWORDS), key=len, reverse=True)))


def _strip_zh_stopwords(run: str) -> list[str]:
    return [p for p in _ZH_STOP.split(run) if p]


def check_length(raw: str) -> str:
    """``raw``, or ``QueryError`` when it is longer than a query may be."""
    if len(raw) > MAX_QUERY_CHARS:
        raise QueryError(f"query is too long ({len(raw)} characters; the limit is {MAX_QUERY_CHARS})",
                         code="query_too_long")
    return raw


def parse_query(raw: str) -> ParsedQuery:
    return parse_clean(clean_text(check_length(raw)))


def parse_clean(text: str) -> ParsedQuery:
    """:func:`parse_query` of a text :func:`clean_text` has cleaned already (question.ask reads the
    time a query names in the cleaned text before it parses it)."""
    words: list[str] = []
    for token in _WORD.findall(_CJK_RUN.sub(" ", text)):
        word = fold(token)
        if word not in EN_STOPWORDS and (len(word) > 1 or word.isdigit()):
            words.append(word)
    words = list(dict.fromkeys(words))
    pieces = list(dict.fromkeys(fold(p) for run in _CJK_RUN.findall(text) for p in _strip_zh_stopwords(run)))
    if words or any(len(p) > 1 for p in pieces):
        # A lone CJK character matches half the corpus; keep it only when it is all there is.
        pieces = [p for p in pieces if len(p) > 1]
    if not words and not pieces:
        pieces = list(dict.fromkeys(fold(r) for r in _CJK_RUN.findall(text)))[:4]
    if not words and not pieces:
        # Only stop words ("what is it?"): search for them rather than for nothing.
        words = list(dict.fromkeys(fold(t) for t in _WORD.findall(_CJK_RUN.sub(" ", text))))[:4]
    cut = embed_text(text)
    return ParsedQuery(text=cut, words=tuple(words), cjk=tuple(pieces), full_text=text if cut != text else "")


def embed_text(text: str, budget: int = EMBED_BUDGET) -> str:
    """``text`` cut to about ``budget`` model tokens (a CJK character ≈ 1, other text ≈ 1 per
    2 characters), at a space when there is one. Embedding time grows with the tokens: a
    2,000-character query took 0.8–1.6 s with the local model, a question of 30 tokens 20–30 ms."""
    cost = 0.0
    for i, ch in enumerate(text):
        cost += 1.0 if CJK_CHAR.match(ch) else 0.5
        if cost > budget:
            head = text[:i]
            space = head.rfind(" ")
            return head[:space] if space > len(head) // 2 else head
    return text


def fts_quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def bigrams(piece: str) -> list[str]:
    """Overlapping character bigrams of a CJK piece; a one-character piece is its own term."""
    if len(piece) < 2:
        return [piece] if piece else []
    return list(dict.fromkeys(piece[i:i + 2] for i in range(len(piece) - 1)))


def trigrams(run: str) -> list[str]:
    return list(dict.fromkeys(run[i:i + 3] for i in range(len(run) - 2)))


def cjk_runs(text: str) -> list[str]:
    return _CJK_RUN.findall(text)


def like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


# -- the query's terms (what keyword search counts and BM25 weighs) ----------------------------
_SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ies", "es", "ed", "s", "ly", "d", "e")
VARIANT_SUFFIXES = ("", "s", "es", "ed", "d", "ing", "ings", "er", "ers", "ion", "ions", "ation",
                    "ations", "e", "ies", "y", "ly")
TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
# TOKEN over folded ASCII text (lower-case letters and digits): the same tokens, twice as fast.
ASCII_TOKEN = re.compile(r"[a-z0-9]+")


def stem(word: str) -> str:
    """A deliberately crude English stem, never shorter than 4 characters: enough for "decide" to
    find "decided" without a stemming dependency."""
    if not (word.isascii() and word.isalpha()):
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


@dataclass(frozen=True)
class Term:
    """One BM25 term: a Latin word (counted with its inflections) or a CJK bigram / character."""

    kind: str  # "word" | "cjk"
    text: str
    raw: str = ""  # the word as typed (lower-cased), when folding changed it
    weight: float = field(default=1.0, compare=False)  # a bigram's share of its CJK piece

    @cached_property
    def forms(self) -> tuple[str, ...]:
        """Document tokens that count as this term (see ``Matcher``): a word and its inflections."""
        if self.kind != "word":
            return (self.text,)
        base = stem(self.text)
        if base == self.text and not (RANKING.inflect_unstemmed and self.text.isascii() and self.text.isalpha()
                                      and len(self.text) >= 4):
            return (self.text,)
        return tuple(dict.fromkeys([self.text, *(base + suffix for suffix in VARIANT_SUFFIXES)]))

    def needles(self) -> list[str]:
        """Substrings a raw ``content`` holding this term must contain (for SQL ``instr``).

        Hermes stores multimodal messages as JSON with ``\\uXXXX`` escapes, so non-ASCII terms
        also look for their escaped spelling.
        """
        base = stem(self.text) if self.kind == "word" else self.text
        spellings = {base, self.raw} - {""}
        return sorted(spellings | {_escaped(x) for x in spellings if not x.isascii()})

    def fts(self) -> str:
        """The ``messages_fts`` MATCH expression of a word."""
        base = stem(self.text)
        if base != self.text or len(self.forms) > 1:
            return f"{fts_quote(base)}*"
        return fts_quote(self.text)


def _escaped(text: str) -> str:
    return json.dumps(text)[1:-1].lower()


def escaped_phrase(source: str) -> str | None:
    """The FTS5 phrase that finds non-ASCII text inside Hermes' escaped multimodal JSON."""
    if source.isascii():
        return None
    tokens = TOKEN.findall(_escaped(source))
    return fts_quote(" ".join(tokens)) if tokens else None
