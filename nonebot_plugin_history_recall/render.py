"""Reply layout. Pure functions: anything that depends on the clock takes ``now``; every word
comes from ``texts.py`` (the one glossary), this module only arranges them.

Replies are meant for a chat window: one header line, then per conversation its title, when and
a one-line snippet with the hit kept visible (the API marks hits ``>>>…<<<``; shown as 【…】).
Nothing internal reaches a group: no session or project ids, no server paths, no URLs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from . import texts
from .texts import DEFAULT_MODE, LOW_RELEVANCE, MOVE_NONE_ALLOWED, UNTITLED, Names, move_usage

HIT_OPEN, HIT_CLOSE = "【", "】"
SNIPPET_WIDTH = 120
TITLE_WIDTH = 60
QUERY_ECHO_WIDTH = 24
CONTEXT_TURNS = 2  # turns shown before and after an opened hit
TURN_WIDTH = 300


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


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


def format_when(value: Any, now: datetime) -> str:
    """今天 14:30 / 昨天 09:05 / 3天前 / 9月1日 / 2025年9月1日; unparseable values as given."""
    when = parse_when(value)
    if when is None:
        return str(value or "")
    days = (now.date() - when.date()).days
    has_time = not (isinstance(value, str) and len(value.strip()) == 10)
    if days == 0 and has_time:
        return f"今天 {when:%H:%M}"
    if days == 1 and has_time:
        return f"昨天 {when:%H:%M}"
    if 1 < days < 7:
        return f"{days}天前"
    if when.year == now.year:
        return f"{when.month}月{when.day}日"
    return f"{when.year}年{when.month}月{when.day}日"


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


def result_block(index: int, result: Mapping[str, Any], now: datetime) -> str:
    # The session id / link is Hermes' internal id: a group member cannot open it, so it is not shown.
    title = _shorten(" ".join(str(result.get("title") or "").split()), TITLE_WIDTH) or UNTITLED
    when = format_when(result.get("when"), now)
    weak = f" · {LOW_RELEVANCE}" if _level(result) == "low" else ""
    lines = [f"{index}. {title}" + (f" · {when}" if when else "") + weak]
    if snippet := format_snippet(result.get("snippet") or ""):
        lines.append(f"   {snippet}")
    return "\n".join(lines)


def result_blocks(data: Mapping[str, Any], query: str, now: datetime,
                  names: Names = texts.DEFAULT_NAMES) -> list[str]:
    """Header block, then one block per result; a single friendly block when nothing matched."""
    name = project_name(data.get("project"))
    echo = _shorten(" ".join(query.split()), QUERY_ECHO_WIDTH)
    results: Sequence[Mapping[str, Any]] = [r for r in data.get("results") or [] if isinstance(r, Mapping)]
    note = ""
    if data.get("mode", DEFAULT_MODE) != "keyword":
        note = texts.SEMANTIC_NOTES.get(str(data.get("semantic_status") or ""), "")
    if not results:
        return [texts.no_results(name, echo) + (f"\n{note}" if note else "")]
    # Only medium and high rows are "related"; weak ones are counted apart, never as related.
    weak = sum(1 for r in results if _level(r) == "low")
    related = len(results) - weak
    header = texts.results_header(name, echo, related, weak)
    header += f"\n{note}" if note else ""
    header += f"\n{texts.open_hint(names)}"
    return [header] + [result_block(i, r, now) for i, r in enumerate(results, 1)]


def join_blocks(blocks: Sequence[str]) -> str:
    return "\n\n".join(blocks)


_TRIM_NOTE_RESERVE = 60  # room for the "…N more not shown" line


def trim_blocks(blocks: Sequence[str], max_chars: int) -> str:
    """Whole blocks that fit into ``max_chars``, then a line saying how many were left out."""
    kept: list[str] = []
    for block in blocks:
        if kept and len(join_blocks([*kept, block])) > max_chars - _TRIM_NOTE_RESERVE:
            break
        kept.append(block)
    left_out = len(blocks) - len(kept)
    text = join_blocks(kept)
    if left_out:
        text += f"\n\n{texts.left_out(left_out)}"
    return _shorten(text, max_chars) if len(kept) == 1 and not left_out else text


def render_move(data: Mapping[str, Any]) -> str:
    project = data.get("project")
    return texts.moved(int(data.get("moved_sessions") or 0), None if is_home(project) else project_name(project))


def _binding_line(binding: Mapping[str, Any] | None, error: str) -> str:
    if binding is None:
        return f"本群项目：{error}" if error else "本群项目：私聊，无"
    state = binding.get("state")
    if state == "bound":
        project = binding.get("project") or {}
        slug = project.get("slug") or ""
        missing = "（项目已不存在或已归档）" if project.get("missing") else ""
        return f"本群项目：「{project_name(project)}」" + (f" ({slug})" if slug else "") + missing
    if state == "home":
        return "本群项目：Home（已取消关联）"
    return "本群项目：还没有关联"


def _index_line(status: Mapping[str, Any], binding: Mapping[str, Any] | None) -> str:
    projects = [p for p in status.get("projects") or [] if isinstance(p, Mapping)]
    bound_id = ((binding or {}).get("project") or {}).get("id")
    row = next((p for p in projects if bound_id and p.get("id") == bound_id), None)
    if row is None:
        return f"索引：共 {len(projects)} 个项目"
    state = texts.words(texts.STATE_WORDS, row.get("state"))
    if row.get("messages") and not row.get("indexed_messages"):
        state = "还没有建立索引"
    return (f"索引：{row.get('indexed_messages', 0)}/{row.get('messages', 0)} 条消息已建语义索引，"
            f"{row.get('sessions', 0)} 段对话 · {state}")


def _semantic_line(semantic: Mapping[str, Any]) -> str:
    provider = semantic.get("provider")
    if not provider and semantic.get("missing"):
        return "语义检索：未安装，只用关键词检索"
    model = f" {semantic['model']}" if semantic.get("model") else ""
    line = (f"语义检索：{texts.words(texts.PROVIDER_WORDS, provider)}{model} · "
            f"{texts.words(texts.STATE_WORDS, semantic.get('status'))}"
            f"（{texts.words(texts.CONSENT_WORDS, semantic.get('consent'))}）")
    return line + ("，正在建立索引" if semantic.get("indexing") and semantic.get("status") != "indexing" else "")


def _isolation_lines(seal: Any) -> list[str]:
    """The seal around the chats' agent, as the recall API reports it (no paths, no URLs in it)."""
    if not isinstance(seal, Mapping):
        return [texts.ISOLATION_NOT_REPORTED]
    if seal.get("closed") is True:
        return [texts.ISOLATION_CLOSED]
    doors = [d for d in seal.get("open_doors") or [] if isinstance(d, Mapping)]
    return [texts.ISOLATION_OPEN + "; ".join(f"{d.get('door')}: {d.get('why')}" for d in doors)]


