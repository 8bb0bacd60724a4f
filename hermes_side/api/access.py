"""Who may read which profile through the recall API: one key, one profile.

- The launch profile (routes at the root, and ``/p/<its own name>``) opens with the key the
  server was started with (``RECALL_API_KEY`` from the environment or that profile's ``.env``).
- Any other profile ``/p/<name>`` is served only when it enabled the plugin in its own
  config.yaml, and opens with the ``RECALL_API_KEY`` of its own ``.env`` — never the launch key,
  unless the operator listed the profile in ``--share-key-with``.
- Every refusal looks the same to the caller (401 ``unauthorized``), so a caller without the right
  key cannot learn which profiles exist; the reason goes to the server log, never a key.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Iterable
from pathlib import Path

from ..host.config import plugin_enabled, read_env
from ..host.profile import Profile, named_profile, profiles_root

log = logging.getLogger(__name__)
MIN_KEY_CHARS = 16
KEY_NAME = "RECALL_API_KEY"


def env_file_key(home: Path) -> str:
    """``RECALL_API_KEY`` from ``home/.env`` only (never this process's environment)."""
    return (read_env(home).get(KEY_NAME) or "").strip()


def usable_key(key: str | None) -> bool:
    return isinstance(key, str) and len(key.strip()) >= MIN_KEY_CHARS


def _same(token: str, key: str) -> bool:
    return usable_key(key) and hmac.compare_digest(token.encode(), key.strip().encode())


class Access:
    def __init__(self, launch: Profile, launch_key: str, share_key_with: Iterable[str] = ()) -> None:
        if not usable_key(launch_key):
            raise ValueError(f"the recall API needs a key of at least {MIN_KEY_CHARS} characters")
        self.launch = launch
        self.root = profiles_root(launch.home)
        self._launch_key = launch_key.strip()
        self.share_key_with = frozenset(share_key_with)

    def _is_launch(self, profile: Profile) -> bool:
        return profile.home.resolve() == self.launch.home.resolve()

    def profile_for(self, name: str | None, token: str) -> Profile | None:
        """The profile ``token`` opens (``name`` None = the launch profile), or None."""
        if name is None:
            return self.launch if _same(token, self._launch_key) else None
        profile = named_profile(self.root, name)
        if profile is None:
            return None
        if self._is_launch(profile):
            return self.launch if _same(token, self._launch_key) else None
        if not profile.home.is_dir():
            log.info("recall API: refused /p/%s: no such profile", name)
            return None
        if not plugin_enabled(profile.home):
            log.info("recall API: refused /p/%s: project-history-recall is not in that profile's plugins.enabled",
                     name)
            return None
        if _same(token, env_file_key(profile.home)):
            return profile
        if name in self.share_key_with and _same(token, self._launch_key):
            return profile
        log.info("recall API: refused /p/%s: wrong key (the profile's own %s in its .env%s)", name, KEY_NAME,
                 ", or the launch key" if name in self.share_key_with else "; the launch key is not shared with it")
        return None
