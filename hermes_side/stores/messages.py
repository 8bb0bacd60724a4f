"""Which rows of Hermes' ``messages`` table are conversation history, and their plain text.

One definition shared by keyword search, the embedding indexer and the benchmarks, so every
path agrees on what "a message of this conversation" is.
"""

from __future__ import annotations

import json
import sqlite3

from ..host.features import columns

# Sources that are machinery, not conversations with a person (Hermes' session_search skips them too).
EXCLUDED_SOURCES: tuple[str, ...] = ("subagent", "tool")

# Compaction summaries are re-statements of rows that stay searchable (compacted=1); indexing them
# would return every compacted conversation twice.
SUMMARY_PREFIXES: tuple[str, ...] = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")

# SQL predicate over ``messages m`` and ``sessions s``: live or compaction-archived user/assistant
# rows with text, in sessions that are neither archived nor machinery. Rewound rows
# (active=0 AND compacted=0) are what the user took back, so they never count. This is the
# predicate for Hermes 0.19's state.db; :func:`eligible_sql` adds newer Hermes' columns.
ELIGIBLE_MESSAGE_SQL = (
    "m.role IN ('user', 'assistant')"
    " AND (m.active = 1 OR m.compacted = 1)"
    " AND m.content IS NOT NULL AND m.content != ''"
    " AND m.content NOT LIKE '[CONTEXT COMPACTION%'"
    " AND m.content NOT LIKE '[CONTEXT SUMMARY]:%'"
    " AND COALESCE(s.archived, 0) = 0"
    " AND COALESCE(s.source, '') NOT IN ('subagent', 'tool')"
)

# Newer Hermes (hermes-newer.md) marks rows that are not conversation in columns of their own:
# hidden sessions, hidden scaffolding messages, and compression summaries (a summary's prefix can
# be one a newer compressor writes, so the prefix test alone lets some through). Each clause is
# added only when its column exists, so the same definition reads 0.19's and newer state.db.
NEWER_CLAUSES: tuple[tuple[str, str, str], ...] = (
    ("sessions", "hidden", " AND COALESCE(s.hidden, 0) = 0"),
    ("messages", "display_kind", " AND COALESCE(m.display_kind, '') != 'hidden'"),
    ("messages", "_compressed_summary", " AND COALESCE(m._compressed_summary, 0) = 0"),
)


def eligible_sql(conn: sqlite3.Connection) -> str:
    """:data:`ELIGIBLE_MESSAGE_SQL` plus every newer clause whose column this state.db has.

    Two ``PRAGMA table_info`` reads (microseconds); not cached, because a newer Hermes migrates
    the file under a running reader."""
    have = {table: columns(conn, table) for table in {t for t, _, _ in NEWER_CLAUSES}}
    return ELIGIBLE_MESSAGE_SQL + "".join(clause for table, col, clause in NEWER_CLAUSES if col in have[table])


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
