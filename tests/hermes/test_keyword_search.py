"""``project_history_search`` in keyword mode, dispatched through Hermes' real tool pipeline.

Fixtures are written by Hermes' own SessionDB / projects_db; the current session id reaches the
handler only as the ``session_id`` kwarg, as in the agent loop.
"""

from __future__ import annotations

import contextvars
import json
import re
import time
from datetime import datetime

import pytest

from tests.hermes import hermes_line
from tests.hermes.world import call_tool, call_tool_raw, shared_world

DAY = 86400


def search(sid: str, query: str, **extra) -> dict:
    return call_tool("project_history_search", {"query": query, "mode": "keyword", **extra}, sid)


def hit_ids(out: dict) -> list[str]:
    return [r["session_id"] for r in out["results"]]


def in_session_context(session_id: str, fn):
    """Run ``fn`` as inside a gateway/api_server turn (Hermes' session ContextVars set)."""
    from gateway.session_context import set_session_vars

    def run():
        set_session_vars(platform="api_server", session_key="agent:main:test", session_id=session_id)
        return fn()

    return contextvars.copy_context().run(run)


@pytest.fixture(params=["scan", "fts"])
def keyword_path(request, ranking):
    """Run a test on both keyword paths. A scope of up to ``scan_scope_max`` messages is read whole;
    "fts" forces the path big scopes take (FTS probes, candidates, the scope's term statistics)."""
    if request.param == "fts":
        ranking(scan_scope_max=0)
    return request.param


@pytest.fixture
def proj(world, loaded_plugin):
    """One explicit project folder with the plugin loaded."""
    folder = world.folder("hermes")
    world.pid = world.project("Hermes", folder)
    return folder


@pytest.mark.usefixtures("keyword_path")
class TestNaturalLanguageQuestions:
    QUESTION = "what did we decide about the deploy script?"

    def test_answers_the_question_whether_or_not_hermes_own_search_does(self, world, proj):
        decided = world.session("we decided the deploy script should use rsync --delete", "noted", cwd=proj)
        world.session("lunch options near the office", cwd=proj)
        cur = world.session("hello", cwd=proj)

        # Hermes 0.19's own search ANDs every word of the question (on a writable handle, FTS
        # enabled) and finds nothing; 0.22's answers natural-language questions — detected ...
        assert world.db.search_messages("deploy script") != []
        if hermes_own := world.db.search_messages(self.QUESTION):
            assert decided in {m.get("session_id") for m in hermes_own}
        # ... ours answers the question either way, and only with the conversation that has it.
        out = search(cur, self.QUESTION)
        assert hit_ids(out) == [decided]
        assert ">>>deploy<<<" in out["results"][0]["snippet"]

    def test_cjk_question_hermes_misses_is_answered(self, world, proj):
        mig = world.session("数据库迁移方案：先加列，再回填，最后删旧列", "好的", cwd=proj)
        cur = world.session("你好", cwd=proj)

        assert world.db.search_messages("上次数据库迁移怎么定的") == []
        assert hit_ids(search(cur, "上次数据库迁移怎么定的")) == [mig]

    def test_the_conversation_matching_more_of_the_question_ranks_first(self, world, proj):
        weak = world.session("a script for the unit tests", cwd=proj)
        strong = world.session("the deploy script now runs rsync before the restart", cwd=proj)
        cur = world.session("hello", cwd=proj)

        assert hit_ids(search(cur, self.QUESTION))[:2] == [strong, weak]

    def test_a_word_finds_its_inflections(self, world, proj):
        ing = world.session("we are deploying the gateway tonight", cwd=proj)
        ed = world.session("the gateway was deployed on friday", cwd=proj)
        world.session("lunch options near the office", cwd=proj)
        cur = world.session("hello", cwd=proj)

        out = search(cur, "deploy", limit=10)

        assert sorted(hit_ids(out)) == sorted([ing, ed])
        assert {">>>deploying<<<", ">>>deployed<<<"} <= {w for r in out["results"] for w in r["snippet"].split()}

    def test_words_with_accents_are_found(self, world, proj):
        fr = world.session("le déploiement est prévu pour jeudi", cwd=proj)
        cur = world.session("salut", cwd=proj)

        assert hit_ids(search(cur, "déploiement")) == [fr]

    def test_words_with_an_apostrophe_are_found(self, world, proj):
        rev = world.session("O'Brien reviewed the migration", cwd=proj)
        cur = world.session("hello", cwd=proj)

        assert hit_ids(search(cur, "O'Brien")) == [rev]


