"""Every sentence the bot says, in one voice: Chinese first, the English gloss in parentheses.

Pure data and string templates (no NoneBot import): handlers, ``render.py`` (layout) and
``client.py`` (API errors) take their words from here, and tests read them from here.

**Glossary** — one term for each thing, in both languages (tests/nonebot/test_texts.py holds every
text to it):

========================  ===========  ====================  ===========================
thing                     中文          English               never
========================  ===========  ====================  ===========================
a Hermes session          对话          conversation          会话, session
the agent in the group    助手          the agent             机器人, bot, assistant
finding past turns        检索          search / recall       回忆, 查找
the feature / service     历史检索 /    recall /              —
                          检索服务      the recall service
project / link / unlink   项目 / 关联 / project / link /      绑定
                          取消关联      unlink
chats cannot read others  隔离          isolation             封印, seal
who runs the bot          bot 管理员     bot admins            机器人管理员
a group's owner/admins    管理员        admins                —
========================  ===========  ====================  ===========================

**Rule**: a reply's first line ends with its English gloss in parentheses; further lines (help
rows, results, turns) are Chinese only, so a long reply is not said twice. Command names are never
written here: every text that names ``/move`` or ``/recall-status`` takes :class:`Names`, built from
the operator's ``HISTORY_RECALL_MOVE_COMMAND`` / ``…_STATUS_COMMAND`` and NoneBot's command start.

Why not alconna's i18n (tarina ``lang``): its locale is chosen once per process with
``lang.select`` and switches every alconna plugin (and alconna's own messages) with it, while a
group of Chinese and English speakers needs both languages in one reply; and its JSON catalogues
would lose the checks Python gives these templates (every placeholder is an argument here).
"""

from __future__ import annotations

from dataclasses import dataclass

MODES = ("hybrid", "keyword", "semantic")
DEFAULT_MODE = "hybrid"
LIMIT_MIN, LIMIT_MAX, DEFAULT_LIMIT = 1, 10, 3


@dataclass(frozen=True)
class Names:
    """The command names as this bot's operator set them (``config.command_names()``)."""

    prefix: str = "/"
    move: str = "move"
    status: str = "recall-status"

    def cmd(self, name: str) -> str:
        return f"{self.prefix}{name}"


DEFAULT_NAMES = Names()

# -- /recall --------------------------------------------------------------------------------------
UNTITLED = "(无标题)"
LOW_RELEVANCE = "相关度低"
PRIVATE_CHAT = "📌 /recall 只在群聊里可用：它检索的是本群关联项目的历史。(/recall works in group chats only)"
BAD_MODE = "⚠️ --mode 只能是 hybrid、keyword 或 semantic。(--mode must be hybrid, keyword or semantic)"
BAD_LIMIT = f"⚠️ --limit 要是 {LIMIT_MIN} 到 {LIMIT_MAX} 之间的数字。(--limit must be {LIMIT_MIN}-{LIMIT_MAX})"
BAD_DATE = ("⚠️ --after / --before 要是日期（2026-11-01）或一段时间（24h、7d、2w、3m）。"
            "(--after/--before take a date or a span like 7d)")
BAD_OPEN = "⚠️ --open 后面要跟结果编号，例如 --open 2。(--open takes a result number)"
OPEN_GONE = ("📭 这一条已经不在本群关联的项目里了（可能被移走或忘记了），重新 /recall 一下吧。"
             "(that result is no longer in this group's project)")

# What the results header adds when semantic search could not contribute (the API's semantic_status).
SEMANTIC_NOTES = {
    "consent_required": "（语义检索尚未授权，以下只有关键词结果）",
    "disabled": "（语义检索未开启，以下只有关键词结果）",
    "unavailable": "（语义检索暂不可用，以下只有关键词结果）",
    "indexing": "（语义索引还在建立中，结果可能不全）",
    "partial": "（语义索引还在建立中，结果可能不全）",
}


