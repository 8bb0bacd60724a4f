"""The fault steps of ``python -m benchmarks faults``: kill -9 at each write step, a full disk on a
small tmpfs, damaged and missing files — each checked for what a user would notice (answers,
leaked forgotten turns, consistency) and followed by the recovery the status names.
Everything runs against real ``hermes recall serve`` processes and the real CLI, on loopback."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.nonebot_proc import REPO_ROOT
from tests.e2e.recall_proc import RecallServer

KEY = "bench-faults-key-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}
ENDPOINT_WRITES = ("PUT binding", "DELETE binding", "POST /move", "POST /forget", "PUT optout", "PUT recall")


# -- processes ---------------------------------------------------------------------------------
class Api:
    def __init__(self, home: Path, log: Path) -> None:
        self.server = RecallServer(home, KEY, log)
        self.server.start(timeout=120)
        self.client = httpx.Client(base_url=self.server.url, headers=AUTH, timeout=120)

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        try:
            r = self.client.request(method, path, json=body)
        except httpx.HTTPError as exc:
            return 0, {"error": f"{type(exc).__name__}"}
        try:
            return r.status_code, r.json()
        except ValueError:
            return r.status_code, {"error": r.text[:200]}

    def kill9(self) -> None:
        os.kill(self.server._proc.pid, signal.SIGKILL)  # noqa: SLF001 — the benchmark's own child
        self.server._proc.wait(30)  # noqa: SLF001
        self.client.close()

    def stop(self) -> None:
        self.client.close()
        self.server.stop()


def hermes(home: Path, *argv: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("hermes")
    env = dict(os.environ, HERMES_HOME=str(home),
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])))
    return subprocess.run([str(exe), "recall", *argv], env=env, capture_output=True, text=True, timeout=timeout)


def copy_home(src: Path, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest, symlinks=True)
    return dest


def plugin(home: Path) -> Path:
    return home / "project-history-recall"


def query(path: Path, sql: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def forgotten_ids(home: Path) -> set[int]:
    path = plugin(home) / "forgotten.db"
    return {r[0] for r in query(path, "SELECT message_id FROM forgotten")} if path.exists() else set()


def result_ids(body: dict) -> set[int]:
    ids = set()
    for row in body.get("results") or []:
        ids.add(row.get("message_id"))
        ids.update(m.get("message_id") for m in row.get("more") or [])
        if isinstance(row.get("answer"), dict):
            ids.add(row["answer"].get("message_id"))
    return {i for i in ids if isinstance(i, int)}


# -- kill -9 at each write step ----------------------------------------------------------------
def _places(home: Path, sessions: list[str]) -> set[str]:
    rows = query(home / "state.db", "SELECT DISTINCT coalesce(cwd, '') FROM sessions WHERE id IN (SELECT value FROM "
                 "json_each(?))", (json.dumps(sessions),))
    return {r[0] for r in rows}


def _rows(home: Path) -> int:
    return query(home / "state.db", "SELECT count(*) FROM messages")[0][0]


def kill_move(home: Path, manifest: dict, log: Path, rng: random.Random) -> dict[str, Any]:
    """kill -9 the server while it moves a chat; consistent when after the restart every session of
    the chat is in one place, the chat is bound there, and no message was lost or doubled."""
    chat = rng.choice(sorted(manifest["chats"]))
    info = manifest["chats"][chat]
    target = next(p for p in manifest["projects"] if p != info["project"])
    rows = _rows(home)
    api = Api(home, log)
    threading.Thread(target=api.call, args=("POST", "/move", {"chat": chat, "project": target}), daemon=True).start()
    time.sleep(rng.uniform(0.0, 0.4))
    api.kill9()
    journals = len(list((plugin(home) / "moves").glob("*.json")))
    api = Api(home, log)  # the restart finishes an interrupted move before it serves
    try:
        status, binding = api.call("GET", f"/chats/{chat}/binding")
    finally:
        api.stop()
    places = _places(home, info["sessions"])
    bound = (binding.get("project") or {}).get("id")
    folder = query(home / "projects.db", "SELECT primary_path FROM projects WHERE id = ?", (bound,)) if bound else []
    consistent = (len(places) == 1 and status == 200 and _rows(home) == rows
                  and (not folder or places == {folder[0][0]}))
    return {"consistent": consistent, "recovery": f"restart finished {journals} journaled move(s)" if journals
            else "nothing to finish"}


def kill_forget(home: Path, manifest: dict, log: Path, rng: random.Random) -> dict[str, Any]:
    """kill -9 the server while it applies a forget: the receipt and its turns are all there or none."""
    chat = rng.choice(sorted(manifest["chats"]))
    user = str(10000 + rng.randrange(4))
    before_ids, before_receipts = forgotten_ids(home), _receipts(home)
    api = Api(home, log)
    status, plan = api.call("POST", "/forget", {"chat": chat, "scope": "member", "user": user})
    threading.Thread(target=api.call, args=("POST", "/forget", {"chat": chat, "scope": "member", "user": user,
                                                                "apply": True}), daemon=True).start()
    time.sleep(rng.uniform(0.0, 0.3))
    api.kill9()
    after_ids, after_receipts = forgotten_ids(home), _receipts(home)
    api = Api(home, log)
    try:
        st_code, st = api.call("GET", "/status")
    finally:
        api.stop()
    added = after_ids - before_ids
    whole = (after_receipts == before_receipts and not added) or (
        after_receipts == before_receipts + 1 and len(added) == plan.get("messages", -1))
    left = _vectors_of(home, added)
    return {"consistent": whole and st_code == 200 and not st.get("stores"),
            "recovery": "none needed" + (f"; {left} vector(s) of forgotten turns left at rest" if left else "")}


def _receipts(home: Path) -> int:
    path = plugin(home) / "forgotten.db"
    return query(path, "SELECT count(*) FROM receipts")[0][0] if path.exists() else 0


def _vectors_of(home: Path, ids: set[int]) -> int:
    path = plugin(home) / "embeddings.db"
    if not ids or not path.exists():
        return 0
    return query(path, "SELECT count(*) FROM chunks WHERE message_id IN (SELECT value FROM json_each(?))",
                 (json.dumps(sorted(ids)),))[0][0]


def kill_indexer(home: Path, manifest: dict, log: Path, rng: random.Random) -> dict[str, Any]:
    """kill -9 ``hermes recall index`` half-way through new messages; the next run ends with every
    message indexed once."""
    from hermes_state import SessionDB

    sid = f"bench-indexer-{rng.randrange(10**9)}"
    db = SessionDB(db_path=home / "state.db")
    try:
        db.create_session(sid, "cli", cwd=str(next(iter(manifest["folders"]))))
        for i in range(300):
            db.append_message(sid, ("user", "assistant")[i % 2], f"indexer step {i}: the canary rollout note {i}")
    finally:
        db.close()
    exe = Path(sys.executable).with_name("hermes")
    env = dict(os.environ, HERMES_HOME=str(home),
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])))
    proc = subprocess.Popen([str(exe), "recall", "index"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    time.sleep(rng.uniform(4.0, 9.0))
    proc.kill()
    proc.wait(30)
    done = hermes(home, "index")
    chunks = query(plugin(home) / "embeddings.db", "SELECT count(*), count(DISTINCT message_id) FROM chunks WHERE "
                   "session_id = ?", (sid,))[0]
    return {"consistent": done.returncode == 0 and chunks[1] == 300 and chunks[0] == 300,
            "recovery": "the next `hermes recall index` resumed"}


def kill_under_load(home: Path, manifest: dict, log: Path, rng: random.Random) -> dict[str, Any]:
    """kill -9 the server while eight clients search; it restarts and answers."""
    api = Api(home, log)
    stop = threading.Event()
    chats = sorted(manifest["chats"])

    def client() -> None:
        with httpx.Client(base_url=api.server.url, headers=AUTH, timeout=30) as c:
            while not stop.is_set():
                try:
                    c.post("/search", json={"query": rng.choice(manifest["words"]["en"]), "chat": rng.choice(chats),
                                            "mode": "keyword"})
                except httpx.HTTPError:
                    return

    threads = [threading.Thread(target=client, daemon=True) for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(rng.uniform(1.0, 3.0))
    api.kill9()
    stop.set()
    api = Api(home, log)
    try:
        search = api.call("POST", "/search", {"query": "deploy", "chat": chats[0], "mode": "keyword"})[0]
        status, st = api.call("GET", "/status")
    finally:
        api.stop()
    return {"consistent": search == 200 and status == 200 and not st.get("stores"), "recovery": "restart"}


# step → (its function, the world it runs on): the indexer on the world indexed by the real model
# (a random vector's content hash would make it embed every message again).
KILLS = {"server in /move": (kill_move, "big"), "server in /forget": (kill_forget, "big"),
         "indexer": (kill_indexer, "small"), "server under load": (kill_under_load, "big")}


# -- a full disk on a small tmpfs ----------------------------------------------------------------
def mount_tmpfs(path: Path, megabytes: int) -> str | None:
    path.mkdir(parents=True, exist_ok=True)
    if os.name != "posix" or os.geteuid() != 0:
        return "needs root"
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(path)],
                          capture_output=True, text=True)
    return None if done.returncode == 0 else done.stderr.strip()


def fill(disk: Path) -> Path:
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as fh:
        for size in (1 << 20, 4096, 512):
            try:
                while True:
                    fh.write(b"\0" * size)
            except OSError:
                pass
    return filler


def writes(manifest: dict) -> list[tuple[str, str, str, dict | None]]:
    chat = sorted(manifest["chats"])[0]
    other = next(p for p in manifest["projects"] if p != manifest["chats"][chat]["project"])
    return [("PUT binding", "PUT", f"/chats/{chat}/binding", {"project": other}),
            ("DELETE binding", "DELETE", f"/chats/{chat}/binding", None),
            ("POST /move", "POST", "/move", {"chat": chat, "project": other}),
            ("POST /forget", "POST", "/forget", {"chat": chat, "scope": "member", "user": "10001", "apply": True}),
            ("PUT optout", "PUT", f"/chats/{chat}/members/10002/optout", {"opted_out": True}),
            ("PUT recall", "PUT", f"/chats/{chat}/recall", {"enabled": False}),
            ("POST /search", "POST", "/search", {"query": "deploy", "chat": chat, "mode": "keyword"}),
            ("GET binding", "GET", f"/chats/{chat}/binding", None),
            ("GET /status", "GET", "/status", None)]


def full_disk(base: Path, manifest: dict, root: Path) -> dict[str, Any]:
    """The profile on a tmpfs a few MB bigger than itself, filled to the last byte while the server
    runs: every endpoint's answer, the CLI's, whether anything was half-written, and whether the
    writes work once space is freed (the recovery the answers name)."""
    disk = root / "disk"
    size = sum(f.stat().st_size for f in base.rglob("*") if f.is_file()) // (1 << 20) + 16
    problem = mount_tmpfs(disk, size)
    if problem:
        return {"skipped": f"cannot mount a tmpfs ({problem})"}
    try:
        home = copy_home(base, disk / "home")
        chat = sorted(manifest["chats"])[0]
        before = (_rows(home), _receipts(home), _places(home, manifest["chats"][chat]["sessions"]))
        api = Api(home, root / "disk.log")
        try:
            api.call("POST", "/search", {"query": "deploy", "chat": chat, "mode": "keyword"})
            filler = fill(disk)
            answers = {name: api.call(method, path, body) for name, method, path, body in writes(manifest)}
            index = hermes(home, "index", timeout=300)
            filler.unlink()
            after = (_rows(home), _receipts(home), _places(home, manifest["chats"][chat]["sessions"]))
            changed = [name for name, (code, _) in answers.items() if code == 200 and name in ENDPOINT_WRITES]
            retry = api.call("PUT", f"/chats/{chat}/members/10003/optout", {"opted_out": True})[0]
        finally:
            api.stop()
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)
    err = index.stderr
    return {"size_mb": size, "answers": {k: (c, b.get("error", "ok")) for k, (c, b) in answers.items()},
            "cli_index": {"exit": index.returncode, "traceback": "Traceback" in err.split("Plugin discovery")[-1],
                          "last": (err.strip().splitlines() or [""])[-1][:160]},
            "half_written": before != after and not changed, "writes_after_freeing": retry}


# -- damaged and missing files -------------------------------------------------------------------
def _garbage(path: Path, at: float, size: int = 4096) -> None:
    data = bytearray(path.read_bytes())
    start = max(0, min(len(data) - size, int(len(data) * at)))
    data[start:start + size] = (b"\xde\xad\xbe\xef" * (size // 4 + 1))[:size]
    path.write_bytes(bytes(data))


def _delete(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


DAMAGES: dict[str, tuple[str, Any]] = {
    "forgotten.db deleted": ("forgotten.db", _delete),
    "forgotten.db emptied": ("forgotten.db", lambda p: (_delete(p), p.write_bytes(b""))),
    "forgotten.db older copy": ("forgotten.db", None),  # restored from before the last forget
    "forgotten.db garbage header": ("forgotten.db", lambda p: _garbage(p, 0.0, 100)),
    "bindings.db deleted": ("bindings.db", _delete),
    "bindings.db garbage header": ("bindings.db", lambda p: _garbage(p, 0.0, 100)),
    "embeddings.db garbage mid-file": ("embeddings.db", lambda p: _garbage(p, 0.5, 16384)),
}


def recovery_of(home: Path, status: dict) -> str:
    """The recovery the operator is told: the status's store entry, else the CLI's first next step."""
    for entry in status.get("stores") or []:
        return entry["recovery"]
    done = hermes(home, "status")
    steps = done.stdout.split("Next:")[-1].strip().splitlines() if "Next:" in done.stdout else []
    return next((s.strip() for s in steps if "hermes recall" in s), "(none named)")


def run_recovery(home: Path, backup: Path, file: str, text: str) -> str:
    if "backup" in text and (backup / file).exists():
        _delete(plugin(home) / file)
        shutil.copy2(backup / file, plugin(home) / file)
        return f"restored {file} from the backup"
    command = re.search(r"`?(hermes recall [^`#;]*?)`?\s*(?:#|;|\(|$)", text)
    if not command:
        return "nothing to run"
    argv = command.group(1).split()[2:]
    done = hermes(home, *argv)
    return f"`{command.group(1).strip()}` exit {done.returncode}"


def damaged(base: Path, manifest: dict, root: Path, searches: int) -> list[dict[str, Any]]:
    """Each fault on a fresh copy: ``searches`` searches of the chat whose members forgot turns, half
    before and half after an operator asks /status (how many forgotten turns come back; what semantic
    says after the status, beside what the status says), then the recovery the status names, and
    whether search works again without a forgotten turn."""
    chat, forgotten = manifest["forgot"]["chat"], set(manifest["forgot"]["ids"])
    words = manifest["words"]["en"] + manifest["words"]["zh"]
    out = []
    for name, (file, spoil) in DAMAGES.items():
        home = copy_home(base, root / "damaged")
        backup = root / "backup"
        copy_home(plugin(home), backup)
        path = plugin(home) / file
        if spoil is None:
            shutil.copy2(base.parent / "forgotten-older.db", path)
        api = Api(home, root / "damage.log")
        try:
            api.call("POST", "/search", {"query": "deploy", "chat": chat, "mode": "hybrid"})  # warm, as in service
            if spoil is not None:
                spoil(path)
            first = _probe(api, chat, words, forgotten, searches // 2)  # before anyone asked /status
            _, status = api.call("GET", "/status")
            row = _probe(api, chat, words[searches // 2:] + words, forgotten, searches - searches // 2)
            row.update(fault=name, leaked=first["leaked"] + row["leaked"], answers={
                k: first["answers"].get(k, 0) + row["answers"].get(k, 0) for k in {*first["answers"], *row["answers"]}})
            row["status_names_file"] = file in json.dumps(status)
            row["status_semantic"] = (status.get("semantic") or {}).get("status")
            text = recovery_of(home, status)
            row["recovery"] = run_recovery(home, backup, file, text)
            after = _probe(api, chat, words, forgotten, 6)
        finally:
            api.stop()
        row["recovered"] = after["answered"] == 6 and not after["leaked"] and after["semantic"] != {"unavailable"}
        out.append(row)
    return out


def _probe(api: Api, chat: str, words: list[str], forgotten: set[int], n: int) -> dict[str, Any]:
    codes: dict[int, int] = {}
    leaked: set[int] = set()
    semantic: set[str] = set()
    for i in range(n):
        text = f"{words[i % len(words)]} {words[(i * 7 + 3) % len(words)]}"
        status, body = api.call("POST", "/search", {"query": text, "chat": chat, "mode": "hybrid", "limit": 10})
        codes[status] = codes.get(status, 0) + 1
        leaked |= result_ids(body) & forgotten
        if status == 200:
            semantic.add(body.get("semantic_status", "?"))
    return {"answers": codes, "answered": codes.get(200, 0), "leaked": len(leaked), "semantic": semantic}
