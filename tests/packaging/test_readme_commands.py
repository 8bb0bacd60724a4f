"""Every command in README.md and packaging/nonebot/README.md works as written, on a fresh clone.

The commands are extracted from the ```bash blocks (and from a block's "# or …: <command>" lines),
so a README edit is tested by the next run. Each command must match one rule below: the rule says
what stands in for its placeholders (``<bot python>`` is a clean bot venv, ``<repo url>`` a git
repository made of this checkout, ``owner/name/hermes_side`` that repository's ``file://…#hermes_side``
form, which the README names as equivalent) and what must hold after it ran, or why it cannot run
here. A command no rule knows fails the test: a new README line needs its check.

Clean venvs come from tests/packaging/venvs.py (cached in .cache/venvs/); the clone is kept in
.cache/readme-clone/ with its own .venv, so ``bash scripts/demo.sh`` pays its setup once.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.packaging.test_nonebot_wheel import fresh_checkout, requires_dist
from tests.packaging.venvs import CACHE, REPO_ROOT, build_wheel, clean_env, python, run, venv

pytestmark = pytest.mark.packaging

READMES = ("README.md", "packaging/nonebot/README.md")
KEY = "readme-test-recall-key-0123456789"
WHEEL = "dist/nonebot_plugin_history_recall-0.1.0-py3-none-any.whl"


def commands(text: str) -> list[str]:
    """The shell commands of a Markdown text's ```bash blocks, trailing comments cut."""
    found = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.strip()
            alternative = re.match(r"#\s*(?:or|once)\b[^:]*:\s*(.+)$", line)  # "# or straight from git: <cmd>"
            if alternative:
                line = alternative.group(1)
            elif not line or line.startswith("#"):
                continue
            found.append(re.sub(r"\s+#\s.*$", "", line).strip())
    return found


@dataclass
class Rule:
    pattern: str
    where: str = ""  # "stock" (a stock Hermes venv and home), "hermes" (the pip-installed one), "bot",
    # "clone", "serve", "previous" (where the command before it ran)
    skip: str = ""  # why it cannot run here
    expect: str = ""  # text the output must hold


RULES = [
    Rule(r"bash scripts/demo\.sh", "clone", expect="@session:demo-"),  # a result of its search
    Rule(r"bash scripts/test\.sh", skip="this test is one of the steps of scripts/test.sh"),
    Rule(r"hermes plugins install owner/name/hermes_side --enable", "stock", expect="project-history-recall"),
    Rule(r"<hermes python> -m pip install \"project-history-recall @ git\+<repo url>\"", "hermes"),
    Rule(r"hermes plugins enable project-history-recall --no-allow-tool-override", "hermes"),
    Rule(r"hermes recall status", "previous", expect="Seal: closed"),  # the install just made
    Rule(r"hermes recall index", "hermes", expect="Done:"),
    Rule(r"hermes recall serve --share-key-with work,home", "serve"),
    Rule(r"hermes recall forget .*", "hermes"),
    Rule(r"hermes recall search --project \"Shop Backend\" .*", "hermes", expect="A: "),
    Rule(r"hermes recall serve --host 127\.0\.0\.1 --port 8765", "serve"),
    Rule(r"echo \"RECALL_API_KEY=\$\(openssl rand -hex 24\)\" >> ~/\.hermes/\.env",
         skip="it writes the operator's own ~/.hermes/.env; the test's Hermes home gets its key the same way"),
    Rule(r"git clone https://github\.com/project-history-recall/project-history-recall\.git && cd .*",
         skip="the repository is not published yet; the test's clone is made from this checkout"),
    Rule(r"python -m pip install build && python -m build packaging/nonebot --outdir dist", "clone"),
    # The route without network: wheels downloaded where there is network, installed with no index
    # into a bot venv that has nothing yet (the plugin and every dependency from the folder alone).
    Rule(r"pip download -d recall-wheels .*", "clone"),
    Rule(r"<bot python> -m pip install --no-index --find-links recall-wheels nonebot-plugin-history-recall",
         "offline-bot"),
    Rule(r"<bot python> -m pip install .*", "bot"),
    Rule(r"nb plugin install nonebot-plugin-history-recall",
         skip="not listed in the NoneBot store yet; test_nonebot_wheel.py runs the store's checks offline"),
]


