"""Stateless async client of the recall API (``docs/recall-api.md``).

One ``httpx.AsyncClient`` per call, made by ``_make_client`` so tests can hand in an
``httpx.MockTransport``. Nothing here raises into a handler: every call returns an ``ApiResult``
that carries either the JSON answer or one short sentence for the chat window — always one of
ours, chosen by the API's error code, never the server's own text (it may name a server path) —
and the detail goes to the operator's log. The API key and the user's query never reach the log
above DEBUG. A member gets the short sentence; a bot admin's command gets ``admin_error``: the
address that was tried, the cause and what to check (never the key).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
from nonebot import logger

from .config import current_texts
from .routing import Endpoint
from .texts import Texts

LOG_PREFIX = "[history-recall]"
_ERROR_TEXT_MAX = 140


@dataclass(frozen=True)
class ApiResult:
    data: dict[str, Any] | None = None
    """The JSON answer when the call succeeded."""
    error: str = ""
    """One short sentence for a group member when it did not."""
    code: str = ""
    """The API's stable error code, or ``unreachable`` / ``timeout`` / ``http_<status>`` / ``bad_json``."""
    retryable: bool = False
    """True for transport failures and 5xx: the same call may work later."""
    url: str = ""
    """The address that was tried (for an admin's failure text; never shown to members)."""
    cause: str = ""
    """Why, in a word an admin's text can use: ``refused``, ``dns``, ``bad_url``, ``other``,
    ``HTTP 500``; and for a refused request the option the server named (``after``/``before``)."""
    timeout: float = 0
    file: str = ""
    """For ``unavailable``: the file on the Hermes machine that cannot be used (a name, never a path);
    ``cause`` is then its problem (``damaged``, ``full``, … docs/recall-api.md)."""

    @property
    def ok(self) -> bool:
        return self.data is not None


def _make_client(timeout: float) -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=timeout)


def _headers(endpoint: Endpoint) -> dict[str, str]:
    headers = {"Accept": "application/json"}
    if endpoint.key:
        headers["Authorization"] = f"Bearer {endpoint.key}"
    return headers


def _chat_path(chat: str) -> str:
    return f"/chats/{quote(chat, safe=':')}/binding"


# Answers that are part of normal use, not a fault the operator has to look at.
_EXPECTED_CODES = frozenset(
    {"chat_unbound", "query_too_long", "body_too_large", "unknown_project", "bad_request", "recall_off",
     "not_attributable"}
)


def _failure(endpoint: Endpoint, what: str, key: str, code: str, detail: str, retryable: bool,
             cause: str = "", file: str = "") -> ApiResult:
    level = "INFO" if code in _EXPECTED_CODES else "WARNING"
    logger.log(level, f"{LOG_PREFIX} {what} via {endpoint.label} ({endpoint.url}) failed: {detail}")
    t = current_texts()
    error = t(key, **t.file_fault(file, cause)) if key == "store_fault" else t(key)
    return ApiResult(error=error, code=code, retryable=retryable, url=endpoint.url, cause=cause,
                     timeout=endpoint.timeout, file=file)


def _error_body(response: httpx.Response) -> tuple[str, str, str, str]:
    """``(code, error sentence, reason, file)`` of an error answer; empty strings when the body has none."""
    try:
        body = response.json()
    except ValueError:
        return "", "", "", ""
    if not isinstance(body, dict):
        return "", "", "", ""
    code, error, reason, file = (body.get(k) if isinstance(body.get(k), str) else ""
                                 for k in ("code", "error", "reason", "file"))
    return code, error.strip().splitlines()[0][:_ERROR_TEXT_MAX] if error.strip() else "", reason, file


# Our own sentence (a key of texts.ZH) per stable error code of docs/recall-api.md.
_BY_CODE = {
    "unauthorized": "unauthorized",
    "unknown_profile": "unknown_profile",
    "not_attributable": "not_yours",
    "query_too_long": "query_too_long",
    "body_too_large": "query_too_long",  # the request held more than a query: it is the query
    "unknown_project": "unknown_project",
    "folder_missing": "folder_missing",
    "no_db": "no_db",
    "bad_request": "bad_request",
    "unavailable": "store_fault",  # a file on the Hermes machine: the operator must act ("busy": try again)
    "internal": "server_error",
    "chat_unbound": "unbound",
    "recall_off": "recall_off",
}


