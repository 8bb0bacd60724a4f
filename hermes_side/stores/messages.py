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

# Messages taken out of recall (``/forget``, ``hermes recall forget``, opt-outs): a table of the
# connection's own, filled by ``scope/rule_view.prepare`` from the plugin's forgotten.db
# (``rule_view.connect_state`` and ``SearchEngine.leased`` prepare every state.db connection). An
# unprepared connection fails ("no such table"), it never shows a forgotten turn.
FORGOTTEN_TABLE = "temp.recall_forgotten"


def not_forgotten_sql(alias: str = "m") -> str:
    col = f"{alias}." if alias else ""
    return f"{col}id NOT IN (SELECT id FROM {FORGOTTEN_TABLE})"


def turn_sql(alias: str = "m") -> str:
    """SQL predicate over the messages row ``alias``: a user or assistant turn that is live or
    compaction-archived and not forgotten. Rewound rows (active=0 AND compacted=0) are what the user
    took back and forgotten rows what a member or admin took out of recall, so neither counts — not
    as history, nor as the turn before or after a hit (a neighbour's context, an answer)."""
    col = f"{alias}." if alias else ""
    return (f"{col}role IN ('user', 'assistant') AND ({col}active = 1 OR {col}compacted = 1)"
            f" AND {not_forgotten_sql(alias)}")


NOT_FORGOTTEN_SQL = not_forgotten_sql("m")


def text_turn_sql(alias: str = "m") -> str:
    """SQL predicate over the messages row ``alias``: what never changes about a row that can be a
    hit — a user or assistant row with text that is no compaction summary. Tool results, an
    assistant's text-less tool-call rows and summaries fail it forever; eligibility adds the parts
    that change (live, forgotten, the session's state)."""
    col = f"{alias}." if alias else ""
    return (f"{col}role IN ('user', 'assistant') AND {col}content IS NOT NULL AND {col}content != ''"
            + "".join(f" AND {col}content NOT LIKE '{prefix}%'" for prefix in SUMMARY_PREFIXES))


# The rows ELIGIBLE_MESSAGE_SQL is written over.
MESSAGES_FROM = "FROM messages m JOIN sessions s ON s.id = m.session_id"


def _sql_list(values: tuple[str, ...]) -> str:
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


# SQL predicate over ``messages m`` and ``sessions s``: turns (``turn_sql``) with text that are no
# compaction summary, in sessions that are neither archived nor machinery. This is the predicate
# for Hermes 0.19's state.db; :func:`eligible_sql` adds newer Hermes' columns — use that.
ELIGIBLE_MESSAGE_SQL = (
    turn_sql("m")
    + " AND " + text_turn_sql("m")
    + " AND COALESCE(s.archived, 0) = 0"
    + f" AND COALESCE(s.source, '') NOT IN ({_sql_list(EXCLUDED_SOURCES)})"
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


def newer_clauses(conn: sqlite3.Connection, tables: tuple[str, ...] = ("sessions", "messages")) -> str:
    """The :data:`NEWER_CLAUSES` of ``tables`` whose column this state.db has.

    ``PRAGMA table_info`` reads (microseconds); not cached, because a newer Hermes migrates the
    file under a running reader."""
    have = {table: columns(conn, table) for table in tables}
    return "".join(clause for table, col, clause in NEWER_CLAUSES if table in have and col in have[table])


def eligible_sql(conn: sqlite3.Connection) -> str:
    """:data:`ELIGIBLE_MESSAGE_SQL` plus every newer clause whose column this state.db has."""
    return ELIGIBLE_MESSAGE_SQL + newer_clauses(conn)


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


def copy_key(conversation: str, text: str) -> tuple[str, str]:
    """What makes two rows the same turn: one conversation, the same words. Hermes' in-place
    compaction keeps the compacted turns and writes copies of the last ones as live rows; a
    rotation's child and a ``/branch`` carry copies too. The search folds such copies into one hit
    (``ranker.fold``) and forgetting takes every copy (``actions/forget.py``) by this key."""
    return conversation, text.strip()
