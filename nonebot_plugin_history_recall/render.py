"""Reply layout. Pure functions: anything that depends on the clock takes ``now``; every word
comes from ``texts.py`` (the one glossary), this module only arranges them.

Replies are meant for a chat window: one header line, then per conversation its title, when and
a one-line snippet with the hit kept visible (the API marks hits ``>>>…<<<``; shown as 【…】).
Nothing internal reaches a group: no session or project ids, no server paths, no URLs (only a bot
admin's failure text names the address that was tried, ``client.admin_error``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from .texts import DEFAULT_MODE, Texts, texts_for

ZH = texts_for("zh")  # what a function says when no Texts is handed in (tests, pure use)

HIT_OPEN, HIT_CLOSE = "【", "】"
SNIPPET_WIDTH = 120
TITLE_WIDTH = 60
QUERY_ECHO_WIDTH = 24
CONTEXT_TURNS = 2  # turns shown before and after an opened hit
TURN_WIDTH = 300


def _shorten(text: str, width: int) -> str:
    """``text`` in ``width`` characters; a cut inside a Latin word backs off to the space before it
    (a title reads "Why is the product page…", not "Why is the product pa…")."""
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    if text[width - 1].isascii() and text[width - 1].isalnum() and cut[-1:].isascii() and cut[-1:].isalnum():
        space = cut.rfind(" ")
        if space >= width * 2 // 3:
            cut = cut[:space]
    return cut.rstrip() + "…"


def project_name(project: Mapping[str, Any] | None) -> str:
    project = project or {}
    return str(project.get("name") or project.get("slug") or "?")


def is_home(project: Mapping[str, Any] | None) -> bool:
    """The API names Home ``{"kind": "home"}`` (older servers: null)."""
    return not project or project.get("kind") == "home"


def parse_when(value: Any) -> datetime | None:
    """The API's ``when`` (``"2026-09-01 14:30"``, ISO 8601 or epoch seconds) as local naive time."""
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, int | float):
            return datetime.fromtimestamp(value)
        if isinstance(value, str) and value.strip():
            parsed = datetime.fromisoformat(value.strip())
            return parsed.astimezone().replace(tzinfo=None) if parsed.tzinfo else parsed
    except (ValueError, OverflowError, OSError):
        return None
    return None


def server_now(data: Mapping[str, Any]) -> datetime:
    """The recall API's ``now`` — this moment on the Hermes profile's calendar, the one its rows'
    ``when`` are written in — else this machine's clock (an older server)."""
    return parse_when(data.get("now")) or datetime.now()


def format_when(value: Any, now: datetime, t: Texts = ZH) -> str:
    """今天 14:30 / 昨天 09:05 / 3天前 / 9月1日 / 2025年9月1日 (or ``t``'s words); unparseable values as given."""
    when = parse_when(value)
    if when is None:
        return str(value or "")
    days = (now.date() - when.date()).days
    has_time = not (isinstance(value, str) and len(value.strip()) == 10)
    if days == 0 and has_time:
        return t("today", time=f"{when:%H:%M}")
    if days == 1 and has_time:
        return t("yesterday", time=f"{when:%H:%M}")
    if 1 < days < 7:
        return t("days_ago", days=days)
    return t("this_year" if when.year == now.year else "other_year", year=when.year, month=when.month, day=when.day)


