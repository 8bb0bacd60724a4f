"""What a chat may be shown of a search or open result: the one rule the recall API (``chat``
requests) and the agent tool (in a chat session) both apply.

Operator-only parts never reach a group: the server folder of the project (``primary_path``), the
consent hint (it names the provider's URL and a command only the operator can run; the result's
``semantic_status`` still says ``consent_required``), and the ``semantic_detail`` /
``translation_detail`` / ``keyword_detail`` texts (a provider's error, an install command with
Hermes' own Python path, or state.db's path and the command that repairs it).
"""

from __future__ import annotations

from typing import Any

OPERATOR_ONLY = ("consent", "semantic_detail", "translation_detail", "keyword_detail")


def without_paths(project: dict[str, Any] | None) -> dict[str, Any] | None:
    """A project as a chat may see it: no folder on the server."""
    return None if project is None else {k: v for k, v in project.items() if k != "primary_path"}


def chat_facing(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` without what only the operator may read (a new dict; ``result`` is untouched)."""
    out = {k: v for k, v in result.items() if k not in OPERATOR_ONLY}
    if isinstance(out.get("project"), dict):
        out["project"] = without_paths(out["project"])
    return out
