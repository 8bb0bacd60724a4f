"""``hermes recall serve`` as a real process, started through Hermes' own CLI entry point."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.e2e.nonebot_proc import REPO_ROOT, free_port, stop_process


class RecallServer:
    """``hermes`` names another Hermes (a clean venv with the plugin as a directory): the repo then
    stays off its path. ``env`` adds to (or, with a None value, removes from) the server's environment;
    by default ``RECALL_API_KEY`` is the key in the environment."""

    def __init__(self, home: Path, key: str, log_path: Path, extra_args: tuple[str, ...] = (),
                 hermes: Path | None = None, env: dict[str, str | None] | None = None,
                 runner: tuple[str, ...] = ()) -> None:
        self.home, self.key, self.log_path = Path(home), key, Path(log_path)
        self.extra_args = tuple(extra_args)
        self.hermes = hermes
        self.extra_env = dict(env or {})
        self.runner = tuple(runner)
        """What comes before ``serve`` (default: ``hermes recall``), e.g. ``python -m hermes_side``."""
        self.port = free_port()
        self._proc: subprocess.Popen[bytes] | None = None

    def environment(self) -> dict[str, str]:
        path = [] if self.hermes else [str(REPO_ROOT)]
        env = dict(os.environ, HERMES_HOME=str(self.home), RECALL_API_KEY=self.key, PYTHONUNBUFFERED="1",
                   PYTHONPATH=os.pathsep.join(filter(None, [*path, os.environ.get("PYTHONPATH", "")])))
        if self.hermes:  # a clean venv: nothing of this repo or its venv on the way
            env.pop("PYTHONPATH", None)
            env.pop("VIRTUAL_ENV", None)
        for name, value in self.extra_env.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        return env

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60) -> None:
        hermes = self.hermes or Path(sys.executable).with_name("hermes")
        with self.log_path.open("ab") as log:
            argv = [*(self.runner or (str(hermes), "recall")), "serve", "--port", str(self.port), *self.extra_args]
            self._proc = subprocess.Popen(argv, env=self.environment(), stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"recall API exited {self._proc.returncode}: {self.log_text()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        self.stop()
        raise TimeoutError(f"recall API did not come up: {self.log_text()[-3000:]}")

    def stop(self, timeout: float = 10) -> None:
        proc, self._proc = self._proc, None
        stop_process(proc, timeout)

    def get(self, path: str) -> dict:
        return httpx.get(self.url + path, headers={"Authorization": f"Bearer {self.key}"}, timeout=10).json()

    def rss_kib(self) -> int:
        """The server process's resident memory now (Linux ``/proc``)."""
        for line in Path(f"/proc/{self._proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def settled_rss_kib(self) -> int:
        """RSS once the server's start-up work (the dictionary warms in a thread) stopped growing it."""
        last = -1
        for _ in range(120):
            now = self.rss_kib()
            if now == last:
                return now
            last = now
            time.sleep(1)
        return last

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""
