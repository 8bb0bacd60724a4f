"""Which Hermes profile this is, and where its files live — the one answer every surface uses.

The agent tool, the ``pre_llm_call`` hook, ``hermes [-p NAME] recall …``, the recall API (which
serves several profiles from one process) and the embedding consent records all ask
:func:`profile_at` (or :func:`current_profile`), so a consent granted through one surface is the
consent every other surface reads.

The profile *name* is a function of the home path alone, never of the process that asks:
``<root>/profiles/<name>`` is ``name``, any other home is ``default``. That is what Hermes'
``get_active_profile_name`` answers for ``~/.hermes``, ``~/.hermes/profiles/<name>`` and a custom
``HERMES_HOME`` root (``/opt/data``), and unlike that function it does not depend on the
process's ``HERMES_HOME`` — a recall API launched in one profile computes the same name for
``/p/work`` as ``hermes -p work`` does for itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

PLUGIN_KEY = "project-history-recall"  # plugins.enabled entry and our data folder's name
PROFILE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")  # Hermes' own profile id rule
DEFAULT = "default"


@dataclass(frozen=True)
class Profile:
    name: str
    home: Path

    @property
    def plugin_dir(self) -> Path:
        """Everything the plugin writes lives here (embeddings, bindings, consent)."""
        return self.home / PLUGIN_KEY

    @property
    def state_db(self) -> Path:
        return self.home / "state.db"

    @property
    def projects_db(self) -> Path:
        return self.home / "projects.db"

    @property
    def config_file(self) -> Path:
        return self.home / "config.yaml"

    @property
    def env_file(self) -> Path:
        return self.home / ".env"

    @property
    def embeddings_db(self) -> Path:
        return self.plugin_dir / "embeddings.db"

    @property
    def bindings_db(self) -> Path:
        return self.plugin_dir / "bindings.db"

    @property
    def forgotten_db(self) -> Path:
        """What was taken out of recall, and the audit trail of who did it (stores/forgotten.py)."""
        return self.plugin_dir / "forgotten.db"

    @property
    def consent_file(self) -> Path:
        return self.plugin_dir / "consent.json"


def profile_name(home: Path | str) -> str:
    home = Path(home)
    if home.parent.name == "profiles" and PROFILE_NAME.match(home.name):
        return home.name
    return DEFAULT


def profile_at(home: Path | str) -> Profile:
    home = Path(home)
    return Profile(profile_name(home), home)


def current_profile() -> Profile:
    """The profile this Hermes code runs in: ``get_hermes_home()`` follows ``hermes -p NAME``
    (it sets ``HERMES_HOME`` before anything is imported) and Hermes' per-request home override
    in a multiplexed gateway, so it is resolved on every call, never cached."""
    from hermes_constants import get_hermes_home

    return profile_at(get_hermes_home())


def profiles_root(home: Path | str) -> Path:
    """The folder holding ``profiles/``: ``~/.hermes`` for ``~/.hermes`` and for
    ``~/.hermes/profiles/<name>``; a custom ``HERMES_HOME`` is its own root."""
    home = Path(home)
    return home.parent.parent if home.parent.name == "profiles" else home


def named_profile(root: Path | str, name: str) -> Profile | None:
    """The profile called ``name`` under ``root``, or None for a name that is not a valid
    profile id (so ``..`` or ``a/b`` can never pick a folder)."""
    if not isinstance(name, str) or not PROFILE_NAME.match(name):
        return None
    root = Path(root)
    return Profile(name, root if name == DEFAULT else root / "profiles" / name)
