"""From ranked message hits to the seed's result rows. Pure: rows and clock come in as data."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import is_dataclass, replace
from typing import Any

from .conversations import utc
from .fusion import rrf
from .settings import RANKING

SNIPPET_CHARS = 160


def make_snippet(text: str, terms: Sequence[str], *, width: int = SNIPPET_CHARS) -> str:
    """A window of ``text`` around the first query term, hits marked ``>>>like this<<<``.

    Same markers as Hermes' session_search, so the agent reads both tools the same way.
    """
    flat = " ".join(text.split())
    pattern = _term_pattern(tuple(t for t in terms if t))
    first = pattern.search(flat) if pattern else None
    start = 0
    if first and first.start() > width // 3:
        start = first.start() - width // 3
    window = flat[start:start + width]
    if pattern:
        window = highlight(window, pattern)
    prefix = "…" if start > 0 else ""
    suffix = "…" if start + width < len(flat) else ""
    return f"{prefix}{window}{suffix}"


@functools.lru_cache(maxsize=64)
def _term_pattern(terms: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern per query, shared by every snippet of its results (compiling it per snippet cost
    more than the search with a Chinese query's translations in it)."""
    # A latin term also marks its inflections ("decide" → "decided"), as keyword search finds them
    # (Latin letters only: "nonebot插件" marks "nonebot", not the Chinese word glued to it).
    # A Latin term starts a word: "art" marks "artist", not the middle of "start".
    parts = [(r"(?<![a-z])" + re.escape(t) + "[a-z]*" if t.isascii() and t.isalpha() else re.escape(t))
             for t in sorted(terms, key=len, reverse=True)]
    return re.compile("|".join(parts), re.IGNORECASE) if parts else None


def highlight(text: str, pattern: re.Pattern[str]) -> str:
    """Mark every match ``>>>like this<<<``. Terms come longest first (``ParsedQuery.highlights``), so a CJK
    word is marked whole, and marks that touch are joined: "数据库" + "迁移" → ">>>数据库迁移<<<"."""
    return pattern.sub(lambda m: f">>>{m.group(0)}<<<", text).replace("<<<>>>", "")


def format_when(ts: float | None, tz: Any = None) -> str:
    """A turn's time as a row shows it; "" for none, and for one no calendar holds (an importer that
    wrote milliseconds: year 55302), which is shown without a time rather than failing the search."""
    at = utc(ts) if ts else None
    return at.astimezone(tz).strftime("%Y-%m-%d %H:%M") if at else ""


Conversation = Mapping[str, str] | Callable[[Mapping[str, Any]], str]


def keyed(conversation: Conversation) -> Callable[[Mapping[str, Any]], str]:
    """A hit → its conversation: a session → root map (a conversation is a session lineage), or a
    function of the hit (``episodes.Episodes``: a lineage cut at its pauses)."""
    if callable(conversation):
        return conversation
    return lambda hit: conversation.get(hit["session_id"], hit["session_id"])


def conversation_order(hits: Iterable[Mapping[str, Any]], conversation: Conversation) -> dict[str, Mapping[str, Any]]:
    """Each conversation's best hit, conversations ranked by their best messages.

    Hits come best first; a hit's ``score`` (the fused score) ranks conversations by their best
    ``conversation_hits`` messages, each worth ``conversation_decay`` of the one before (of two
    conversations whose best turns tie, the one with more turns about the question leads). A
    reply pulled in after its question (``reply_to``) adds nothing of its own. Without scores,
    conversations keep the order of their best hit."""
    best: dict[str, Mapping[str, Any]] = {}
    scores: dict[str, list[float]] = {}
    key = keyed(conversation)
    for hit in hits:
        root = key(hit)
        best.setdefault(root, hit)
        if "reply_to" not in hit:
            scores.setdefault(root, []).append(float(hit.get("score") or 0.0))
    order = {root: n for n, root in enumerate(best)}

    def weight(root: str) -> float:
        top = sorted(scores.get(root, []), reverse=True)[:RANKING.conversation_hits]
        return sum(s * RANKING.conversation_decay ** i for i, s in enumerate(top))

    return {root: best[root] for root in sorted(best, key=lambda root: (-weight(root), order[root]))}


LEVELS = ("high", "medium", "low")


def level_rank(hit: Mapping[str, Any]) -> int:
    """0 for a high hit, 1 medium, 2 low; a hit without a level (no relevance judged) ranks last."""
    relevance = hit.get("relevance")
    level = getattr(relevance, "level", None) or (relevance.get("level") if isinstance(relevance, Mapping) else None)
    return LEVELS.index(level) if level in LEVELS else len(LEVELS)


