"""Snippet highlighting as the agent and a chat group see it: whole words marked, CJK included —
never scattered trigrams or single characters."""

from __future__ import annotations

import pytest

from hermes_side.search.query import parse_query
from hermes_side.search.results import make_snippet


def marked(query: str, text: str) -> str:
    return make_snippet(text, parse_query(query).highlights)


@pytest.mark.parametrize(("query", "text", "expected"), [
    # the whole word, however long
    ("蓝绿部署", "我们最后选了蓝绿部署，回滚更快", "我们最后选了>>>蓝绿部署<<<，回滚更快"),
    ("椰奶冰淇淋 好吃", "刚发现能做椰奶冰淇淋并试做了", "刚发现能做>>>椰奶冰淇淋<<<并试做了"),
    # a message holding part of a long query word shows that part whole, not its characters
    ("蓝绿部署", "部署脚本改好了", ">>>部署<<<脚本改好了"),
    ("数据库迁移方案", "数据库的迁移还没做", ">>>数据库<<<的>>>迁移<<<还没做"),
    # query words that touch in the message read as one mark
    ("数据库 迁移", "数据库迁移先加列", ">>>数据库迁移<<<先加列"),
    # mixed Chinese and Latin, full-width query text
    ("部署 ＮｏｎｅＢｏｔ 插件", "用 NoneBot 部署插件", "用 >>>NoneBot<<< >>>部署插件<<<"),
    ("nonebot", "nonebot插件", ">>>nonebot<<<插件"),
    ("decide", "we decided it", "we >>>decided<<< it"),
])
def test_whole_words_are_marked(query, text, expected):
    assert marked(query, text) == expected


@pytest.mark.parametrize(("query", "text"), [
    ("部署 回滚", "部门署名都在这里"),  # the characters occur, the words do not
    ("数据库迁移", "库存和数量"),
])
def test_single_characters_are_never_marked(query, text):
    assert ">>>" not in marked(query, text)


def test_a_one_character_query_marks_that_character():
    assert marked("库", "数据库") == "数据>>>库<<<"