# Why a chat cannot search (``chat_unbound``'s ``reason``) → its sentence; "unset" and an older
# server that gives no reason: not linked yet.
_UNBOUND = {"home": "unbound_home", "archived": "unbound_archived", "missing": "unbound_missing"}


def _user_message(status: int, code: str, error: str, reason: str = "") -> str:
    """The key of the group's sentence. ``error`` (the server's text) only tells a missing route
    from a missing session; it is never shown."""
    if status == 401:
        return "unauthorized"
    if code == "chat_unbound":
        return _UNBOUND.get(reason, "unbound")
    if code == "unavailable" and reason == "busy":
        return "store_busy"
    if code in _BY_CODE:
        return _BY_CODE[code]
    if status >= 500:
        return "server_error"
    if status == 404 and code in ("", "not_found") and error in ("", "Not Found"):
        return "no_route"  # no such route: the URL in the config is wrong
    if code == "not_found":
        return "session_not_found"
    return "refused"


def _named_option(error: str) -> str:
    """The date option a refused request's server text names first (``'after' is not a date``)."""
    for option in ("after", "before"):
        if f"'{option}'" in error:
            return option
    return ""


def _interpret(endpoint: Endpoint, what: str, response: httpx.Response) -> ApiResult:
    status = response.status_code
    if status >= 400:
        code, error, reason, file = _error_body(response)
        cause = f"HTTP {status}"
        if code == "bad_request":
            cause = _named_option(error)
        elif code == "unavailable":
            cause = reason  # the file's problem; an older server gives none ("cannot be read")
        return _failure(
            endpoint,
            what,
            _user_message(status, code, error, reason),
            code or f"http_{status}",
            f"HTTP {status} {code or '-'}: {error or response.text[:_ERROR_TEXT_MAX]!r}",
            retryable=status >= 500,
            cause=cause,
            file=file if code == "unavailable" else "",
        )
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return _failure(endpoint, what, "bad_answer", "bad_json", f"HTTP {status} with a non-JSON-object body", False)
    if body.get("success") is False:
        code, error, reason, _ = _error_body(response)
        detail = f"HTTP {status} success=false {code or '-'}: {error!r}"
        return _failure(endpoint, what, _user_message(400, code, error, reason), code or "failed", detail, False)
    return ApiResult(data=body)


def _transport_cause(exc: BaseException) -> str:
    """Why a request never reached the server, from the exception and the ones it wraps (httpx's
    "All connection attempts failed" holds the ConnectionRefusedError)."""
    import socket

    if isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol):
        return "bad_url"
    chain: list[BaseException] = []
    while exc is not None and len(chain) < 10:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    if any(isinstance(e, socket.gaierror) or "name or service not known" in str(e).lower() for e in chain):
        return "dns"
    if any(isinstance(e, ConnectionRefusedError) or "refused" in str(e).lower() for e in chain):
        return "refused"
    return "other"


async def _call(endpoint: Endpoint, method: str, path: str, body: dict[str, Any] | None = None) -> ApiResult:
    what = f"{method} {path}"
    try:
        async with _make_client(endpoint.timeout) as client:
            response = await client.request(method, endpoint.url + path, json=body, headers=_headers(endpoint))
    except httpx.TimeoutException as exc:
        return _failure(endpoint, what, "timeout", "timeout", f"timeout after {endpoint.timeout}s: {exc!r}", True)
    except httpx.TransportError as exc:
        return _failure(endpoint, what, "unreachable", "unreachable", repr(exc), True, _transport_cause(exc))
    except (httpx.HTTPError, httpx.InvalidURL) as exc:  # e.g. a malformed URL in the config
        return _failure(endpoint, what, "unreachable", "unreachable", repr(exc), False, _transport_cause(exc))
    logger.debug(f"{LOG_PREFIX} {what} via {endpoint.label} → HTTP {response.status_code}")
    return _interpret(endpoint, what, response)


# What an admin's failure text says instead of the member's sentence: the address tried, the cause
# and what to check (texts "admin_*"). Other codes are about the request, not the setup: as members.
_ADMIN_KEYS = {"unreachable": "admin_unreachable", "timeout": "admin_timeout", "unauthorized": "admin_unauthorized",
               "http_401": "admin_unauthorized", "unknown_profile": "admin_unknown_profile",
               "bad_json": "admin_bad_answer", "internal": "admin_server_error", "unavailable": "admin_store_fault"}


