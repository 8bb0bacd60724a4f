"""(a world) Chat groups bound to projects, as a recall API serves them: N QQ groups over P projects,
each member talking in the bridge's per-member sessions (``hermes-onebotv11+group+<gid>+<uid>``),
English and Chinese turns, written through Hermes' own ``SessionDB.import_sessions`` and
``projects_db``; every group bound to its project in the plugin's bindings.db. The manifest says
which sessions each chat may see (its project's), so a load test can check every result.

    python -m benchmarks groups_world --home /tmp/groups --messages 50000 --groups 20 --projects 5
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path
from typing import Any

EN = ("deploy", "database", "migration", "canary", "rollback", "schema", "invoice", "budget", "release", "cache",
      "kubernetes", "backup", "latency", "roadmap", "contract", "staging", "firewall", "sprint", "dashboard", "queue")
ZH = ("数据库", "迁移", "发布", "回滚", "预算", "合同", "缓存", "备份", "延迟", "路线图", "服务器", "测试", "上线",
      "监控", "告警", "需求", "接口", "版本", "部署", "机房")
EN_LINES = ("we agreed the {a} {b} goes out on friday after the {c} check",
            "can someone confirm the {a} for the {b} and the {c}?",
            "the {a} plan changed: {b} first, then the {c}",
            "I noted that the {a} needs a second {b} review before {c}")
ZH_LINES = ("我们决定周五先做{a}，然后再处理{b}和{c}", "请确认一下{a}和{b}的{c}安排", "{a}的方案改了：先{b}，再{c}")


def chat_of(group: int) -> str:
    return f"onebotv11:{100000 + group}"


def _text(rng: random.Random, group: int) -> str:
    if rng.random() < 0.35:
        a, b, c = rng.sample(ZH, 3)
        return rng.choice(ZH_LINES).format(a=a, b=b, c=c)
    a, b, c = rng.sample(EN, 3)
    line = rng.choice(EN_LINES).format(a=a, b=b, c=c)
    return f"{line} (g{group})" if rng.random() < 0.2 else line


def build(home: Path, work: Path, *, messages: int = 50000, groups: int = 20, projects: int = 5,
          members: int = 4, per_session: int = 50, seed: int = 1) -> dict[str, Any]:
    """Write the world into ``home`` (HERMES_HOME must name it before Hermes is imported); returns
    the manifest, also written to ``home/groups_manifest.json``."""
    from hermes_cli import projects_db
    from hermes_state import SessionDB

    from hermes_side.stores import bindings

    rng = random.Random(seed)
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("plugins:\n  enabled: [project-history-recall]\n")
    conn = projects_db.connect(home / "projects.db")
    try:
        folders = [work / f"project-{p}" for p in range(projects)]
        for folder in folders:
            folder.mkdir(parents=True, exist_ok=True)
        ids = [projects_db.create_project(conn, name=f"Project {p}", folders=[str(f)], primary_path=str(f))
               for p, f in enumerate(folders)]
    finally:
        conn.close()
    chats: dict[str, dict[str, Any]] = {}
    sessions: list[dict[str, Any]] = []
    t0 = time.time() - 86400 * 30
    per_group = max(1, messages // groups)
    for g in range(groups):
        p = g % projects
        chat = chat_of(g)
        chats[chat] = {"project": ids[p], "sessions": []}
        written, turn = 0, 0
        while written < per_group:
            uid = 10000 + rng.randrange(members)
            sid = f"hermes-onebotv11+group+{100000 + g}+{uid}-g{turn}"
            turn += 1
            n = min(per_session, per_group - written)
            rows = [{"role": ("user", "assistant")[i % 2], "content": _text(rng, g),
                     "timestamp": t0 + g * 3600 + turn * 60 + i} for i in range(n)]
            sessions.append({"id": sid, "source": "api_server", "cwd": str(folders[p]),
                             "started_at": rows[0]["timestamp"], "messages": rows})
            chats[chat]["sessions"].append(sid)
            written += n
    db = SessionDB(db_path=home / "state.db")
    try:
        for start in range(0, len(sessions), 200):
            result = db.import_sessions(sessions[start:start + 200])
            if not result.get("ok"):
                raise RuntimeError(f"import_sessions failed: {json.dumps(result.get('errors'))[:2000]}")
    finally:
        db.close()
    for chat, info in chats.items():
        bindings.set_binding(home, chat, info["project"])
    allowed = {pid: sorted(s for c in chats.values() if c["project"] == pid for s in c["sessions"]) for pid in ids}
    manifest = {"chats": chats, "projects": allowed, "words": {"en": list(EN), "zh": list(ZH)},
                "folders": {str(f): pid for f, pid in zip(folders, ids, strict=True)},
                "messages": sum(len(s["messages"]) for s in sessions)}
    (home / "groups_manifest.json").write_text(json.dumps(manifest))
    return manifest


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--messages", type=int, default=50000)
    ap.add_argument("--groups", type=int, default=20)
    ap.add_argument("--projects", type=int, default=5)
    args = ap.parse_args(argv)
    home = args.home.resolve()
    os.environ["HERMES_HOME"] = str(home)
    manifest = build(home, home.parent / f"{home.name}-work", messages=args.messages, groups=args.groups,
                     projects=args.projects)
    print(f"{manifest['messages']} messages in {len(manifest['chats'])} groups over {len(manifest['projects'])} "
          f"projects: {home}")


if __name__ == "__main__":
    main()
