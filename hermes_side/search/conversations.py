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
   "2023年7月"), or a day without its year ("5月2日", "on May 2nd": that day of any year), or a
   day, week or month counted back from when it is asked ("昨天", "上周", "last week"), the
   conversations whose best message lies in it — which then lead (``RANKING.named_time_leads``,
   ``results.group_by_conversation``'s ``first``);
4. ``passage_order`` (semantic and hybrid): their best run of a few consecutive turns by meaning
   (``embedding.vectors.Scan.passages``): a conversation where the question was asked and
   answered, or talked over for a few turns, beats one stray turn that shares its words.

Measured on LoCoMo dev, English, conversation hit@1 / @5: best messages alone 0.687 / 0.913;
+ lexical 0.712 / 0.922; + period 0.750 / 0.947 (benchmarks/README.md, "Conversation ranking");
+ passages: benchmarks/README.md, "Issue 26: the conversation's best passage".
Pure: hits, documents, timestamps, the time zone and the time of asking come in as data. A named day is a day of the
profile's calendar (``host/clock.py``: Hermes' ``timezone``, else the machine's), the one rows show
their time in and ``after``/``before`` dates are read in — "5月3日" at 00:30 in Beijing is 3 May,
not 2 May as in UTC.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any

from .settings import RANKING


def lexical_order(docs: Iterable, terms: Iterable, conversation: Mapping[str, str] | Callable[[Any], str],
                  conversations: int) -> list[str]:
    """Conversations best first by the rarity of the query terms they hold (``docs``: keyword.Doc,
    each with the query terms it holds in ``tf``; ``terms``: those that weigh; ``conversation``: a
    session → root map, or a doc → its conversation, episodes.Episodes).
    Conversations holding the same terms tie and keep the order of their first message in
    ``docs``, the order keyword search read them in: oldest first in a scope it scans whole,
    best-scoring first in one it reads through the index. Ordering ties by the conversation's
    best fused message instead lost English conversation hit@3 beyond noise (LoCoMo dev, 4 gained
    / 16 lost; benchmarks/README.md, "Issue 26, fourth round")."""
    weigh = set(terms)
    key = conversation if callable(conversation) else lambda doc: conversation.get(doc.session_id, doc.session_id)
    held: dict[str, set] = {}
    for doc in docs:
        found = weigh.intersection(doc.tf)
        if found:
            held.setdefault(key(doc), set()).update(found)
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
    # The words that name a time counted back from now ("昨天", "last week"; named_relative): where
    # that time holds the scope's turns they are read as the time, not searched (question.ask).
    said: str = ""

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


# Days counted back from today, as a chat says them. A week starts on Monday (GB/T 7408, ISO 8601);
# a weekend is its Saturday and Sunday. "最近" / "recently" / "前几天" name no span and are left to
# the words: MemoryBank's "最近" questions ask about days a week and more before.
_DIGITS = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
          "eight": 8, "nine": 9, "ten": 10}
_WEEKDAY_CJK = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# Chinese has no spaces, so a time word can be the tail of one word and the head of the next:
# 以前天天 (以前 + 天天), 目前天气, 如今天气, 马上周末, 早上周会, 这周围, 这个月饼. Each pattern
# refuses the neighbours that make such a pair.
_CJK_DAY_WORDS = ((re.compile(r"大前天"), 3), (re.compile(r"(?<![以之提目面眼从事])前天"), 2),
                  (re.compile(r"昨[天日晚儿]"), 1), (re.compile(r"(?<![如至])今[天日晚早儿]"), 0))
_CJK_DAYS_AGO = re.compile(r"(\d{1,3}|[一两二三四五六七八九十]{1,3})\s*天(?:以)?前")
_CJK_WEEK = re.compile(r"(?<![马早晚楼路身头手桌线网班墙台])(上上|上|这|本)\s*个?\s*"
                       r"(?:周(?![围边年期到转全])|星期|礼拜)([一二三四五六日天末])?")
_CJK_MONTH = re.compile(r"(?<![登爬飞奔])(上|这|本)\s*个?\s*月(?![\d一二三四五六七八九十饼亮光球台色])")
_CJK_AGO = re.compile(r"(\d{1,3}|[一两二三四五六七八九十]{1,3})\s*(?:(个?\s*(?:周|星期|礼拜))|(个\s*月))(?:以)?前")
_EN_DAYS_AGO = re.compile(r"\b(\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten) days? ago\b", re.IGNORECASE)
_EN_AGO = re.compile(r"\b(\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten) (weeks?|months?) ago\b",
                     re.IGNORECASE)