def help_text(is_admin: bool, names: Names = DEFAULT_NAMES, can_move: bool | None = None,
              cooldown: float = 0) -> str:
    """``/recall`` alone. Admin commands are listed only to those who may use them:
    ``/move`` to ``can_move`` (defaults to ``is_admin``), ``/recall-status`` to bot admins."""
    can_move = is_admin if can_move is None else can_move
    p, move = names.prefix, names.cmd(names.move)
    lines = [
        f"📚 {p}recall <问题> — 检索本群关联项目的历史对话 (search this group's project history)",
        f"  --mode {'|'.join(MODES)}  检索方式（默认 {DEFAULT_MODE}）",
        f"  --limit N  返回几段对话（{LIMIT_MIN}-{LIMIT_MAX}，默认 {DEFAULT_LIMIT}）",
        "  --after 7d / --before 2026-11-01  只看这之后 / 之前的消息（日期，或 24h、7d、2w、3m）",
        f"{p}recall --open N — 展开本群上一次检索的第 N 条，看它前后的几轮对话",
        f"例：{p}recall 上次数据库迁移怎么定的 --after 30d",
        f"{p}forget [--after 7d] [--before 日期] [--result N] — 让检索忘记你在本群说过的话（会先确认）",
        f"{p}recall-optout / {p}recall-optin — 你以后的发言不进入 / 重新进入检索",
    ]
    if cooldown > 0 and not can_move:
        lines.append(f"每人两次检索之间要隔 {cooldown:g} 秒。")
    if can_move:
        lines += [
            "管理员：",
            f"{move} — 列出可以关联的项目",
            f"{move} <项目> — 把本群的对话移到项目，并把本群关联到它",
            f"{move} --home — 移回 Home，取消关联",
            f"{p}forget --session <对话 id> | --all --before <日期> | --member <用户 id>"
            " — 忘记一段对话、旧内容或某人的发言",
            f"{p}recall-off / {p}recall-on — 关闭 / 重新打开本群的历史检索",
        ]
    if is_admin:
        lines.append(f"{names.cmd(names.status)} — 检索服务与本群的状态")
    return "\n".join(lines)


def usage_error(names: Names = DEFAULT_NAMES) -> str:
    p = names.prefix
    return (f"⚠️ 没看懂参数。用法：{p}recall <问题> [--mode {'|'.join(MODES)}] [--limit {LIMIT_MIN}-{LIMIT_MAX}]"
            f" [--after 7d] [--before 2026-11-01]，或 {p}recall --open N (usage: {p}recall <question>)")


def cooldown_text(seconds: int) -> str:
    return f"⏳ 检索得有点快，请 {seconds} 秒后再试。(please wait {seconds} s)"


def open_unavailable(count: int, names: Names = DEFAULT_NAMES) -> str:
    """``--open N`` when N is not one of the group's last results."""
    if count == 0:
        return f"📭 本群还没有可以展开的检索结果，先用 {names.prefix}recall <问题> 检索一下。(nothing to open yet)"
    return f"⚠️ 上一次检索有 {count} 条结果，--open 要是 1 到 {count}。(--open takes 1-{count})"


def no_results(project: str, query: str) -> str:
    return (f"🔍 在项目「{project}」里没有检索到与“{query}”相关的对话。换个说法试试，或加 --mode keyword。"
            "(nothing found)")


def results_header(project: str, query: str, related: int, weak: int) -> str:
    if related == 0:
        return (f"🔍 项目「{project}」里没有与“{query}”明显相关的对话，下面 {weak} 段只是弱相关。"
                f"(weak matches only)")
    more = f"，另有 {weak} 段弱相关" if weak else ""
    gloss = f"{related} related" + (f", {weak} weak" if weak else "")
    return f"📚 项目「{project}」里与“{query}”相关的 {related} 段对话{more}。({gloss})"


def open_hint(names: Names = DEFAULT_NAMES) -> str:
    return f"（{names.prefix}recall --open N 展开第 N 条）"


def left_out(count: int) -> str:
    return f"…还有 {count} 条没有显示。({count} more not shown)"


def context_header(index: int, title: str, project: str) -> str:
    return f"📖 第 {index} 条：{title} · 项目「{project}」(result {index} in context)"


# The server marks recalled turns as past ("past_user"); an older server says "user".
ROLE_LABELS = {"user": "👤 用户", "assistant": "🤖 助手", "past_user": "👤 用户", "past_assistant": "🤖 助手"}