@pytest.mark.usefixtures("keyword_path")
class TestScope:
    def test_explicit_project_covers_all_its_folders_and_nothing_else(self, world, loaded_plugin):
        code, notes, elsewhere = world.folder("hermes"), world.folder("notes/hermes"), world.folder("other")
        pid = world.project("Hermes", code, notes)
        in_code = world.session("kestrel rollout plan", cwd=code / "src")
        in_notes = world.session("kestrel rollout retro", cwd=notes)
        world.session("kestrel rollout elsewhere", cwd=elsewhere)
        cur = world.session("hello", cwd=code)

        out = search(cur, "kestrel rollout", limit=10)

        assert out["project"]["kind"] == "explicit" and out["project"]["id"] == pid
        assert sorted(hit_ids(out)) == sorted([in_code, in_notes])
        assert out["sessions_in_scope"] == 3

    def test_folder_that_only_shares_a_prefix_is_another_place(self, world, loaded_plugin):
        repo, repo2 = world.folder("repo"), world.folder("repo2")
        world.project("Repo", repo)
        world.session("kestrel rollout in repo2", cwd=repo2)
        cur = world.session("hello", cwd=repo)

        out = search(cur, "kestrel")

        assert out["results"] == [] and out["sessions_in_scope"] == 1

    def test_nested_projects_do_not_see_each_other(self, world, loaded_plugin):
        mono, pkg = world.folder("mono"), world.folder("mono/pkg")
        world.project("Mono", mono)
        world.project("Pkg", pkg)
        in_mono = world.session("kestrel in the monorepo root", cwd=mono / "docs")
        in_pkg = world.session("kestrel in the package", cwd=pkg)
        cur_mono = world.session("hello", cwd=mono)
        cur_pkg = world.session("hello", cwd=pkg / "src")

        assert hit_ids(search(cur_mono, "kestrel")) == [in_mono]
        assert hit_ids(search(cur_pkg, "kestrel")) == [in_pkg]

    def test_auto_repo_scope_covers_the_repo_only(self, world, loaded_plugin):
        repo, other = world.repo("tool"), world.repo("other")
        in_repo = world.session("kestrel parser", cwd=world.folder("tool/src"))
        world.session("kestrel parser elsewhere", cwd=other)
        cur = world.session("hello", cwd=repo)

        out = search(cur, "kestrel")

        assert out["project"]["kind"] == "auto"
        assert hit_ids(out) == [in_repo]

    def test_home_scope_sees_other_home_sessions_but_no_project_or_repo(self, world, loaded_plugin):
        proj, repo = world.folder("proj"), world.repo("repo")
        world.project("Proj", proj)
        plain_a, plain_b = world.folder("scratch-a"), world.folder("scratch-b")
        home_hit = world.session("kestrel shopping list", cwd=plain_b)
        world.session("kestrel in a project", cwd=proj)
        world.session("kestrel in a repo", cwd=repo)
        cur = world.session("hello", cwd=plain_a)

        out = search(cur, "kestrel", limit=10)

        assert out["project"] == {"kind": "home"}
        assert hit_ids(out) == [home_hit]


class TestCurrentConversationIsExcluded:
    def test_own_messages_never_come_back(self, world, proj):
        other = world.session("kestrel migration notes", cwd=proj)
        cur = world.session("kestrel migration notes, but this is the live chat", cwd=proj)

        out = search(cur, "kestrel migration")

        assert hit_ids(out) == [other]
        assert out["sessions_in_scope"] == 2

    def test_which_session_is_current_comes_from_the_session_id_kwarg(self, world, proj):
        a = world.session("kestrel alpha", cwd=proj)
        b = world.session("kestrel beta", cwd=proj)

        assert hit_ids(search(a, "kestrel")) == [b]
        assert hit_ids(search(b, "kestrel")) == [a]

    def test_the_kwarg_wins_over_the_gateway_session_context(self, world, proj):
        a = world.session("kestrel alpha", cwd=proj)
        b = world.session("kestrel beta", cwd=proj)

        # HERMES_SESSION_ID can be stale on later gateway turns; the kwarg is the agent's own id.
        out = in_session_context(b, lambda: search(a, "kestrel"))

        assert hit_ids(out) == [b]

    def test_without_the_kwarg_the_session_context_names_the_current_session(self, world, proj):
        a = world.session("kestrel alpha", cwd=proj)
        b = world.session("kestrel beta", cwd=proj)

        assert hit_ids(in_session_context(b, lambda: search(None, "kestrel"))) == [a]

    def test_earlier_segments_of_the_current_compression_lineage_are_excluded(self, world, proj):
        other = world.session("kestrel elsewhere", cwd=proj)
        root = world.session("kestrel before compression", cwd=proj)
        mid = world.compress(root, "kestrel in the middle")
        tip = world.compress(mid, "kestrel at the tip")

        out = search(tip, "kestrel", limit=10)

        assert hit_ids(out) == [other]
        assert out["sessions_in_scope"] == 2