def by_level(hits: Iterable[Mapping[str, Any]], labels_lead: bool = True) -> list[Mapping[str, Any]]:
    """Hits in the order of their level, each level in the order given (a stable sort), where
    ``labels_lead``; else as given."""
    return sorted(hits, key=level_rank) if labels_lead and RANKING.level_order else list(hits)


def group_by_conversation(hits: Iterable[Mapping[str, Any]], conversation: Conversation, limit: int,
                          lists: Sequence[tuple[Sequence[str], float]] = (),
                          labels_lead: bool = True, first: Collection[str] = ()) -> list[Mapping[str, Any]]:
    """Each conversation's best hit, at most ``limit`` conversations, best conversation first:
    ranked by their best messages, fused (RRF) with ``lists`` of conversation roots and their
    weights (conversations.py) when given. ``labels_lead`` (a small scope, see ``shown_scores``):
    then by the level of the hit shown, before ``limit`` cuts — a high row the fusion placed sixth
    comes before a low one it placed first — each conversation shown by its best-labelled hit.
    ``first``: conversations that lead the ranking, in its order (held on the day the question
    names), labels or not: in a small project "what did we talk about on April 29th?" showed that
    evening under other evenings' rows that said "talk" (``RANKING.named_time_over_labels``). Only
    conversations with a hit are shown; ``lists`` name them as ``conversation`` does."""
    hits = list(hits)
    key = keyed(conversation)
    best = conversation_order(hits, key)
    shown: dict[str, Mapping[str, Any]] = {}
    for hit in by_level(hits, labels_lead):
        shown.setdefault(key(hit), hit)
    if lists:
        fused = rrf([list(best), *(list(order) for order, _ in lists)], k=RANKING.rrf_k,
                    weights=[1.0, *(weight for _, weight in lists)])
        ranked = [root for root, _ in fused if root in best]
    else:
        ranked = list(best)
    led = [shown[root] for root in ranked if root in first]
    rest = [shown[root] for root in ranked if root not in first]
    if RANKING.named_time_over_labels:  # the named time leads before labels do, in a small project too
        return [*by_level(led, labels_lead), *by_level(rest, labels_lead)][:limit]
    return by_level([*led, *rest], labels_lead)[:limit]


def with_conversation_words(hits: Sequence[Mapping[str, Any]], conversation: Conversation,
                            texts: Mapping[int, str], judge_words: Callable[[str], Any]) -> list[Mapping[str, Any]]:
    """Hits whose relevance is at least what their conversation's hits say together: a
    conversation *about* the question holds its words spread over several turns, none of which
    holds most of them ("I went to two networking events" … "I met a supplier for the store"),
    and it answers the question as surely as one turn holding them all. ``judge_words`` judges
    the joined text of a conversation's hits by its words alone (a ``Relevance`` or None)."""
    if not RANKING.conversation_words:
        return list(hits)
    parts: dict[str, list[str]] = {}
    key = keyed(conversation)
    for hit in hits:
        if text := texts.get(hit["message_id"]):
            parts.setdefault(key(hit), []).append(text)
    together = {root: judge_words("\n".join(held)) for root, held in parts.items() if len(held) > 1}
    out = []
    for hit in hits:
        joint = together.get(key(hit))
        own = hit.get("relevance")
        if joint is not None and (own is None or joint.score > own.score):
            hit = replace(hit, relevance=joint) if is_dataclass(hit) else {**hit, "relevance": joint}
        out.append(hit)
    return out


def best_of(relevances: Iterable[Any]) -> Any:
    """The strongest of the judgements of what one row shows — its message, the reply it brings
    and its ``more`` turns: a person reads the row whole, and it answers the question as surely
    as the surest of them (LoCoMo dev, hybrid, rows capped as before: right-project all-low en
    0.122 → 0.112, xl 0.178 → 0.150, wrong-project quiet −6 / −1 questions)."""
    return min((r for r in relevances if r is not None), key=lambda r: (_rank(r.level), -r.score), default=None)


