"""Reply texts. Pure functions: anything that depends on the clock takes ``now``.

Replies are meant for a chat window: one header line, then per conversation its title, when and
a one-line snippet with the hit kept visible (the API marks hits ``>>>…<<<``; shown as 【…】).
Nothing internal reaches a group: no session or project ids, no server paths, no URLs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

MODES = ("hybrid", "keyword", "semantic")
DEFAULT_MODE = "hybrid"
LIMIT_MIN, LIMIT_MAX, DEFAULT_LIMIT = 1, 10, 3

HIT_OPEN, HIT_CLOSE = "【", "】"
SNIPPET_WIDTH = 120
TITLE_WIDTH = 60
QUERY_ECHO_WIDTH = 24
UNTITLED = "(无标题 untitled)"
LOW_RELEVANCE = "相关度低 (weak match)"

PRIVATE_CHAT = "📌 /recall 只在群聊里可用：它查的是本群关联项目的历史。(/recall works in group chats)"
BAD_MODE = "⚠️ --mode 只能是 hybrid、keyword 或 semantic。(--mode must be hybrid, keyword or semantic)"
BAD_LIMIT = f"⚠️ --limit 要是 {LIMIT_MIN} 到 {LIMIT_MAX} 之间的数字。(--limit must be {LIMIT_MIN}-{LIMIT_MAX})"
def move_in_group(prefix: str = "/", move: str = "move") -> str:
    return f"📌 {prefix}{move} 只在群聊里可用。({prefix}{move} works in group chats)"
BAD_DATE = (
    "⚠️ --after / --before 要是日期（2026-11-01）或一段时间（24h、7d、2w、3m）。"
    "(--after/--before take a date or a span like 7d)"
)
BAD_OPEN = "⚠️ --open 后面要跟结果编号，例如 --open 2。(--open takes a result number)"
OPEN_GONE = (
    "📭 这一条已经不在本群关联的项目里了（可能被移走或删除了），重新 /recall 一下吧。"
    "(not found in this group's project)"
)
CONTEXT_TURNS = 2  # turns shown before and after an opened hit
TURN_WIDTH = 300

# What the header says when semantic search could not contribute (see the API's semantic_status).
_SEMANTIC_NOTES = {
    "consent_required": "（语义检索尚未授权，以下只有关键词结果）",
    "disabled": "（语义检索未开启，以下只有关键词结果）",
    "unavailable": "（语义检索暂不可用，以下只有关键词结果）",
    "indexing": "（语义索引还在建立中，结果可能不全）",
    "partial": "（语义索引还在建立中，结果可能不全）",
}


def help_text(is_admin: bool, prefix: str = "/", can_move: bool | None = None, cooldown: float = 0,
              move: str = "move", status: str = "recall-status") -> str:
    """``/recall`` alone. Admin commands are listed only to those who may use them:
    ``/move`` to ``can_move`` (defaults to ``is_admin``), ``/recall-status`` to bot admins."""
    can_move = is_admin if can_move is None else can_move
    lines = [
        f"📚 {prefix}recall <问题> — 在本群关联项目的历史对话里查找",
        f"  --mode {'|'.join(MODES)}  检索方式（默认 {DEFAULT_MODE}）",
        f"  --limit N  返回几段对话（{LIMIT_MIN}-{LIMIT_MAX}，默认 {DEFAULT_LIMIT}）",
        "  --after 7d / --before 2026-11-01  只看这之后 / 之前的消息（日期，或 24h、7d、2w、3m）",
        f"{prefix}recall --open N — 展开本群上一次检索的第 N 条，看它前后的几轮对话",
        f"例：{prefix}recall 上次数据库迁移怎么定的 --after 30d",
        f"{prefix}forget [--after 7d] [--before 日期] [--result N] — 让检索忘记你在本群说过的话（会先确认）",
        f"{prefix}recall-optout / {prefix}recall-optin — 你以后的发言不进入 / 重新进入检索",
    ]
    if cooldown > 0 and not can_move:
        lines.append(f"每人两次检索之间要隔 {cooldown:g} 秒。")
    if can_move:
        lines += [
            "管理员：",
            f"{prefix}{move} — 列出可以关联的项目",
            f"{prefix}{move} <项目> — 把本群的对话移到项目，并把本群关联到它",
            f"{prefix}{move} --home — 移回 Home，取消关联",
            f"{prefix}forget --session <id> | --all --before <日期> | --member <用户 id> — 忘记对话、旧内容或某人",
            f"{prefix}recall-off / {prefix}recall-on — 关闭 / 重新打开本群的历史检索",
        ]
    if is_admin:
        lines.append(f"{prefix}{status} — 检索服务与本群的状态")
    return "\n".join(lines)


def usage_error(prefix: str = "/") -> str:
    return (
        f"⚠️ 没看懂参数。用法：{prefix}recall <问题> [--mode {'|'.join(MODES)}] [--limit {LIMIT_MIN}-{LIMIT_MAX}]"
        f" [--after 7d] [--before 2026-11-01]，或 {prefix}recall --open N"
    )


def move_usage(prefix: str = "/", move: str = "move") -> str:
    return f"用法：{prefix}{move} <项目 id 或 slug>，或 {prefix}{move} --home"


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


def result_blocks(data: Mapping[str, Any], query: str, now: datetime, prefix: str = "/") -> list[str]:
    """Header block, then one block per result; a single friendly block when nothing matched."""
    name = project_name(data.get("project"))
    echo = _shorten(" ".join(query.split()), QUERY_ECHO_WIDTH)
    results: Sequence[Mapping[str, Any]] = [r for r in data.get("results") or [] if isinstance(r, Mapping)]
    note = ""
    if data.get("mode", DEFAULT_MODE) != "keyword":
        note = _SEMANTIC_NOTES.get(str(data.get("semantic_status") or ""), "")
    if not results:
        text = f"🔍 在项目「{name}」里没有找到与“{echo}”相关的对话。换个说法试试，或加 --mode keyword。"
        return [text + (f"\n{note}" if note else "")]
    # Only medium and high rows are "related"; weak ones are counted apart, never as related.
    weak = sum(1 for r in results if _level(r) == "low")
    related = len(results) - weak
    if related == 0:
        header = f"🔍 项目「{name}」里没有与“{echo}”明显相关的对话，下面 {weak} 段只是弱相关 (weak matches only)"
    else:
        header = f"📚 项目「{name}」里与“{echo}”相关的 {related} 段对话" + (f"，另有 {weak} 段弱相关" if weak else "")
    header += f"\n{note}" if note else ""
    header += f"\n（{prefix}recall --open N 展开第 N 条）"
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
        text += f"\n\n…还有 {left_out} 条没有显示。({left_out} more not shown)"
    return _shorten(text, max_chars) if len(kept) == 1 and not left_out else text


def render_move(data: Mapping[str, Any]) -> str:
    moved = int(data.get("moved_sessions") or 0)
    project = data.get("project")
    if not is_home(project):
        name = project_name(project)
        return (
            f"✅ 已把本群的 {moved} 段对话移到项目「{name}」，之后的新对话也会记在这里。"
            f"(moved {moved} conversations to {name})"
        )
    return f"✅ 已把本群的 {moved} 段对话移回 Home，本群不再关联项目。(moved {moved} conversations to Home)"


def _binding_line(binding: Mapping[str, Any] | None, error: str) -> str:
    if binding is None:
        return f"本群项目：{error}" if error else "本群项目：私聊，无 (private chat)"
    state = binding.get("state")
    if state == "bound":
        project = binding.get("project") or {}
        slug = project.get("slug") or ""
        missing = "（项目已不存在或已归档 missing）" if project.get("missing") else ""
        return f"本群项目：「{project_name(project)}」" + (f" ({slug})" if slug else "") + missing
    if state == "home":
        return "本群项目：Home（已取消关联 unlinked）"
    return "本群项目：未设置 (unset)"


def _index_line(status: Mapping[str, Any], binding: Mapping[str, Any] | None) -> str:
    projects = [p for p in status.get("projects") or [] if isinstance(p, Mapping)]
    bound_id = ((binding or {}).get("project") or {}).get("id")
    row = next((p for p in projects if bound_id and p.get("id") == bound_id), None)
    if row is None:
        return f"索引：{len(projects)} 个项目 (projects)"
    return (
        f"索引：{row.get('indexed_messages', 0)}/{row.get('messages', 0)} 条消息已向量化，"
        f"{row.get('chunks', 0)} 个片段，{row.get('sessions', 0)} 段会话 · {row.get('state', '?')}"
    )


def _semantic_line(semantic: Mapping[str, Any]) -> str:
    provider = semantic.get("provider") or "?"
    model = semantic.get("model") or "?"
    state = semantic.get("status") or "?"
    line = f"语义检索：{provider} / {model} · {state} (consent: {semantic.get('consent') or '?'})"
    return line + ("，索引中 (indexing)" if semantic.get("indexing") else "")


def _seal_lines(seal: Any) -> list[str]:
    """The seal around the chats' agent, as the recall API reports it (no paths, no URLs in it)."""
    if not isinstance(seal, Mapping):
        return ["封印 (Seal)：⚠️ 服务端没有报告 (not reported)"]
    if seal.get("closed") is True:
        return ["封印 (Seal)：✅ closed — 群聊里的助手读不到别的聊天 (no chat can read another)"]
    doors = [d for d in seal.get("open_doors") or [] if isinstance(d, Mapping)]
    lines = ["封印 (Seal)：⚠️ OPEN — " + "; ".join(f"{d.get('door')}: {d.get('why')}" for d in doors)]
    return lines


