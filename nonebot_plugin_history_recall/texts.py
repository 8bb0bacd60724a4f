"""Every sentence the bot says, in one language per deployment: Chinese by default, English with
``HISTORY_RECALL_LANGUAGE=en``. No reply mixes the two (no glosses in parentheses).

Pure data and string templates (no NoneBot import). ``ZH`` here and ``EN`` in ``texts_en.py`` are
two tables with the same keys and the same ``{placeholders}`` (tests/nonebot/test_texts.py holds
them to that); :class:`Texts` picks one table and fills in the operator's command names, so a
template writes ``{move}`` and a group reads ``/move`` or ``/recall-move`` — whatever the operator
named it (``HISTORY_RECALL_MOVE_COMMAND``, NoneBot's command start). Handlers, ``render.py``
(layout) and ``client.py`` (API errors) take every word from here.

**Glossary** — one term for each thing (test_texts.py holds every reply to it):

========================  ==================  ====================  ===========================
thing                     中文                 English               never
========================  ==================  ====================  ===========================
a Hermes session          对话                 conversation          会话, session
the agent in the group    助手                 the agent             机器人, bot, assistant
finding past turns        检索                 search                回忆, 查找
the feature / service     历史检索 / 检索服务    recall / the recall   —
                                               service
project / link / unlink   项目 / 关联 /         project / link /      绑定, slug
                          取消关联              unlink
chats cannot read others  隔离                 isolation             封印, seal
who runs the bot          bot 管理员            bot admins            机器人管理员
a group's owner/admins    管理员               admins                —
========================  ==================  ====================  ===========================

Why a setting of ours and not alconna's i18n (tarina ``lang``): tarina picks its locale from the
machine's ``LANG`` at import (a Chinese operator's server with ``LANG=C.UTF-8`` would get English)
and ``lang.select`` switches every alconna plugin in the process with it, so the operator would
need a setting anyway — and its JSON catalogues would lose what these templates get from Python:
a test that every placeholder of one language exists in the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

MODES = ("hybrid", "keyword", "semantic")
DEFAULT_MODE = "hybrid"
LIMIT_MIN, LIMIT_MAX, DEFAULT_LIMIT = 1, 10, 3
LANGUAGES = ("zh", "en")
DEFAULT_LANGUAGE = "zh"


@dataclass(frozen=True)
class Names:
    """The command names as this bot's operator set them (``config.command_names()``)."""

    prefix: str = "/"
    move: str = "move"
    status: str = "recall-status"

    def cmd(self, name: str) -> str:
        return f"{self.prefix}{name}"


DEFAULT_NAMES = Names()

