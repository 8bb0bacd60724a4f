"""What an operator names on the command line, as ids: one lookup and one error for every command.

``hermes recall search``, ``index``, ``consent`` and ``forget`` take ``--project`` as ``status``
prints a project — its name, slug or id — and ``--session`` as ``hermes sessions list`` prints it;
a name that matches nothing fails with the same sentence in each (issue 38).
"""

from __future__ import annotations

from pathlib import Path

from ..console import EXIT_FAILED, fail
from ..errors import RecallError


def session_missing(session_id: str) -> str:
    """The one sentence for a ``--session`` the profile does not have (search, forget)."""
    return f"no session {session_id!r} in this profile (`hermes sessions list` shows the ids)"


def project_ids(home: Path, refs: list[str] | None) -> list[str] | None:
    """``--project`` values as project ids — for every command that takes one (search, index,
    consent, forget): an id, a slug or the name ``status`` prints. An unknown one fails with one
    sentence, the profile's projects listed as ``status`` shows them."""
    from ..stores import hermes_db

    if not refs:
        return refs
    try:
        projects = [p for p in hermes_db.load_projects(home) if not p.get("archived")]
    except RecallError as exc:
        fail(str(exc), EXIT_FAILED)
    found = {ref: hermes_db.find_project(projects, ref) for ref in refs}
    unknown = [ref for ref, project in found.items() if project is None]
    if unknown:
        known = ", ".join(f"{p['name']} ({p.get('slug') or p['id']})" for p in projects) or "none yet"
        fail(f"no project {', '.join(map(repr, unknown))} in this profile; its projects: {known}")
    return list(dict.fromkeys(project["id"] for project in found.values() if project))
