"""A line of the group's buffer counts once, for the turn that first stored it (``search/buffered.py``):
the pure parts. The search over a group's history written as the bridge writes it:
``test_chat_ranking.py::test_last_nights_lines_carried_into_the_mornings_turn_are_last_nights``."""

from __future__ import annotations

from hermes_side.search.buffered import counted, first_stored

HOUR = 3600.0
EVENING = "<recent_messages>\n[m:7] [user=Ross id=1]: the quokka at the zoo\n[m:8] [user=Rachel id=2]: so cute\n" \
          "</recent_messages>\n\ncan you find the zoo's hours? @2854196310"
MORNING = "<recent_messages>\n[m:7] [user=Ross id=1]: the quokka at the zoo\n[m:8] [user=Rachel id=2]: so cute\n" \
          "[m:9] [user=Monica id=3]: morning all\n</recent_messages>\n\ntwo flat whites please @2854196310"


def test_a_line_stored_before_a_pause_counts_only_where_it_was_first_stored():
    first = first_stored([(EVENING, 0.0), (MORNING, 12 * HOUR)])
    assert counted(EVENING, 0.0, first, HOUR) == EVENING
    kept = counted(MORNING, 12 * HOUR, first, HOUR)
    assert "quokka" not in kept and "so cute" not in kept
    assert "[m:9] [user=Monica id=3]: morning all" in kept and "two flat whites" in kept  # the morning's own


def test_a_line_carried_within_a_conversation_counts_in_every_turn():
    first = first_stored([(EVENING, 0.0), (MORNING, 600.0)])  # ten minutes later: the same talk
    assert counted(MORNING, 600.0, first, HOUR) == MORNING


def test_only_a_line_the_bridge_numbered_is_taken_for_an_earlier_one():
    plain = MORNING.replace("[m:7] ", "").replace("[m:8] ", "")  # no id: the same words may be said twice
    first = first_stored([(EVENING.replace("[m:7] ", "").replace("[m:8] ", ""), 0.0), (plain, 12 * HOUR)])
    assert counted(plain, 12 * HOUR, first, HOUR) == plain
    typed = "[m:7] [user=Ross id=1]: the quokka at the zoo"  # typed by a member, outside any buffer
    assert first_stored([(typed, 0.0)]) == {}


def test_off_or_without_a_time_every_line_counts():
    first = first_stored([(EVENING, 0.0), (MORNING, 12 * HOUR), (MORNING, None)])
    assert counted(MORNING, 12 * HOUR, first, 0) == MORNING
    assert counted(MORNING, None, first, HOUR) == MORNING