ZH: dict[str, str] = {
    # -- /recall --
    "forward_name": "历史检索",  # the sender of forward-card nodes when the bot has no NICKNAME
    "untitled": "（无标题）",
    "low_relevance": "相关度低",
    "held_that_day": "当天的对话",
    "list_sep": "、",
    "private_chat": "📌 {recall} 只能在群里用：它检索的是本群关联项目的历史。",
    "in_group_only": "📌 {command} 只能在群里用。",
    "bad_mode": "⚠️ --mode 只能是 hybrid、keyword 或 semantic，收到的是「{value}」。",
    "bad_limit": "⚠️ --limit 要是 {low} 到 {high} 之间的整数，收到的是「{value}」。",
    "bad_date": "⚠️ {option} 的值「{value}」不是日期：请写日期（如 2026-11-01）或一段时间（24h、7d、2w、3m）。",
    "bad_dates": "⚠️ --after「{after}」或 --before「{before}」不对：请写日期（如 2026-11-01）"
                 "或一段时间（24h、7d、2w、3m），并且 --after 要早于 --before。",
    "bad_open": "⚠️ --open 后面要跟结果编号，例如 --open 2。",
    "open_gone": "📭 这一条已经不在本群关联的项目里了（可能被移走或被忘记），请重新 {recall}。",
    "open_none": "📭 现在没有可以展开的结果：先用 {recall} <问题> 检索，再用 --open N 展开其中一条。",
    "open_range": "⚠️ 上一次检索有 {count} 条结果，--open 后面要是 1 到 {count}。",
    "cooldown": "⏳ 检索太频繁了，请 {seconds} 秒后再试。",
    "usage": "⚠️ 没看懂这条命令。用法：{recall} <问题> [--mode {modes}] [--limit {low}-{high}] [--after 7d] "
             "[--before 2026-11-01]，或 {recall} --open N",
    "no_results": "🔍 项目「{project}」里没有检索到与“{query}”相关的对话。"
                  "换个说法试试，或用 --mode keyword 只按关键词检索。",
    "no_results_dated": "🔍 在 {dates} 的范围里，项目「{project}」没有与“{query}”相关的对话。"
                        "放宽或去掉这个日期条件再试。",
    "held_then_too_many": "🔍 “{query}”说的那段时间，项目「{project}」有 {count} 段对话，一次显示不完。"
                          "加上聊的是什么（例如“{query} 部署”），或把时间说得更具体（例如 上周三、5月3日）。",
    "results": "📚 项目「{project}」里与“{query}”相关的对话有 {related} 段。",
    "results_weak": "📚 项目「{project}」里与“{query}”相关的对话有 {related} 段，另有 {weak} 段弱相关。",
    "results_weak_only": "🔍 项目「{project}」里没有与“{query}”明显相关的对话，下面 {weak} 段只是弱相关。",
    "open_hint": "（发送 {recall} --open N 展开第 N 条）",
    "left_out": "…还有 {count} 条没有显示。",
    "context_header": "📖 第 {index} 条：{title} · 项目「{project}」",
    "role_user": "👤 用户",
    "role_agent": "🤖 助手",
    "semantic_consent_required": "（语义检索还没有授权，以下只有关键词结果）",
    "semantic_disabled": "（语义检索没有开启，以下只有关键词结果）",
    "semantic_unavailable": "（语义检索暂时不可用，以下只有关键词结果）",
    "semantic_indexing": "（语义索引还在建立中，结果可能不全）",
    "today": "今天 {time}", "yesterday": "昨天 {time}", "days_ago": "{days}天前",
    "this_year": "{month}月{day}日", "other_year": "{year}年{month}月{day}日",
    # -- help --
    "help_recall": "📚 {recall} <问题> — 检索本群关联项目的历史对话",
    "help_mode": "  --mode {modes}  检索方式（默认 {default}）",
    "help_limit": "  --limit N  显示几段对话（{low}-{high}，默认 {count}）",
    "help_dates": "  --after 7d / --before 2026-11-01  只看这之后 / 之前的消息（日期，或 24h、7d、2w、3m）",
    "help_open": "{recall} --open N — 展开本群上一次检索的第 N 条，看它前后的几轮对话",
    "help_example": "例：{recall} 上次数据库迁移怎么定的 --after 30d；"
                    "{recall} 昨天我们聊了什么（昨天、上周、5月3日：先看那时的对话）",
    "help_forget": "{forget} [--after 7d] [--before 日期] [--result N] — 让检索忘记你在本群说过的话（会先确认）",
    "help_optout": "{optout} / {optin} — 你以后的发言不进入 / 重新进入检索",
    "help_cooldown": "每人两次检索之间要隔 {seconds} 秒。",
    "help_admins": "管理员：",
    "help_move_list": "{move} — 列出可以关联的项目",
    "help_move": "{move} <项目> — 把本群的对话移到这个项目，并把本群关联到它",
    "help_move_home": "{move} --home — 取消关联，本群的对话移回 Home",
    "help_forget_admin": "{forget} --session <对话 id> | --all --before <日期> | --member <用户 id>"
                         " — 忘记一段对话、某个日期之前的全部内容或某人的发言",
    "help_switch": "{off} / {on} — 关闭 / 重新打开本群的历史检索",
    "help_status": "{status} — 检索服务和本群的状态",
    # -- API errors, as a group member sees them (short; client.py picks one by the API's code) --
    "unreachable": "⚠️ 暂时连不上检索服务，请稍后再试。",
    "timeout": "⚠️ 检索服务响应超时，请稍后再试。",
    "unauthorized": "⚠️ 检索服务拒绝了 bot 的密钥，请联系管理员。",
    "unknown_profile": "⚠️ 检索服务的地址配置有误，请联系管理员。",
    "no_route": "⚠️ 检索服务的地址配置有误，请联系管理员。",
    "query_too_long": "⚠️ 问题太长了，精简一下再试。",
    "server_error": "⚠️ 检索服务出错了，请稍后再试。",
    # A file on the Hermes machine cannot be used: searches stop (never "nothing found") until it is fixed.
    "store_fault": "⚠️ 暂时不能检索：Hermes 那台机器上的{file}{problem}，要等运维修好，请告诉管理员。",
    "store_busy": "⚠️ 历史数据正被另一个程序占用，请稍后再试。",
    "a_data_file": "一个数据文件", "named_file": "数据文件 {file} ",
    "problem_damaged": "已损坏", "problem_missing": "不见了", "problem_empty": "是空的",
    "problem_behind": "是旧的副本", "problem_full": "所在的磁盘满了", "problem_read_only": "所在的文件夹是只读的",
    "problem_unreadable": "读不了",
    "unknown_project": "⚠️ 没有这个项目。发送 {move} 查看可以关联的项目。",
    "unknown_project_named": "⚠️ 没有叫「{project}」的项目。发送 {move} 查看可以关联的项目。",
    "folder_missing": "⚠️ 这个项目的文件夹在 Hermes 那台机器上不见了，请联系运维。",
    "no_db": "📭 这个 Hermes 还没有任何对话记录。",
    "session_not_found": "⚠️ 找不到这段对话。",
    "bad_request": "⚠️ 检索服务没看懂这个请求，请检查参数。",
    "refused": "⚠️ 检索服务拒绝了这个请求。",
    "not_yours": "⚠️ 这一条不能确认是你说的；别人的发言只有管理员能忘记。",
    "bad_answer": "⚠️ 检索服务返回了看不懂的内容，请联系管理员。",
    "unbound": "📭 本群还没有关联项目，管理员可以用 {move} <项目> 关联。",
    "unbound_home": "📭 本群没有关联项目（对话在 Home），管理员可以用 {move} <项目> 关联。",
    "unbound_archived": "📭 本群关联的项目已归档，历史不能检索；管理员可以用 {move} <项目> 关联别的项目。",
    "unbound_missing": "📭 本群关联的项目已不存在；管理员可以用 {move} <项目> 关联别的项目。",
    "recall_off": "🔕 本群的历史检索已被管理员关闭，管理员可以用 {on} 重新打开。",
    # -- the same failures as an admin sees them: what was tried, why, what to check --
    "admin_unreachable": "连不上检索服务 {url}（{cause}）。请在 Hermes 那台机器上运行 `hermes recall serve`，"
                         "并确认 HISTORY_RECALL_API_URL 的地址和端口与它一致。",
    "admin_timeout": "检索服务 {url} 在 {seconds} 秒内没有应答。请看 `hermes recall serve` 的终端或 "
                     "$HERMES_HOME/logs/recall-api.log；需要时调大 HISTORY_RECALL_TIMEOUT。",
    "admin_unauthorized": "检索服务 {url} 拒绝了 bot 的密钥：bot 的 HISTORY_RECALL_API_KEY 要和 Hermes profile 的 "
                          "RECALL_API_KEY 一样。拒绝的原因写在 `hermes recall serve` 的终端和 recall-api.log 里。",
    "admin_unknown_profile": "检索服务 {url} 上没有这个 Hermes profile：检查地址里 /p/ 后面的名字，"
                             "并确认那个 profile 启用了插件、.env 里有 RECALL_API_KEY。",
    "admin_no_route": "{url} 不是检索服务的地址（404）：HISTORY_RECALL_API_URL 要指向 `hermes recall serve`。",
    "admin_server_error": "检索服务 {url} 出错了（{cause}）：详情在 `hermes recall serve` 的终端和 recall-api.log 里。",
    "admin_store_fault": "检索服务 {url} 暂停检索：Hermes 那台机器上的{file}{problem}。请在那台机器上运行 "
                         "`hermes recall status`，Next: 下面写着怎么修。",
    "admin_bad_answer": "{url} 的应答不是检索服务的格式：HISTORY_RECALL_API_URL 可能指向了别的服务。",
    "cause_refused": "连接被拒绝，那个端口上没有服务在监听",
    "cause_dns": "找不到这个主机名",
    "cause_bad_url": "地址写错了",
    "cause_other": "网络错误",
    # -- /move --
    "move_usage": "用法：{move} <项目>，或 {move} --home（取消关联）",
    "moved": "✅ 已把本群的 {count} 段对话移到项目「{project}」，本群现在关联这个项目，之后的新对话也会记在这里。",
    "moved_nothing": "✅ 本群已关联项目「{project}」，之后的新对话会记在这里（本群之前没有要移动的对话）。",
    "moved_home": "✅ 已取消关联，本群的 {count} 段对话移回 Home。",
    "moved_home_nothing": "✅ 本群现在不关联任何项目（没有要移回 Home 的对话）。",
    "move_none_allowed": "📁 本群的管理员还不能移动本群：请 bot 管理员在配置里为本群列出可选的项目（move_projects）。",
    "move_not_allowed": "⚠️ 本群只能关联这些项目：{projects}。",
    "no_projects": "📁 Hermes 里还没有项目，先在 Hermes 里建一个再来关联。",
    "projects_header": "📁 可以关联的项目（{count} 个）：",
    "project_row": "• {name} — {move} {ref}",
    "current_project": "  ✅ 本群当前关联",
    # -- /recall-status (bot admins) --
    "status_title": "🩺 本群的历史检索状态",
    "status_route_default": "检索服务：默认地址（HISTORY_RECALL_API_URL）",
    "status_route_group": "检索服务：本群单独配置的地址（HISTORY_RECALL_GROUPS）",
    "status_connected": "连接：✅ Hermes profile {profile} · 插件版本 {version}",
    "status_failed": "连接：❌ {reason}",
    "status_index_failed": "索引：❌ {reason}",
    "binding_private": "本群项目：私聊，无",
    "binding_error": "本群项目：{reason}",
    "binding_bound": "本群项目：「{project}」",
    "binding_missing": "本群项目：「{project}」（项目已不存在或已归档）",
    "binding_home": "本群项目：无（已取消关联）",
    "binding_unbound": "本群项目：还没有关联",
    "index_all": "索引：共 {count} 个项目",
    "index_row": "索引：{indexed}/{messages} 条消息已建语义索引，{sessions} 段对话 · {state}",
    "semantic_missing": "语义检索：未安装，只用关键词检索",
    "semantic_line": "语义检索：{provider}{model} · {state}（{consent}）",
    "semantic_indexing_now": "，正在建立索引",
    "isolation_not_reported": "隔离：⚠️ 检索服务没有报告",
    "isolation_closed": "隔离：✅ 群里的助手只能检索本群的项目，读不到别的聊天",
    "isolation_open": "隔离：⚠️ 未完全隔离（{doors}），详情请在 Hermes 那台机器上运行 `hermes recall status`",
    # Not "searches paused": a damaged embeddings.db stops semantic search only (the semantic line says so).
    "status_store": "存储：❌ {file}{problem}，修复办法请在 Hermes 那台机器上运行 `hermes recall status`",
    "translation_off": "中英文互查记录：⚠️ 未启用，原因请在 Hermes 那台机器上运行 `hermes recall status`",
    "state_ready": "已就绪", "state_partial": "部分已建索引", "state_indexing": "正在建立索引",
    "state_consent_required": "等待授权", "state_disabled": "未开启", "state_unavailable": "不可用",
    "state_not_indexed": "还没有建立索引", "state_unknown": "未知",
    "consent_not_needed": "本地模型，不外发，无需授权", "consent_granted": "已授权外发",
    "consent_required": "未授权，不外发", "consent_unknown": "授权状态未知",
    "provider_local": "本地模型", "provider_openai": "远程接口",
    # -- /forget, /recall-off, /recall-optout --
    "still_in_hermes": "注意：Hermes 自己的 state.db 和日志里仍保留原文，需要运维用 Hermes 自带的命令删除。",
    "forget_admin_only": "⚠️ 只有管理员可以忘记整段对话、某个日期之前的全部内容或别人的发言。",
    "forget_nothing_pending": "📭 没有等待确认的 {forget}（可能已超时），请重新发送。",
    "forget_cancelled": "👌 已取消，什么都没有忘记。",
    "nothing_to_forget": "📭 没有可以忘记的内容。",
    "nothing_attributable": "📭 没有能确认是你说的内容：本群的对话是全群共用的，分不出谁说了什么，"
                            "只能由管理员按对话或日期忘记。",
    "forget_usage": "用法：{forget} — 忘记你在本群的全部发言；{forget} --after 7d --before 2026-11-01；"
                    "{forget} --result N（上一次 {recall} 的第 N 条）；确认用 {forget} confirm。"
                    "管理员：{forget} --session <对话 id> / --all --before <日期> / --member <用户 id>",
    "forget_counts_own": "你的 {turns} 条发言和助手的 {replies} 条回复（{conversations} 段对话，{span}）",
    "forget_counts": "{turns} 条发言和助手的 {replies} 条回复（{conversations} 段对话，{span}）",
    "forget_preview": "🧹 将从检索中忘记{counts}。助手的回复也会一起忘记，因为它们可能引用了原话。\n"
                      "{seconds} 秒内发送 {forget} confirm 确认，{forget} cancel 取消。",
    "forget_done": "✅ 已从检索中忘记{counts}，回执 {receipt}。\n{recall} 和助手在本群的检索都不会再找到它们。",
    "recall_switched_off": "🔕 本群的历史检索已关闭（回执 {receipt}）。\n{recall} 和助手都不能再检索本群的历史，"
                           "关闭期间的发言以后也不会被检索到。{on} 重新打开。",
    "recall_switched_on": "🔔 本群的历史检索已重新打开（回执 {receipt}）。",
    "opted_out": "🙈 从现在起你在本群的发言不会再进入检索（回执 {receipt}）。\n"
                 "之前的发言不受影响，要忘记它们请用 {forget}；{optin} 恢复。Hermes 自己仍会记录对话。",
    "opted_in": "👌 你之后的发言会重新进入检索（回执 {receipt}）；退出期间的发言仍然不会被检索到。",
    "optout_not_attributable": "⚠️ 本群所有人共用一个对话，分不出哪句话是谁说的，所以没法只把你的发言排除在检索之外。"
                               "管理员可以用 {off} 关闭本群的检索，"
                               "或用 {forget} --all --before <日期> 忘记一段时间的记录。",
    "shared_not_included": "本群共用对话里分不出是谁说的发言不在其中，管理员可以按日期忘记它们。",
}