@pytest.mark.usefixtures("keyword_path")
class TestOneResultPerConversation:
    def test_compression_lineage_is_one_result_titled_by_its_root(self, world, proj):
        root = world.session("kestrel schema first draft", cwd=proj, title="Schema design")
        child = world.compress(root, "kestrel schema final version")
        # 0.19 leaves the child's cwd empty, 0.22 copies the parent's — detected.
        assert world.db.get_session(child)["cwd"] == (str(proj) if hermes_line.child_inherits_cwd() else None)
        cur = world.session("hello", cwd=proj)

        out = search(cur, "kestrel schema", limit=10)

        assert len(out["results"]) == 1
        assert out["results"][0]["session_id"] in (root, child)
        assert out["results"][0]["title"] == "Schema design"
        assert out["sessions_in_scope"] == 2  # the lineage and the current conversation

    def test_many_matching_messages_in_one_session_are_one_result(self, world, proj):
        chatty = world.session(*[f"kestrel note number {i}" for i in range(8)], cwd=proj)
        quiet = world.session("one kestrel mention", cwd=proj)
        cur = world.session("hello", cwd=proj)

        assert sorted(hit_ids(search(cur, "kestrel", limit=10))) == sorted([chatty, quiet])

    def test_one_chatty_conversation_does_not_crowd_out_the_others(self, world, proj):
        world.session(*[f"kestrel kestrel status update {i}" for i in range(60)], cwd=proj)
        quiet = [world.session(f"a single kestrel mention among other words, number {i}", cwd=proj)
                 for i in range(4)]
        cur = world.session("hello", cwd=proj)

        out = search(cur, "kestrel", limit=5)

        assert len(out["results"]) == 5
        assert set(quiet) <= set(hit_ids(out))

    def test_branch_is_its_own_conversation(self, world, proj):
        parent = world.session("kestrel original line", cwd=proj)
        world.db.end_session(parent, "branched")
        branch = world.session("kestrel branched line", parent=parent, cwd=proj,
                               model_config={"_branched_from": parent})
        cur = world.session("hello", cwd=proj)

        assert sorted(hit_ids(search(cur, "kestrel", limit=10))) == sorted([parent, branch])


CJK_CASES = [
    ("蓝绿部署", "我们最后选了蓝绿部署，回滚更快"),  # ≥3 chars: trigram index
    ("数据库迁移怎么做的", "数据库迁移先加列再回填"),  # question words stripped
    ("部署", "我们最后选了蓝绿部署，回滚更快"),  # 2 chars: LIKE
    ("库", "数据库迁移先加列再回填"),  # 1 char: LIKE
    ("스크립트", "배포 스크립트를 고쳤다"),
    ("デプロイ", "デプロイ手順を更新した"),
    ("deploy 灰度发布", "deploy 时用灰度发布"),  # mixed
]


@pytest.fixture(scope="class")
def cjk_world(tmp_path_factory):
    with shared_world(tmp_path_factory.mktemp("cjk")) as w:
        proj = w.folder("proj")
        w.project("Proj", proj)
        w.hits = {stored: w.session(stored, cwd=proj) for stored in dict.fromkeys(s for _, s in CJK_CASES)}
        w.session("无关的内容 unrelated text", cwd=proj)
        w.cur = w.session("你好", cwd=proj)
        yield w


@pytest.mark.usefixtures("keyword_path")
class TestCjkOfAnyLength:
    @pytest.mark.parametrize(("query", "stored"), CJK_CASES)
    def test_found(self, cjk_world, query, stored):
        out = search(cjk_world.cur, query)

        # First and alone, but for a message holding the English translation of a query word
        # ("deploy" for 部署, translate.py), which may follow.
        assert hit_ids(out)[0] == cjk_world.hits[stored]
        assert all(">>>deploy<<<" in r["snippet"] for r in out["results"][1:]), out
        assert ">>>" in out["results"][0]["snippet"]

    def test_long_question_with_the_key_term_at_the_end(self, cjk_world):
        query = "请帮我找找关于生产环境部署脚本回滚流程以及灰度发布配置文件变更记录里面数据库迁移方案"

        assert cjk_world.hits["数据库迁移先加列再回填"] in hit_ids(search(cjk_world.cur, query, limit=10))


class TestTheFtsPathIsTheOneBigScopesTake:
    def test_it_finds_what_lies_outside_the_scanned_window(self, world, proj, ranking):

        old = world.session("the zeppelin decision from long ago", cwd=proj)
        for i in range(4):
            world.session(f"filler talk number {i}", cwd=proj)
        cur = world.session("hello", cwd=proj)
        ranking(recent_fallback=3)

        assert search(cur, "zeppelin")["results"] == []  # the scan reads only the newest 3 messages
        ranking(scan_scope_max=0)
        assert hit_ids(search(cur, "zeppelin")) == [old]  # Hermes' index finds it wherever it is

    def test_long_cjk_words_come_from_the_trigram_index(self, world, proj, ranking):

        old = world.session("我们最后选了蓝绿部署，回滚更快", cwd=proj)
        for i in range(4):
            world.session(f"无关的闲聊 {i}", cwd=proj)
        cur = world.session("你好", cwd=proj)
        ranking(recent_fallback=3, scan_scope_max=0)

        assert hit_ids(search(cur, "蓝绿部署")) == [old]
        assert search(cur, "部署")["results"] == []  # two characters: only the newest messages (known limit)