def render_status(
    label: str,
    health: tuple[Mapping[str, Any] | None, str],
    status: tuple[Mapping[str, Any] | None, str],
    binding: tuple[Mapping[str, Any] | None, str] | None,
) -> str:
    """Admin status, shown in the group: the route's label, never its URL (that is in the log).
    Each input is ``(data, error)`` from one API call; ``binding`` None = private chat."""
    health_data, health_error = health
    lines = [f"🩺 history recall · {label}"]
    if health_data is None:
        lines.append(f"连接：❌ {health_error}")
        return "\n".join(lines)
    lines.append(f"连接：✅ profile {health_data.get('profile', '?')} · v{health_data.get('version', '?')}")
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
        lines.append("中文查英文记录：⚠️ 未启用 (Chinese words in English history: off"
                     f" — {translation.get('detail') or translation.get('status')})")
    lines += _seal_lines(status_data.get("seal"))
    return "\n".join(lines)


def cooldown_text(seconds: int) -> str:
    return f"⏳ 查得有点快，请 {seconds} 秒后再试。(please wait {seconds} s)"


def open_unavailable(count: int, prefix: str = "/") -> str:
    """``--open N`` when N is not one of the group's last results."""
    if count == 0:
        return f"📭 本群还没有可以展开的检索结果，先用 {prefix}recall <问题> 查一下。(nothing to open yet)"
    return f"⚠️ 上一次检索有 {count} 条结果，--open 要是 1 到 {count}。(--open takes 1-{count})"


