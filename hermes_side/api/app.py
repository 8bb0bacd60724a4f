"""The recall API (docs/recall-api.md): FastAPI app serving one or many profiles.

Routes are declared once and mounted twice — at the root (the launch profile) and under
``/p/<profile>/`` like Hermes' own API server; which key opens which profile is access.py.
Route handlers are plain ``def`` so FastAPI runs the blocking SQLite work in its thread pool;
the key check and ``/health`` are ``async`` so they never wait for a worker thread.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio.to_thread
from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from ..actions import chat_service
from ..actions.move import finish_interrupted, move_sessions
from ..embedding import forgetting
from ..errors import RecallError
from ..host import clock
from ..host.profile import Profile, profile_at
from ..scope.chats import parse_chat
from ..search import translate
from ..search.chat_facing import chat_facing, without_paths
from ..search.engine import engine_for
from ..search.reader import reader_for
from ..search.request import parse_search_args
from ..search.results import format_when
from ..stores import bindings, faults, forgotten, hermes_db
from .access import Access

log = logging.getLogger(__name__)
requests_log = logging.getLogger(__name__ + ".requests")
MAX_BODY_BYTES = 64 * 1024
TOO_LARGE = f"request body too large (limit {MAX_BODY_BYTES} bytes)"
WORKER_THREADS = 8

# Every error code → (HTTP status, the sentence a caller gets instead of the error's own text).
# A fixed sentence where that text may name a server path or an internal detail: a chat bot shows
# the answer to a group; the full text and ``detail`` go to the server log. Unlisted codes: 400.
ERRORS: dict[str, tuple[int, str | None]] = {
    "bad_request": (400, None), "bad_query": (400, None),
    "unauthorized": (401, None),
    "unknown_profile": (404, None), "not_found": (404, None), "unknown_project": (404, None),
    "chat_unbound": (409, None), "recall_off": (409, None), "not_attributable": (403, None),
    "folder_missing": (409, "the project's folder is missing on the Hermes machine; ask the operator"),
    "query_too_long": (413, None), "body_too_large": (413, None),
    "no_db": (503, "this Hermes profile has no conversations yet"),
    # A file that cannot be used: its sentence names the file and the cause, never a path (faults.py).
    "unavailable": (503, None),
    "config_unreadable": (503, "this Hermes profile's configuration cannot be read; ask the operator"),
    "busy": (503, None),
    "backend_unsupported": (503, "this Hermes keeps its sessions in a database recall does not read yet; "
                                 "ask the operator"),
    "internal": (500, "internal error"),
}


class ApiError(RecallError):
    """A request the API itself refuses (key, body, arguments)."""


def create_app(launch_home: Path, api_key: str, share_key_with: Iterable[str] = ()) -> FastAPI:
    """The recall API for the profile at ``launch_home`` (plus ``/p/<name>`` for the others).

    Refuses an empty or short key (ValueError). ``share_key_with`` names the other profiles the
    launch key may also open; by default each profile opens only with its own key (access.py).
    The profile's name comes from the home (profile.py).
    """
    access = Access(profile_at(launch_home), api_key, share_key_with)

    async def profile_of(request: Request) -> Profile:
        # async: resolving a key reads two small files and must not wait for a worker thread.
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        name = request.path_params.get("profile")
        if scheme.lower() != "bearer" or not token.strip():
            profile, why = None, "no 'Authorization: Bearer <key>' header"
        else:
            profile, why = access.resolve(name, token.strip())
        if profile is None:
            # Every refusal is logged with its reason — never the key; the caller gets one 401.
            log.warning("refused %s %s from %s: %s", request.method, request.url.path, _client(request), why)
            raise ApiError("missing or wrong API key", "unauthorized")
        return profile

    router = APIRouter()
    _routes(router, profile_of)

    @asynccontextmanager
    async def lifespan(_: FastAPI):
        # Searches run in worker threads but at most MAX_CONCURRENT per profile at once; a few
        # more threads than that keep requests queued without 40 idle stacks and arenas.
        anyio.to_thread.current_default_thread_limiter().total_tokens = WORKER_THREADS
        threading.Thread(target=translate.warm, name="recall-dictionary", daemon=True).start()
        await anyio.to_thread.run_sync(_finish_moves, access.launch.home)
        await anyio.to_thread.run_sync(_finish_forgets, access.launch.home)
        yield

    # No /docs, /redoc or /openapi.json: the contract is docs/recall-api.md, and an unauthenticated
    # schema would describe the server to anyone who can reach the port.
    app = FastAPI(title="Project history recall", version=__version__, lifespan=lifespan,
                  docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/health")
    async def health(request: Request) -> dict[str, Any]:
        # async on purpose: answers on the event loop even while searches hold every worker thread.
        # Anyone may ask whether the server is up; only a caller with the key learns the profile.
        try:
            profile = await profile_of(request)
        except ApiError:
            return {"ok": True, "version": __version__}
        return {"ok": True, "profile": profile.name, "version": __version__}

    @app.get("/p/{profile}/health")
    async def profile_health(p: Profile = Depends(profile_of)) -> dict[str, Any]:
        return {"ok": True, "profile": p.name, "version": __version__}

    app.include_router(router)
    app.include_router(router, prefix="/p/{profile}")
    _error_handlers(app, access.launch.home)

    app.add_middleware(RequestLine)
    return app


def _client(request: Request) -> str:
    return request.client.host if request.client else "?"


class RequestLine:
    """One line per request on the serve terminal and in its log file: client, method, path,
    status, time — never a header, a body or a query string (a search's words stay out of the log).
    Plain ASGI, so the body streams through untouched (``read_json_body`` caps it)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, status = time.perf_counter(), 500

        async def send_and_note(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            client = (scope.get("client") or ("?",))[0]
            requests_log.info("%s %s %s → %d in %.0f ms", client, scope["method"], scope["path"], status,
                              (time.perf_counter() - started) * 1000)


def _finish_moves(home: Path) -> None:
    """A ``/move`` this server was killed in the middle of is finished before it serves again."""
    try:
        finished = finish_interrupted(home)
    except (RecallError, OSError, sqlite3.Error, TimeoutError) as exc:  # the next move retries it
        log.warning("recall API: an interrupted move could not be finished yet: %s", exc)
        return
    if finished:
        log.warning("recall API: finished %d interrupted move(s)", finished)


def _finish_forgets(home: Path) -> None:
    """A ``/forget`` killed after its rule but before its vectors went is finished (issue 39 §5)."""
    try:
        pending = forgotten.load(home).pending
        if pending:
            forgetting.finish_pending(home)
            log.warning("recall API: finished %d forget(s) whose vectors were still indexed", len(pending))
    except (RecallError, OSError, sqlite3.Error) as exc:  # the next forget or index run retries it
        log.warning("recall API: an interrupted forget could not be finished yet: %s", exc)


async def read_json_body(request: Request) -> dict[str, Any]:
    """The JSON object of a request, read only after its key was checked (see ``_routes``).

    The body is read while streaming and abandoned at ``MAX_BODY_BYTES``: nobody can make the
    server hold a 300 MB body in memory, with or without a key."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise ApiError(TOO_LARGE, "body_too_large")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ApiError(TOO_LARGE, "body_too_large")
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks) or b"{}")
    except ValueError:
        raise ApiError("body is not valid JSON", "bad_request") from None
    except RecursionError:  # "[[[[…" thousands deep: the parser's own stack limit
        raise ApiError("body is nested too deeply", "bad_request") from None
    if not isinstance(body, dict):
        raise ApiError("body must be a JSON object", "bad_request")
    return body


def _chat(value: Any) -> str:
    chat = parse_chat(value) if isinstance(value, str) else None
    if chat is None:
        raise ApiError("chat must look like 'onebotv11:12345'", "bad_request")
    return chat


def _routes(router: APIRouter, profile_of: Any) -> None:
    async def _json_body(request: Request, _: Profile = Depends(profile_of)) -> dict[str, Any]:
        # The key first: a caller without one gets its 401 before a byte of the body is read.
        return await read_json_body(request)

    @router.get("/projects")
    def projects(p: Profile = Depends(profile_of)) -> dict[str, Any]:
        rows = [pr for pr in hermes_db.load_projects(p.home) if not pr.get("archived")]
        return {"success": True, "projects": [{"id": r["id"], "slug": r["slug"], "name": r["name"]} for r in rows]}

    @router.post("/search")
    def search(body: dict[str, Any] = Depends(_json_body), p: Profile = Depends(profile_of)) -> dict[str, Any]:
        zone = clock.zone(p.home)
        req = parse_search_args(body, allowed_extra=("chat", "project"), zone=zone)
        if (body.get("chat") is None) == (body.get("project") is None):
            raise ApiError("give exactly one of 'chat' or 'project'", "bad_request")
        if body.get("chat") is not None:
            # The chat's scope from the scope map, which holds its binding and the projects: the
            # project is looked up once, by the same rule the agent's tools are sealed with.
            return _dated(chat_facing(engine_for(p.home).search(req, chat=_chat(body["chat"]))), zone)
        if isinstance(body["project"], str) and body["project"].strip():
            return _dated(engine_for(p.home).search(req, project=body["project"].strip()), zone)
        raise ApiError("'project' must be a project id or slug", "bad_request")

    @router.get("/chats/{chat}/binding")
    def get_binding(chat: str, p: Profile = Depends(profile_of)) -> dict[str, Any]:
        return chat_service.binding_view(p.home, _chat(chat))

    @router.put("/chats/{chat}/binding")
    def put_binding(chat: str, body: dict[str, Any] = Depends(_json_body),
                    p: Profile = Depends(profile_of)) -> dict[str, Any]:
        name = _chat(chat)
        ref = body.get("project")
        if not isinstance(ref, str) or not ref.strip():
            raise ApiError("'project' must be a project id or slug", "bad_request")
        project = chat_service.resolve_project_ref(p.home, ref.strip())
        bindings.set_binding(p.home, name, project["id"], only_if_unset=bool(body.get("only_if_unset")))
        return chat_service.binding_view(p.home, name)

    @router.delete("/chats/{chat}/binding")
    def delete_binding(chat: str, p: Profile = Depends(profile_of)) -> dict[str, Any]:
        name = _chat(chat)
        bindings.clear_binding(p.home, name)
        return chat_service.binding_view(p.home, name)

    @router.post("/move")
    def move(body: dict[str, Any] = Depends(_json_body), p: Profile = Depends(profile_of)) -> dict[str, Any]:
        ref = body.get("project")
        if not isinstance(ref, str):
            raise ApiError("'project' must be a project id or slug, or '' for Home", "bad_request")
        if (body.get("chat") is None) == (body.get("session_id") is None):
            raise ApiError("give exactly one of 'chat' or 'session_id'", "bad_request")
        if body.get("chat") is not None:
            moved = chat_service.move_chat(p.home, _chat(body["chat"]), ref.strip())
            # Chat-facing: the bot answers a group with this; the folder stays on the server.
            return {k: (without_paths(v) if k == "project" else v) for k, v in moved.items() if k != "cwd"}
        sid = body["session_id"]
        if not isinstance(sid, str) or not sid or len(sid) > 256:
            raise ApiError("'session_id' must be a session id", "bad_request")
        finish_interrupted(p.home)  # a move killed half-way is finished before the next one
        result = move_sessions(p.home, [sid], ref.strip())
        reader_for(p.home).scopes.invalidate()
        return result

    @router.get("/status")
    def status(p: Profile = Depends(profile_of)) -> dict[str, Any]:
        from ..actions.status import profile_status

        return profile_status(p.home)

    @router.post("/forget")
    def forget_route(body: dict[str, Any] = Depends(_json_body), p: Profile = Depends(profile_of)) -> dict[str, Any]:
        """Take a chat's turns out of recall: a dry run unless ``apply`` (docs/recall-api.md).
        The bot decides who may ask for which scope; the API keeps every scope inside the chat."""
        return _forget(p.home, body)

    @router.get("/chats/{chat}/recall")
    def get_recall(chat: str, p: Profile = Depends(profile_of)) -> dict[str, Any]:
        from ..actions.forget import recall_state

        return recall_state(p.home, _chat(chat))

    @router.put("/chats/{chat}/recall")
    def put_recall(chat: str, body: dict[str, Any] = Depends(_json_body),
                   p: Profile = Depends(profile_of)) -> dict[str, Any]:
        from ..actions.forget import set_recall

        if not isinstance(body.get("enabled"), bool):
            raise ApiError("'enabled' must be true or false", "bad_request")
        return set_recall(p.home, _chat(chat), body["enabled"], actor=_actor(body), surface="api")

    @router.put("/chats/{chat}/members/{user}/optout")
    def put_optout(chat: str, user: str, body: dict[str, Any] = Depends(_json_body),
                   p: Profile = Depends(profile_of)) -> dict[str, Any]:
        from ..actions.forget import set_optout

        if not isinstance(body.get("opted_out"), bool):
            raise ApiError("'opted_out' must be true or false", "bad_request")
        return set_optout(p.home, _chat(chat), user, body["opted_out"], actor=_actor(body), surface="api")

    @router.post("/context")
    def context(body: dict[str, Any] = Depends(_json_body), p: Profile = Depends(profile_of)) -> dict[str, Any]:
        """The turns around one search hit, sealed to the chat's project (docs/recall-api.md)."""
        from ..search.context import open_context, parse_context_args

        req = parse_context_args(body, allowed_extra=("chat",))
        return _dated(chat_facing(open_context(engine_for(p.home), req, chat=_chat(body.get("chat")))),
                      clock.zone(p.home))


def _dated(result: dict[str, Any], zone: Any) -> dict[str, Any]:
    """The answer with ``now``: this moment on the profile's calendar, as its rows' ``when`` are
    written, so a bot says "today" / "yesterday" by the group's calendar whatever its own clock's zone."""
    return {**result, "now": format_when(time.time(), zone)}


FORGET_FIELDS = {"chat", "scope", "user", "session_id", "after", "before", "message_id", "apply", "actor"}


def _actor(body: dict[str, Any]) -> str:
    actor = body.get("actor", "")
    if not isinstance(actor, str) or len(actor) > 200:
        raise ApiError("'actor' must be a short string like 'onebotv11:10001'", "bad_request")
    return actor or "api"


def _forget(home: Path, body: dict[str, Any]) -> dict[str, Any]:
    import time

    from ..actions import forget
    from ..search.request import parse_time

    unknown = sorted(str(k) for k in body if k not in FORGET_FIELDS)
    if unknown:
        raise ApiError(f"unknown field(s): {', '.join(unknown)[:200]}", "bad_request")
    chat, scope, now = _chat(body.get("chat")), body.get("scope"), time.time()
    zone = clock.zone(home)  # a date is a day of the profile's calendar, as in a search
    after, before = (parse_time(body.get(edge), edge, now, zone) for edge in ("after", "before"))
    if after is not None and before is not None and after >= before:
        raise ApiError("'after' must be earlier than 'before'", "bad_request")
    if not isinstance(body.get("apply", False), bool):
        raise ApiError("'apply' must be true or false", "bad_request")
    mid = body.get("message_id")
    if mid is not None and (isinstance(mid, bool) or not isinstance(mid, int) or mid <= 0):
        raise ApiError("'message_id' must be the message_id of a search result", "bad_request")
    if scope == "member":
        user = body.get("user")
        if not isinstance(user, str):
            raise ApiError("'user' is required for scope 'member'", "bad_request")
        plan = forget.plan_member(home, chat, user, after=after, before=before, message_id=mid)
    elif scope == "session":
        if after is not None or before is not None or mid is not None:
            raise ApiError("scope 'session' takes the whole conversation", "bad_request")
        plan = forget.plan_session(home, body.get("session_id"), chat=chat)
    elif scope == "chat":
        if mid is not None:
            raise ApiError("scope 'chat' takes 'before'/'after', not 'message_id'", "bad_request")
        plan = forget.plan_chat(home, chat, after=after, before=before)
    else:
        raise ApiError("'scope' must be 'member', 'session' or 'chat'", "bad_request")
    result = forget.apply(home, plan, actor=_actor(body), surface="api") if body.get("apply") else forget.dry_run(plan)
    # The span's first and last turn on the profile's calendar, as a search's rows show their time:
    # a bot kept in UTC beside a Hermes set to Beijing names the days the group said them.
    days = {f"{edge}_when": format_when(result[edge], zone) for edge in ("first", "last")
            if isinstance(result.get(edge), int | float)}
    return {"success": True, **result, **days}


def _error_handlers(app: FastAPI, launch_home: Path) -> None:
    def reply(status: int, message: str, code: str, reason: str = "", file: str = "") -> JSONResponse:
        body = {"success": False, "error": message, "code": code} | ({"reason": reason} if reason else {})
        return JSONResponse(body | ({"file": file} if file else {}), status_code=status)

    @app.exception_handler(RecallError)
    async def _recall(_: Request, exc: RecallError) -> JSONResponse:
        # Fail closed: an unreadable projects.db or bindings.db is an error (503), never "nothing".
        status, fixed = ERRORS.get(exc.code, (400, None))
        if fixed is not None or exc.detail or status >= 500:
            log.warning("recall API answered %s: %s%s", exc.code, exc, f" ({exc.detail})" if exc.detail else "")
        if exc.code == "unavailable":
            fixed = f"{exc}; ask the operator"
        # A file fault also names the file (a name, never a path), so a chat can say which one.
        return reply(status, fixed or str(exc), exc.code, exc.reason, getattr(exc, "file", ""))

    @app.exception_handler(TimeoutError)
    async def _busy(_: Request, exc: TimeoutError) -> JSONResponse:
        log.warning("recall API: timed out waiting: %s", exc)
        return reply(503, "another change of this chat is in progress; try again", "busy")

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return reply(400, "malformed request", "bad_request")

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = "not_found" if exc.status_code == 404 else "bad_request"
        return reply(exc.status_code, str(exc.detail), code)

    @app.exception_handler(sqlite3.Error)
    @app.exception_handler(OSError)
    async def _file_fault(request: Request, exc: Exception) -> JSONResponse:
        # A file fault no store guard named (Hermes' own writes, a folder): still a reason, not a 500.
        fault = faults.unattributed(exc, launch_home)
        log.warning("recall API answered unavailable: %s (%s)", fault, fault.detail, exc_info=exc)
        return reply(503, f"{fault}; ask the operator", "unavailable")

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("recall API request failed")
        return reply(500, "internal error", "internal")