class Texts:
    """One language's table with the operator's command names filled in."""

    def __init__(self, table: Mapping[str, str], names: Names = DEFAULT_NAMES, language: str = "zh") -> None:
        self.table, self.names, self.language = table, names, language
        p = names.prefix
        self._commands = {"recall": f"{p}recall", "move": names.cmd(names.move), "status": names.cmd(names.status),
                          "forget": f"{p}forget", "off": f"{p}recall-off", "on": f"{p}recall-on",
                          "optout": f"{p}recall-optout", "optin": f"{p}recall-optin"}

    def __call__(self, key: str, **values: object) -> str:
        return self.table[key].format(**self._commands, **values)

    def word(self, prefix: str, value: object) -> str:
        """A stable API value in words (``state_ready``); an unknown one (a newer server) as given."""
        key = f"{prefix}_{value}"
        return self.table[key] if key in self.table else str(value or self.table["state_unknown"])

    def file_fault(self, file: str, problem: str) -> dict[str, str]:
        """``file`` and ``problem`` of a sentence about a file on the Hermes machine that cannot be
        used: "the data file projects.db" (or "a data file" when the server could not name it) and
        its problem (``damaged``) in words; one a newer server adds reads "cannot be read"."""
        key = f"problem_{problem}"
        return {"file": self("named_file", file=file) if file else self("a_data_file"),
                "problem": self(key if key in self.table else "problem_unreadable")}

    def help(self, is_admin: bool, can_move: bool | None = None, cooldown: float = 0) -> str:
        """``/recall`` alone. Admin commands are listed only to those who may use them:
        ``/move`` to ``can_move`` (defaults to ``is_admin``), ``/recall-status`` to bot admins."""
        can_move = is_admin if can_move is None else can_move
        lines = [self("help_recall"), self("help_mode", modes="|".join(MODES), default=DEFAULT_MODE),
                 self("help_limit", low=LIMIT_MIN, high=LIMIT_MAX, count=DEFAULT_LIMIT),
                 self("help_dates"), self("help_open"), self("help_example"), self("help_forget"),
                 self("help_optout")]
        if cooldown > 0 and not can_move:
            lines.append(self("help_cooldown", seconds=f"{cooldown:g}"))
        if can_move:
            lines += [self("help_admins"), self("help_move_list"), self("help_move"), self("help_move_home"),
                      self("help_forget_admin"), self("help_switch")]
        if is_admin:
            lines.append(self("help_status"))
        return "\n".join(lines)

    def usage(self) -> str:
        return self("usage", modes="|".join(MODES), low=LIMIT_MIN, high=LIMIT_MAX)

    def bad_limit(self, value: object) -> str:
        return self("bad_limit", low=LIMIT_MIN, high=LIMIT_MAX, value=value)

    def bad_dates(self, after: str, before: str, which: str = "") -> str:
        """A date the API refused, naming the value: ``which`` is the option the API named, if one."""
        if which == "after" or (after and not before):
            return self("bad_date", option="--after", value=after)
        if which == "before" or (before and not after):
            return self("bad_date", option="--before", value=before)
        return self("bad_dates", after=after, before=before)

    def open_unavailable(self, count: int) -> str:
        return self("open_range", count=count) if count else self("open_none")

    def results_header(self, project: str, query: str, related: int, weak: int) -> str:
        key = "results_weak_only" if not related else "results_weak" if weak else "results"
        return self(key, project=project, query=query, related=related, weak=weak)

    def no_results(self, project: str, query: str, after: str = "", before: str = "") -> str:
        dates = " ".join(f"--{name} {value}" for name, value in (("after", after), ("before", before)) if value)
        if dates:
            return self("no_results_dated", project=project, query=query, dates=dates)
        return self("no_results", project=project, query=query)

    def moved(self, count: int, project: str | None) -> str:
        if project is None:
            return self("moved_home", count=count) if count else self("moved_home_nothing")
        return self("moved" if count else "moved_nothing", count=count, project=project)

    def forget_counts(self, own: bool, turns: int, replies: int, conversations: int, span: str) -> str:
        return self("forget_counts_own" if own else "forget_counts", turns=turns, replies=replies,
                    conversations=conversations, span=span)

    def forget_done(self, counts: str, receipt: object) -> str:
        return self("forget_done", counts=counts, receipt=receipt) + "\n" + self("still_in_hermes")


def texts_for(language: str = DEFAULT_LANGUAGE, names: Names = DEFAULT_NAMES) -> Texts:
    """The texts of ``language`` (``zh`` or ``en``)."""
    if language == "en":
        from .texts_en import EN

        return Texts(EN, names, "en")
    return Texts(ZH, names, "zh")