# -- API errors (client.py picks one by the API's error code; the server's own text is never shown) --
MSG_UNREACHABLE = "⚠️ 暂时连不上检索服务，请稍后再试。(cannot reach the recall service)"
MSG_TIMEOUT = "⚠️ 检索服务响应超时，请稍后再试。(the recall service timed out)"
MSG_UNAUTHORIZED = "⚠️ 检索服务拒绝了插件配置的密钥，请管理员检查配置。(the recall service refused the key)"
MSG_UNKNOWN_PROFILE = "⚠️ 检索服务上没有这个 Hermes profile，请管理员检查地址。(unknown Hermes profile)"
MSG_NOT_FOUND = "⚠️ 检索服务的地址不对（404）。(no such route on the recall service)"
MSG_QUERY_TOO_LONG = "⚠️ 问题太长了，精简一下再试。(the question is too long)"
MSG_SERVER_ERROR = "⚠️ 检索服务出错了，请稍后再试。(the recall service failed)"
MSG_UNKNOWN_PROJECT = "⚠️ 没有这个项目，请检查项目名或 slug。(no such project)"
MSG_FOLDER_MISSING = "⚠️ 这个项目的文件夹在 Hermes 那边不见了，请联系运维。(the project's folder is missing)"
MSG_NO_DB = "📭 这个 Hermes 还没有任何对话记录。(no conversations yet)"
MSG_SESSION_NOT_FOUND = "⚠️ 找不到这段对话。(conversation not found)"
MSG_BAD_REQUEST = "⚠️ 检索服务没看懂这个请求，请检查参数。(the recall service did not understand the request)"
MSG_REFUSED = "⚠️ 检索服务拒绝了这个请求。(the recall service refused the request)"
MSG_NOT_YOURS = ("⚠️ 这一条不能确认是你说的，只有管理员可以忘记别人的发言。"
                 "(that result is not one of your own turns; only an admin can forget others')")
MSG_BAD_ANSWER = "⚠️ 检索服务返回了看不懂的内容。(unexpected answer from the recall service)"


def unbound(names: Names = DEFAULT_NAMES) -> str:
    return (f"📭 本群还没有关联项目，管理员可以用 {names.cmd(names.move)} <项目> 关联。"
            "(this group is not linked to a project yet)")


def recall_off(names: Names = DEFAULT_NAMES) -> str:
    return (f"🔕 本群的历史检索已被管理员关闭，管理员可以用 {names.prefix}recall-on 重新打开。"
            "(recall is switched off in this group)")


# -- /move ------------------------------------------------------------------------------------------
def move_in_group(names: Names = DEFAULT_NAMES) -> str:
    move = names.cmd(names.move)
    return f"📌 {move} 只在群聊里可用。({move} works in group chats only)"


def move_usage(names: Names = DEFAULT_NAMES) -> str:
    move = names.cmd(names.move)
    return f"用法：{move} <项目名或 slug>，或 {move} --home (usage: {move} <project> | {move} --home)"


def moved(count: int, project: str | None) -> str:
    if project is not None:
        return (f"✅ 已把本群的 {count} 段对话移到项目「{project}」，之后的新对话也会记在这里。"
                f"(moved {count} conversations to {project})")
    return f"✅ 已把本群的 {count} 段对话移回 Home，本群不再关联项目。(moved {count} conversations to Home)"


MOVE_NONE_ALLOWED = ("📁 本群的管理员还不能移动本群：请 bot 管理员在配置里为本群列出可选的项目（move_projects）。"
                     "(no project is open to this group's admins)")


def move_not_allowed(projects: str, names: Names = DEFAULT_NAMES) -> str:
    return f"⚠️ 本群只能关联这些项目：{projects}。(this group can be linked to: {projects})\n{move_usage(names)}"


NO_PROJECTS = "📁 Hermes 里还没有项目，先在 Hermes 里建一个再来关联。(no projects yet)"
CURRENT_PROJECT = "  ✅ 本群当前"


def projects_header(count: int) -> str:
    return f"📁 可以关联的项目（{count} 个）：(projects this group can be linked to)"


# -- /recall-status (admins) -------------------------------------------------------------------------
STATUS_TITLE = "🩺 历史检索"
# The API's stable values in words (GET /status: semantic.status, a project's state, semantic.consent).
STATE_WORDS = {
    "ready": "已就绪",
    "partial": "部分已建索引",
    "indexing": "正在建立索引",
    "consent_required": "等待授权",
    "disabled": "未开启",
    "unavailable": "不可用",
}
CONSENT_WORDS = {
    "not_needed": "本地模型，不外发，无需授权",
    "granted": "已授权外发",
    "required": "未授权，不外发",
    "unknown": "授权状态未知",
}
PROVIDER_WORDS = {"local": "本地模型", "openai": "远程接口"}


