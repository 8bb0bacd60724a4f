"""Who may read which profile through the recall API: one key, one profile.

- The launch profile (routes at the root, and ``/p/<its own name>``) opens with the key the
  server was started with (``RECALL_API_KEY`` from that profile's ``.env``, else the environment).
- Any other profile ``/p/<name>`` is served only when it enabled the plugin in its own
  config.yaml, and opens with the ``RECALL_API_KEY`` of its own ``.env`` — never the launch key,
  unless the operator listed the profile in ``--share-key-with``.
- Every refusal looks the same to the caller (401 ``unauthorized``), so a caller without the right
  key cannot learn which profiles exist; the reason goes to the server log, never a key.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from pathlib import Path

from ..host.config import plugin_enabled, read_env
from ..host.profile import Profile, named_profile, profile_at, profiles_root

MIN_KEY_CHARS = 16
KEY_NAME = "RECALL_API_KEY"


def env_file_key(home: Path) -> str:
    """``RECALL_API_KEY`` from ``home/.env`` only (never this process's environment)."""
    return (read_env(home).get(KEY_NAME) or "").strip()


def usable_key(key: str | None) -> bool:
    return isinstance(key, str) and len(key.strip()) >= MIN_KEY_CHARS


# Compared against when there is no real key to compare with, so a refusal costs the same.
_DUMMY_KEY = "-" * 48
_WRONG_LAUNCH_KEY = f"wrong key for the launch profile (its {KEY_NAME})"


def _same(token: str, key: str) -> bool:
    """``token`` is ``key``, in the same time whether ``key`` is usable, empty or absent."""
    usable = usable_key(key)
    equal = hmac.compare_digest(token.encode(), (key.strip() if usable else _DUMMY_KEY).encode())
    return usable and equal


_GATES: dict[str, tuple[tuple, tuple[bool, str]]] = {}


def _stat(path: Path) -> tuple:
    try:
        st = path.stat()
    except OSError:
        return ()
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


def _gate(home: Path) -> tuple[bool, str]:
    """(the plugin enabled, the ``.env`` key) of the profile at ``home``, parsed again only when its
    config.yaml or .env changed. Parsing costs with the files' size (a .env of a dozen provider keys
    took 3 ms, an empty one 0.7), so a wrong key for a profile with big files answered later than
    for a missing one; kept, every refusal costs two stats and a lookup."""
    profile = profile_at(home)
    fingerprint = (_stat(profile.config_file), _stat(profile.env_file))
    cached = _GATES.get(str(home))
    if cached is not None and cached[0] == fingerprint:
        return cached[1]
    gate = (plugin_enabled(home), env_file_key(home))
    _GATES[str(home)] = (fingerprint, gate)
    return gate


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
        return self.resolve(name, token)[0]

    def resolve(self, name: str | None, token: str) -> tuple[Profile | None, str]:
        """(the profile ``token`` opens, "") or (None, why not) — the reason is for the server log
        only (app.py logs it with the request); the caller always gets the same 401."""
        if name is None:
            return (self.launch, "") if _same(token, self._launch_key) else (None, _WRONG_LAUNCH_KEY)
        profile = named_profile(self.root, name)
        if profile is not None and self._is_launch(profile):
            return (self.launch, "") if _same(token, self._launch_key) else (None, _WRONG_LAUNCH_KEY)
        # From here on a wrong key costs the same whether or not the profile exists: a profile
        # that does not exist reads the launch profile's config.yaml and .env in its place and
        # compares the token with a dummy key, so the answer's timing does not tell which
        # profiles exist (every check runs; none returns early).
        exists = profile is not None and profile.home.is_dir()
        files = profile.home if exists and profile is not None else self.launch.home
        enabled, key = _gate(files)
        own = _same(token, key if exists else "")
        shared = _same(token, self._launch_key) and name in self.share_key_with
        if not exists:
            return None, f"no profile named {name!r}"
        if not enabled:
            return None, f"profile {name!r} has not enabled project-history-recall (its plugins.enabled)"
        if own or shared:
            return profile, ""
        also = ", or the launch key" if name in self.share_key_with else "; the launch key is not shared with it"
        return None, f"wrong key for profile {name!r} (it opens with the {KEY_NAME} of its own .env{also})"