@pytest.mark.usefixtures("keyword_path")
class TestChineseRanking:
    """Chinese words are weighed like English ones: by how rare they are in the project."""

    def test_the_message_with_the_rarer_word_ranks_first(self, world, proj):
        for i in range(6):
            world.session(f"今天部署了服务 {i}", cwd=proj)
        rare = world.session("部署前先做回滚演练", cwd=proj)
        cur = world.session("你好", cwd=proj)

        assert hit_ids(search(cur, "部署 回滚演练"))[0] == rare

    def test_whole_word_beats_scattered_characters(self, world, proj):
        scattered = world.session("部门的署名都在库里", cwd=proj)
        whole = world.session("数据库部署完成", cwd=proj)
        cur = world.session("你好", cwd=proj)

        assert hit_ids(search(cur, "数据库部署", limit=10)) == [whole]
        assert scattered not in hit_ids(search(cur, "部署", limit=10))

    def test_mixed_chinese_and_english_query(self, world, proj):
        both = world.session("用 NoneBot 部署插件的步骤", cwd=proj)
        world.session("NoneBot 的日志配置", cwd=proj)
        world.session("插件市场的链接", cwd=proj)
        cur = world.session("你好", cwd=proj)

        assert hit_ids(search(cur, "部署 nonebot 插件", limit=10))[0] == both

    def test_full_width_query_finds_half_width_text(self, world, proj):
        sid = world.session("NoneBot2 插件 v2.1 已发布", cwd=proj)
        cur = world.session("你好", cwd=proj)

        assert hit_ids(search(cur, "ＮｏｎｅＢｏｔ２ 插件，发布？")) == [sid]


@pytest.mark.usefixtures("keyword_path")
class TestWhatIsNotHistory:
    def test_rewound_messages_are_skipped(self, world, proj):
        sid = world.session("kestrel kept message", "reply", cwd=proj)
        taken_back = world.db.append_message(sid, "user", "kestrel zeppelin taken back")
        world.db.append_message(sid, "assistant", "zeppelin answer also rewound")
        world.db.rewind_to_message(sid, taken_back)
        cur = world.session("hello", cwd=proj)

        assert search(cur, "zeppelin")["results"] == []
        assert hit_ids(search(cur, "kestrel kept")) == [sid]

    def test_archived_sessions_are_skipped(self, world, proj):
        gone = world.session("kestrel archived talk", cwd=proj)
        kept = world.session("kestrel live talk", cwd=proj)
        world.db.set_session_archived(gone, True)
        cur = world.session("hello", cwd=proj)

        assert hit_ids(search(cur, "kestrel", limit=10)) == [kept]

    @pytest.mark.parametrize("source", ["subagent", "tool"])
    def test_machinery_sessions_are_skipped(self, world, proj, source):
        world.session("kestrel delegated work", cwd=proj, source=source)
        kept = world.session("kestrel human talk", cwd=proj)
        cur = world.session("hello", cwd=proj)

        assert hit_ids(search(cur, "kestrel", limit=10)) == [kept]

    def test_tool_output_rows_are_not_conversation(self, world, proj):
        sid = world.session("run it", cwd=proj)
        world.db.append_message(sid, "tool", "kestrel output of a shell command", tool_name="terminal")
        cur = world.session("hello", cwd=proj)

        assert search(cur, "kestrel")["results"] == []

    def test_compacted_originals_stay_searchable_but_the_summary_row_is_not_returned(self, world, proj):
        sid = world.session("kestrel capacity planning details", "we chose three replicas", cwd=proj)
        world.db.archive_and_compact(sid, [{
            "role": "user",
            "content": "[CONTEXT COMPACTION — REFERENCE ONLY] kestrel capacity planning: three replicas",
        }])
        cur = world.session("hello", cwd=proj)

        out = search(cur, "kestrel capacity replicas", limit=10)

        assert hit_ids(out) == [sid]
        hit = world.db.get_messages(sid, include_inactive=True)
        original_ids = {m["id"] for m in hit if not m["content"].startswith("[CONTEXT COMPACTION")}
        assert out["results"][0]["message_id"] in original_ids
        assert "CONTEXT COMPACTION" not in out["results"][0]["snippet"]

    def test_a_compactions_copy_of_a_turn_is_the_same_turn(self, world, proj):
        # In-place compaction keeps the originals (compacted) and writes copies of the last turns as
        # the live rows. The copy is not a second hit: it neither shows twice in a row's "more" nor
        # takes the place of another turn (limit 2 here, three kestrel turns, one of them copied).
        sid = world.session("kestrel replicas were set to three", "kestrel runs in two zones",
                            "kestrel backups happen nightly", cwd=proj)
        last = world.db.get_messages(sid)[-1]
        world.db.archive_and_compact(sid, [
            {"role": "user", "content": "[CONTEXT COMPACTION — REFERENCE ONLY] kestrel setup so far"},
            {"role": last["role"], "content": last["content"]},
        ])
        cur = world.session("hello", cwd=proj)
        from hermes_side.search.engine import SearchEngine

        ranked = SearchEngine(world.home).rank_messages("kestrel", mode="keyword", session_id=cur)
        texts = [m["content"] for m in world.db.get_messages(sid, include_inactive=True)
                 for r in ranked if m["id"] == r["message_id"]]
        assert sorted(texts) == sorted(["kestrel replicas were set to three", "kestrel runs in two zones",
                                        "kestrel backups happen nightly"])
        row = search(cur, "kestrel", limit=10)["results"][0]
        shown = [row["snippet"], *(m["snippet"] for m in row.get("more", []))]
        assert len(shown) == len(set(shown))

    def test_legacy_context_summary_rows_are_not_returned(self, world, proj):
        sid = world.session("[CONTEXT SUMMARY]: kestrel summary of an old conversation", cwd=proj)
        cur = world.session("hello", cwd=proj)

        assert sid and search(cur, "kestrel")["results"] == []


