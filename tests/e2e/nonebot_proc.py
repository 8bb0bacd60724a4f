"""Run a real NoneBot process (fastapi driver + OneBot v11 adapter + our plugin) for e2e tests.

    with NoneBotProcess(tmp_path, env={"HISTORY_RECALL_API_URL": url}) as proc:
        ... connect a FakeOneBot to proc.ws_url with proc.access_token ...

The process runs in its own temp dir (so no stray ``.env`` is read; ``ENVIRONMENT=e2e``), on a
free port, with localstore dirs under that dir. ``start`` returns once the port accepts
connections, which uvicorn only does after the startup hooks ran. ``stop`` ends exactly this
process by its PID. The bot's log is in ``proc.log_path`` (``proc.log_text()``) for failure output.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

BOT_SCRIPT = """\
import nonebot
from nonebot.adapters.onebot.v11 import Adapter as OneBotV11Adapter

nonebot.init()
nonebot.get_driver().register_adapter(OneBotV11Adapter)
for name in {plugins!r}:
    nonebot.load_plugin(name)

if __name__ == "__main__":
    nonebot.run()
"""

# The repo root goes first on the child's PYTHONPATH. With a setuptools editable install the
# package is otherwise found only through setuptools' own import hook, which NoneBot's plugin
# finder does not consult: the module then imports, but "is not loaded as a plugin".
REPO_ROOT = Path(__file__).resolve().parents[2]

# Settings of a parent environment that must not leak into the bot under test.
_SCRUBBED_PREFIXES = ("HISTORY_RECALL_", "ONEBOT_", "LOCALSTORE_", "ALCONNA_")
_SCRUBBED_NAMES = {"DRIVER", "HOST", "PORT", "ENVIRONMENT", "COMMAND_START", "COMMAND_SEP", "LOG_LEVEL", "SUPERUSERS"}


def free_port() -> int:
    """A TCP port nothing listens on right now (also handy as a 'server is down' address)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop_process(proc: subprocess.Popen | None, timeout: float = 10) -> None:
    """SIGTERM a child (by PID), then SIGKILL if it does not exit in ``timeout``."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout)


class NoneBotProcess:
    def __init__(
        self,
        workdir: Path,
        env: dict[str, str] | None = None,
        access_token: str = "e2e-onebot-token",
        plugins: tuple[str, ...] = ("nonebot_plugin_history_recall",),
        log_level: str = "DEBUG",
        python: str | None = None,
    ) -> None:
        # ``python``: another interpreter (a clean venv with the built wheel); the repo root then
        # stays off its PYTHONPATH so the plugin can only come from that venv.
        self.python = python
        self.workdir = Path(workdir)
        self.extra_env = dict(env or {})
        self.access_token = access_token
        self.plugins = plugins
        self.log_level = log_level
        self.port = free_port()
        self.log_path = self.workdir / "nonebot.log"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/onebot/v11/ws"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def environment(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(_SCRUBBED_PREFIXES) and key not in _SCRUBBED_NAMES
        }
        no_proxy = ",".join(filter(None, [env.get("NO_PROXY", ""), "127.0.0.1", "localhost"]))
        store = self.workdir / "localstore"
        env.update(
            {
                "DRIVER": "~fastapi",
                "HOST": "127.0.0.1",
                "PORT": str(self.port),
                "ENVIRONMENT": "e2e",
                "LOG_LEVEL": self.log_level,
                "ONEBOT_ACCESS_TOKEN": self.access_token,
                "COMMAND_START": json.dumps(["/"]),
                "LOCALSTORE_DATA_DIR": str(store / "data"),
                "LOCALSTORE_CACHE_DIR": str(store / "cache"),
                "LOCALSTORE_CONFIG_DIR": str(store / "config"),
                "PYTHONUNBUFFERED": "1",
                "PYTHONPATH": "" if self.python else os.pathsep.join(filter(None, [str(REPO_ROOT),
                                                                                   env.get("PYTHONPATH", "")])),
                "NO_PROXY": no_proxy,
                "no_proxy": no_proxy,
            }
        )
        env.update(self.extra_env)
        return env

    def start(self, timeout: float = 120) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        script = self.workdir / "bot.py"
        script.write_text(BOT_SCRIPT.format(plugins=list(self.plugins)), encoding="utf-8")
        with self.log_path.open("wb") as log:
            self._proc = subprocess.Popen(
                [self.python or sys.executable, str(script)],
                cwd=self.workdir,
                env=self.environment(),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self._wait_for_port(timeout)
        self._check_plugins_loaded()

    def _wait_for_port(self, timeout: float) -> None:
        assert self._proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"NoneBot exited with {self._proc.returncode}:\n{self.log_text()[-4000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise TimeoutError(f"NoneBot did not listen on {self.port} within {timeout}s:\n{self.log_text()[-4000:]}")

    def _check_plugins_loaded(self) -> None:
        log = self.log_text()
        missing = [name for name in self.plugins if f'Succeeded to load plugin "{name}"' not in log]
        if missing:
            self.stop()
            raise RuntimeError(f"NoneBot did not load {missing} as plugins:\n{self.log_text()[-4000:]}")

    def stop(self, timeout: float = 10) -> None:
        proc, self._proc = self._proc, None
        stop_process(proc, timeout)

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""

    def __enter__(self) -> NoneBotProcess:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