# The server marks recalled turns as past ("past_user"); an older server says "user".
_ROLE_LABELS = {"user": "👤 用户", "assistant": "🤖 助手", "past_user": "👤 用户", "past_assistant": "🤖 助手"}


def context_blocks(data: Mapping[str, Any], index: int, now: datetime) -> list[str]:
    """Header block, then one block per turn; the opened hit is marked 👉."""
    title = _shorten(" ".join(str(data.get("title") or "").split()), TITLE_WIDTH) or UNTITLED
    # No session link: it is Hermes' internal id, of no use to a group member.
    blocks = [f"📖 第 {index} 条：{title} · 项目「{project_name(data.get('project'))}」"]
    turns = [t for t in data.get("turns") or [] if isinstance(t, Mapping)]
    for n, turn in enumerate(turns):
        label = _ROLE_LABELS.get(str(turn.get("role")), str(turn.get("role") or "?"))
        when = format_when(turn.get("when"), now)
        mark = "👉 " if turn.get("hit") else ""
        text = _shorten(str(turn.get("text") or "").strip(), TURN_WIDTH)
        more = ""
        if n == 0 and data.get("more_before"):
            more = "…\n"
        block = f"{more}{mark}{label}" + (f" · {when}" if when else "") + f"\n{text}"
        if n == len(turns) - 1 and data.get("more_after"):
            block += "\n…"
        blocks.append(block)
    return blocks


MOVE_NONE_ALLOWED = ("📁 本群的管理员还不能移动本群：请 bot 管理员在配置里为本群列出可选的项目（move_projects）。"
                     "(no project is open to this group's admins)")


def render_move_not_allowed(allowed: list[Mapping[str, Any]], prefix: str = "/", move: str = "move") -> str:
    """A group's own admin asked for a project the operator did not open to the group."""
    if not allowed:
        return MOVE_NONE_ALLOWED
    names = "、".join(str(p.get("slug") or project_name(p)) for p in allowed)
    return f"⚠️ 本群只能关联这些项目：{names}。(this group can be linked to: {names})\n{move_usage(prefix, move)}"


