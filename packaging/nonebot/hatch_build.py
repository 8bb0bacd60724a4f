"""Build hook: take the bot plugin, the licence and ``.env.example`` from the repository root, without
symlinks.

The repository keeps one copy of ``nonebot_plugin_history_recall/`` (at the root, beside
``hermes_side/``). Built from a checkout, this hook maps that copy (and ``LICENSE`` and
``.env.example``) into the sdist and the wheel as real files; built from the sdist, they are
already there. The wheel also carries ``.env.example`` inside the package, so an operator who
installed from PyPI has every setting at hand. So ``python -m build packaging/nonebot`` (sdist,
then the wheel from it), ``pip install`` of the sdist and ``pip install "…@
git+<repo>#subdirectory=packaging/nonebot"`` all work, also from a checkout made with
``core.symlinks=false``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PACKAGE = "nonebot_plugin_history_recall"
ENV_EXAMPLE = ".env.example"  # every setting of both sides, the repository's one copy


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        here = Path(self.root)
        repo = here.parent.parent
        unpacked_sdist = (here / PACKAGE).is_dir()  # everything is in place already
        source = here if unpacked_sdist else repo
        if not unpacked_sdist:
            if not (repo / PACKAGE / "__init__.py").is_file():
                raise RuntimeError(f"{PACKAGE}/ is neither here nor at the repository root ({repo})")
            build_data["force_include"][str(repo / PACKAGE)] = PACKAGE
        if self.target_name == "sdist":
            if not unpacked_sdist:  # the wheel carries the licence in its metadata instead
                build_data["force_include"][str(repo / "LICENSE")] = "LICENSE"
                build_data["force_include"][str(repo / ENV_EXAMPLE)] = ENV_EXAMPLE
        else:  # every setting, documented, beside the code: <site-packages>/nonebot_plugin_history_recall/.env.example
            build_data["force_include"][str(source / ENV_EXAMPLE)] = f"{PACKAGE}/{ENV_EXAMPLE}"
