"""Smoke test of the chat-shaped dev worlds (FriendsQA, MemoryBank) and the paired protocol's test.

The worlds must hold what the NoneBot bridge would have written: the plugin's own readers of the
bridge's text (``scope/quotes.words``, ``scope/chats``) must read our rows as they read real
ones, every session must be searchable in its chat's project, and every question's evidence must
be a row that holds its answer. FriendsQA and MemoryBank are research data read from ../shared.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchmarks import paired
from benchmarks.worlds import bridge, friendsqa, memorybank

pytestmark = pytest.mark.slow


def test_the_sign_test_is_exact():
    assert paired.sign_test(0, 0) == 1.0
    assert paired.sign_test(0, 5) == pytest.approx(0.0625)  # 2 · ½⁵: five of five is not enough
    assert paired.sign_test(6, 0) == pytest.approx(0.03125)
    assert paired.sign_test(10, 2) == pytest.approx(2 * (1 + 12 + 66) / 4096)
    assert paired.sign_test(5, 5) == 1.0


def test_a_change_lands_on_two_sets_beyond_noise_and_no_loss():
    """Issue 36's rule: two dev sets, losses on none — one family's two sets count, with a caution."""
    friends = [paired.Change(s, "keyword", "sess@1", 0.40, 0.45, 89, 23, 1182) for s in ("friends", "friends_shared")]
    one_family = paired.verdict(friends, "keyword")
    assert one_family.lands and "one data family, friendsqa" in one_family.line("keyword")
    one_set = paired.verdict(friends[:1], "keyword")
    assert not one_set.lands
    lost = paired.verdict([*friends, paired.Change("mbcn", "keyword", "msg@5", 0.5, 0.4, 0, 10, 100)], "keyword")
    assert not lost.lands


def test_silence_at_home_is_a_loss_beside_quiet_elsewhere(tmp_path):
    """A change that labels more rows "low" gains the wrong project's quiet; the same questions asked
    in their own project, all rows low, must count against it (``labelled``)."""
    def run(path: Path, low: list[float], quiet: list[float]) -> Path:
        rows = [{"suite": "xl", "method": "hybrid", "question": f"q{i}", "sess@1": 1.0, "sess@5": 1.0, "msg@1": 1.0,
                 "msg@5": 1.0, "all-low": v} for i, v in enumerate(low)]
        rows += [{"suite": "wrong-xl", "method": "hybrid", "question": f"q{i}", "quiet": v}
                 for i, v in enumerate(quiet)]
        path.write_text(json.dumps({"per_question": rows}))
        return path

    base = run(tmp_path / "base.json", [0.0] * 10, [0.0] * 10)
    head = run(tmp_path / "head.json", [1.0] * 8 + [0.0] * 2, [1.0] * 10)
    verdict = paired.verdict(paired.compare(base, head), "hybrid")
    assert "quiet" in [c.metric for c in verdict.gains["xl"]]
    assert [c.metric for c in verdict.losses["xl"]] == ["labelled"] and not verdict.lands


@pytest.fixture(scope="module")
def friends(tmp_path_factory):
    if not (friendsqa.default_data_dir() / "friendsqa_dev.json").is_file():
        pytest.skip("FriendsQA not available in ../shared/data (research data, not shipped)")
    mp = pytest.MonkeyPatch()
    home = tmp_path_factory.mktemp("friends")
    mp.setenv("HERMES_HOME", str(home))
    try:
        yield friendsqa.load_friendsqa(home, friendsqa.default_data_dir())
    finally:
        mp.undo()


def test_friends_rows_read_as_the_bridge_writes_them(friends):
    from hermes_side.scope import quotes
    from hermes_side.scope.chats import chat_from_session_id, member_from_session_id

    users = [t for t in friends.by_message.values() if t.role == "user"]
    assert users and len(friends.projects) == 4
    for t in users[:200]:
        chat, member = member_from_session_id(t.session_id)
        assert chat == chat_from_session_id(t.session_id) and member == bridge.qq_id(t.speaker)
        assert t.text.endswith(f" @{bridge.SELF_ID}")
        current = [key for key, _, where in friends.holds[t.message_id] if where == "current"]
        assert len(current) == 1
        # the plugin's own parser finds the member's words after the <recent_messages> block
        assert quotes.words(t.text).endswith(f"@{bridge.SELF_ID}") and "<recent_messages>" not in quotes.words(t.text)
        for line in t.text.split("</recent_messages>")[0].splitlines()[1:]:
            assert quotes.LINE.match(line), line


def test_friends_evidence_rows_hold_the_answer_and_the_scene_is_searchable(friends):
    from hermes_side.search.engine import SearchEngine
    from hermes_side.search.request import SearchRequest

    raw = json.loads((friendsqa.default_data_dir() / "friendsqa_dev.json").read_text(encoding="utf-8"))["data"]
    said_by_key = {f"{s['title']}#{u['uid']}": friendsqa.detok(u["utterance"])
                   for s in raw for u in s["paragraphs"][0]["utterances:"]}
    for q in friends.questions[:300]:
        # a line in <recent_messages> is cut at 200 characters (hermes_perception_text_length)
        said = {said_by_key[k][:bridge.LINE_CHARS] for k in q.evidence}
        assert any(any(s in friends.by_message[m].text for s in said) for m in q.evidence_message_ids)
        assert {friends.by_message[m].session_id for m in q.evidence_message_ids} & set(q.evidence_session_ids)
    engine = SearchEngine(friends.home)
    q = friends.questions[0]
    out = engine.search(SearchRequest(query=q.question, mode="keyword", limit=5), project=friends.projects[q.conv])
    sessions = {friends.by_message[int(r["message_id"])].session_id for r in out["results"]}
    assert sessions and all(friends.by_message[int(r["message_id"])].conv == q.conv for r in out["results"])


def test_memorybank_days_are_sessions_and_labels_point_at_their_turns(tmp_path, monkeypatch):
    if not (memorybank.default_data_dir() / "cn").is_dir():
        pytest.skip("MemoryBank not available in ../shared/data (research data, not shipped)")
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    corpus = memorybank.load_memorybank(Path(tmp_path), memorybank.default_data_dir(), "cn")
    assert len(corpus.projects) == 15 and len(corpus.when) == 150 and len(corpus.questions) == 100
    for q, info in zip(corpus.questions, corpus.info, strict=True):
        days = {corpus.when[corpus.by_message[m].session_id] for m in q.evidence_message_ids}
        assert days == set(info["days"])
        assert all(re.fullmatch(r"hermes-onebotv11\+private\+\d+(-g\d+)?", s) for s in q.evidence_session_ids)
    assert memorybank.named_day("我曾经在5月2日提到过我去了博物馆") == "2023-05-02"
    assert memorybank.named_day("I mentioned on May 2nd that I went to the museum") == "2023-05-02"
