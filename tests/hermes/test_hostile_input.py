"""Property tests: whatever a user or a client sends, the answer is a clear error or a correct
empty result — never an exception, a 500, or a leaked key or message."""

from __future__ import annotations

import json
import logging
import os

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_side.api.app import create_app
from hermes_side.search.engine import SearchEngine, SearchError
from hermes_side.search.query import QueryError, parse_query
from hermes_side.search.request import RequestError, parse_search_args
from hermes_side.search.settings import RANKING, overridden

KEY = "hostile-test-key-0123456789"
SECRET_TEXT = "the launch code is swordfish-4711"

NASTY = st.sampled_from([
    'foo AND (', '"unbalanced', 'NEAR(a b', 'col:val', '*', '-x', 'a OR', '^x', '{a b}', 'x" OR "y',
    "%", "_", "\\", "%_\\%", "\x00", "a\x00b", "\ud800", "a\udfffb", "../..", "/etc/passwd", "C:\\x",
    "数据库", "迁", "的", "🙂🙂🙂", "x" * 100_000, " ", "\n\t", "NOT", "AND OR NOT", "a*b*",
    "'; DROP TABLE messages; --",
])
QUERIES = st.one_of(NASTY, st.text(max_size=300), st.text(alphabet=st.characters(codec="utf-8"), max_size=50))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    from tests.hermes.world import World

    base = tmp_path_factory.mktemp("hostile")
    home = base / "home"
    home.mkdir()
    os.environ["HERMES_HOME"] = str(home)
    w = World(home, base / "work")
    folder = w.folder("proj")
    w.project("Proj", folder)
    w.session("数据库迁移 uses alembic; 100% of rows_copied with a_b %", "ok", cwd=folder)
    w.session(SECRET_TEXT, cwd=folder)
    current = w.session("current", cwd=folder)
    yield w, current
    w.close()


@given(text=QUERIES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_parse_query_only_raises_its_own_error(text):
    try:
        parsed = parse_query(text)
    except QueryError as exc:
        assert exc.code == "query_too_long"
        return
    assert all("\x00" not in t for t in parsed.highlights)


@pytest.mark.slow
@given(text=QUERIES, mode=st.sampled_from(["hybrid", "keyword"]))
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_search_engine_answers_or_refuses_clearly(corpus, text, mode):
    world, current = corpus
    engine = SearchEngine(world.home)
    try:
        req = parse_search_args({"query": text, "mode": mode, "limit": 10})
        result = engine.search(req, session_id=current)
    except (RequestError, SearchError) as exc:
        assert exc.code in {"bad_request", "query_too_long"} and str(exc)
        return
    assert result["success"] is True
    json.dumps(result)  # serialisable, surrogates included
    for row in result["results"]:
        assert row["session_id"] != current


@pytest.mark.slow
@given(body=st.one_of(
    st.dictionaries(st.sampled_from(["query", "mode", "limit", "chat", "project", "after", "before", "x"]),
                    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), QUERIES,
                              st.lists(st.integers(), max_size=3)), max_size=6),
    st.lists(st.integers(), max_size=3), st.text(max_size=20), st.integers()))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_api_never_500s_on_any_body(corpus, body):
    world, _ = corpus
    client = TestClient(create_app(world.home, KEY), raise_server_exceptions=False)
    response = client.post("/search", headers={"Authorization": f"Bearer {KEY}"},
                           content=json.dumps(body, allow_nan=True).encode())
    assert response.status_code < 500, response.text
    data = response.json()
    assert data["success"] is (response.status_code == 200)
    if response.status_code != 200:
        assert data["code"] and data["error"]