def format_snippet(snippet: str, width: int = SNIPPET_WIDTH) -> str:
    """One line of at most ``width`` characters (plus ellipses) that keeps the first hit visible."""
    text = " ".join(str(snippet or "").split()).replace(">>>", HIT_OPEN).replace("<<<", HIT_CLOSE)
    # The API's snippet is already a window; keep its own "…" marks instead of doubling them.
    cut_before, cut_after = text.startswith("…"), text.endswith("…")
    text = text.strip("…")
    hit = text.find(HIT_OPEN)
    start = 0 if hit < 0 or len(text) <= width else min(max(0, hit - width // 3), len(text) - width)
    end = start + width
    piece = text[start:end]
    if piece.rfind(HIT_OPEN) > piece.rfind(HIT_CLOSE):
        piece += HIT_CLOSE  # a hit cut at the right edge stays a closed 【…】
    before = "…" if start > 0 or cut_before else ""
    after = "…" if end < len(text) or cut_after else ""
    return before + piece + after


def _level(result: Mapping[str, Any]) -> str | None:
    relevance = result.get("relevance")
    return relevance.get("level") if isinstance(relevance, Mapping) else None


def _held_that_day(result: Mapping[str, Any]) -> bool:
    """A conversation held on the day the question names that no search found by its words (the
    API's ``score_source`` "date"): what was asked for, whatever its words, so never called weak."""
    return result.get("score_source") == "date"


def result_block(index: int, result: Mapping[str, Any], now: datetime, t: Texts = ZH) -> str:
    # The session id / link is Hermes' internal id: a group member cannot open it, so it is not shown.
    title = _shorten(" ".join(str(result.get("title") or "").split()), TITLE_WIDTH) or t("untitled")
    when = format_when(result.get("when"), now, t)
    mark = t("held_that_day") if _held_that_day(result) else t("low_relevance") if _level(result) == "low" else ""
    lines = [f"{index}. {title}" + (f" · {when}" if when else "") + (f" · {mark}" if mark else "")]
    if snippet := format_snippet(result.get("snippet") or ""):
        lines.append(f"   {snippet}")
    return "\n".join(lines)


# What the results header adds when semantic search could not contribute (the API's semantic_status).
_SEMANTIC_NOTES = {"consent_required": "semantic_consent_required", "disabled": "semantic_disabled",
                   "unavailable": "semantic_unavailable", "indexing": "semantic_indexing",
                   "partial": "semantic_indexing"}


def result_blocks(data: Mapping[str, Any], query: str, now: datetime, t: Texts = ZH,
                  after: str = "", before: str = "") -> list[str]:
    """Header block, then one block per result; a single friendly block when nothing matched
    (naming the date filter, ``after``/``before`` as typed, when one was set)."""
    name = project_name(data.get("project"))
    echo = _shorten(" ".join(query.split()), QUERY_ECHO_WIDTH)
    results: Sequence[Mapping[str, Any]] = [r for r in data.get("results") or [] if isinstance(r, Mapping)]
    note_key = _SEMANTIC_NOTES.get(str(data.get("semantic_status") or ""))
    note = f"\n{t(note_key)}" if note_key and data.get("mode", DEFAULT_MODE) != "keyword" else ""
    if not results:
        if isinstance(held := data.get("held_then"), int) and held > 0:  # "/recall 上个月" in a busy group
            return [t("held_then_too_many", project=name, query=echo, count=held)]
        return [t.no_results(name, echo, after, before) + note]
    # Only medium and high rows are "related"; weak ones are counted apart, never as related.
    weak = sum(1 for r in results if _level(r) == "low" and not _held_that_day(r))
    header = t.results_header(name, echo, len(results) - weak, weak) + note + "\n" + t("open_hint")
    return [header] + [result_block(i, r, now, t) for i, r in enumerate(results, 1)]


def join_blocks(blocks: Sequence[str]) -> str:
    return "\n\n".join(blocks)


_TRIM_NOTE_RESERVE = 60  # room for the "…N more not shown" line


def trim_blocks(blocks: Sequence[str], max_chars: int, t: Texts = ZH) -> str:
    """Whole blocks that fit into ``max_chars``, then a line saying how many were left out."""
    kept: list[str] = []
    for block in blocks:
        if kept and len(join_blocks([*kept, block])) > max_chars - _TRIM_NOTE_RESERVE:
            break
        kept.append(block)
    left_out = len(blocks) - len(kept)
    text = join_blocks(kept)
    if left_out:
        text += f"\n\n{t('left_out', count=left_out)}"
    return _shorten(text, max_chars) if len(kept) == 1 and not left_out else text


def render_move(data: Mapping[str, Any], t: Texts = ZH) -> str:
    project = data.get("project")
    return t.moved(int(data.get("moved_sessions") or 0), None if is_home(project) else project_name(project))


def _binding_line(binding: Mapping[str, Any] | None, error: str, t: Texts) -> str:
    if binding is None:
        return t("binding_error", reason=error) if error else t("binding_private")
    state = binding.get("state")
    if state == "bound":
        project = binding.get("project") or {}
        return t("binding_missing" if project.get("missing") else "binding_bound", project=project_name(project))
    return t("binding_home") if state == "home" else t("binding_unbound")


def _index_line(status: Mapping[str, Any], binding: Mapping[str, Any] | None, t: Texts) -> str:
    projects = [p for p in status.get("projects") or [] if isinstance(p, Mapping)]
    bound_id = ((binding or {}).get("project") or {}).get("id")
    row = next((p for p in projects if bound_id and p.get("id") == bound_id), None)
    if row is None:
        return t("index_all", count=len(projects))
    state = t.word("state", row.get("state"))
    if row.get("messages") and not row.get("indexed_messages"):
        state = t("state_not_indexed")
    return t("index_row", indexed=row.get("indexed_messages", 0), messages=row.get("messages", 0),
             sessions=row.get("sessions", 0), state=state)


def _semantic_line(semantic: Mapping[str, Any], t: Texts) -> str:
    provider = semantic.get("provider")
    if not provider and semantic.get("missing"):
        return t("semantic_missing")
    line = t("semantic_line", provider=t.word("provider", provider),
             model=f" {semantic['model']}" if semantic.get("model") else "",
             state=t.word("state", semantic.get("status")), consent=t.word("consent", semantic.get("consent")))
    indexing = semantic.get("indexing") and semantic.get("status") != "indexing"
    return line + (t("semantic_indexing_now") if indexing else "")


def _isolation_line(seal: Any, t: Texts) -> str:
    """The seal around the chats' agent, as the recall API reports it: the tools that leave it open
    by name (the reasons are the API's English; `hermes recall status` on the Hermes machine has them)."""
    if not isinstance(seal, Mapping):
        return t("isolation_not_reported")
    if seal.get("closed") is True:
        return t("isolation_closed")
    doors = [str(d.get("door")) for d in seal.get("open_doors") or [] if isinstance(d, Mapping)]
    return t("isolation_open", doors=t("list_sep").join(doors) or "?")


def render_status(
    own_route: bool,
    health: tuple[Mapping[str, Any] | None, str],
    status: tuple[Mapping[str, Any] | None, str],
    binding: tuple[Mapping[str, Any] | None, str] | None,
    t: Texts = ZH,
) -> str:
    """Admin status, shown in the group. ``own_route``: the group has its own routing entry. Each
    input is ``(data, error)`` from one API call, the error already worded for an admin
    (``client.admin_error``: on failure it names the address tried); ``binding`` None = private chat.
    The API's values (``ready``, ``not_needed``) are shown in words (texts.py)."""
    health_data, health_error = health
    lines = [t("status_title"), t("status_route_group" if own_route else "status_route_default")]
    if health_data is None:
        lines.append(t("status_failed", reason=health_error))
        return "\n".join(lines)
    lines.append(t("status_connected", profile=health_data.get("profile", "?"),
                   version=health_data.get("version", "?")))
    binding_data, binding_error = binding if binding is not None else (None, "")
    lines.append(_binding_line(binding_data, binding_error, t))
    status_data, status_error = status
    if status_data is None:
        lines.append(t("status_index_failed", reason=status_error))
        return "\n".join(lines)
    lines.append(_index_line(status_data, binding_data, t))
    lines.append(_semantic_line(status_data.get("semantic") or {}, t))
    translation = status_data.get("translation")
    if isinstance(translation, Mapping) and translation.get("status") != "ready":
        lines.append(t("translation_off"))
    lines += [t("status_store", **t.file_fault(file, problem)) for file, problem in _store_faults(status_data)]
    lines.append(_isolation_line(status_data.get("seal"), t))
    return "\n".join(lines)


def _store_faults(status: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(file, problem)`` of every file the API says cannot be used now; an older server names an
    unreadable projects.db only in ``projects_unavailable``."""
    faults = [(str(s.get("file") or ""), str(s.get("problem") or ""))
              for s in status.get("stores") or [] if isinstance(s, Mapping)]
    if status.get("projects_unavailable") and "projects.db" not in {file for file, _ in faults}:
        faults.append(("projects.db", ""))
    return faults


_ROLES = {"user": "role_user", "assistant": "role_agent", "past_user": "role_user", "past_assistant": "role_agent"}


def context_blocks(data: Mapping[str, Any], index: int, now: datetime, t: Texts = ZH) -> list[str]:
    """Header block, then one block per turn; the opened hit is marked 👉. The server marks recalled
    turns as past (``past_user``); an older server says ``user``."""
    title = _shorten(" ".join(str(data.get("title") or "").split()), TITLE_WIDTH) or t("untitled")
    # No session link: it is Hermes' internal id, of no use to a group member.
    blocks = [t("context_header", index=index, title=title, project=project_name(data.get("project")))]
    turns = [turn for turn in data.get("turns") or [] if isinstance(turn, Mapping)]
    for n, turn in enumerate(turns):
        role = str(turn.get("role"))
        label = t(_ROLES[role]) if role in _ROLES else str(turn.get("role") or "?")
        when = format_when(turn.get("when"), now, t)
        mark = "👉 " if turn.get("hit") else ""
        text = _shorten(str(turn.get("text") or "").strip(), TURN_WIDTH)
        more = "…\n" if n == 0 and data.get("more_before") else ""
        block = f"{more}{mark}{label}" + (f" · {when}" if when else "") + f"\n{text}"
        if n == len(turns) - 1 and data.get("more_after"):
            block += "\n…"
        blocks.append(block)
    return blocks


def _ref(project: Mapping[str, Any]) -> str:
    """What to type after /move for a project: its short name (the slug), else its id."""
    return str(project.get("slug") or project.get("id") or project_name(project))


def render_move_not_allowed(allowed: list[Mapping[str, Any]], t: Texts = ZH) -> str:
    """A group's own admin asked for a project the operator did not open to the group."""
    if not allowed:
        return t("move_none_allowed")
    names = t("list_sep").join(project_name(p) for p in allowed)
    return t("move_not_allowed", projects=names) + "\n" + render_projects({"projects": allowed}, None, t)


def render_projects(data: Mapping[str, Any], binding: Mapping[str, Any] | None, t: Texts = ZH) -> str:
    """``/move`` alone: the profile's projects by name, each with the line that links it (never a
    folder or an internal id), the group's current one marked."""
    projects = [p for p in data.get("projects") or [] if isinstance(p, Mapping)]
    usage = t("move_usage")
    if not projects:
        return f"{t('no_projects')}\n{usage}"
    bound_id = ((binding or {}).get("project") or {}).get("id") if (binding or {}).get("state") == "bound" else None
    lines = [t("projects_header", count=len(projects))]
    for project in projects:
        current = t("current_project") if bound_id and project.get("id") == bound_id else ""
        lines.append(t("project_row", name=project_name(project), ref=_ref(project)) + current)
    return "\n".join([*lines, usage])


# -- forgetting (/forget, /recall-off, /recall-optout) -----------------------------------------------
def _day(data: Mapping[str, Any], edge: str) -> str:
    """The day of the span's ``edge`` ("first" / "last") on the Hermes profile's calendar
    (``first_when``: "2026-09-01 14:30"); an older server sends only the epoch, read on this clock."""
    when = data.get(f"{edge}_when")
    if isinstance(when, str) and len(when) >= 10:
        return when[:10]
    ts = data.get(edge)
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d") if isinstance(ts, int | float) else "?"


def _counts(data: Mapping[str, Any], own: bool, t: Texts) -> str:
    first, last = _day(data, "first"), _day(data, "last")
    return t.forget_counts(own, int(data.get("user_turns") or 0), int(data.get("replies") or 0),
                           int(data.get("sessions") or 0), first if first == last else f"{first} – {last}")


def forget_preview(data: Mapping[str, Any], own: bool, seconds: int, t: Texts = ZH) -> str:
    """The dry run: what would be forgotten, and how to confirm. Nothing of the asker's own while
    the group also has shared conversations (``shared_sessions``) means their turns there cannot be
    told apart — said so only then; otherwise there is simply nothing to forget."""
    if not data.get("messages"):
        return t("nothing_attributable") if own and data.get("shared_sessions") else t("nothing_to_forget")
    return t("forget_preview", counts=_counts(data, own, t), seconds=seconds) + _not_included(data, own, t)


def forget_done(data: Mapping[str, Any], own: bool, t: Texts = ZH) -> str:
    return t.forget_done(_counts(data, own, t), data.get("receipt")) + _not_included(data, own, t)


def _not_included(data: Mapping[str, Any], own: bool, t: Texts) -> str:
    """A member's forget in a group with shared turns no member owns: say those stay (issue 34 §2)."""
    return "\n" + t("shared_not_included") if own and data.get("shared_sessions") else ""


def recall_switched(data: Mapping[str, Any], t: Texts = ZH) -> str:
    off = data.get("recall") == "off"
    return t("recall_switched_off" if off else "recall_switched_on", receipt=data.get("receipt"))


def optout_done(data: Mapping[str, Any], t: Texts = ZH) -> str:
    return t("opted_out" if data.get("opted_out") else "opted_in", receipt=data.get("receipt"))