@pytest.fixture(scope="class")
def dated_world(tmp_path_factory):
    with shared_world(tmp_path_factory.mktemp("dated")) as w:
        proj, now = w.folder("proj"), time.time()
        w.project("Proj", proj)
        w.jan = w.session("kestrel in january", cwd=proj, ts=datetime(2025, 1, 15, 12).timestamp())
        w.mar = w.session("kestrel in march", cwd=proj, ts=datetime(2025, 3, 15, 14, 30).timestamp())
        w.may = w.session("kestrel in may", cwd=proj, ts=datetime(2025, 5, 15, 12).timestamp())
        w.hours = w.session("kestrel two hours ago", cwd=proj, ts=now - 2 * 3600)
        w.days = w.session("kestrel three days ago", cwd=proj, ts=now - 3 * DAY)
        w.month = w.session("kestrel last month", cwd=proj, ts=now - 30 * DAY)
        w.cur = w.session("hello", cwd=proj)
        yield w


class TestTimeRange:
    @pytest.mark.parametrize(("bounds", "expected"), [
        ({"after": "2025-02-01", "before": "2025-12-31"}, ["mar", "may"]),
        ({"before": "2025-02-01"}, ["jan"]),
        ({"after": "2025-02-01", "before": "2025-04-01"}, ["mar"]),
        ({"after": "2025-03-15T14:00", "before": "2025-03-15T15:00"}, ["mar"]),
        ({"after": "7d"}, ["hours", "days"]),
        ({"after": "24h"}, ["hours"]),
        ({"after": "60d", "before": "7d"}, ["month"]),
    ])
    def test_bounds(self, dated_world, bounds, expected):
        out = search(dated_world.cur, "kestrel", limit=10, **bounds)

        assert sorted(hit_ids(out)) == sorted(getattr(dated_world, name) for name in expected)

    def test_when_shows_the_message_time(self, dated_world):
        out = search(dated_world.cur, "kestrel", after="2025-03-01", before="2025-04-01")

        assert out["results"][0]["when"] == "2025-03-15 14:30"


@pytest.fixture(scope="class")
def twelve_world(tmp_path_factory):
    with shared_world(tmp_path_factory.mktemp("twelve")) as w:
        proj = w.folder("proj")
        w.project("Proj", proj)
        for i in range(12):
            w.session(f"kestrel conversation {i}", cwd=proj)
        w.cur = w.session("hello", cwd=proj)
        yield w


class TestLimit:
    @pytest.mark.parametrize(("limit", "count"), [(None, 3), (1, 1), (5, 5), (10, 10), (50, 10), (0, 1),
                                                  (-3, 1), ("5", 5)])
    def test_limit_counts_conversations_clamped_to_one_through_ten(self, twelve_world, limit, count):
        extra = {} if limit is None else {"limit": limit}
        out = search(twelve_world.cur, "kestrel", **extra)
        assert len(out["results"]) == count
        assert len(set(hit_ids(out))) == count


@pytest.fixture(scope="class")
def pq_world(tmp_path_factory):
    with shared_world(tmp_path_factory.mktemp("pq")) as w:
        p, q = w.folder("p"), w.folder("q")
        w.project("P", p)
        w.project("Q", q)
        w.session("the shared word kestrel, said in P", cwd=p)
        w.session("kestrel, and the secret codename xylophonist, said only in Q", cwd=q, title="Q secrets")
        w.session("机密 only in Q", cwd=q)
        w.cur = w.session("hello from P", cwd=p)
        yield w