@pytest.mark.slow
@given(name=st.one_of(st.text(max_size=70), st.sampled_from(["..", ".", "%2e%2e", "a/b", "default", "Work",
                                                               "a" * 65, "-x", "work\x00"])))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_profile_names_never_escape_the_profiles_dir(corpus, name):
    world, _ = corpus
    client = TestClient(create_app(world.home, KEY), raise_server_exceptions=False)
    from urllib.parse import quote

    response = client.get(f"/p/{quote(name, safe='')}/projects", headers={"Authorization": f"Bearer {KEY}"})
    assert response.status_code in (200, 404, 401), response.text
    if response.status_code == 200:
        # Only the launch profile exists here; ".." is resolved by the URL itself back to "/projects".
        assert response.json() == client.get("/projects", headers={"Authorization": f"Bearer {KEY}"}).json()


def test_keys_and_message_text_never_reach_the_logs(corpus, caplog):
    world, current = corpus
    caplog.set_level(logging.DEBUG)
    client = TestClient(create_app(world.home, KEY), raise_server_exceptions=False)
    headers = {"Authorization": f"Bearer {KEY}"}
    client.post("/search", headers=headers, json={"query": "swordfish launch code", "project": "proj"})
    client.post("/search", headers={"Authorization": "Bearer wrong-key-wrong-key"}, json={"query": "x"})
    client.post("/search", headers=headers, json={"query": "swordfish", "project": "nope"})
    SearchEngine(world.home).search(parse_search_args({"query": "swordfish"}), session_id=current)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert KEY not in logged and "wrong-key" not in logged
    assert "swordfish" not in logged and SECRET_TEXT not in logged


# -- hostile but well-formed: hundreds of distinct short words (issue 8 §6) ----------------------
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_HAN = "部署数据库迁移回滚灰度发布配置脚本测试环境服务日志监控告警接口缓存队列网关权限"  # 40 characters


def many_words(alphabet: str, n: int = 600) -> str:
    """``n`` distinct two-character words, space separated (under MAX_QUERY_CHARS)."""
    words = [a + b for a in alphabet for b in alphabet][:n]
    assert len(words) == n
    return " ".join(words)


HOSTILE_WORDS = {"latin": many_words(_LETTERS), "cjk": many_words(_HAN)}


@pytest.fixture(scope="module")
def busy_world(tmp_path_factory):
    """A project whose messages hold many of those words, so every term finds something."""
    from tests.hermes.world import shared_world

    with shared_world(tmp_path_factory.mktemp("busy")) as w:
        folder = w.folder("busy")
        w.pid = w.project("Busy", folder)
        w.hit = w.session("the kestrel rollout moved to friday; 灰度发布改到周五", cwd=folder)
        for i in range(30):
            han = "".join(_HAN[(i * 7 + k) % len(_HAN)] for k in range(12))
            latin = " ".join(_LETTERS[(i + k) % 26] + _LETTERS[(i * 3 + k) % 26] for k in range(40))
            w.session(f"{latin} {han}", f"reply {i}: {han[::-1]}", cwd=folder)
        w.cur = w.session("hello", cwd=folder)
        yield w


@pytest.fixture(params=["scan", "fts"])
def keyword_path(request, ranking):
    if request.param == "fts":
        ranking(scan_scope_max=0)
    return request.param


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
@pytest.mark.parametrize("kind", ["latin", "cjk"])
def test_six_hundred_distinct_words_through_the_tool(busy_world, keyword_path, kind, mode):
    from tests.hermes.world import call_tool

    out = call_tool("project_history_search", {"query": HOSTILE_WORDS[kind], "mode": mode, "limit": 10},
                    busy_world.cur)

    assert out["success"] is True, out
    assert 0 < len(out["results"]) <= 10
    assert "most distinctive were used" in out["notice"]


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
@pytest.mark.parametrize("kind", ["latin", "cjk"])
def test_six_hundred_distinct_words_through_the_api(busy_world, keyword_path, kind, mode):
    client = TestClient(create_app(busy_world.home, KEY), raise_server_exceptions=False)

    response = client.post("/search", headers={"Authorization": f"Bearer {KEY}"},
                           json={"query": HOSTILE_WORDS[kind], "mode": mode, "project": busy_world.pid, "limit": 5})

    assert response.status_code == 200, response.text
    assert 0 < len(response.json()["results"]) <= 5


