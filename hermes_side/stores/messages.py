"""Which rows of Hermes' ``messages`` table are conversation history, and their plain text.

One definition shared by keyword search, the embedding indexer and the benchmarks, so every
path agrees on what "a message of this conversation" is.
"""

from __future__ import annotations

import json

# Sources that are machinery, not conversations with a person (Hermes' session_search skips them too).
EXCLUDED_SOURCES: tuple[str, ...] = ("subagent", "tool")

# Compaction summaries are re-statements of rows that stay searchable (compacted=1); indexing them
# would return every compacted conversation twice.
SUMMARY_PREFIXES: tuple[str, ...] = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")

# Messages taken out of recall (``/forget``, ``hermes recall forget``, opt-outs): a table of the
# connection's own, filled by ``forgotten.prepare`` from the plugin's forgotten.db. Every reader of
# history goes through a prepared connection; an unprepared one fails ("no such table"), never leaks.
NOT_FORGOTTEN_SQL = "m.id NOT IN (SELECT id FROM temp.recall_forgotten)"

# SQL predicate over ``messages m`` and ``sessions s``: live or compaction-archived user/assistant
# rows with text, in sessions that are neither archived nor machinery, and not forgotten. Rewound
# rows (active=0 AND compacted=0) are what the user took back, so they never count.
ELIGIBLE_MESSAGE_SQL = (
    "m.role IN ('user', 'assistant')"
    " AND (m.active = 1 OR m.compacted = 1)"
    " AND m.content IS NOT NULL AND m.content != ''"
    " AND m.content NOT LIKE '[CONTEXT COMPACTION%'"
    " AND m.content NOT LIKE '[CONTEXT SUMMARY]:%'"
    " AND COALESCE(s.archived, 0) = 0"
    " AND COALESCE(s.source, '') NOT IN ('subagent', 'tool')"
    f" AND {NOT_FORGOTTEN_SQL}"
)

_MULTIMODAL_PREFIX = "\x00json:"


def message_text(content: str | None) -> str:
    """Plain text of a stored message; multimodal rows keep only their text parts."""
    if not content:
        return ""
    if not content.startswith(_MULTIMODAL_PREFIX):
        return content
    try:
        parts = json.loads(content[len(_MULTIMODAL_PREFIX):])
    except ValueError:
        return ""
    if isinstance(parts, str):
        return parts
    texts = []
    for part in parts if isinstance(parts, list) else []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, str):
            texts.append(part)
    return "\n".join(texts)


def is_summary_text(text: str) -> bool:
    return text.lstrip().startswith(SUMMARY_PREFIXES)
