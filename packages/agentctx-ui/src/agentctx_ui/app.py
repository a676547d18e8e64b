"""The dashboard application: the guard, the JSON API, the page and its static files.

`create_app` is what `agentctx ui` serves and what the tests drive; it holds no store state
between requests (each request opens the store, as a CLI command would).
"""

from __future__ import annotations

import html
import secrets
import sqlite3
from importlib import resources
from pathlib import Path

from agentctx_store import AgentctxError, NotHeadError, Project, RecordNotFound, StoreError, ValidationError, paths
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from agentctx_ui import __version__
from agentctx_ui.api_inbox import router as inbox_router
from agentctx_ui.api_records import router as records_router
from agentctx_ui.api_views import router as views_router
from agentctx_ui.context import DashboardContext
from agentctx_ui.head import HeadAsGet
from agentctx_ui.security import GuardMiddleware

STATIC_DIR = Path(str(resources.files("agentctx_ui") / "static"))
TOKEN_PLACEHOLDER = "__AGENTCTX_TOKEN__"


def status_for(error: AgentctxError) -> int:
    """Store errors are answers, not crashes: each kind has its HTTP status."""
    if isinstance(error, RecordNotFound):
        return 404
    if isinstance(error, NotHeadError):
        return 409
    if isinstance(error, ValidationError):
        return 422
    if isinstance(error, StoreError):  # locked, unreadable, too new: the file cannot be used right now
        return 503
    return 400


def create_app(*, project: Project, port: int = 7327, token: str | None = None, db_path: Path | None = None) -> FastAPI:
    """The dashboard for `project` (the default in the project picker), answering on 127.0.0.1:`port`.

    `token` is made at random when not given; only the served page carries it.
    """
    secret = token or secrets.token_urlsafe(32)
    app = FastAPI(
        title="agentctx dashboard API",
        version=__version__,
        description="Local JSON API of `agentctx ui`: the same store calls as the CLI. "
        "Writes need the `X-Agentctx-Token` header from the served page.",
        openapi_url="/api/openapi.json",
        docs_url=None,  # Swagger UI and ReDoc load from a CDN: not offline, and not allowed by our CSP
        redoc_url=None,
    )
    app.state.dashboard = DashboardContext(default_project=project, db_path=db_path)
    app.include_router(records_router)
    app.include_router(views_router)
    app.include_router(inbox_router)

    @app.exception_handler(AgentctxError)
    async def store_error(request: Request, exc: AgentctxError) -> JSONResponse:
        body: dict[str, object] = {"error": str(exc)}
        if isinstance(exc, NotHeadError):
            body["head_id"] = exc.head_id
        return JSONResponse(body, status_code=status_for(exc))

    @app.exception_handler(sqlite3.OperationalError)
    async def store_busy(request: Request, exc: sqlite3.OperationalError) -> JSONResponse:
        """Another process held the write lock past the busy timeout: a moment's wait, not a crash."""
        text = str(exc)
        if "locked" in text or "busy" in text:
            message = "The store is busy (another agentctx process is writing); try again in a moment."
            return JSONResponse({"error": message}, status_code=503, headers={"retry-after": "1"})
        from agentctx_store.db import store_error

        path = str(request.app.state.dashboard.db_path or paths.db_path())
        return JSONResponse({"error": f"{store_error(exc, path)} Run `agentctx doctor`."}, status_code=500)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error.get('loc', ()))}: {error.get('msg', 'invalid')}"
            for error in exc.errors()
        )
        return JSONResponse({"error": f"Invalid request: {problems}."}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        """Unknown routes, wrong methods, unreadable bodies: the same `{"error": ...}` shape as the rest."""
        message = {404: "No such page or endpoint; /api/openapi.json lists the API."}.get(
            exc.status_code, str(exc.detail)
        )
        return JSONResponse({"error": message}, status_code=exc.status_code, headers=exc.headers)

    page = (STATIC_DIR / "index.html").read_text(encoding="utf-8").replace(TOKEN_PLACEHOLDER, html.escape(secret))

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def index() -> HTMLResponse:
        return HTMLResponse(page, headers={"cache-control": "no-store"})

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.add_middleware(HeadAsGet)  # inside the guard: a HEAD is refused or allowed as a GET would be
    app.add_middleware(GuardMiddleware, token=secret, port=port)
    return app