def render_status(
    label: str,
    health: tuple[Mapping[str, Any] | None, str],
    status: tuple[Mapping[str, Any] | None, str],
    binding: tuple[Mapping[str, Any] | None, str] | None,
) -> str:
    """Admin status, shown in the group: the route's label, never its URL (that is in the log).
    Each input is ``(data, error)`` from one API call; ``binding`` None = private chat.
    The API's values (``ready``, ``not_needed``) are shown in words (texts.py)."""
    health_data, health_error = health
    lines = [texts.status_title(label)]
    if health_data is None:
        lines.append(f"连接：❌ {health_error}")
        return "\n".join(lines)
    lines.append(f"连接：✅ Hermes profile {health_data.get('profile', '?')} · 版本 {health_data.get('version', '?')}")
    binding_data, binding_error = binding if binding is not None else (None, "")
    lines.append(_binding_line(binding_data, binding_error))
    status_data, status_error = status
    if status_data is None:
        lines.append(f"索引：❌ {status_error}")
        return "\n".join(lines)
    lines.append(_index_line(status_data, binding_data))
    lines.append(_semantic_line(status_data.get("semantic") or {}))
    translation = status_data.get("translation")
    if isinstance(translation, Mapping) and translation.get("status") != "ready":
        lines.append(f"{texts.TRANSLATION_OFF}（{translation.get('detail') or translation.get('status')}）")
    lines += _isolation_lines(status_data.get("seal"))
    return "\n".join(lines)