def admin_error(result: ApiResult, t: Texts | None = None) -> str:
    """The failure as a bot admin needs it: what was tried, why, and what to check (in ``t``'s
    language; the deployment's by default)."""
    t = t or current_texts()
    key = _ADMIN_KEYS.get(result.code)
    if key is None and result.error == t("no_route"):
        key = "admin_no_route"
    if key is None and result.code.startswith("http_5"):
        key = "admin_server_error"
    if key is None:
        return result.error
    if key == "admin_store_fault":
        if result.cause == "busy":
            return result.error  # locked for a moment: the same call works again
        return t(key, url=result.url, **t.file_fault(result.file, result.cause))
    cause = t(f"cause_{result.cause}") if f"cause_{result.cause}" in t.table else result.cause
    return t(key, url=result.url, cause=cause, seconds=f"{result.timeout:g}")


async def search(
    endpoint: Endpoint, chat: str, query: str, mode: str, limit: int, after: str = "", before: str = ""
) -> ApiResult:
    """Search the project bound to ``chat``; an unbound chat answers ``chat_unbound``, never globally.

    ``after``/``before`` go through as typed ("7d", "2026-11-01"): the API owns date parsing and
    answers a bad one with a sentence the chat can show.
    """
    logger.debug(
        f"{LOG_PREFIX} search {chat} mode={mode} limit={limit} after={after!r} before={before!r} query={query!r}"
    )
    body: dict[str, Any] = {"query": query, "mode": mode, "limit": limit, "chat": chat}
    body.update({name: value for name, value in (("after", after), ("before", before)) if value})
    return await _call(endpoint, "POST", "/search", body)


async def get_binding(endpoint: Endpoint, chat: str) -> ApiResult:
    return await _call(endpoint, "GET", _chat_path(chat))


async def set_binding(endpoint: Endpoint, chat: str, project: str, only_if_unset: bool) -> ApiResult:
    body = {"project": project, "only_if_unset": only_if_unset}
    return await _call(endpoint, "PUT", _chat_path(chat), body)


async def move_chat(endpoint: Endpoint, chat: str, project: str) -> ApiResult:
    """Move every conversation of ``chat`` to ``project`` (id or slug); ``""`` means Home."""
    return await _call(endpoint, "POST", "/move", {"chat": chat, "project": project})


async def health(endpoint: Endpoint) -> ApiResult:
    return await _call(endpoint, "GET", "/health")


async def status(endpoint: Endpoint) -> ApiResult:
    return await _call(endpoint, "GET", "/status")


async def context(endpoint: Endpoint, chat: str, message_id: int, before: int, after: int) -> ApiResult:
    """The turns around one hit, sealed server side to the chat's project (``POST /context``)."""
    body = {"chat": chat, "message_id": message_id, "before": before, "after": after}
    return await _call(endpoint, "POST", "/context", body)


async def projects(endpoint: Endpoint) -> ApiResult:
    return await _call(endpoint, "GET", "/projects")


async def forget(endpoint: Endpoint, chat: str, scope: str, *, actor: str, apply: bool, user: str = "",
                 session_id: str = "", after: str = "", before: str = "", message_id: int | None = None) -> ApiResult:
    """Take turns of ``chat`` out of recall (``POST /forget``); a dry run unless ``apply``.
    ``scope``: ``member`` (``user``'s own turns), ``session`` or ``chat`` (a date span)."""
    body: dict[str, Any] = {"chat": chat, "scope": scope, "actor": actor, "apply": apply}
    optional = (("user", user), ("session_id", session_id), ("after", after), ("before", before))
    body.update({name: value for name, value in optional if value})
    if message_id is not None:
        body["message_id"] = message_id
    return await _call(endpoint, "POST", "/forget", body)


async def set_recall(endpoint: Endpoint, chat: str, enabled: bool, actor: str) -> ApiResult:
    """Switch the group's recall on or off (``PUT /chats/{chat}/recall``)."""
    return await _call(endpoint, "PUT", f"/chats/{quote(chat, safe=':')}/recall", {"enabled": enabled, "actor": actor})


async def set_optout(endpoint: Endpoint, chat: str, user: str, opted_out: bool, actor: str) -> ApiResult:
    """Keep a member's future turns out of recall, or let them count again."""
    path = f"/chats/{quote(chat, safe=':')}/members/{quote(user, safe='')}/optout"
    return await _call(endpoint, "PUT", path, {"opted_out": opted_out, "actor": actor})
