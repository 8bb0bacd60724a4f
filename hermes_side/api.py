"""The recall API (docs/recall-api.md): FastAPI app serving one or many profiles.

Routes are declared once and mounted twice — at the root (the launch profile) and under
``/p/<profile>/`` like Hermes' own API server. Handlers are plain ``def`` so FastAPI runs the
blocking SQLite work in its thread pool.
"""

from __future__ import annotations

import hmac
import logging
import re
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio.to_thread
from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from . import __version__, bindings, chat_service, hermes_db
from .chats import parse_chat
from .move import MoveError, move_sessions
from .request import RequestError, parse_search_args
from .search import SearchError, engine_for

log = logging.getLogger(__name__)
PROFILE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
MAX_BODY_BYTES = 64 * 1024
WORKER_THREADS = 8

STATUS_BY_CODE = {
    "unauthorized": 401, "unknown_profile": 404, "not_found": 404, "unknown_project": 404,
    "chat_unbound": 409, "no_db": 503, "folder_missing": 409, "query_too_long": 413,
}


class ApiError(Exception):
    def __init__(self, message: str, code: str, status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status or STATUS_BY_CODE.get(code, 400)


class Profile:
    def __init__(self, name: str, home: Path) -> None:
        self.name, self.home = name, home


def profiles_root(home: Path) -> Path:
    """``~/.hermes`` for both the default home and ``~/.hermes/profiles/<name>``."""
    return home.parent.parent if home.parent.name == "profiles" else home


def create_app(launch_home: Path, api_key: str, launch_profile: str = "default") -> FastAPI:
    launch_home = Path(launch_home)
    root = profiles_root(launch_home)
    key = api_key.encode()

    def authorize(request: Request) -> None:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), key):
            raise ApiError("missing or wrong API key", "unauthorized")

    def profile_of(request: Request) -> Profile:
        name = request.path_params.get("profile")
        if name is None:
            return Profile(launch_profile, launch_home)
        if not isinstance(name, str) or not PROFILE_NAME.match(name):
            raise ApiError("unknown profile", "unknown_profile")
        home = root if name == "default" else root / "profiles" / name
        if not home.is_dir():
            raise ApiError("unknown profile", "unknown_profile")
        return Profile(name, home)

    router = APIRouter(dependencies=[Depends(authorize)])
    _routes(router, profile_of)

    @asynccontextmanager
    async def lifespan(_: FastAPI):
        # Searches run in worker threads but at most MAX_CONCURRENT per profile at once; a few
        # more threads than that keep requests queued without 40 idle stacks and arenas.
        anyio.to_thread.current_default_thread_limiter().total_tokens = WORKER_THREADS
        yield

    app = FastAPI(title="Project history recall", version=__version__, lifespan=lifespan)

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"ok": True, "profile": launch_profile, "version": __version__}

    @app.get("/p/{profile}/health")
    def profile_health(p: Profile = Depends(profile_of)) -> dict[str, Any]:
        return {"ok": True, "profile": p.name, "version": __version__}

    app.include_router(router)
    app.include_router(router, prefix="/p/{profile}")
    _error_handlers(app)
    return app


async def _json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        raise ApiError(f"request body too large (limit {MAX_BODY_BYTES} bytes)", "query_too_long")
    try:
        import json

        body = json.loads(raw or b"{}")
    except ValueError:
        raise ApiError("body is not valid JSON", "bad_request") from None
    if not isinstance(body, dict):
        raise ApiError("body must be a JSON object", "bad_request")
    return body


def _chat(value: Any) -> str:
    chat = parse_chat(value) if isinstance(value, str) else None
    if chat is None:
        raise ApiError("chat must look like 'onebotv11:12345'", "bad_request")
    return chat


def _routes(router: APIRouter, profile_of: Any) -> None:
    @router.get("/projects")
    def projects(p: Profile = Depends(profile_of)) -> dict[str, Any]:
        rows = [pr for pr in hermes_db.load_projects(p.home) if not pr.get("archived")]
        return {"success": True, "projects": [
            {"id": r["id"], "slug": r["slug"], "name": r["name"], "primary_path": r.get("primary_path")}
            for r in rows]}

    @router.post("/search")
    def search(body: dict[str, Any] = Depends(_json_body), p: Profile = Depends(profile_of)) -> dict[str, Any]:
        req = parse_search_args(body, allowed_extra=("chat", "project"))
        if (body.get("chat") is None) == (body.get("project") is None):
            raise ApiError("give exactly one of 'chat' or 'project'", "bad_request")
        if body.get("chat") is not None:
            project_id = chat_service.chat_project(p.home, _chat(body["chat"]))["id"]
        elif isinstance(body["project"], str) and body["project"].strip():
            project_id = body["project"].strip()
        else:
            raise ApiError("'project' must be a project id or slug", "bad_request")
        return engine_for(p.home, p.name).search(req, project=project_id)

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
            return chat_service.move_chat(p.home, _chat(body["chat"]), ref.strip(), p.name)
        sid = body["session_id"]
        if not isinstance(sid, str) or not sid or len(sid) > 256:
            raise ApiError("'session_id' must be a session id", "bad_request")
        result = move_sessions(p.home, [sid], ref.strip())
        engine_for(p.home, p.name).scopes.invalidate()
        return result

    @router.get("/status")
    def status(p: Profile = Depends(profile_of)) -> dict[str, Any]:
        from .status import profile_status

        return profile_status(p.home, p.name)

    @router.post("/context")
    def context(body: dict[str, Any] = Depends(_json_body), p: Profile = Depends(profile_of)) -> dict[str, Any]:
        """The turns around one search hit, sealed to the chat's project (docs/recall-api.md)."""
        from .context import open_context, parse_context_args

        req = parse_context_args(body, allowed_extra=("chat",))
        project_id = chat_service.chat_project(p.home, _chat(body.get("chat")))["id"]
        return open_context(engine_for(p.home, p.name), req, project=project_id)


def _error_handlers(app: FastAPI) -> None:
    def reply(status: int, message: str, code: str) -> JSONResponse:
        return JSONResponse({"success": False, "error": message, "code": code}, status_code=status)

    @app.exception_handler(ApiError)
    async def _api(_: Request, exc: ApiError) -> JSONResponse:
        return reply(exc.status, str(exc), exc.code)

    @app.exception_handler(RequestError)
    async def _req(_: Request, exc: RequestError) -> JSONResponse:
        return reply(STATUS_BY_CODE.get(exc.code, 400), str(exc), exc.code)

    @app.exception_handler(SearchError)
    async def _search(_: Request, exc: SearchError) -> JSONResponse:
        return reply(STATUS_BY_CODE.get(exc.code, 400), str(exc), exc.code)

    @app.exception_handler(MoveError)
    async def _move(_: Request, exc: MoveError) -> JSONResponse:
        return reply(STATUS_BY_CODE.get(exc.code, 400), str(exc), exc.code)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return reply(400, "malformed request", "bad_request")

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = "not_found" if exc.status_code == 404 else "bad_request"
        return reply(exc.status_code, str(exc.detail), code)

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("recall API request failed")
        return reply(500, "internal error", "internal")
