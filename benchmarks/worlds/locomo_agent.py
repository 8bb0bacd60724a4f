"""LoCoMo sessions written the way Hermes stores an agent's work (the ``agent`` world).

``locomo.load_locomo(..., agent=True)`` writes every session through one ``AgentWriter``.
"""

from __future__ import annotations

import json
import re

_TOOLS = ("read_file", "search_files", "terminal", "web_search")
LONG_TAIL = ("\n\nFor the record, here is the small helper I keep for this kind of note:\n\n```python\n"
             "def remember(notes: dict, key: str, value: str) -> dict:\n"
             "    \"\"\"Store one fact, newest wins; returns the updated notes.\"\"\"\n"
             "    updated = dict(notes)\n    updated[key] = value.strip()\n    return updated\n```\n\n"
             "- keep one line per fact\n- date every entry\n- review the list at the end of the week\n")


class AgentWriter:
    """One LoCoMo session written the way Hermes stores an agent's work, through ``SessionDB``:

    - before every second assistant turn, a tool call: an ``assistant`` row with ``tool_calls``
      and no text, then the ``tool`` row with its JSON result (a file with code, a command's
      output); every fourth also an assistant "let me check" that calls a second tool;
    - every sixth assistant turn is long: the turn's text, then a code block and a list;
    - a session of 16+ turns is compacted in place at its middle (``archive_and_compact``: a
      ``[CONTEXT COMPACTION]`` summary row and copies of the last two turns become the live rows,
      the turns before stay ``compacted=1``), then goes on.

    The turn's own text is stored unchanged (long turns get the tail appended), so every question's
    evidence is still one message; a compaction's copy of an evidence turn counts as it."""

    def __init__(self, db, sid: str, n_turns: int) -> None:
        self.db, self.sid, self.n_turns = db, sid, n_turns
        self.assistant_turns = 0
        self.calls = 0
        self.last: list[tuple[int, str, str]] = []  # (message id, role, text) of the last turns

    def _call(self, name: str, args: dict, result: dict, ts: float, text: str | None = None) -> None:
        self.calls += 1
        call_id = f"call_{self.sid[-6:]}_{self.calls}"
        self.db.append_message(self.sid, "assistant", text, timestamp=ts, finish_reason="tool_calls",
                               tool_calls=[{"id": call_id, "type": "function",
                                            "function": {"name": name, "arguments": json.dumps(args)}}])
        self.db.append_message(self.sid, "tool", json.dumps(result), tool_call_id=call_id, tool_name=name,
                               timestamp=ts + 1)

    def turn(self, i: int, role: str, text: str, ts: float) -> tuple[str, int]:
        if role == "assistant":
            self.assistant_turns += 1
            k = self.assistant_turns
            prev = next((t for _, r, t in reversed(self.last) if r == "user"), "")
            words = re.findall(r"[A-Za-z]{4,}", prev)[:4]
            if k % 2 == 0:
                name = _TOOLS[k // 2 % len(_TOOLS)]
                self._call(name, {"query": " ".join(words), "path": f"notes/{self.sid[-6:]}.md"},
                           {"path": f"notes/{self.sid[-6:]}.md", "exit_code": 0, "truncated": False,
                            "content": f"# notes\n\ndef lookup(q):\n    return index.search({' '.join(words)!r})\n",
                            "matches": [{"line": 3 + j, "text": w} for j, w in enumerate(words)]}, ts - 20)
            if k % 4 == 0:
                self._call("terminal", {"command": "ls -la notes/ && wc -l notes/*.md"},
                           {"output": "total 12\n-rw-r--r-- 1 me me 2048 notes.md\n  42 notes/notes.md",
                            "exit_code": 0},
                           ts - 10, text="Let me check my notes first.")
            if k % 6 == 0:
                text = text + LONG_TAIL
        mid = self.db.append_message(self.sid, role, text, timestamp=ts)
        self.last = [*self.last[-1:], (mid, role, text)]
        return text, mid

    def maybe_compact(self, i: int, ts: float) -> list[tuple[int, int]]:
        """Compact at the session's middle; returns (copy's message id, original's) for the copies."""
        if self.n_turns < 16 or i != self.n_turns // 2:
            return []
        summary = {"role": "user", "content": "[CONTEXT COMPACTION] Earlier turns of this conversation were "
                   "summarised to save context; the transcript stays on disk.", "timestamp": ts + 1}
        copies = [{"role": r, "content": t, "timestamp": ts + 2 + j} for j, (_, r, t) in enumerate(self.last)]
        self.db.archive_and_compact(self.sid, [summary, *copies])
        rows = self.db.get_messages(self.sid)  # the live rows: the summary and the copies
        live = [r for r in rows if r["role"] != "user" or not str(r["content"]).startswith("[CONTEXT")]
        return [(int(r["id"]), mid) for r, (mid, _, _) in zip(live[-len(self.last):], self.last, strict=True)]