_EN_DAY_WORDS = ((re.compile(r"\bthe day before yesterday\b", re.IGNORECASE), 2),
                 (re.compile(r"\b(?:yesterday|last night)\b", re.IGNORECASE), 1),
                 (re.compile(r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", re.IGNORECASE), 0))
_EN_WEEK = re.compile(r"\b(last|this) (week(?:end)?|month)\b", re.IGNORECASE)
_EN_LAST_WEEKDAY = re.compile(rf"\blast ({'|'.join(_WEEKDAYS)})\b", re.IGNORECASE)


def named_relative(text: str, now: float, zone: tzinfo | None = None) -> NamedTime | None:
    """The span a query names counting back from ``now`` (epoch seconds) on the calendar of ``zone``
    (None: the machine's local time), with the words that name it (``NamedTime.said``): a day
    ("昨天", "前天", "3天前", "yesterday", "two days ago", "上周三", "last Monday"), a week or its
    weekend ("上周", "这周末", "last week", "两周前", "3 weeks ago") or a month ("上个月", "this month",
    "两个月前", "a month ago"); None when it names none. "last Monday" is the latest Monday before
    today; "上周三" the Wednesday of the week before this one; "两周前" / "a week ago" a week of the
    calendar (Monday to Sunday), as "上个月" is a month of it."""
    today = local(now, zone)
    if today is None:
        return None
    today = today.date()

    def days(first: date, count: int, said: str) -> NamedTime:
        return NamedTime(span=(midnight(first, zone), midnight(first + timedelta(days=count), zone)), zone=zone,
                         said=said)

    if found := _relative_day(text, today):
        return days(found[0], 1, found[1])
    monday = today - timedelta(days=today.weekday())
    if ((m := _CJK_AGO.search(text)) or (m := _EN_AGO.search(text))) and (count := _count(m.group(1).lower())):
        # "两周前" / "3 weeks ago": that week; "两个月前" / "a month ago": that month
        if m.group(2) and not m.group(2).lower().startswith("month"):
            return days(monday - timedelta(weeks=count), 7, m.group(0))
        return _month(today, -count, zone, m.group(0))
    if (m := _CJK_WEEK.search(text)) or (m := _EN_WEEK.search(text)):
        which, what = m.group(1).lower(), (m.group(2) or "").lower()
        if what == "month":
            return _month(today, -1 if which == "last" else 0, zone, m.group(0))
        monday -= timedelta(weeks={"上上": 2, "上": 1, "last": 1}.get(which, 0))
        if what in ("末", "weekend"):
            return days(monday + timedelta(days=5), 2, m.group(0))
        if what in _WEEKDAY_CJK:
            return days(monday + timedelta(days=_WEEKDAY_CJK[what]), 1, m.group(0))
        return days(monday, 7, m.group(0))
    if m := _CJK_MONTH.search(text):
        return _month(today, -1 if m.group(1) == "上" else 0, zone, m.group(0))
    return None


def _relative_day(text: str, today: date) -> tuple[date, str] | None:
    """The one day ``text`` names counting back from ``today``, with the words that name it; or None."""
    for pattern, back in _CJK_DAY_WORDS:
        if m := pattern.search(text):
            return today - timedelta(days=back), m.group(0)
    for pattern in (_CJK_DAYS_AGO, _EN_DAYS_AGO):
        if (m := pattern.search(text)) and (count := _count(m.group(1).lower())) is not None:
            return today - timedelta(days=count), m.group(0)
    for pattern, back in _EN_DAY_WORDS:
        if m := pattern.search(text):
            return today - timedelta(days=back), m.group(0)
    if m := _EN_LAST_WEEKDAY.search(text):
        back = (today.weekday() - _WEEKDAYS.index(m.group(1).lower())) % 7 or 7
        return today - timedelta(days=back), m.group(0)
    return None


def _count(word: str) -> int | None:
    """"3", "three", "三", "两", "十五", "二十" as a number; None for what is none ("十十")."""
    if word.isdigit():
        return int(word)
    if word in _WORDS:
        return _WORDS[word]
    tens, ten, ones = word.partition("十")
    if not ten:
        return _DIGITS.get(word)
    high = _DIGITS.get(tens) if tens else 1
    low = _DIGITS.get(ones) if ones else 0
    return None if high is None or low is None else high * 10 + low


def _month(today: date, shift: int, zone: tzinfo | None, said: str) -> NamedTime:
    """The month ``shift`` months from ``today``'s (-1: the one before)."""
    year, month = divmod(today.year * 12 + today.month - 1 + shift, 12)
    start = date(year, month + 1, 1)
    end = date(start.year + (start.month == 12), start.month % 12 + 1, 1)
    return NamedTime(span=(midnight(start, zone), midnight(end, zone)), zone=zone, said=said)


def named_time(text: str, zone: tzinfo | None = None, now: float | None = None) -> NamedTime | None:
    """The time a query names (:func:`named_period`, else :func:`named_day` — a day without its
    year matches that day in every year of the scope, ``RANKING.day_without_year`` — else, given
    the time it is asked, ``now``, :func:`named_relative`: "昨天", "last week") in ``zone`` (the
    profile's calendar, ``host/clock.py``; None: the machine's local time), or None."""
    if span := named_period(text, zone):
        return NamedTime(span=span, zone=zone)
    if RANKING.day_without_year and (day := named_day(text)):
        return NamedTime(day=day, zone=zone)
    return named_relative(text, now, zone) if now is not None else None


def in_period(order: Sequence[str], when: Mapping[str, float | None], named: NamedTime) -> list[str]:
    """The conversations of ``order`` whose time (``when``: root → its best message's timestamp)
    lies in the ``named`` time, in that order."""
    return [root for root in order if (ts := when.get(root)) is not None and named.holds(ts)]