@pytest.mark.usefixtures("keyword_path")
class TestPrivacy:
    """Project P's session never returns project Q's messages."""

    def test_q_only_word_finds_nothing_from_p(self, pq_world):
        raw = call_tool_raw("project_history_search", {"query": "xylophonist", "mode": "keyword"}, pq_world.cur)
        out = json.loads(raw)
        assert out["success"] is True and out["results"] == []
        assert "xylophonist" not in raw  # not in any snippet or title

    def test_shared_word_returns_only_p(self, pq_world):
        raw = call_tool_raw("project_history_search", {"query": "kestrel xylophonist", "mode": "keyword",
                                                       "limit": 10}, pq_world.cur)
        out = json.loads(raw)
        assert [r["snippet"] for r in out["results"]] == ["the shared word >>>kestrel<<<, said in P"]
        assert "xylophonist" not in raw and "Q secrets" not in raw
        assert out["sessions_in_scope"] == 2

    def test_cjk_like_fallback_is_scoped_too(self, pq_world):
        assert search(pq_world.cur, "机密")["results"] == []


@pytest.mark.usefixtures("keyword_path")
class TestResultShape:
    def test_seed_result_shape(self, world, proj):
        sid = world.session("kestrel rollout decided on friday", cwd=proj, title="Rollout")
        cur = world.session("hello", cwd=proj)

        out = search(cur, "kestrel rollout")

        assert out["success"] is True and out["mode"] == "keyword"
        assert out["project"]["kind"] == "explicit" and out["project"]["id"] == world.pid
        assert out["project"]["name"] == "Hermes"
        assert isinstance(out["sessions_in_scope"], int)
        (row,) = out["results"]
        assert row["session_id"] == sid and row["link"] == f"@session:{sid}"
        assert row["title"] == "Rollout" and row["score_source"] == "keyword"
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", row["when"])
        assert ">>>kestrel<<<" in row["snippet"] and ">>>rollout<<<" in row["snippet"]

    def test_message_id_points_at_the_matching_message(self, world, proj):
        sid = world.session("opening line", "kestrel is in the second message", cwd=proj)
        cur = world.session("hello", cwd=proj)

        row = search(cur, "kestrel")["results"][0]

        stored = {m["id"]: m for m in world.db.get_messages(sid)}
        assert "kestrel" in stored[row["message_id"]]["content"]
        assert row["role"] == "past_assistant"

    def test_long_message_snippet_is_a_window_around_the_hit(self, world, proj):
        world.session("filler " * 300 + "kestrel appears late" + " tail" * 300, cwd=proj)
        cur = world.session("hello", cwd=proj)

        snippet = search(cur, "kestrel")["results"][0]["snippet"]

        assert ">>>kestrel<<<" in snippet and len(snippet) < 400

    def test_multimodal_message_shows_its_text(self, world, proj):
        sid = world.session(cwd=proj)
        world.db.append_message(sid, "user", [
            {"type": "text", "text": "kestrel architecture diagram attached"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ])
        cur = world.session("hello", cwd=proj)

        (row,) = search(cur, "kestrel diagram")["results"]

        assert row["session_id"] == sid
        assert row["snippet"] == ">>>kestrel<<< architecture >>>diagram<<< attached"

    def test_multimodal_json_plumbing_is_not_searchable_text(self, world, proj):
        sid = world.session(cwd=proj)
        world.db.append_message(sid, "user", [
            {"type": "text", "text": "kestrel architecture diagram attached"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ])
        cur = world.session("hello", cwd=proj)

        assert search(cur, "image_url base64")["results"] == []

    @pytest.mark.parametrize(("text", "query"), [
        ("数据库迁移先加列，截图见附件", "数据库迁移"),
        ("デプロイ手順を更新した", "デプロイ"),
        ("배포 스크립트를 고쳤다", "스크립트"),
        ("部署失败的截图", "部署"),
        ("le déploiement a échoué, capture jointe", "déploiement"),
    ])
    def test_non_ascii_text_of_a_multimodal_message_is_found(self, world, proj, text, query):
        sid = world.session(cwd=proj)
        world.db.append_message(sid, "user", [
            {"type": "text", "text": text},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ])
        cur = world.session("hello", cwd=proj)

        assert hit_ids(search(cur, query)) == [sid]

    def test_no_match_says_so(self, world, proj):
        world.session("something else entirely", cwd=proj)
        cur = world.session("hello", cwd=proj)

        out = search(cur, "kestrel")

        assert out["success"] is True and out["results"] == [] and out["message"]

    def test_title_set_after_a_search_is_shown(self, world, proj):
        sid = world.session("kestrel talk", cwd=proj)
        cur = world.session("hello", cwd=proj)
        for _ in range(2):  # the scope cache is built and settled
            assert search(cur, "kestrel")["results"][0]["title"] == ""

        world.db.set_session_title(sid, "Kestrel planning")

        assert search(cur, "kestrel")["results"][0]["title"] == "Kestrel planning"


class TestFreshness:
    """A Hermes process keeps the plugin loaded for days: every search sees the current state."""

    def settle(self, cur: str) -> None:
        for _ in range(2):  # the scope cache is built and settled
            search(cur, "kestrel")

    def test_new_session_and_new_message_are_found(self, world, proj):
        first = world.session("kestrel first", cwd=proj)
        cur = world.session("hello", cwd=proj)
        self.settle(cur)

        later = world.session("kestrel later", cwd=proj)
        world.db.append_message(first, "assistant", "zeppelin added afterwards")

        assert sorted(hit_ids(search(cur, "kestrel"))) == sorted([first, later])
        assert hit_ids(search(cur, "zeppelin")) == [first]

    def test_a_long_question_finds_a_word_said_after_the_last_search(self, world, proj):
        # A question of many words is read through its rarest ones, judged by the scope's term
        # statistics; a word newer than those statistics must still count.
        for i in range(6):
            world.session(f"deploy script rollback plan release notes checklist review {i}", cwd=proj)
        quiet = world.session("lunch options near the office", cwd=proj)
        cur = world.session("hello", cwd=proj)
        question = "deploy script rollback plan release notes checklist review zeppelin"
        self.settle(cur)
        search(cur, question)  # the scope's statistics are built now

        world.db.append_message(quiet, "assistant", "the zeppelin is grounded")

        assert quiet in hit_ids(search(cur, question, limit=10))

    def test_session_archived_after_a_search_disappears(self, world, proj):
        gone = world.session("kestrel soon archived", cwd=proj)
        cur = world.session("hello", cwd=proj)
        self.settle(cur)

        world.db.set_session_archived(gone, True)

        assert search(cur, "kestrel")["results"] == []

    def test_folder_added_to_a_project_takes_effect(self, world, loaded_plugin):
        from hermes_cli import projects_db

        a, x = world.folder("a"), world.folder("x")
        pid = world.project("A", a)
        in_a = world.session("kestrel in a", cwd=a)
        cur = world.session("hello", cwd=x)
        self.settle(cur)
        assert search(cur, "kestrel")["project"] == {"kind": "home"}

        conn = projects_db.connect(world.home / "projects.db")
        projects_db.add_folder(conn, pid, str(x))
        conn.close()

        out = search(cur, "kestrel")
        assert out["project"]["id"] == pid and hit_ids(out) == [in_a]

    def test_project_archived_after_a_search_no_longer_scopes(self, world, loaded_plugin):
        from hermes_cli import projects_db

        a = world.folder("a")
        pid = world.project("A", a)
        world.session("kestrel in a", cwd=a)
        cur = world.session("hello", cwd=a)
        self.settle(cur)

        conn = projects_db.connect(world.home / "projects.db")
        projects_db.archive_project(conn, pid)
        conn.close()

        assert search(cur, "kestrel")["project"] == {"kind": "home"}


def test_a_scanned_scope_asks_no_profile_wide_index(world, proj):
    """A scope small enough to be scanned is weighed by its own messages only: no FTS query over
    the whole profile runs at all (its counts would carry other chats' words into the ranking)."""
    import sqlite3

    from hermes_side.scope import rule_view
    from hermes_side.search.keyword import Filters, ScopeMemo, ScopeRows, keyword_search
    from hermes_side.search.query import parse_query

    sids = [world.session(f"the kestrel rollout note {i}", cwd=proj) for i in range(4)]
    conn = sqlite3.connect(world.home / "state.db")
    rule_view.prepare(conn, world.home)  # what every reader of history does first
    fts: list[str] = []
    conn.set_trace_callback(lambda sql: fts.append(sql) if "messages_fts" in sql else None)
    ids = [r[0] for r in conn.execute("SELECT id FROM messages ORDER BY id")]

    hits = keyword_search(conn, parse_query("kestrel rollout"), Filters(sids), ScopeRows(ids, ScopeMemo())).hits

    assert {h.session_id for h in hits} == set(sids) and fts == []
    conn.close()


def test_an_agents_tool_rows_do_not_dilute_which_words_are_common_in_a_scope(world, proj):
    """A name in a sixth of a project's text turns is common there (search drops it, and semantic
    search embeds the question without it), however many tool results and text-less tool-call rows
    the agent wrote between those turns: only rows that can be a hit count."""
    import json
    import sqlite3

    from hermes_side.scope import rule_view
    from hermes_side.search.engine import ScopeMessageIds
    from hermes_side.search.keyword import Filters, keyword_search
    from hermes_side.search.query import parse_query

    sid = world.session(cwd=proj)
    for i in range(60):
        call = [{"id": f"c{i}", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]
        world.db.append_message(sid, "assistant", None, tool_calls=call)
        world.db.append_message(sid, "tool", json.dumps({"output": f"line {i}", "exit_code": 0}),
                                tool_call_id=f"c{i}", tool_name="terminal")
        text = f"Zelda watered the garden bed {i}" if i % 6 == 0 else f"the weather report number {i}"
        text += " and planted tulips" if i == 30 else ""
        world.db.append_message(sid, ("user", "assistant")[i % 2], text)
    conn = sqlite3.connect(world.home / "state.db")
    rule_view.prepare(conn, world.home)
    max_id = conn.execute("SELECT MAX(id) FROM messages").fetchone()[0]
    rows = ScopeMessageIds().scope(conn, [sid], max_id)

    result = keyword_search(conn, parse_query("Zelda tulips"), Filters([sid]), rows)

    assert len(rows.ids) == 60
    assert {w.lower() for w in result.common_words} == {"zelda"}
    conn.close()


@pytest.mark.parametrize("query", ["kestrel canary", "canary rollout", "kestrel"])
def test_a_projects_answers_do_not_change_when_other_projects_grow(world, ranking, query):
    """On the FTS path every word's probe is capped; counted in the profile, the cap was filled by
    whichever project wrote last, and a quiet project lost its answers to a busy one (issue 25: the
    top 5 of a 10k project stayed the same for 1 of 10 queries once other projects held 990k
    messages). The cap now counts the scope's own matches: the busy project changes nothing."""
    from hermes_side.search.engine import SearchEngine
    from hermes_side.search.request import parse_search_args

    ranking(scan_scope_max=0, rowid_budget=12, min_per_probe=6)  # the FTS path; a cap a busy project fills
    quiet, busy = world.folder("quiet"), world.folder("busy")
    pid = world.project("Quiet", quiet)
    world.project("Busy", busy)
    for i in range(12):
        world.session(f"kestrel canary rollout step {i} for the quiet team", "noted", cwd=quiet)
    engine = SearchEngine(world.home)

    def top() -> list[tuple[str, int]]:
        out = engine.search(parse_search_args({"query": query, "mode": "keyword", "limit": 5}), project=pid)
        return [(r["session_id"], r["message_id"]) for r in out["results"]]

    before = top()
    assert len(before) == 5
    for i in range(40):
        world.session(f"kestrel canary rollout {i} of the busy team", "ok", cwd=busy)
    assert top() == before


@pytest.mark.parametrize("query", ["kestrel canary", "canary rollouts", "kestrel", "数据库迁移脚本", "迁移脚本 canary"])
def test_a_projects_answers_are_the_same_when_other_projects_write_between_its_messages(world, ranking,
                                                                                        monkeypatch, query):
    """A project whose messages are few among the profile's is read span by span (probes.scope_spans:
    only its own stretches of the index, not every project's matches); one that holds its whole id
    range is read in one pass. Both must give the same answers: two projects with the same history,
    one written in one go, the other between a busy project's sessions."""
    from hermes_side.search import probes
    from hermes_side.search.engine import SearchEngine
    from hermes_side.search.request import parse_search_args

    ranking(scan_scope_max=0, rowid_budget=12, min_per_probe=6)  # the FTS path, with a cap that bites
    monkeypatch.setattr(probes, "_SPAN_GAP", 2)  # a few rows of another project already split a span
    alone, mixed, busy = world.folder("alone"), world.folder("mixed"), world.folder("busy")
    pids = {"alone": world.project("Alone", alone), "mixed": world.project("Mixed", mixed)}
    world.project("Busy", busy)
    texts = [f"kestrel canary rollout step {i} for the quiet team，数据库迁移脚本第{i}步" for i in range(12)]
    for text in texts:
        world.session(text, "noted", cwd=alone)
    for i, text in enumerate(texts):
        world.session(text, "noted", cwd=mixed)
        for j in range(12):
            world.session(f"kestrel canary rollout {i}.{j} of the busy team，数据库迁移脚本", "ok", cwd=busy)
    engine = SearchEngine(world.home)

    def top(name: str) -> list[str]:
        out = engine.search(parse_search_args({"query": query, "mode": "keyword", "limit": 5}), project=pids[name])
        return [r["snippet"] for r in out["results"]]

    with engine.leased():
        spans = {name: probes.scope_spans(engine.reader.scope_rows(engine.scope_for(project=pid))[0])
                 for name, pid in pids.items()}
    assert spans["alone"] == [] and len(spans["mixed"]) == 12  # one pass vs span by span
    assert len(top("alone")) == 5
    assert top("mixed") == top("alone")


def test_a_word_said_after_a_search_is_found_by_the_next_search(world, ranking):
    """Which of a word's inflections Hermes' index holds is remembered per connection (probes.held_memo):
    a form first written after a search must still be found by the next one on the same engine."""
    from hermes_side.search.engine import SearchEngine
    from hermes_side.search.request import parse_search_args

    ranking(scan_scope_max=0)  # the FTS path, where the held forms choose what is read
    folder = world.folder("gateway")
    pid = world.project("Gateway", folder)
    ing = world.session("we are deploying the gateway tonight", "ok", cwd=folder)
    world.session("lunch options near the office", cwd=folder)
    engine = SearchEngine(world.home)

    def found() -> set[str]:
        out = engine.search(parse_search_args({"query": "deploy", "mode": "keyword", "limit": 10}), project=pid)
        return {r["session_id"] for r in out["results"]}

    assert found() == {ing}
    assert found() == {ing}  # the memo filled: "deployed" is not in the index yet
    ed = world.session("the gateway was deployed on friday", "ok", cwd=folder)
    assert found() == {ing, ed}