def in_order(relevances: Sequence[Any]) -> list[Any]:
    """The rows' judgements (``relevance.Relevance``, top row first) made to read in the rows'
    order — issue 26: a row labelled lower never stands above one labelled higher, and the score
    shown never rises down the list — by the least change to what each row's evidence says: the
    isotonic (least-squares, non-increasing) fit of their scores in the order shown (pool adjacent
    violators; ten lines here, where scipy's isotonic_regression would bring scipy into a plugin
    that needs numpy alone), each row then labelled by its own thresholds at its fitted score.

    Where the ranking leads (a scope past ``common_min_scope``), a weak first row over a related
    second pools with it: both are as related as the two together say, where capping the second at
    the first made every row under a weak first one weak (LoCoMo dev, right project, all rows low:
    en 0.065 → 0.122 with the cap, xl 0.095 → 0.178; benchmarks/README.md). Where labels lead the
    rows come sorted by level, so only scores within a level pool. Rows whose thresholds differ (a
    row in another script) can still disagree at one pooled score: the lower label then holds
    down the rows under it."""
    blocks: list[list[float]] = []  # [sum, count] of each pooled run of rows
    for r in relevances:
        if r is None:
            continue
        blocks.append([r.score, 1])
        while len(blocks) > 1 and blocks[-2][0] * blocks[-1][1] < blocks[-1][0] * blocks[-2][1]:
            total, count = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += count
    fitted = iter([total / count for total, count in blocks for _ in range(count)])
    out, floor = [], 0
    for r in relevances:
        if r is not None:
            r = r.at(next(fitted))
            if _rank(r.level) < floor:
                r = replace(r, level=LEVELS[floor])
            floor = _rank(r.level)
        out.append(r)
    return out


def _rank(level: str | None) -> int:
    return LEVELS.index(level) if level in LEVELS else len(LEVELS)


ANSWER_CHARS = 120


def result_row(hit: Mapping[str, Any], message: Mapping[str, Any], title: str | None,
               terms: Sequence[str], tz: Any = None, answer: Mapping[str, Any] | None = None,
               more: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """One result. When the message asks something, ``answer`` is the turn that replied: the
    snippet shows the question's words, then "→" and the reply, and ``answer`` carries its id.
    ``more``: other top messages of the same conversation, each ``{message_id, role, text}``."""
    snippet = make_snippet(message.get("text", ""), terms)
    row = {
        "session_id": hit["session_id"],
        "link": f"@session:{hit['session_id']}",
        "title": title or "",
        "message_id": hit["message_id"],
        "role": message.get("role", ""),
        "snippet": snippet,
        "score_source": hit["score_source"],
        "when": format_when(message.get("timestamp"), tz),
    }
    relevance = hit.get("relevance")
    if relevance is not None:
        row["relevance"] = relevance.as_dict() if hasattr(relevance, "as_dict") else dict(relevance)
    if answer and answer.get("text", "").strip():
        reply = make_snippet(answer["text"], terms, width=ANSWER_CHARS)
        row["snippet"] = f"{make_snippet(message.get('text', ''), terms, width=SNIPPET_CHARS // 2)} → {reply}"
        row["answer"] = {"message_id": answer["message_id"], "role": answer.get("role", ""), "snippet": reply}
    if more:
        row["more"] = [{"message_id": m["message_id"], "role": m.get("role", ""),
                        "snippet": make_snippet(m.get("text", ""), terms, width=ANSWER_CHARS)} for m in more]
    return row


def search_notes(result: dict[str, Any]) -> list[str]:
    """What was not searched, and why (``hermes recall search`` prints these on stderr)."""
    return [str(result[key]) for key in ("notice", "semantic_detail", "translation_detail", "keyword_detail")
            if result.get(key)]


def render_search(result: dict[str, Any], *, notes: bool = True) -> str:
    """A search result as the terminal shows it (``hermes recall search``, the demo); ``notes=False``
    leaves the ``note:`` lines to the caller (the CLI sends them to stderr)."""
    project = result.get("project") or {}
    name = project.get("name") or project.get("key") or project.get("kind", "")
    levels = [(row.get("relevance") or {}).get("level") for row in result["results"]]
    weak = levels.count("low")
    related = len(levels) - weak
    found = f"{related} related, {weak} weak result(s)" if related else f"nothing related, {weak} weak result(s)"
    lines = [f"{name}: {found}, {result.get('sessions_in_scope', 0)} "
             f"conversation(s) in scope" + (f", semantic {result['semantic_status']}"
                                            if "semantic_status" in result else "")]
    if result.get("message"):
        lines.append(result["message"])
    if notes:
        lines += [f"note: {line}" for line in search_notes(result)]
    for n, row in enumerate(result["results"], 1):
        level = (row.get("relevance") or {}).get("level") or "-"
        lines.append(f"{n}. [{level}] {row['title'] or '(untitled)'}  [{row['when']}]  {row['link']}"
                     f"  ({row['score_source']})")
        lines.append(f"   {row['snippet']}")
    return "\n".join(lines)
