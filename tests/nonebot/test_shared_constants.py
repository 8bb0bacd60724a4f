"""What the bot checks before it calls the recall API is what the server accepts.

The bot validates ``--mode``, ``--limit`` and its key length itself, prints date examples in its
help and turns the API's error codes into its own sentences; the server owns the same rules. If
one side changed alone, a group would get a refusal the server would not have made, or a request
the server refuses with a sentence the bot does not have.
"""

from __future__ import annotations

import re

import pytest

from hermes_side.api.access import MIN_KEY_CHARS
from hermes_side.search import request
from hermes_side.search.query import MAX_QUERY_CHARS


def test_modes_and_the_default_mode_agree():
    from nonebot_plugin_history_recall import texts

    assert texts.MODES == request.MODES
    assert texts.DEFAULT_MODE == request.DEFAULT_MODE == request.parse_search_args({"query": "x"}).mode


def test_limits_agree_and_the_server_takes_every_limit_the_bot_lets_through():
    from nonebot_plugin_history_recall import texts

    assert (texts.LIMIT_MIN, texts.DEFAULT_LIMIT, texts.LIMIT_MAX) == (
        request.MIN_LIMIT, request.DEFAULT_LIMIT, request.MAX_LIMIT)
    assert request.parse_search_args({"query": "x"}).limit == texts.DEFAULT_LIMIT
    for limit in range(texts.LIMIT_MIN, texts.LIMIT_MAX + 1):
        assert request.parse_search_args({"query": "x", "limit": limit}).limit == limit


def test_the_key_length_the_bot_requires_is_the_one_the_server_requires():
    from nonebot_plugin_history_recall import routing

    assert routing.MIN_KEY_LENGTH == MIN_KEY_CHARS


def test_an_over_long_query_gets_the_bots_own_sentence():
    from nonebot_plugin_history_recall import client

    request.parse_search_args({"query": "x" * MAX_QUERY_CHARS})  # at the limit: accepted
    with pytest.raises(request.RequestError) as refused:
        request.parse_search_args({"query": "x" * (MAX_QUERY_CHARS + 1)})
    assert refused.value.code == "query_too_long"
    assert client._user_message(413, refused.value.code, str(refused.value)) == "query_too_long"


def test_every_date_the_bots_help_shows_is_one_the_server_parses():
    from nonebot_plugin_history_recall import texts

    shown = " ".join(" ".join([t("bad_date", option="--after", value="x"), t.help(is_admin=True), t.usage()])
                     for t in (texts.texts_for("zh"), texts.texts_for("en")))
    examples = set(re.findall(r"\b\d+[hdwm]\b|\b\d{4}-\d{2}-\d{2}\b", shown))
    assert {"24h", "7d", "2w", "3m", "2026-11-01"} <= examples
    for example in examples:
        assert request.parse_time(example, "after", now=1.8e9) is not None, example


def test_every_error_code_the_bot_words_is_one_the_server_answers():
    from hermes_side.api.app import ERRORS
    from nonebot_plugin_history_recall import client

    assert set(client._BY_CODE) <= set(ERRORS)