def render_projects(data: Mapping[str, Any], binding: Mapping[str, Any] | None, prefix: str = "/",
                    move: str = "move") -> str:
    """``/move`` alone: the profile's projects (name and slug, never folders), the group's marked."""
    projects = [p for p in data.get("projects") or [] if isinstance(p, Mapping)]
    usage = move_usage(prefix, move)
    if not projects:
        return f"📁 Hermes 里还没有项目，先在 Hermes 里建一个再来关联。(no projects yet)\n{usage}"
    bound_id = ((binding or {}).get("project") or {}).get("id") if (binding or {}).get("state") == "bound" else None
    lines = [f"📁 可以关联的项目（{len(projects)} 个）："]
    for project in projects:
        slug = project.get("slug") or ""  # never the internal id
        current = "  ✅ 本群当前 (current)" if bound_id and project.get("id") == bound_id else ""
        lines.append(f"• {project_name(project)}" + (f" · {slug}" if slug else "") + current)
    return "\n".join([*lines, usage])


# -- forgetting (/forget, /recall-off, /recall-optout) -----------------------------------------------
STILL_IN_HERMES = (
    "注意：Hermes 自己的 state.db 和日志里仍保留原文，需要运维用 Hermes 自带的命令删除。"
    "(Hermes' own state.db and logs still hold the words; the operator deletes them with Hermes' own commands)"
)
FORGET_ADMIN_ONLY = "⚠️ 只有管理员可以忘记整段对话、某个日期之前的全部内容或别人的发言。(admins only)"
FORGET_NOTHING_PENDING = "📭 没有等待确认的 /forget 请求（可能已超时），请重新发送。(nothing to confirm)"
FORGET_CANCELLED = "👌 已取消，什么都没有忘记。(cancelled)"
FORGET_IN_GROUP = "📌 /forget 只在群聊里可用。(/forget works in group chats)"


def forget_usage(prefix: str = "/") -> str:
    return (
        f"用法：{prefix}forget — 忘记你在本群的全部发言；{prefix}forget --after 7d --before 2026-11-01；"
        f"{prefix}forget --result N（上一次 /recall 的第 N 条）；确认用 {prefix}forget confirm。"
        f"管理员：{prefix}forget --session <会话 id> / --all --before <日期> / --member <用户 id>"
    )


def _day(ts: object) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d") if isinstance(ts, int | float) else "?"


def _counts(data: Mapping[str, Any], own: bool) -> str:
    turns = int(data.get("user_turns") or 0)
    replies = int(data.get("replies") or 0)
    who = "你的" if own else ""
    span = f"{_day(data.get('first'))} – {_day(data.get('last'))}"
    return f"{who} {turns} 条发言和机器人的 {replies} 条回复（{int(data.get('sessions') or 0)} 段对话，{span}）"


def forget_preview(data: Mapping[str, Any], own: bool, seconds: int, prefix: str = "/") -> str:
    """The dry run: what would be forgotten, and how to confirm."""
    if not data.get("messages"):
        hint = "（群共享会话里的发言无法确认是谁说的，只能由管理员按对话或日期忘记）" if own else ""
        return f"📭 没有可以忘记的内容。{hint}(nothing to forget)"
    return (
        f"🧹 将从检索中忘记{_counts(data, own)}。机器人的回复也会一起忘记，因为它们可能引用了原话。\n"
        f"{seconds} 秒内发送 {prefix}forget confirm 确认，{prefix}forget cancel 取消。"
        f"(reply {prefix}forget confirm within {seconds}s)"
    )


def forget_done(data: Mapping[str, Any], own: bool) -> str:
    return (
        f"✅ 已从检索中忘记{_counts(data, own)}，回执 {data.get('receipt')}。"
        f"/recall 和机器人在本群的检索都不会再找到它们。\n{STILL_IN_HERMES}"
    )


def recall_switched(data: Mapping[str, Any], prefix: str = "/") -> str:
    receipt = data.get("receipt")
    if data.get("recall") == "off":
        return (
            f"🔕 本群的历史检索已关闭（回执 {receipt}）：/recall 和机器人都不能再检索本群的历史，"
            f"关闭期间的发言以后也不会被检索到。{prefix}recall-on 重新打开。(recall is off in this group)"
        )
    return f"🔔 本群的历史检索已重新打开（回执 {receipt}）。(recall is on again)"


def optout_done(data: Mapping[str, Any], prefix: str = "/") -> str:
    receipt = data.get("receipt")
    if data.get("opted_out"):
        return (
            f"🙈 从现在起你在本群的发言不会再进入检索（回执 {receipt}）。之前的发言不受影响，"
            f"要忘记它们请用 {prefix}forget；{prefix}recall-optin 恢复。"
            "Hermes 自己仍会记录对话。(your future turns stay out of recall)"
        )
    return f"👌 你之后的发言会重新进入检索（回执 {receipt}）；退出期间的发言仍然不会被检索到。(opted in again)"
