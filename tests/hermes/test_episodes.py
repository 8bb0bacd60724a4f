"""A conversation is a session lineage cut at its long pauses (``search/episodes.py``; the keyword
cap's and the scope statistics' parts of a session, ``episodes.parts``): the pure parts, and the
timeline read from a Hermes home written with Hermes' own SessionDB."""

from __future__ import annotations

from hermes_side.search.episodes import Episodes, Timelines, cut, merged, parts
from hermes_side.search.settings import overridden

HOUR = 3600.0


def test_a_pause_longer_than_the_limit_starts_a_span():
    assert cut([0, 60, 3660, 7300, 7400], HOUR) == [[0, 3660], [7300, 7400]]  # 3,600 s exactly: same span
    assert cut([], HOUR) == []


def test_the_spans_of_a_lineages_sessions_are_one_timeline():
    parent = [(0.0, 100.0), (10 * HOUR, 11 * HOUR)]
    child = [(150.0, 400.0)]  # a compaction's child: goes on where its parent stopped
    branch = [(11 * HOUR + 600, 12 * HOUR)]
    assert merged([*parent, *child, *branch], HOUR) == [(0.0, 400.0), (10 * HOUR, 12 * HOUR)]


def test_a_pasted_log_is_one_part_and_days_apart_are_two():
    turns = [(n, "s", 1000.0 + n) for n in range(20)] + [(100, "s", 1000.0 + 86400), (200, "t", 1000.0)]
    got = parts(turns, HOUR)
    assert {got[n] for n in range(20)} == {0} and got[100] == 1 and got[200] == 0
    assert parts(turns, 0) == {}  # off: a session is one conversation


def _lineage(world):
    """A CLI session, its compaction's child minutes later, and the child resumed the next day."""
    parent = world.session("plan the schema migration", "ok", ts=1_000_000.0)
    world.db.end_session(parent, "compression")  # as world.compress, at a time of our choosing
    child = world.session("migration plan: step one", "done", parent=parent, ts=1_000_000.0 + 120)
    world.db.append_message(child, "user", "the migration ran overnight", timestamp=1_000_000.0 + 86400)
    rows = {m["content"]: m for sid in (parent, child) for m in world.messages(sid)}
    return parent, child, rows


def test_a_lineage_is_one_conversation_until_it_pauses(world):
    parent, child, rows = _lineage(world)
    texts = {m["id"]: type("M", (), {"timestamp": m["timestamp"]})()
             for m in (world.messages(parent) + world.messages(child))}
    import sqlite3

    conn = sqlite3.connect(world.db.db_path)
    try:
        episodes = Episodes(conn, Timelines(), {child: parent}, [parent, child], texts)
        first = episodes.of(parent, rows["plan the schema migration"]["id"])
        assert first == parent == episodes.of(child, rows["migration plan: step one"]["id"])
        later = episodes.of(child, rows["the migration ran overnight"]["id"])
        assert later != parent and episodes.lineage(later) == parent
        assert episodes.expand([parent], [later, parent]) == [later, parent]
        with overridden(conversation_pause=0):
            assert Episodes(conn, Timelines(), {child: parent}, [parent, child], texts).of(
                child, rows["the migration ran overnight"]["id"]) == parent
    finally:
        conn.close()


def test_a_timeline_reads_only_the_turns_added_since(world):
    import sqlite3

    sid = world.session("first", "reply", ts=5_000.0)
    timelines = Timelines()
    conn = sqlite3.connect(world.db.db_path)
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        assert timelines.spans(conn, [sid], HOUR) == {sid: [(5_000.0, 5_001.0)]}
        world.db.append_message(sid, "user", "a day later", timestamp=5_000.0 + 86400)
        assert timelines.spans(conn, [sid], HOUR) == {sid: [(5_000.0, 5_001.0), (91_400.0, 91_400.0)]}
        assert len(seen) == 2 and "5001.0" in seen[1]  # the second read starts after the last turn read
    finally:
        conn.close()
