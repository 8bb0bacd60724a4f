"""A scripted OpenAI-compatible model on loopback, for driving Hermes' real agent loop in e2e tests.

The user text names the tool calls the "model" makes: ``TOOL:<name> {json args}`` (several markers
= parallel calls in one response). When the request carries the tool results, it answers with a
final message that echoes them (``RESULT <name>: <content>``). Requests without ``tools``
(compression summaries, titles) get plain text. It speaks SSE when asked to stream (Hermes always
streams to the model) and plain JSON otherwise, and records every request so a test can read the
exact tool results and system prompt the model received.

Where Hermes defers a named tool behind Tool Search (0.22+: the model is offered ``tool_search`` /
``tool_describe`` / ``tool_call`` and a catalog instead of plugin tools), the model takes that path
as a real one would: it searches with a plain query, describes what it found, then calls it through
``tool_call``. The discovery turns are bookkeeping: ``tool_results()`` reports a bridged call under
the inner tool's name and leaves the discovery results out, so a test reads the same on both lines.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.e2e.nonebot_proc import free_port

MODEL = "scripted"
MARKER = re.compile(r"TOOL:([A-Za-z0-9_\-]+)\s*")
SEARCH, DESCRIBE, CALL = "tool_search", "tool_describe", "tool_call"  # Hermes' Tool Search bridge
DISCOVERY = "discover_"  # id prefix of the search/describe calls the model makes before the real ones
CATALOG_LINE = re.compile(r"^- ([A-Za-z0-9_\-]+): ", re.M)  # a deferred tool in tool_search's description
# The plain words a model would search with; other tools are searched by their name's words.
PLAIN_QUERY = {"project_history_search": "search past conversations",
               "project_history_open": "read the turns around a result of a past conversation search",
               "project_session_move": "move this conversation to a different project"}


def tool_calls_in(text: str) -> list[tuple[str, dict[str, Any]]]:
    """``TOOL:name {json}`` markers, in order; a marker without valid JSON gets ``{}``."""
    calls = []
    decoder = json.JSONDecoder()
    for match in MARKER.finditer(text):
        try:
            args, _ = decoder.raw_decode(text, match.end())
        except json.JSONDecodeError:
            args = {}
        calls.append((match.group(1), args if isinstance(args, dict) else {}))
    return calls


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


class ScriptedModel:
    def __init__(self) -> None:
        self.port = free_port()
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- what the model received ------------------------------------------------------------------
    def tool_results(self) -> list[dict[str, str]]:
        """Every tool result (name, content) any request carried, deduplicated by call id."""
        seen: dict[str, dict[str, str]] = {}
        for body in self.snapshot():
            names = {}
            for message in body.get("messages") or []:
                for call in message.get("tool_calls") or []:
                    names[call.get("id")] = _called_name(call)
                if message.get("role") == "tool":
                    cid = message.get("tool_call_id") or str(len(seen))
                    if str(cid).startswith(DISCOVERY):
                        continue
                    seen[cid] = {"name": names.get(cid, ""), "content": _text(message.get("content"))}
        return list(seen.values())

    def offered_tools(self) -> set[str]:
        """Every tool the model could call: those in its tool list and, under Tool Search, those
        the catalog in tool_search's description lists (reached through tool_call)."""
        names: set[str] = set()
        for body in self.snapshot():
            for tool in body.get("tools") or []:
                function = tool.get("function") or {}
                names.add(function.get("name", ""))
                if function.get("name") == SEARCH:
                    names |= set(CATALOG_LINE.findall(function.get("description") or ""))
        return names

    def bridged_calls(self) -> list[str]:
        """The inner tool names the model called through tool_call (empty where tools are direct)."""
        return [_called_name(call) for body in self.snapshot() for message in body.get("messages") or []
                for call in message.get("tool_calls") or [] if (call.get("function") or {}).get("name") == CALL]

    def snapshot(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.requests)

    # -- answers ----------------------------------------------------------------------------------
    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """{"content": str} or {"tool_calls": [(name, args)]} for this request."""
        messages = body.get("messages") or []
        if not body.get("tools"):
            return {"content": "summary of the conversation so far"}
        tail: list[dict[str, Any]] = []
        for message in reversed(messages):
            if message.get("role") == "user":
                break
            tail.insert(0, message)
        user = next((m for m in reversed(messages) if m.get("role") == "user"), {})
        calls = tool_calls_in(_text(user.get("content")))
        offered = {(t.get("function") or {}).get("name", "") for t in body["tools"]}
        direct = [c for c in calls if c[0] in offered or SEARCH not in offered]
        deferred = [c for c in calls if c not in direct]
        steps = [m for m in tail if m.get("role") == "assistant"]
        if not calls:
            return {"content": "no tool asked for"}
        if deferred:
            return self._discover(direct, deferred, tail, len(steps))
        if not steps:
            return {"tool_calls": calls}
        return {"content": _echo(tail)}

    def _discover(self, direct: list, deferred: list, tail: list[dict[str, Any]], step: int) -> dict[str, Any]:
        """Tool Search: search, describe what was found, call it (and the direct ones), then answer."""
        queries = list(dict.fromkeys(PLAIN_QUERY.get(name, name.replace("_", " ")) for name, _ in deferred))
        plan: list[dict[str, Any]] = [{"tool_calls": [(SEARCH, {"queries": queries[i:i + 7]})
                                                      for i in range(0, len(queries), 7)], "id_prefix": DISCOVERY}]
        found: set[str] = set()
        for message in tail:
            if message.get("role") == "tool" and str(message.get("tool_call_id")).startswith(DISCOVERY):
                try:
                    payload = json.loads(_text(message.get("content")))
                except json.JSONDecodeError:
                    continue
                found |= set((payload.get("tools") or {}) if isinstance(payload, dict) else ())
        reachable = [(name, args) for name, args in deferred if name in found]
        if reachable:
            plan.append({"tool_calls": [(DESCRIBE, {"names": sorted({name for name, _ in reachable})})],
                         "id_prefix": DISCOVERY})
        bridged = [(CALL, {"calls": [{"name": name, "arguments": args}]}) for name, args in reachable]
        if direct or bridged:
            plan.append({"tool_calls": direct + bridged})
        if step < len(plan):
            return plan[step]
        missing = [name for name, _ in deferred if name not in found]
        note = "\nNOT FOUND through tool_search: " + ", ".join(missing) if missing else ""
        return {"content": _echo(tail) + note}

    def start(self) -> ScriptedModel:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _json(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model",
                                                                 "owned_by": "e2e", "context_length": 131072}]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._json(404, {"error": {"message": "not found"}})
                    return
                with model._lock:
                    model.requests.append(body)
                reply = model.answer(body)
                if body.get("stream"):
                    self._stream(reply)
                else:
                    self._json(200, _completion(reply))

            def _stream(self, reply: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in _chunks(reply):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


USAGE = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}