def rule_for(command: str) -> Rule | None:
    return next((r for r in RULES if re.fullmatch(r.pattern, command)), None)


def readme_commands() -> list[tuple[str, str]]:
    return [(name, c) for name in READMES for c in commands((REPO_ROOT / name).read_text(encoding="utf-8"))]


def test_every_readme_command_has_a_check():
    listed = readme_commands()
    assert len(listed) >= 15, listed  # the extraction itself works
    assert [c for _, c in listed if rule_for(c) is None] == []


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Readme:
    """The places the README's commands run in, and the substitutions for its placeholders."""

    def __init__(self, tmp: Path) -> None:
        self.clone = self._clone()
        self.url = f"file://{self.clone}"
        self.build_tool = venv("build-tool", ["build"])
        self.stock = venv("hermes-stock", ["hermes-agent==0.19.0"])  # shared with test_hermes_dir_install
        self.hermes = venv("hermes-readme", ["hermes-agent==0.19.0"])
        wheel = build_wheel(REPO_ROOT / "packaging" / "nonebot", tmp / "probe-wheel")
        self.bot = venv("nb-readme", [*requires_dist(wheel), "nonebot2[fastapi]", "nonebot-adapter-onebot"])
        self.offline_bot = tmp / "offline-bot"  # an empty venv: what the offline lines install is all it gets
        run(python(self.build_tool), "-m", "venv", self.offline_bot, env=clean_env())
        self.homes = {"stock": tmp / "stock-home", "hermes": tmp / "hermes-home"}
        for home in self.homes.values():
            home.mkdir()
        # The README's step 1 of the chat-group setup: the key in the profile's .env.
        (self.homes["hermes"] / ".env").write_text(f"RECALL_API_KEY={KEY}\n", encoding="utf-8")
        self.ids = self._history()

    def _clone(self) -> Path:
        """This checkout's tracked files as a fresh clone (and a git repository for ``<repo url>``),
        kept with its .venv between runs."""
        clone = CACHE.parent / "readme-clone"
        clone.mkdir(parents=True, exist_ok=True)
        for entry in clone.iterdir():
            if entry.name != ".venv":
                shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
        tracked = run("git", "ls-files", cwd=REPO_ROOT).stdout.splitlines()
        others = run("git", "ls-files", "--others", "--exclude-standard", cwd=REPO_ROOT).stdout.splitlines()
        for rel in [*tracked, *others]:
            src = REPO_ROOT / rel
            if src.is_file():
                (clone / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, clone / rel)
        fresh_checkout(clone)  # the NoneBot build's files as core.symlinks=false writes them
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
        run(*git, "init", "-q", "-b", "main", cwd=clone)
        run(*git, "add", "-A", cwd=clone)
        run(*git, "commit", "-q", "-m", "readme test", cwd=clone)
        return clone

    def _history(self) -> dict:
        import json

        driver = Path(__file__).with_name("hermes_driver.py")
        out = run(python(self.hermes), driver, "setup", str(self.homes["hermes"].parent / "work"),
                  env=self.env("hermes"), cwd=self.homes["hermes"])
        (line,) = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
        return json.loads(line.removeprefix("RESULT "))

    def env(self, where: str) -> dict[str, str]:
        env = clean_env() | {"GIT_AUTHOR_NAME": "t", "GIT_COMMITTER_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                             "GIT_COMMITTER_EMAIL": "t@example.invalid", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        if where in self.homes:
            bin_dir = python({"stock": self.stock, "hermes": self.hermes}[where]).parent
            env |= {"HERMES_HOME": str(self.homes[where]), "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}"}
        if where == "clone":  # `python` is a Python with nothing of this project (the build tool's venv)
            env["PATH"] = f"{python(self.build_tool).parent}{os.pathsep}{env['PATH']}"
            env.pop("HERMES_HOME", None)
        return env

    def substitute(self, command: str) -> str:
        pairs = {
            "owner/name/hermes_side": f"{self.url}#hermes_side",
            # A URL with a host, as a real <repo url> has: pip refuses "name @ git+file:///path" (no netloc).
            "<repo url>": f"file://localhost{self.clone}",
            "<bot python>": str(python(self.bot)),
            "<hermes python>": str(python(self.hermes)),
            "<id or slug>": "a",  # project "A" of the driver's history
            '"Shop Backend"': '"A"',  # the README's example name: project "A" by its name
            "<id>": self.ids["past"],
            " [--apply]": "",  # the dry run: the README's brackets mark the optional flag
        }
        for old, new in pairs.items():
            command = command.replace(old, new)
        return command

    def sh(self, command: str, where: str) -> subprocess.CompletedProcess[str]:
        if where == "offline-bot":
            command = command.replace(str(python(self.bot)), str(python(self.offline_bot)))
        cwd = self.clone if where in ("clone", "bot", "offline-bot") else self.homes.get(where, self.clone)
        # stdin closed: a prompt (e.g. Hermes' tool-override question) takes its default, as in CI.
        proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=self.env(where), capture_output=True, text=True,
                              timeout=1500, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, (f"{command!r} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n"
                                      f"{proc.stderr[-3000:]}")
        assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
        return proc

    def serve(self, command: str) -> None:
        """A server command: it must come up, answer, log a refused key to its log file, and stop."""
        port = free_port()
        proc = subprocess.Popen(["bash", "-c", f"exec {command} --port {port}"], cwd=self.homes["hermes"],
                                env=self.env("hermes"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 180
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as answer:
                        assert answer.status == 200
                        break
                except OSError:
                    assert proc.poll() is None and time.monotonic() < deadline, "the server did not come up"
                    time.sleep(1)
            request = urllib.request.Request(f"http://127.0.0.1:{port}/projects",
                                             headers={"Authorization": "Bearer wrong-key-0123456789abcdef"})
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=10)
            assert refused.value.code == 401
        finally:
            proc.terminate()
            output = proc.communicate(timeout=60)[0]
        log = (self.homes["hermes"] / "logs" / "recall-api.log").read_text(encoding="utf-8")
        assert "refused GET /projects" in log and "wrong key" in log and "wrong-key-0123" not in log
        assert "refused GET /projects" in output  # the terminal shows it too


def test_every_readme_command_works_on_a_fresh_clone(tmp_path):
    readme = Readme(tmp_path)
    ran, previous = [], ""
    for _, command in readme_commands():
        rule = rule_for(command)
        assert rule is not None, command
        if rule.skip:
            continue
        actual = readme.substitute(command)
        if rule.where == "serve":
            readme.serve(actual)
        else:
            where = previous if rule.where == "previous" else rule.where
            proc = readme.sh(actual, where)
            assert rule.expect in proc.stdout + proc.stderr, (command, where, proc.stdout[-2000:])
            previous = where
        ran.append(command)
    assert len(ran) >= 12, ran
    # What the NoneBot lines promise: the wheel in dist/, installed with every setting beside it.
    assert (readme.clone / WHEEL).is_file()
    where = run(python(readme.bot), "-c", "import importlib.util as u, pathlib; p = u.find_spec("
                "'nonebot_plugin_history_recall').origin; print(pathlib.Path(p).with_name('.env.example').read_text())",
                env=clean_env(), cwd="/")
    assert "HISTORY_RECALL_FORGET_CONFIRM_SECONDS" in where.stdout
    # The plugin and its dependencies came from the wheel folder alone (importing the plugin needs a
    # running NoneBot: test_nonebot_wheel.py loads it; here its pieces import).
    run(python(readme.offline_bot), "-c", "import importlib.util as u, nonebot, pydantic_core, httpx; assert all("
        "u.find_spec(m) for m in ('nonebot_plugin_history_recall', 'nonebot_plugin_alconna', "
        "'nonebot_plugin_localstore', 'nonebot_plugin_uninfo'))", env=clean_env(), cwd="/")
