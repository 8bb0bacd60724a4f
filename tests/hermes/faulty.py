"""Real faults for tests: a small tmpfs that fills up or goes read-only, garbage in a file, a real
``hermes recall …`` command and a real recall API process over a profile with forgotten turns.

Mounting needs root with CAP_SYS_ADMIN (CI runs as root on a machine like the development one);
elsewhere the tests that need it are skipped with the reason. ``chmod`` cannot make a folder
read-only for root, so "read-only" is a read-only remount of the tmpfs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.e2e.nonebot_proc import REPO_ROOT
from tests.e2e.recall_proc import RecallServer

KEY = "faults-test-key-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}
G111 = "onebotv11:111"
M2 = "hermes-onebotv11+group+111+10002"
M3 = "hermes-onebotv11+group+111+10003"
SECRET = "my staging password is marmalade-seven, keep it"
KEPT = "the marmalade migration runs on friday with a canary"


def _mount(*args: str) -> str | None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    return None if done.returncode == 0 else (done.stderr.strip() or f"mount exited {done.returncode}")


@contextmanager
def tmpfs(path: Path, size: str = "24m") -> Iterator[Path]:
    """A fresh tmpfs of ``size`` at ``path`` for the duration; skips the test where it cannot be mounted."""
    path.mkdir(parents=True, exist_ok=True)
    if os.name != "posix" or os.geteuid() != 0:
        pytest.skip("a small tmpfs (full disk, read-only remount) needs root; CI runs these as root")
    problem = _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path))
    if problem:
        pytest.skip(f"cannot mount a tmpfs here ({problem}); CI runs these as root with CAP_SYS_ADMIN")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def settle(home: Path) -> None:
    """Checkpoint and truncate the WAL of recall's own stores. A WAL keeps the space it grew to, and
    a write that fits in it succeeds on a full disk (rightly); after this every write needs new space."""
    import sqlite3

    for db in (home / "project-history-recall").glob("*.db"):
        conn = sqlite3.connect(db)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()


def fill(disk: Path) -> Path:
    """Fill ``disk`` to the last byte; returns the filler (delete it to free the space again)."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as fh:  # unbuffered: nothing left to flush at close
        try:
            while True:
                fh.write(b"\0" * (256 * 1024))
        except OSError:
            pass
        try:
            while True:  # the last partial block too
                fh.write(b"\0" * 512)
        except OSError:
            pass
    return filler


def remount(disk: Path, mode: str) -> None:
    problem = _mount("-o", f"remount,{mode}", str(disk))
    if problem:
        pytest.skip(f"cannot remount the tmpfs {mode} ({problem})")


def garbage(path: Path, at: float = 0.5, size: int = 4096) -> None:
    """Overwrite ``size`` bytes at ``at`` (a fraction of the file) with garbage, as a bad copy would."""
    data = bytearray(path.read_bytes())
    start = max(0, min(len(data) - size, int(len(data) * at)))
    data[start:start + size] = (b"\xde\xad\xbe\xef" * (size // 4 + 1))[:size]
    path.write_bytes(bytes(data))


def hermes(home: Path, *argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``hermes recall …`` as the operator runs it, through Hermes' own CLI entry point."""
    exe = Path(sys.executable).with_name("hermes")
    env = dict(os.environ, HERMES_HOME=str(home),
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])))
    return subprocess.run([str(exe), "recall", *argv], env=env, capture_output=True, text=True, timeout=timeout)


def own_stderr(stderr: str) -> str:
    """A command's stderr without Hermes' own "--- Logging error ---" reports: on a full disk Hermes'
    log file cannot be written either, and Python's logging says so for the lines Hermes logs while
    it starts, before a recall command runs (the command then turns such reports off)."""
    kept, skipping = [], False
    for line in stderr.splitlines():
        if line.startswith("--- Logging error ---"):
            skipping = True
        elif skipping and line.startswith("Arguments:"):
            skipping = False
            continue
        if not skipping:
            kept.append(line)
    return "\n".join(kept)


def group_world(world) -> dict[str, str]:
    """Group 111 bound to Alpha; member 10002 said a secret and forgot it (a real receipt, written
    as the API writes it), member 10003's words stay. Returns the project id."""
    from hermes_side.actions import forget
    from hermes_side.stores import bindings

    alpha = world.folder("alpha")
    pid = world.project("Alpha", alpha)
    bindings.set_binding(world.home, G111, pid)
    t0 = time.time() - 3600
    world.session(("user", SECRET), ("assistant", "Noted: marmalade-seven for staging."),
                  source="api_server", sid=M2, cwd=alpha, ts=t0)
    world.session(("user", KEPT), ("assistant", "Friday canary for the marmalade migration, got it."),
                  source="api_server", sid=M3, cwd=alpha, ts=t0 + 100)
    (world.home / "config.yaml").write_text("plugins:\n  enabled: [project-history-recall]\n")
    plan = forget.plan_member(world.home, G111, "10002")
    forget.apply(world.home, plan, actor="onebotv11:10002", surface="api")
    return {"alpha": pid}


class Api:
    """A real ``hermes recall serve`` with the test key, and its answers as (status, body)."""

    def __init__(self, home: Path, log: Path) -> None:
        self.server = RecallServer(home, KEY, log)
        self.server.start()

    def call(self, method: str, path: str, body: dict | None = None, timeout: float = 120) -> tuple[int, dict]:
        r = httpx.request(method, self.server.url + path, json=body, headers=AUTH, timeout=timeout)
        return r.status_code, r.json()

    def search(self, query: str = "marmalade", mode: str = "keyword", chat: str = G111) -> tuple[int, dict]:
        return self.call("POST", "/search", {"query": query, "chat": chat, "mode": mode, "limit": 10})

    def stop(self) -> None:
        self.server.stop()


@contextmanager
def api(home: Path, log: Path) -> Iterator[Api]:
    server = Api(home, log)
    try:
        yield server
    finally:
        server.stop()


def texts(body: dict) -> str:
    return repr(body).replace(">>>", "").replace("<<<", "").lower()


def build_apart(home: Path, work: Path) -> dict[str, str]:
    """:func:`group_world` (and a Beta project) built by a process of its own, so this one holds no
    file of the profile open (a file system with writers cannot be remounted read-only)."""
    import json

    env = dict(os.environ, HERMES_HOME=str(home),
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])))
    done = subprocess.run([sys.executable, "-m", "tests.hermes.faulty", str(home), str(work)], env=env,
                          capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    import json

    from tests.hermes.world import World

    built = World(Path(sys.argv[1]), Path(sys.argv[2]))
    try:
        ids = group_world(built)
        ids["beta"] = built.project("Beta", built.folder("beta"))
    finally:
        built.close()
    print(json.dumps(ids))
