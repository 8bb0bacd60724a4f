"""The seed's privacy chain for embedding providers that send text off the machine.

``<HERMES_HOME>/project-history-recall/consent.json`` holds one record::

    {"profile": "default", "projects": ["p_abc"], "provider": "openai",
     "endpoint": "https://api.openai.com/v1", "model": "text-embedding-3-small",
     "confirmed_at": "2026-09-10T08:14:15+00:00", "scope": "history+incremental"}

Consent covers exactly that provider, endpoint and model, for the listed projects (``"*"`` =
all). Changing any of the three, or searching a project not listed, needs a new confirmation.
The local model sends nothing anywhere, so it never needs consent. Project keys are opaque
strings chosen by the caller; search and grant must use the same keys.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from ..host.files import write_atomic
from ..host.profile import profile_at, profile_name
from .settings import EmbeddingSettings

SCOPE = "history+incremental"
ALL_PROJECTS = "*"

ConsentState = Literal["not_needed", "granted", "required"]


def consent_path(home: Path) -> Path:
    return profile_at(home).consent_file


def read_consent(home: Path) -> dict | None:
    """The stored record, or None when absent or unreadable (unreadable = not consented)."""
    try:
        record = json.loads(consent_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def consent_state(
    home: Path, settings: EmbeddingSettings, profile: str | None, projects_in_scope: Iterable[str]
) -> ConsentState:
    if not settings.remote:
        return "not_needed"
    record = read_consent(home)
    if record is None or not _same_service(record, settings, _label(home, profile)):
        return "required"
    granted = set(record.get("projects") or [])
    if ALL_PROJECTS in granted:
        return "granted"
    wanted = set(projects_in_scope)
    # An empty or "*" scope means "everything", which only an all-projects grant covers.
    if not wanted or ALL_PROJECTS in wanted or not wanted <= granted:
        return "required"
    return "granted"


def _label(home: Path, profile: str | None) -> str:
    """The profile a record belongs to: the home's own name (``profile.py``), the same for the
    tool, the CLI and the API. A consent.json copied into another profile does not carry over."""
    return profile or profile_name(home)


def _same_service(record: dict, settings: EmbeddingSettings, profile: str) -> bool:
    return (
        record.get("profile") == profile
        and record.get("provider") == settings.provider
        and record.get("endpoint") == settings.endpoint
        and record.get("model") == settings.model
        and record.get("scope") == SCOPE
    )


def record_consent(home: Path, settings: EmbeddingSettings, profile: str | None, projects: Iterable[str]) -> dict:
    """Store the user's confirmation. Projects add up while the service stays the same;
    a different provider, endpoint or model starts a fresh record."""
    if not settings.remote:
        raise ValueError("the local provider sends nothing off this machine and needs no consent")
    wanted = sorted(set(projects)) or [ALL_PROJECTS]
    profile = _label(home, profile)
    previous = read_consent(home)
    if previous and _same_service(previous, settings, profile):
        wanted = sorted(set(previous.get("projects") or []) | set(wanted))
    if ALL_PROJECTS in wanted:
        wanted = [ALL_PROJECTS]
    record = {
        "profile": profile,
        "projects": wanted,
        "provider": settings.provider,
        "endpoint": settings.endpoint,
        "model": settings.model,
        "confirmed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "scope": SCOPE,
    }
    write_atomic(consent_path(home), json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return record


def revoke_consent(home: Path) -> bool:
    """Remove the record; True if there was one. Vectors already made stay local and unused."""
    try:
        consent_path(home).unlink()
    except FileNotFoundError:
        return False
    return True
