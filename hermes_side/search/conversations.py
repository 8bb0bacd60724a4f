"""Which conversation comes first: the lists a conversation is ranked by, beside its best messages.

Ranking conversations only by their best messages misses what a person remembers a conversation
by: it was *about* the question's words, spread over its turns, or it happened *when* the question
says. deja-vu, a lexical peer without a model, ranks sessions as documents (a word's rarity counted
in sessions, a session scored by every query word it holds) and put the right conversation first
more often than our message-level ranking (issue 18). So conversations are ranked by RRF over:

1. their best messages (``results.conversation_order``: fused scores, decayed);
2. ``lexical_order``: the sum of the rarity of each query term the conversation holds anywhere
   (rarity counted in conversations, ``ln((C + 1) / (df + 1))``), from the messages keyword search
   scored; weighted like its keyword list (``relevance.keyword_list_weight``);
3. ``in_period``: when the query names a date or a month ("on 7 July, 2023", "in May 2023",
   "2023年7月"), or a day without its year ("5月2日", "on May 2nd": that day of any year), the
   conversations whose best message lies in it — which then lead (``RANKING.named_time_leads``,
   ``results.group_by_conversation``'s ``first``);
4. ``passage_order`` (semantic and hybrid): their best run of a few consecutive turns by meaning
   (``embedding.vectors.Scan.passages``): a conversation where the question was asked and
   answered, or talked over for a few turns, beats one stray turn that shares its words.

Measured on LoCoMo dev, English, conversation hit@1 / @5: best messages alone 0.687 / 0.913;
+ lexical 0.712 / 0.922; + period 0.750 / 0.947 (benchmarks/README.md, "Conversation ranking");
+ passages: benchmarks/README.md, "Issue 26: the conversation's best passage".
Pure: hits, documents, timestamps and the time zone come in as data. A named day is a day of the
profile's calendar (``host/clock.py``: Hermes' ``timezone``, else the machine's), the one rows show
their time in and ``after``/``before`` dates are read in — "5月3日" at 00:30 in Beijing is 3 May,
not 2 May as in UTC.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo

from .settings import RANKING


def lexical_order(docs: Iterable, terms: Iterable, root_of: Mapping[str, str], conversations: int) -> list[str]:
    """Conversation roots best first by the rarity of the query terms they hold (``docs``:
    keyword.Doc, each with the query terms it holds in ``tf``; ``terms``: those that weigh).
    Conversations holding the same terms tie and keep the order of their first message in
    ``docs``, the order keyword search read them in: oldest first in a scope it scans whole,
    best-scoring first in one it reads through the index. Ordering ties by the conversation's
    best fused message instead lost English conversation hit@3 beyond noise (LoCoMo dev, 4 gained
    / 16 lost; benchmarks/README.md, "Issue 26, fourth round")."""
    weigh = set(terms)
    held: dict[str, set] = {}
    for doc in docs:
        found = weigh.intersection(doc.tf)
        if found:
            held.setdefault(root_of.get(doc.session_id, doc.session_id), set()).update(found)
    df: dict = {}
    for found in held.values():
        for term in found:
            df[term] = df.get(term, 0) + 1
    total = max(conversations, len(held))

    def rarity(term) -> float:
        return math.log((total + 1) / (df[term] + 1)) * getattr(term, "weight", 1.0)

    # fsum: a sum exact to the last bit whatever order the set gives its terms in (a plain sum
    # followed the string hash, so two conversations holding the same terms tied in one process
    # and not in the next, and the same question came back in another order; issue 26).
    score = {root: math.fsum(map(rarity, found)) for root, found in held.items()}
    return sorted(score, key=lambda root: -score[root])


def passage_order(passages: Mapping[str, float], root_of: Mapping[str, str]) -> list[str]:
    """Conversation roots best first by their best passage (``passages``: session → the mean
    cosine of its best few consecutive turns; a conversation is as good as its best session)."""
    best: dict[str, float] = {}
    for session, score in passages.items():
        root = root_of.get(session, session)
        best[root] = max(score, best.get(root, score))
    return sorted(best, key=lambda root: -best[root])


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")
_MONTH = "|".join(_MONTHS)
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? ({_MONTH}),? (\d{{4}})\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH}) (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b", re.IGNORECASE)
_MONTH_YEAR = re.compile(rf"\b({_MONTH}),? (\d{{4}})\b", re.IGNORECASE)
_ISO = re.compile(r"\b(\d{4})-(\d{2})(?:-(\d{2}))?\b")
_CJK_DATE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*[日号])?")
# A day without its year: "5月2日" / "5月2号", "May 2nd", "2 May", "the 2nd of May".
_CJK_DAY = re.compile(r"(?<![\d年])(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_MONTH_DAY = re.compile(rf"\b({_MONTH}) (\d{{1,2}})(st|nd|rd|th)?\b", re.IGNORECASE)
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?({_MONTH})\b", re.IGNORECASE)


def named_period(text: str, zone: tzinfo | None = None) -> tuple[float, float] | None:
    """The time span a query names — a day or a month with its year, in ``zone`` (None: the
    machine's local time) — as epoch seconds; None when it names none (a bare month or year is too
    vague to use)."""
    day = month = year = None
    if m := _DAY_MONTH_YEAR.search(text):
        day, month, year = int(m.group(1)), _MONTHS.index(m.group(2).lower()) + 1, int(m.group(3))
    elif m := _MONTH_DAY_YEAR.search(text):
        day, month, year = int(m.group(2)), _MONTHS.index(m.group(1).lower()) + 1, int(m.group(3))
    elif m := _MONTH_YEAR.search(text):
        month, year = _MONTHS.index(m.group(1).lower()) + 1, int(m.group(2))
    elif m := _ISO.search(text) or _CJK_DATE.search(text):
        year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3)) if m.group(3) else None
    if year is None:
        return None
    try:
        if day is not None:
            start = date(year, month, day)
            end = start + timedelta(days=1)
        else:
            start, end = date(year, month, 1), date(year + (month == 12), month % 12 + 1, 1)
        return midnight(start, zone), midnight(end, zone)
    except (ValueError, OverflowError, OSError):  # "31 February": no such day; a year the clock cannot hold
        return None


def midnight(day: date, zone: tzinfo | None = None) -> float:
    """The start of ``day`` in ``zone`` (None: the machine's local time), as epoch seconds (a day of
    a clock change is 23 or 25 hours long: its end is the next day's midnight, not 86,400 s later)."""
    return datetime(day.year, day.month, day.day, tzinfo=zone).timestamp()


def named_day(text: str) -> tuple[int, int] | None:
    """(month, day) of a day a query names without its year ("5月2日", "May 2nd", "2 May"); None
    when it names none or no such day exists."""
    month = day = None
    if m := _CJK_DAY.search(text):
        month, day = int(m.group(1)), int(m.group(2))
    elif (m := _MONTH_DAY.search(text)) and (m.group(1) != "may" or m.group(3)):  # not "may 2 people"
        month, day = _MONTHS.index(m.group(1).lower()) + 1, int(m.group(2))
    elif m := _DAY_MONTH.search(text):
        month, day = _MONTHS.index(m.group(2).lower()) + 1, int(m.group(1))
    if month is None or day is None:
        return None
    try:
        datetime(2024, month, day)  # a leap year: 29 February is a day
    except ValueError:
        return None
    return month, day


def utc(ts: float) -> datetime | None:
    """``ts`` (epoch seconds) as a UTC time; None for a time no calendar holds (milliseconds an
    importer wrote: year 55302), which is then held on no day."""
    try:
        return datetime.fromtimestamp(ts, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def local(ts: float, zone: tzinfo | None = None) -> datetime | None:
    """``ts`` as a wall-clock time in ``zone`` (None: the machine's local time), as :func:`utc`
    otherwise."""
    at = utc(ts)
    try:
        return at.astimezone(zone).replace(tzinfo=None) if at is not None else None
    except (OverflowError, OSError, ValueError):
        return None


@dataclass(frozen=True)
class NamedTime:
    """When a query says it happened: a span with its year, or a day of any year (both in
    ``zone``; None: the machine's local time)."""

    span: tuple[float, float] | None = None
    day: tuple[int, int] | None = None  # (month, day)
    zone: tzinfo | None = None

    def holds(self, ts: float) -> bool:
        if self.span is not None:
            return self.span[0] <= ts <= self.span[1]
        at = local(ts, self.zone)
        return at is not None and (at.month, at.day) == self.day

    def spans(self, first: float, last: float) -> list[tuple[float, float]]:
        """The closed spans of epoch seconds where :meth:`holds` is true between ``first`` and
        ``last`` (the scope's oldest and newest turn): the span itself, or the day in each year
        between them (up to its last microsecond, so no turn falls on two days)."""
        if self.span is not None:
            return [self.span]
        assert self.day is not None
        since, until = local(first, self.zone), local(last, self.zone)
        if since is None or until is None:
            return []
        out = []
        for year in range(since.year, until.year + 1):
            try:
                day = date(year, *self.day)
                out.append((midnight(day, self.zone), midnight(day + timedelta(days=1), self.zone) - 1e-6))
            except (ValueError, OverflowError, OSError):  # 29 February of a year without one
                continue
        return out


def named_time(text: str, zone: tzinfo | None = None) -> NamedTime | None:
    """The time a query names (:func:`named_period`, else :func:`named_day` — a day without its
    year matches that day in every year of the scope, ``RANKING.day_without_year``) in ``zone``
    (the profile's calendar, ``host/clock.py``; None: the machine's local time), or None."""
    if span := named_period(text, zone):
        return NamedTime(span=span, zone=zone)
    if RANKING.day_without_year and (day := named_day(text)):
        return NamedTime(day=day, zone=zone)
    return None


def in_period(order: Sequence[str], when: Mapping[str, float | None], named: NamedTime) -> list[str]:
    """The conversations of ``order`` whose time (``when``: root → its best message's timestamp)
    lies in the ``named`` time, in that order."""
    return [root for root in order if (ts := when.get(root)) is not None and named.holds(ts)]