def _calls(reply: dict[str, Any]) -> list[dict[str, Any]]:
    prefix = reply.get("id_prefix", "call_")
    return [{"index": i, "id": f"{prefix}{time.monotonic_ns()}_{i}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}
            for i, (name, args) in enumerate(reply.get("tool_calls") or [])]


def _called_name(call: dict[str, Any]) -> str:
    """The tool a call ran: for Hermes' ``tool_call`` bridge, the inner tool's name."""
    function = call.get("function") or {}
    name = function.get("name", "")
    if name == CALL:
        try:
            inner = json.loads(function.get("arguments") or "{}")["calls"][0]["name"]
        except (json.JSONDecodeError, KeyError, IndexError, TypeError):
            return name
        return str(inner)
    return name


def _echo(tail: list[dict[str, Any]]) -> str:
    """The final answer: every tool result of this turn but the discovery ones, by tool name."""
    names = {c.get("id"): _called_name(c) for m in tail for c in m.get("tool_calls") or []}
    return "\n".join(f"RESULT {names.get(m.get('tool_call_id'), '?')}: {_text(m.get('content'))}"
                     for m in tail if m.get("role") == "tool" and not str(m.get("tool_call_id")).startswith(DISCOVERY))


def _completion(reply: dict[str, Any]) -> dict[str, Any]:
    calls = _calls(reply)
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    if calls:
        message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
    return {"id": "chatcmpl-e2e", "object": "chat.completion", "created": int(time.time()), "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": USAGE}


def _chunks(reply: dict[str, Any]) -> list[dict[str, Any]]:
    base = {"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "created": int(time.time()), "model": MODEL}
    calls = _calls(reply)
    out = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
    if calls:
        for call in calls:
            out.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]})
    else:
        out.append({**base, "choices": [{"index": 0, "delta": {"content": reply.get("content") or ""},
                                         "finish_reason": None}]})
    out.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls" if calls else "stop"}]})
    out.append({**base, "choices": [], "usage": USAGE})
    return out
