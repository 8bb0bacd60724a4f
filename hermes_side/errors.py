"""The one error a caller can be told about: a sentence, a code, and what only the operator sees.

Every surface maps the same tree: the agent tools answer ``{"success": false, "error", "code"}``,
the recall API turns ``code`` into an HTTP status in one table (``api/app.py``), the CLI prints the
sentence. A leaf module (like ``text.py``): every floor may import it.
"""

from __future__ import annotations


class RecallError(Exception):
    """``str(exc)`` is safe to show whoever asked; ``code`` says what kind of failure it is;
    ``detail`` (a folder, an underlying error) is for the operator and the logs only."""

    code = "bad_request"

    def __init__(self, message: str, code: str | None = None, detail: str = "", reason: str = "") -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.detail = detail
        # Which case of ``code`` it is, a word safe to show (``chat_unbound``: "unset", "home",
        # "archived", "missing"; ``unavailable``: the file's problem, stores/faults.py): the recall
        # API answers it, so a chat says its own sentence.
        self.reason = reason
