"""Build hook: take the bot plugin and the licence from the repository root, without symlinks.

The repository keeps one copy of ``nonebot_plugin_history_recall/`` (at the root, beside
``hermes_side/``). Built from a checkout, this hook maps that copy (and ``LICENSE``) into the
sdist and the wheel as real files; built from the sdist, the files are already here and the hook
does nothing. So ``python -m build packaging/nonebot`` (sdist, then the wheel from it), ``pip
install`` of the sdist and ``pip install "…@ git+<repo>#subdirectory=packaging/nonebot"`` all work,
also from a checkout made with ``core.symlinks=false``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PACKAGE = "nonebot_plugin_history_recall"


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        here = Path(self.root)
        repo = here.parent.parent
        if (here / PACKAGE).is_dir():  # an unpacked sdist: everything is in place
            return
        if not (repo / PACKAGE / "__init__.py").is_file():
            raise RuntimeError(f"{PACKAGE}/ is neither here nor at the repository root ({repo})")
        build_data["force_include"][str(repo / PACKAGE)] = PACKAGE
        if self.target_name == "sdist":  # the wheel carries the licence in its metadata instead
            build_data["force_include"][str(repo / "LICENSE")] = "LICENSE"
