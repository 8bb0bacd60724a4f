"""One conversation's sessions and rows: lineages, compaction, rewinds, subagents, planted facts."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .plan import Conv
from .text import TextGen
from .vocab import Vocab
from .words import MODELS


def _session_id(rng: random.Random, ts: float, source: str) -> str:
    if source == "api_server":
        return f"api-{rng.getrandbits(64):016x}"
    stamp = datetime.fromtimestamp(ts, tz=UTC).strftime("%Y%m%d_%H%M%S")
    return f"{stamp}_{rng.getrandbits(24):06x}"


def _gap(rng: random.Random, role_from: str) -> float:
    if role_from == "user":
        return rng.uniform(3, 60)
    if role_from == "tool_call":
        return rng.uniform(0.5, 20)
    x = rng.random()
    if x < 0.75:
        return rng.uniform(20, 300)
    if x < 0.98:
        return rng.uniform(300, 3600)
    return rng.uniform(3600, 16 * 3600)  # the user came back later (resume)


def gen_rows(tg: TextGen, rng: random.Random, n: int, t: float, lang: str, facts=()):
    """Exactly n rows starting with a user row; returns (rows, last_ts)."""
    rows: list[dict[str, Any]] = []
    plant = {f["turn"]: f for f in facts}
    turn = 0
    while len(rows) < n:
        f = plant.get(turn)
        ml = lang if rng.random() > 0.1 else ("en" if lang == "zh" else "zh")
        rows.append({"role": "user", "content": f["user"] if f else tg.user_text(ml), "timestamp": t})
        t += _gap(rng, "user")
        rem = n - len(rows)
        if rem == 0:
            break
        if rem >= 3 and not f and rng.random() < 0.12:  # ~9% tool rows, ~9% tool-call rows
            for _ in range(min(rng.choice((1, 1, 2, 3)), (rem - 1) // 2)):
                intro, calls, tool, call_id, out = tg.tool_exchange(ml)
                rows.append({"role": "assistant", "content": intro, "tool_calls": calls,
                             "finish_reason": "tool_calls", "timestamp": t})
                t += _gap(rng, "tool_call")
                rows.append({"role": "tool", "content": out, "tool_call_id": call_id, "tool_name": tool,
                             "timestamp": t})
                t += _gap(rng, "tool_call")
        rows.append({"role": "assistant", "content": f["answer"] if f else tg.assistant_text(ml),
                     "finish_reason": "stop", "timestamp": t})
        if f:
            f["planted"] = True
        t += _gap(rng, "assistant")
        turn += 1
    return rows, t


def _copy(msg: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in msg.items()}


@dataclass
class SessOut:
    sid: str
    source: str
    start: float
    rows: list[dict[str, Any]]  # base rows written by import/append
    end_ts: float
    parent: str | None = None
    cwd: str | None = None
    cwd_via_update: bool = False  # tui: update_session_cwd(sid, cwd, branch, root)
    branch: str = ""
    repo_root: str = ""
    end_reason: str | None = None
    ended_at: float | None = None
    title: str | None = None
    model: str = ""
    model_config: dict[str, Any] | None = None
    op: str | None = None
    compact_msgs: list[dict[str, Any]] = field(default_factory=list)
    cont: list[dict[str, Any]] = field(default_factory=list)  # appended after op
    rewind_index: int = -1
    peer: dict[str, Any] | None = None
    subagent: bool = False


def gen_conversation(c: Conv, vocab: Vocab, seed: int, titles: set, sids: set) -> list[SessOut]:
    rng = random.Random(f"conv:{seed}:{c.idx}")
    pr = c.project
    tg = TextGen(vocab, pr, rng)
    model = MODELS[rng.randrange(len(MODELS))]
    out: list[SessOut] = []
    t = c.start
    lang = c.lang
    base_title = None
    if c.titled:
        base_title = tg.fill(rng.choice(("{V} {n} in {code}", "{code}: {n} {adj} fix", "{V} the {n} {n2}",
                                          "{zn}{zv}", "{zcode} {zn}{zp}", "Debug {err}", "{V} {id}")))
        base_title = base_title[:70]
        title = base_title
        k = 2
        while title in titles:
            title = f"{base_title} ({k})"
            k += 1
        titles.add(title)
        base_title = title
    peer = None
    if c.source == "telegram":
        chat = -1000000000000 - rng.randrange(10 ** 6) if rng.random() < 0.5 else rng.randrange(10 ** 8, 10 ** 9)
        ctype = "group" if chat < 0 else "dm"
        uid = str(rng.randrange(10 ** 8, 10 ** 9))
        peer = {"source": "telegram", "user_id": uid, "chat_id": str(chat), "chat_type": ctype,
                "session_key": f"agent:main:telegram:{ctype}:{chat}" + (f":{uid}" if ctype == "group" else "")}
    nseg = len(c.seg_rows)
    prev: SessOut | None = None
    for si, R in enumerate(c.seg_rows):
        is_tip = si == nseg - 1
        sid = _session_id(rng, t, c.source)
        while sid in sids:
            sid = _session_id(rng, t, c.source)
        sids.add(sid)
        op = c.op if is_tip else None
        header: list[dict[str, Any]] = []
        if prev is not None:
            # Legacy rotation: the continuation starts with the compressed context (summary + tail).
            header = [{"role": "user", "content": tg.summary_text(lang), "timestamp": t}]
            for m in prev.rows[-2:]:
                h = _copy(m)
                h["timestamp"] = t + 0.001 * (len(header))
                header.append(h)
            t += 1.0
        extra = 5 if op == "compact" else 2 if op == "rewind" else 0
        n_new = R - len(header) - extra
        facts = c.facts if si == 0 else ()
        body, t = gen_rows(tg, rng, n_new, t, lang, facts)
        rows = header + body
        s = SessOut(sid=sid, source=c.source, start=rows[0]["timestamp"], rows=rows, end_ts=t, model=model,
                    parent=prev.sid if prev else None, op=op)
        if si == 0:
            s.title = base_title
            s.peer = peer
            if c.cwd:
                s.cwd = c.cwd
                s.cwd_via_update = c.source == "tui"
                s.branch = c.branch
                s.repo_root = c.repo_root
        elif base_title:
            s.title = f"{base_title} #{si + 1}"
        if op == "compact":
            last_ts = rows[-1]["timestamp"]
            tail = [_copy(m) for m in rows[-2:]]
            role = "assistant" if tail[0]["role"] == "user" else "user"
            s.compact_msgs = [{"role": role, "content": tg.summary_text(lang), "timestamp": last_ts + 1.0}] + tail
            t = last_ts + 60
            s.cont = [{"role": "user", "content": tg.user_text(lang), "timestamp": t},
                      {"role": "assistant", "content": tg.assistant_text(lang), "timestamp": t + 20}]
            t += 30
        elif op == "rewind":
            # /rewind to one of the last three user turns of this session (rows from there on go inactive)
            users = [i for i, m in enumerate(rows) if m["role"] == "user" and i >= len(header)]
            s.rewind_index = users[-min(len(users), rng.randint(1, 3))]
            t = rows[-1]["timestamp"] + 30
            s.cont = [{"role": "user", "content": tg.user_text(lang), "timestamp": t},
                      {"role": "assistant", "content": tg.assistant_text(lang), "timestamp": t + 20}]
            t += 30
        last = (s.cont or rows)[-1]["timestamp"]
        if not is_tip:
            s.end_reason = "compression"
            s.ended_at = last + 0.5
            t = last + rng.uniform(1, 10)
        else:
            reason = {"cli": "cli_close", "tui": rng.choice(("agent_close", "session_switch", "new_session")),
                      "telegram": "session_reset", "api_server": None}[c.source]
            if reason and rng.random() < 0.9:
                s.end_reason = reason
                s.ended_at = last + rng.uniform(5, 600)
        out.append(s)
        prev = s
    if c.subagent_rows:
        parent = out[0]
        ts = parent.rows[min(len(parent.rows) - 1, 2)]["timestamp"] + 1
        sid = _session_id(rng, ts, "subagent")
        while sid in sids:
            sid = _session_id(rng, ts, "subagent")
        sids.add(sid)
        sub, _ = gen_rows(tg, rng, c.subagent_rows, ts, lang)
        sub[0]["content"] = tg.fill("Subtask: {v} the {n} in {path} and report back. Focus on {id}.")
        out.insert(1, SessOut(sid=sid, source="subagent", start=ts, rows=sub, end_ts=sub[-1]["timestamp"],
                              parent=parent.sid, model=model, model_config={"_delegate_from": parent.sid},
                              end_reason="agent_close", ended_at=sub[-1]["timestamp"] + 1, subagent=True))
    return out


