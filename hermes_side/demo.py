"""``python -m hermes_side demo``: the main job on the embedded default, end to end.

With an existing profile (``$HERMES_HOME`` holding a state.db) it indexes that profile with the
local model and prints its status. With an empty home it first writes a small bilingual demo
history through Hermes' own ``SessionDB`` and ``projects_db``, then indexes and searches it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DEMO = {  # project → conversations, each (its title, its turns)
    "hermes-dev": [
        ("Sessions table migration", [
            ("user", "What did we decide about the database migration for the sessions table?"),
            ("assistant", "We decided to add the new column with an online migration: backfill in batches of 5k, "
                          "then flip the reader. No downtime window.")]),
        ("数据库迁移与回滚", [
            ("user", "上次数据库迁移怎么定的？回滚方案是什么？"),
            ("assistant", "决定用在线迁移：先分批回填，再切换读路径；回滚就是把读路径切回旧列。")]),
        ("Deploy script ImportError", [
            ("user", "The deploy script fails with ImportError: No module named yaml"),
            ("assistant", "Add PyYAML to the deploy requirements and pin it; the CI image lacks it.")]),
        ("Slow product page after deploys", [
            ("user", "Why is the product page so slow right after every deploy?"),
            ("assistant", "The deploy flushes the Redis cache, so every request hits Postgres until the cache "
                          "is warm again. Warm the cache before switching traffic.")]),
        ("Nightly refund job crash", [
            ("user", "The nightly refund job crashed again"),
            ("assistant", "It ran out of memory loading every refund at once; "
                          "it now streams them in batches of 500.")]),
    ],
    "bot-ops": [
        ("Rotating the QQ bot token", [
            ("user", "How do we rotate the QQ bot's access token?"),
            ("assistant", "Generate a new token, set ONEBOT_ACCESS_TOKEN, restart NoneBot, then update the client.")]),
        ("群机器人半夜掉线", [
            ("user", "群机器人半夜掉线了怎么办"),
            ("assistant", "检查反向 WebSocket 的心跳，客户端断线后会自动重连；日志里看 Duplicate X-Self-ID。")]),
    ],
}
# Each question with the conversation that answers it (its index in DEMO), or None for the one
# the demo history cannot answer: the result says so instead of offering something unrelated.
QUERIES = [
    ("hermes-dev", "how did we plan the schema change without downtime?", 0),
    ("hermes-dev", "数据库迁移 回滚", 1),
    ("hermes-dev", "缓存", 3),  # one Chinese word over English history: "cache", not the refund job's "memory"
    ("bot-ops", "bot disconnected at night", 1),  # asked in English, answered in Chinese history
    ("bot-ops", "怎么轮换QQ机器人的令牌", 0),  # asked in Chinese, answered in English history
    ("bot-ops", "how do I bake sourdough bread at home", None),  # nothing in this project is about it
]


# The demo profile is set up as a real one must be: the plugin enabled in its config.yaml, so the
# seal `status` reports is the one a profile serving chats gets (not "OPEN: not enabled here").
DEMO_CONFIG = "plugins:\n  enabled: [project-history-recall]\n"


def seed_demo(home: Path) -> None:
    from hermes_cli import projects_db
    from hermes_state import SessionDB

    (home / "config.yaml").write_text(DEMO_CONFIG, encoding="utf-8")
    work = home / "demo-work"
    conn = projects_db.connect(home / "projects.db")
    db = SessionDB(db_path=home / "state.db")
    try:
        for slug, conversations in DEMO.items():
            folder = work / slug
            folder.mkdir(parents=True, exist_ok=True)
            projects_db.create_project(conn, name=slug, slug=slug, folders=[str(folder)])
            for n, (title, turns) in enumerate(conversations):
                sid = f"demo-{slug}-{n}"
                db.create_session(sid, "cli", cwd=str(folder))
                db.set_session_title(sid, title)
                for role, text in turns:
                    db.append_message(sid, role, text)
    finally:
        conn.close()
        db.close()


def setup_demo(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-index", action="store_true", help="skip building the embedding index")


def run_demo(args: argparse.Namespace, commands: Mapping[str, tuple[str, Any, Any]]) -> None:
    """``commands`` are the CLI's subcommands (cli.py passes them in): the demo runs ``index`` and
    ``status`` exactly as ``hermes recall`` would, without importing the CLI back."""
    from .host.profile import current_profile
    from .search.engine import engine_for
    from .search.request import parse_search_args
    from .search.results import render_search

    home = current_profile().home
    seeded = not (home / "state.db").exists()
    if seeded:
        home.mkdir(parents=True, exist_ok=True)
        seed_demo(home)
        print(f"demo history written to {home} (a throwaway profile; its config.yaml enables the plugin, "
              "as yours must, so the seal below is the one your chats would get)", file=sys.stderr)
    if not args.no_index and "index" in commands:
        commands["index"][2](argparse.Namespace(project=None, rebuild=False, home=None, profile=None))
    if "status" in commands:
        commands["status"][2](argparse.Namespace(json=False, home=None, profile=None))
    if not seeded:
        print("\n" + next_step_own(home))
        return
    engine = engine_for(home)
    for project, query, _ in QUERIES:
        result = engine.search(parse_search_args({"query": query, "limit": 2}), project=project)
        print(f"\n$ {search_command(home, project, query)}")
        print(render_search(result))
    print("\n" + NEXT_STEP_DEMO)


# What to do after the demo: the same on the operator's own Hermes (README, "Install into an existing
# Hermes"; offline routes there too), then the chat groups.
NEXT_STEP_DEMO = """Next: the same on your own Hermes profile
  hermes plugins install owner/name/hermes_side --enable
      # or copy hermes_side/ to ~/.hermes/plugins/project-history-recall/ and add
      # `plugins: {enabled: [project-history-recall]}` to config.yaml (no download needed)
  hermes recall status      # what is missing, and the command that installs it (also offline)
  hermes recall index       # the semantic index: local model, nothing leaves the machine
  hermes recall search --project "<a project as status names it>" "<question>"
Chat groups: the README's "Chat groups (NoneBot2)" (hermes recall serve + nonebot-plugin-history-recall)."""


def next_step_own(home: Path) -> str:
    """After indexing the operator's own profile: a search in its first project."""
    from .stores import hermes_db

    projects = [p for p in hermes_db.load_projects(home) if not p.get("archived")]
    if not projects:
        return "Next: create a project in Hermes (searches are scoped to projects), then run the demo again."
    return f"Next: {search_command(home, str(projects[0]['name']), '<question>')}   # your history, this project only"


def search_command(home: Path, project: str, query: str) -> str:
    """A line that runs this search when pasted into a shell: the demo's home is not the user's
    profile (plain ``hermes recall`` would not find the plugin there), so it names the home and
    the Python that has this plugin."""
    import shlex

    # The package importable by name (this repo's venv, the pip install): its own entry point.
    # Otherwise a plugin directory of that home, enabled there (the demo ran as `hermes recall demo`).
    runner = f"{shlex.quote(sys.executable)} -m hermes_side" if __name__.startswith("hermes_side.") else "hermes recall"
    return f"HERMES_HOME={shlex.quote(str(home))} {runner} search --project {shlex.quote(project)} {shlex.quote(query)}"