def test_a_rare_word_is_not_lost_among_hundreds_of_others(busy_world, keyword_path):
    """Of an over-long query, the terms the project holds are searched first."""
    from tests.hermes.world import call_tool

    absent = "".join(chr(0x4E00 + i) for i in range(40) if chr(0x4E00 + i) not in _HAN + "周五改到")[:30]
    query = f"{many_words(absent)} 周五"
    out = call_tool("project_history_search", {"query": query, "mode": "keyword"}, busy_world.cur)

    assert "notice" in out
    assert [r["session_id"] for r in out["results"]] == [busy_world.hit]


def test_the_rarest_terms_are_kept():
    from hermes_side.search.keyword import Term, select_terms
    from hermes_side.search.query import MAX_TERMS

    common = [Term("word", f"w{i}") for i in range(MAX_TERMS)]
    rare, absent = Term("word", "rare"), Term("word", "absent")
    df = {t: 50 for t in common} | {rare: 1, absent: 0}

    kept, dropped = select_terms([absent, *common, rare], df.__getitem__)

    assert rare in kept and absent in dropped and len(kept) == MAX_TERMS
    assert kept[-1] == rare  # kept terms stay in query order


def _statements(engine: SearchEngine, pid: str, query: str, mode: str = "keyword") -> list[str]:
    """SQL statements one search runs, string literals (the bound parameters) replaced by '?'."""
    import re

    seen: list[str] = []
    with engine.leased() as conn:
        # Statements FTS5 runs inside its own MATCH come as "-- ..." comments: not ours, not counted.
        conn.set_trace_callback(lambda sql: sql.startswith("--") or seen.append(re.sub(r"'(?:[^']|'')*'", "?", sql)))
        try:
            engine.search(parse_search_args({"query": query, "mode": mode}), project=pid)
        finally:
            conn.set_trace_callback(None)
    return seen


@pytest.mark.parametrize("kind", ["latin", "cjk"])
def test_work_per_query_is_bounded(busy_world, keyword_path, kind):
    """A hostile query runs about as many statements as a normal one, of the same fixed shapes:
    no statement grows with the query (its terms travel as one JSON parameter)."""
    from hermes_side.search.query import MAX_TERMS

    engine = SearchEngine(busy_world.home)
    normal = "kestrel rollout friday 灰度发布 周五"
    for warm in (normal, HOSTILE_WORDS[kind]):  # scope map, scope statistics (read once per scope)
        _statements(engine, busy_world.pid, warm)

    usual = _statements(engine, busy_world.pid, normal)
    hostile = _statements(engine, busy_world.pid, HOSTILE_WORDS[kind])

    assert len(hostile) <= len(usual) + MAX_TERMS + RANKING.max_grams
    assert max(map(len, hostile)) <= max(map(len, usual)) + 50
    assert set(hostile) <= set(usual) | {s for s in hostile if "MATCH ?" in s}


@pytest.mark.slow
@given(words=st.lists(st.text(alphabet=_LETTERS + _HAN + "ＡＢ１２", min_size=2, max_size=2), min_size=20,
                      max_size=600, unique=True),
       mode=st.sampled_from(["keyword", "hybrid"]), scan_max=st.sampled_from([0, 3000]))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_many_short_words_always_answer(busy_world, words, mode, scan_max):
    engine = SearchEngine(busy_world.home)
    with overridden(scan_scope_max=scan_max):
        result = engine.search(parse_search_args({"query": " ".join(words), "mode": mode, "limit": 10}),
                               project=busy_world.pid)
    assert result["success"] is True and len(result["results"]) <= 10
    assert result.get("notice") == parse_query(" ".join(words)).notice(mode)