def context_blocks(data: Mapping[str, Any], index: int, now: datetime) -> list[str]:
    """Header block, then one block per turn; the opened hit is marked 👉."""
    title = _shorten(" ".join(str(data.get("title") or "").split()), TITLE_WIDTH) or UNTITLED
    # No session link: it is Hermes' internal id, of no use to a group member.
    blocks = [texts.context_header(index, title, project_name(data.get("project")))]
    turns = [t for t in data.get("turns") or [] if isinstance(t, Mapping)]
    for n, turn in enumerate(turns):
        label = texts.ROLE_LABELS.get(str(turn.get("role")), str(turn.get("role") or "?"))
        when = format_when(turn.get("when"), now)
        mark = "👉 " if turn.get("hit") else ""
        text = _shorten(str(turn.get("text") or "").strip(), TURN_WIDTH)
        more = "…\n" if n == 0 and data.get("more_before") else ""
        block = f"{more}{mark}{label}" + (f" · {when}" if when else "") + f"\n{text}"
        if n == len(turns) - 1 and data.get("more_after"):
            block += "\n…"
        blocks.append(block)
    return blocks


def render_move_not_allowed(allowed: list[Mapping[str, Any]], names: Names = texts.DEFAULT_NAMES) -> str:
    """A group's own admin asked for a project the operator did not open to the group."""
    if not allowed:
        return MOVE_NONE_ALLOWED
    return texts.move_not_allowed("、".join(str(p.get("slug") or project_name(p)) for p in allowed), names)


def render_projects(data: Mapping[str, Any], binding: Mapping[str, Any] | None,
                    names: Names = texts.DEFAULT_NAMES) -> str:
    """``/move`` alone: the profile's projects (name and slug, never folders), the group's marked."""
    projects = [p for p in data.get("projects") or [] if isinstance(p, Mapping)]
    usage = move_usage(names)
    if not projects:
        return f"{texts.NO_PROJECTS}\n{usage}"
    bound_id = ((binding or {}).get("project") or {}).get("id") if (binding or {}).get("state") == "bound" else None
    lines = [texts.projects_header(len(projects))]
    for project in projects:
        slug = project.get("slug") or ""  # never the internal id
        current = texts.CURRENT_PROJECT if bound_id and project.get("id") == bound_id else ""
        lines.append(f"• {project_name(project)}" + (f" · {slug}" if slug else "") + current)
    return "\n".join([*lines, usage])


# -- forgetting (/forget, /recall-off, /recall-optout) -----------------------------------------------
def _day(ts: object) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d") if isinstance(ts, int | float) else "?"


def _counts(data: Mapping[str, Any], own: bool) -> str:
    span = f"{_day(data.get('first'))} – {_day(data.get('last'))}"
    return texts.forget_counts(own, int(data.get("user_turns") or 0), int(data.get("replies") or 0),
                               int(data.get("sessions") or 0), span)


def forget_preview(data: Mapping[str, Any], own: bool, seconds: int, names: Names = texts.DEFAULT_NAMES) -> str:
    """The dry run: what would be forgotten, and how to confirm. Nothing of the asker's own while
    the group also has shared conversations (``shared_sessions``) means their turns there cannot be
    told apart — said so only then; otherwise there is simply nothing to forget."""
    if not data.get("messages"):
        return texts.NOTHING_ATTRIBUTABLE if own and data.get("shared_sessions") else texts.NOTHING_TO_FORGET
    return texts.forget_preview(_counts(data, own), seconds, names)


def forget_done(data: Mapping[str, Any], own: bool) -> str:
    return texts.forget_done(_counts(data, own), data.get("receipt"))


def recall_switched(data: Mapping[str, Any], names: Names = texts.DEFAULT_NAMES) -> str:
    return texts.recall_switched(data.get("recall") == "off", data.get("receipt"), names)


def optout_done(data: Mapping[str, Any], names: Names = texts.DEFAULT_NAMES) -> str:
    return texts.optout_done(bool(data.get("opted_out")), data.get("receipt"), names)
