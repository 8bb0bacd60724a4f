"""Smoke test for ``python -m benchmarks synth`` (the scale-benchmark data generator).

Runs the generator for ~2,000 messages into a temp HERMES_HOME and checks the manifest against
what Hermes actually stored: per-project message counts by cwd-folder attribution (computed here
independently, with compression children inheriting their root's place), lineages, compaction,
rewound and archived rows, planted rare terms found by the FTS tables, and determinism.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from hermes_side.stores.hermes_db import ro_uri

pytestmark = pytest.mark.slow  # real processes or load: scripts/test.sh --fast skips it

REPO = Path(__file__).resolve().parents[2]
ARGS = ["--messages", "2000", "--conversations", "40", "--projects", "8", "--seed", "3", "--quiet"]
COMPACTION_PREFIX = "[CONTEXT COMPACTION — REFERENCE ONLY]"


def _generate(home: Path) -> None:
    env = {**os.environ, "HERMES_HOME": str(home)}
    subprocess.run([sys.executable, "-m", "benchmarks", "synth", "--home", str(home), *ARGS], check=True, env=env,
                   cwd=REPO, timeout=180, capture_output=True)


def _ro(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(ro_uri(path), uri=True)
    conn.row_factory = sqlite3.Row
    return conn


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    home = tmp_path_factory.mktemp("synth_home")
    _generate(home)
    manifest = json.loads((home / "synth_manifest.json").read_text())
    queries = json.loads((home / "synth_queries.json").read_text())
    conn = _ro(home / "state.db")
    yield home, manifest, queries, conn
    conn.close()


def _attribute(home: Path, manifest: dict, conn: sqlite3.Connection):
    """scope id -> Counter of row states, computed from state.db + projects.db only (plus auto roots)."""
    folders: list[tuple[str, str]] = []
    pconn = _ro(home / "projects.db")
    for row in pconn.execute("SELECT project_id, path FROM project_folders"):
        folders.append((row["path"], row["project_id"]))
    pconn.close()
    for p in manifest["projects"]:
        if p["kind"] == "auto":
            assert (Path(p["repo_root"]) / ".git").is_dir()
            folders.append((p["repo_root"], p["id"]))
    folders.sort(key=lambda fp: -len(fp[0]))  # deepest folder wins

    sessions = {r["id"]: dict(r) for r in conn.execute(
        "SELECT id, source, cwd, parent_session_id, end_reason FROM sessions")}

    def place(sid: str) -> str:
        s = sessions[sid]
        while not s["cwd"] and s["parent_session_id"]:
            parent = sessions[s["parent_session_id"]]
            if parent["end_reason"] != "compression":
                break
            s = parent
        cwd = s["cwd"]
        if not cwd:
            return "home"
        for folder, pid in folders:
            if cwd == folder or cwd.startswith(folder + os.sep):
                return pid
        return "unowned"

    counts: dict[str, Counter] = {}
    for row in conn.execute(
            "SELECT session_id, active, compacted, COUNT(*) AS n FROM messages GROUP BY 1, 2, 3"):
        s = sessions[row["session_id"]]
        if s["source"] == "subagent":
            scope, key = place(s["parent_session_id"]), "subagent_messages"
        else:
            scope = place(row["session_id"])
            key = "active" if row["active"] else ("compacted" if row["compacted"] else "rewound")
        c = counts.setdefault(scope, Counter())
        c[key] += row["n"]
        if key != "subagent_messages":
            c["messages"] += row["n"]
    return counts


def test_counts_match_state_db(synth):
    home, manifest, _, conn = synth
    assert conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 2000
    assert manifest["totals"]["messages"] == 2000
    counts = _attribute(home, manifest, conn)
    assert "unowned" not in counts
    kinds = Counter(p["kind"] for p in manifest["projects"])
    assert kinds["home"] == 1 and kinds["auto"] >= 1 and kinds["explicit"] >= 3
    for p in manifest["projects"]:
        got = counts.get(p["id"], Counter())
        for key in ("messages", "active", "compacted", "rewound", "subagent_messages"):
            assert got[key] == p[key], (p["id"], key, got[key], p[key])
        assert p["session_count"] == len(p["session_ids"]) == p["sessions"]
    ids = {p["id"] for p in manifest["projects"]}
    assert set(manifest["buckets"]) == {"1k", "10k", "100k"} and set(manifest["buckets"].values()) <= ids


def test_sessions_shape(synth):
    home, manifest, _, conn = synth
    by_source = Counter(r[0] for r in conn.execute("SELECT source FROM sessions"))
    assert by_source["subagent"] >= 1 and by_source["api_server"] + by_source["telegram"] >= 1
    assert by_source["cli"] + by_source["tui"] >= 10
    # Home sessions have no cwd; subagent rows carry the delegate marker
    assert conn.execute("SELECT COUNT(*) FROM sessions WHERE source IN ('api_server','telegram') "
                        "AND cwd IS NOT NULL").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM sessions WHERE source='subagent' AND "
                        "json_extract(model_config,'$._delegate_from') = parent_session_id").fetchone()[0] >= 1
    # auto-repo TUI sessions got cwd + branch + root through update_session_cwd
    tui_rows = 0
    for p in manifest["projects"]:
        if p["kind"] == "auto":
            rows = conn.execute("SELECT cwd, git_branch, git_repo_root, source FROM sessions WHERE cwd = ? "
                                "OR cwd LIKE ?", (p["repo_root"], p["repo_root"] + "/%")).fetchall()
            assert rows
            for r in rows:
                if r["source"] == "tui":
                    assert r["git_repo_root"] == p["repo_root"] and r["git_branch"]
                    tui_rows += 1
    assert tui_rows  # the loop above checked something
    # timestamps spread over the year
    lo, hi = conn.execute("SELECT MIN(timestamp), MAX(timestamp) FROM messages").fetchone()
    assert manifest["time_range"][0] <= lo and hi - lo > 60 * 86400


def test_lineages_compaction_rewind_archive(synth):
    _, manifest, _, conn = synth
    t = manifest["totals"]
    children = conn.execute(
        "SELECT c.id, c.cwd, p.cwd AS pcwd FROM sessions c JOIN sessions p ON p.id = c.parent_session_id "
        "WHERE p.end_reason = 'compression'").fetchall()
    assert children and all(c["cwd"] is None for c in children)
    roots = conn.execute(
        "SELECT COUNT(*) FROM sessions p WHERE p.end_reason = 'compression' AND (p.parent_session_id IS NULL "
        "OR NOT EXISTS (SELECT 1 FROM sessions g WHERE g.id = p.parent_session_id "
        "AND g.end_reason = 'compression'))").fetchone()[0]
    assert roots == t["lineages"] >= 1
    first = conn.execute("SELECT content FROM messages WHERE session_id = ? ORDER BY id LIMIT 1",
                         (children[0]["id"],)).fetchone()[0]
    assert first.startswith(COMPACTION_PREFIX)

    compacted = conn.execute("SELECT COUNT(*) FROM messages WHERE active=0 AND compacted=1").fetchone()[0]
    rewound = conn.execute("SELECT COUNT(*) FROM messages WHERE active=0 AND compacted=0").fetchone()[0]
    assert compacted == t["compacted"] > 0
    assert rewound == t["rewound"] > 0
    assert conn.execute("SELECT COUNT(*) FROM sessions WHERE rewind_count > 0").fetchone()[0] >= 1
    # one summary row per rotated child and per in-place compaction (a later compaction may archive one)
    summaries = conn.execute("SELECT SUM(active), COUNT(*) FROM messages WHERE substr(content, 1, ?) = ?",
                             (len(COMPACTION_PREFIX), COMPACTION_PREFIX)).fetchone()
    assert summaries[1] == t["summary_rows"] >= 2 and summaries[0] >= 1
    archived = conn.execute("SELECT COUNT(*) FROM sessions WHERE archived=1 AND source != 'subagent'").fetchone()[0]
    assert archived == t["archived_sessions"] >= 1


def test_fts_finds_planted_terms(synth):
    _, manifest, _, conn = synth
    planted = manifest["planted"]
    assert planted
    langs = set()
    for f in planted:
        table = "messages_fts_trigram" if f["term_kind"] == "zh_term" else "messages_fts"
        hits = {r[0] for r in conn.execute(
            f"SELECT m.session_id FROM {table} JOIN messages m ON m.id = {table}.rowid "
            f"WHERE {table} MATCH ?", ('"' + f["term"] + '"',))}
        assert hits == {f["session_id"]}, f
        langs.add(f["term_kind"])
    assert "zh_term" in langs or any(f["lang"] == "zh" for f in planted)
    # mixed Chinese / English text
    cjk = conn.execute("SELECT COUNT(*) FROM messages WHERE content GLOB '*[一-龥]*'").fetchone()[0]
    assert 100 < cjk < 1900


def test_queries_file(synth):
    _, manifest, queries, _ = synth
    qs = queries["queries"]
    assert 180 <= len(qs) <= 260
    ids = {p["id"] for p in manifest["projects"]}
    kinds = Counter(q["kind"] for q in qs)
    assert {"rare", "question", "common", "keywords", "mixed"} <= set(kinds)
    assert {"en", "zh"} <= {q["lang"] for q in qs}
    for q in qs:
        assert q["text"].strip() and q["projects"] and set(q["projects"]) <= ids
        for pid, _sids in q.get("expect", {}).items():
            assert pid in q["projects"]


def test_deterministic(synth, tmp_path):
    home, manifest, queries, conn = synth
    other = tmp_path / "again"
    _generate(other)

    def project_ids(h: Path) -> dict[str, str]:
        """Hermes' own project id → the project's key: ids are drawn by create_project (random;
        nothing in Hermes is patched), everything else must be identical."""
        m = json.loads((h / "synth_manifest.json").read_text())
        return {p["id"]: f"<{p['key']}>" for p in m["projects"] if p["id"].startswith("p_")}

    def keyed(text: str, h: Path) -> str:
        for pid, key in project_ids(h).items():
            text = text.replace(pid, key)
        return text.replace(str(h), "<HOME>")

    def norm(h: Path) -> str:
        m = json.loads((h / "synth_manifest.json").read_text())
        m.pop("timings"), m.pop("sizes")
        return json.dumps(json.loads(keyed(json.dumps(m), h)), sort_keys=True)  # sorted once keyed

    def digest(c: sqlite3.Connection) -> str:
        h = hashlib.sha256()
        for r in c.execute("SELECT id, session_id, role, content, timestamp, active, compacted, tool_name "
                           "FROM messages ORDER BY id"):
            h.update(repr(tuple(r)).encode())
        return h.hexdigest()

    assert norm(home) == norm(other)
    assert json.loads(keyed((home / "synth_queries.json").read_text(), home)) == json.loads(
        keyed((other / "synth_queries.json").read_text(), other))
    c2 = _ro(other / "state.db")
    try:
        assert digest(conn) == digest(c2)
    finally:
        c2.close()