def status_title(label: str) -> str:
    return f"{STATUS_TITLE} · {label} (recall status)"


def words(table: dict[str, str], value: object) -> str:
    """A stable API value in words; an unknown one (a newer server) as given."""
    return table.get(str(value), str(value or "未知"))


ISOLATION_NOT_REPORTED = "隔离：⚠️ 检索服务没有报告"
ISOLATION_CLOSED = "隔离：✅ 群里的助手只能检索本群的项目，读不到别的聊天"
ISOLATION_OPEN = "隔离：⚠️ 未完全隔离 — "
TRANSLATION_OFF = "中文查英文记录：⚠️ 未启用"

# -- /forget, /recall-off, /recall-optout -------------------------------------------------------------
STILL_IN_HERMES = ("注意：Hermes 自己的 state.db 和日志里仍保留原文，需要运维用 Hermes 自带的命令删除。"
                   "(Hermes' own state.db and logs still hold the words)")
FORGET_ADMIN_ONLY = "⚠️ 只有管理员可以忘记整段对话、某个日期之前的全部内容或别人的发言。(admins only)"
FORGET_NOTHING_PENDING = "📭 没有等待确认的 /forget 请求（可能已超时），请重新发送。(nothing to confirm)"
FORGET_CANCELLED = "👌 已取消，什么都没有忘记。(cancelled)"
FORGET_IN_GROUP = "📌 /forget 只在群聊里可用。(/forget works in group chats only)"
NOTHING_TO_FORGET = "📭 没有可以忘记的内容。(nothing to forget)"
NOTHING_ATTRIBUTABLE = ("📭 没有能确认是你说的内容：本群的对话是全群共用的，分不出谁说了什么，"
                        "只能由管理员按对话或日期忘记。(your turns here cannot be told apart; ask an admin)")


def forget_usage(names: Names = DEFAULT_NAMES) -> str:
    p = names.prefix
    return (f"用法：{p}forget — 忘记你在本群的全部发言；{p}forget --after 7d --before 2026-11-01；"
            f"{p}forget --result N（上一次 {p}recall 的第 N 条）；确认用 {p}forget confirm。"
            f"管理员：{p}forget --session <对话 id> / --all --before <日期> / --member <用户 id> "
            f"(usage: {p}forget [--after …] [--before …] [--result N])")


def forget_counts(own: bool, turns: int, replies: int, conversations: int, span: str) -> str:
    who = "你的" if own else ""
    return f"{who} {turns} 条发言和助手的 {replies} 条回复（{conversations} 段对话，{span}）"


def forget_preview(counts: str, seconds: int, names: Names = DEFAULT_NAMES) -> str:
    p = names.prefix
    return (f"🧹 将从检索中忘记{counts}。助手的回复也会一起忘记，因为它们可能引用了原话。"
            f"(reply {p}forget confirm within {seconds} s)\n"
            f"{seconds} 秒内发送 {p}forget confirm 确认，{p}forget cancel 取消。")


def forget_done(counts: str, receipt: object) -> str:
    return (f"✅ 已从检索中忘记{counts}，回执 {receipt}。(forgotten; receipt {receipt})\n"
            f"/recall 和助手在本群的检索都不会再找到它们。\n{STILL_IN_HERMES}")


def recall_switched(off: bool, receipt: object, names: Names = DEFAULT_NAMES) -> str:
    if off:
        return (f"🔕 本群的历史检索已关闭（回执 {receipt}）。(recall is off in this group)\n"
                f"/recall 和助手都不能再检索本群的历史，关闭期间的发言以后也不会被检索到。"
                f"{names.prefix}recall-on 重新打开。")
    return f"🔔 本群的历史检索已重新打开（回执 {receipt}）。(recall is on again)"


def optout_done(opted_out: bool, receipt: object, names: Names = DEFAULT_NAMES) -> str:
    p = names.prefix
    if opted_out:
        return (f"🙈 从现在起你在本群的发言不会再进入检索（回执 {receipt}）。(your future turns stay out of recall)\n"
                f"之前的发言不受影响，要忘记它们请用 {p}forget；{p}recall-optin 恢复。Hermes 自己仍会记录对话。")
    return f"👌 你之后的发言会重新进入检索（回执 {receipt}）；退出期间的发言仍然不会被检索到。(opted in again)"
