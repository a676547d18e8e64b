"""The MCP stdio server: seven tools, compact text results, structured errors
(docs/contracts.md#mcp-tools, docs/adr/0002-hooks-inject-mcp-looks-up.md).

What reaches the model. Claude Code hands the model a tool's `structuredContent` when there is
one, and mcp 2.x derives that (and an `outputSchema` in `tools/list`) from a return annotation,
wrapping a `str` as `{"result": …}`. Every tool here returns a `CallToolResult` with a single
text block and no structured content: the index lines and the compact JSON reach the model
verbatim, and no output schema is paid for in every session's `tools/list`.

Errors are `{"error": …, "degraded"?: …}` JSON in a result with `isError: true`, built from the
store's user-readable messages; argument validation errors are rewritten the same way; nothing
is ever written to stdout but protocol (the SDK points fd 1 at stderr while serving, and logs
go to `$AGENTCTX_HOME/logs/mcp.log`).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import logging
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pydantic
from agentctx_store import clients, digest, paths
from agentctx_store.errors import AgentctxError, NotHeadError, StoreError, ValidationError
from agentctx_store.fence import unfence
from agentctx_store.projects import Project, resolve_project
from agentctx_store.records import RecordType, Scope, check_type
from agentctx_store.store import Store
from agentctx_store.ulid import new_ulid
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from agentctx_mcp import bounds, tools
from agentctx_mcp.schema import compact_schema

logger = logging.getLogger("agentctx.mcp")

SERVER_NAME = "agentctx"
INSTRUCTIONS = (
    "This project's memory of decisions, conventions and past work. "
    "ctx_search first (a compact index), then ctx_get only the ids you need."
)
READ_ONLY = ToolAnnotations(read_only_hint=True)


def server_project() -> Project:
    """The project this server serves: `$CLAUDE_PROJECT_DIR` when Claude Code set it, else the cwd."""
    configured = os.environ.get("CLAUDE_PROJECT_DIR", "").strip()
    base = Path(configured) if configured and Path(configured).is_dir() else Path.cwd()
    return resolve_project(base)


RUN_ID = new_ulid()  # one server process = one session of its client


def server_client() -> str | None:
    """The client that started this server: `AGENTCTX_CLIENT`, which `agentctx init --client X`
    writes into the server's registration (None when unset or not a client agentctx knows)."""
    value = os.environ.get("AGENTCTX_CLIENT", "").strip().lower()
    return value if value in clients.CLIENTS else None


def client_session() -> str | None:
    """The session id the records this server writes carry, so `show`, the dashboard and export
    find their client (and the hook `MCP`) in that session's metadata, as for hook-made records."""
    client = server_client()
    return f"mcp-{client}-{RUN_ID}" if client else None


def note_client(store: Store, project: Project, session_id: str | None) -> None:
    if session_id:
        store.update_session_meta(project, session_id, client=server_client(), hook="MCP")


def text_result(value: str | dict[str, Any]) -> CallToolResult:
    """A tool's answer as one text block. Every answer passes through `fence.unfence` here, so no
    field of any tool (a profile value read from the repository, a CLAUDE.md diff, a rationale, an
    anchor) can open or close a tag in front of the model; JSON's own syntax holds no `<`, and the
    escaping is idempotent, so fields the tools escaped already are unchanged."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=unfence(text))])


def error_result(message: str, *, degraded: str | None = None, **extra: Any) -> CallToolResult:
    """The structured error of every tool (docs/contracts.md#mcp-tools): `{error, degraded?}`
    (plus `head_id` for a non-head)."""
    payload: dict[str, Any] = {"error": message}
    if degraded:
        payload["degraded"] = degraded
    payload.update({key: value for key, value in extra.items() if value is not None})
    return CallToolResult(
        content=[TextContent(type="text", text=unfence(json.dumps(payload, ensure_ascii=False)))], is_error=True
    )


def run_tool(name: str, action: Callable[[Store, Project], str | dict[str, Any]]) -> CallToolResult:
    """Open the store for one call, run `action`, and turn every failure into a structured error.

    A store per call: each call runs on its own worker thread, and a short connection never
    pins an old WAL snapshot while hooks keep writing.
    """
    try:
        project = server_project()
        with digest.refreshing(Store.open()) as store:
            value = action(store, project)
    except NotHeadError as exc:
        return error_result(str(exc), head_id=exc.head_id)
    except StoreError as exc:
        logger.warning("%s: store unavailable: %s", name, exc)
        return error_result(str(exc), degraded="store-unavailable")
    except AgentctxError as exc:
        return error_result(str(exc))
    except sqlite3.DatabaseError as exc:  # a write the store refused: full disk, read-only, …
        from agentctx_store.db import store_error

        logger.warning("%s: %s", name, exc)
        return error_result(str(store_error(exc, paths.db_path())), degraded="store-unavailable")
    except Exception:  # the MCP boundary: the model gets one sentence, the log gets the traceback
        logger.exception("%s failed", name)
        return error_result(f"{name} failed unexpectedly; details are in {Path(paths.logs_dir()) / 'mcp.log'}.")
    return text_result(value)


# -- the seven tools ------------------------------------------------------------------------


def ctx_search(
    query: str,
    type: RecordType | None = None,
    file: str | None = None,
    scope: Scope = "project",
    limit: int = tools.DEFAULT_LIMIT,
) -> CallToolResult:
    """Search this project's memory (decisions, conventions, preferences, discoveries, bugfixes, handover) before deciding or redoing something. Returns an index: id | type | title | age | confidence | score; then ctx_get the ids you need. limit ≤ 15. file: only records linked to that path. scope=global: cross-project only."""
    return run_tool(
        "ctx_search",
        lambda store, project: tools.search_index(
            store, project, query, type=type, file=file, scope=scope, limit=limit
        ),
    )


def ctx_get(ids: list[str]) -> CallToolResult:
    """Full records (body, validity, provenance) for up to 10 ids from ctx_search or ctx_related. Unknown or superseded ids come back in missing."""
    return run_tool("ctx_get", lambda store, project: tools.get_records(store, project, ids))


def ctx_record(
    type: RecordType,
    title: str,
    body: str,
    supersedes: str | None = None,
    scope: Scope = "project",
    anchors: list[str] | None = None,
) -> CallToolResult:
    """Save one fact the developer stated or chose (a decision and why, a convention, a preference). One fact per record: title ≤ 120 chars, body ≤ 2000. supersedes: id of the record it replaces. scope=global: for all projects. anchors: files it rests on (path, path:10-20, path:func)."""

    def action(store: Store, project: Project) -> dict[str, Any]:
        session_id = client_session()
        result = tools.record_new(store, project, type, title, body, supersedes, scope, anchors, session_id=session_id)
        note_client(store, project, session_id)
        return result

    return run_tool("ctx_record", action)


def ctx_supersede(old_id: str, new_body: str, rationale: str) -> CallToolResult:
    """A stored fact no longer holds: retire old_id and store new_body as its replacement, with why in rationale. Returns both ids."""

    def action(store: Store, project: Project) -> dict[str, Any]:
        session_id = client_session()
        result = tools.supersede_record(
            store, project, old_id=old_id, new_body=new_body, rationale=rationale, session_id=session_id
        )
        note_client(store, project, session_id)
        return result

    return run_tool("ctx_supersede", action)


def ctx_project() -> CallToolResult:
    """The project's profile: stack, commands, entry points, record counts, last session. Use when starting unfamiliar work."""
    return run_tool("ctx_project", tools.project_profile)


def ctx_related(file: str) -> CallToolResult:
    """Records linked to a file (decisions, bugfixes, tests about it). Use before changing the file. Same index as ctx_search."""
    return run_tool("ctx_related", lambda store, project: tools.related_index(store, project, file))


def ctx_sync_claudemd() -> CallToolResult:
    """Compare memory with CLAUDE.md: current decisions and conventions it lacks, and statements superseded since. Read-only: show the proposed diff to the developer; edit CLAUDE.md only with their OK."""
    return run_tool("ctx_sync_claudemd", tools.sync_claudemd)


TOOL_FUNCTIONS: tuple[tuple[Callable[..., CallToolResult], ToolAnnotations | None], ...] = (
    (ctx_search, READ_ONLY),
    (ctx_get, READ_ONLY),
    (ctx_record, None),
    (ctx_supersede, None),
    (ctx_project, READ_ONLY),
    (ctx_related, READ_ONLY),
    (ctx_sync_claudemd, READ_ONLY),
)
TOOL_NAMES = tuple(function.__name__ for function, _ in TOOL_FUNCTIONS)


# -- argument errors ------------------------------------------------------------------------


def argument_message(name: str, error: pydantic.ValidationError, arguments: dict[str, Any]) -> str:
    """Pydantic's report as one or two sentences the model can act on."""
    sentences: list[str] = []
    for detail in error.errors():
        field = ".".join(str(part) for part in detail.get("loc", ())) or "arguments"
        kind = detail.get("type", "")
        if kind == "missing":
            sentences.append(f"`{field}` is required.")
        elif field == "type":
            try:
                check_type(str(arguments.get("type"))[: bounds.LIMITS["type"]])
            except ValidationError as exc:
                sentences.append(str(exc))
            else:
                sentences.append(f"`type`: {detail.get('msg', 'invalid value')}.")
        elif field == "scope":
            sentences.append(f"Invalid scope {bounds.prefix(arguments.get('scope'))}; use one of: project, global.")
        else:
            sentences.append(f"`{field}`: {detail.get('msg', 'invalid value')}.")
    return f"Invalid arguments for {name}: " + " ".join(sentences)


class ContextServer(MCPServer):
    """MCPServer whose argument and unknown-tool errors are structured like every other error."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            logger.exception("%s failed", name)
            return error_result(f"{name} failed unexpectedly; details are in {Path(paths.logs_dir()) / 'mcp.log'}.")
        except ToolError as exc:
            if isinstance(exc.__cause__, pydantic.ValidationError):
                return error_result(argument_message(name, exc.__cause__, arguments))
            return error_result(str(exc))


def build_tools() -> list[Tool]:
    """The seven tools, their input schemas stripped of what costs tokens and says nothing."""
    built: list[Tool] = []
    for function, hints in TOOL_FUNCTIONS:
        tool = Tool.from_function(function, annotations=hints, structured_output=False)
        description = " ".join((function.__doc__ or "").split())
        built.append(
            tool.model_copy(update={"parameters": compact_schema(tool.parameters), "description": description})
        )
    return built


def server_version() -> str:
    try:
        return importlib.metadata.version("agentctx-mcp")
    except importlib.metadata.PackageNotFoundError:
        return "0"


def build_server() -> ContextServer:
    return ContextServer(
        SERVER_NAME, instructions=INSTRUCTIONS, version=server_version(), tools=build_tools(), log_level="WARNING"
    )


def configure_logging() -> None:
    """Log to `$AGENTCTX_HOME/logs/mcp.log`, redacted; stdout belongs to the protocol."""
    from agentctx_store.logs import log_to_file

    log_to_file("mcp.log")
    logging.getLogger().setLevel(logging.WARNING)
    logger.setLevel(logging.INFO)


HOST_RETRY_S = 5.0  # how often a server that does not host tries to take over
HOST_DELAY_S = 3.0  # after start-up, before the service (and its model load) competes for the cores
MODEL_RETRY_S = 300.0  # after the service could not load its model


def host_search_service() -> None:
    """Host the warm search service of this data dir when nobody does
    (docs/adr/0008-warm-search-service.md).

    A background thread takes the service lock (`service_link.try_lock`) and starts the service
    as a child process that inherits the lock and reads this server's end of a pipe on stdin, so
    it ends with this process, however that ends. Until it gets the lock it tries again every
    few seconds: when the hosting session ends, the next server takes over. Without the embed
    extra, or with `AGENTCTX_NO_SERVICE=1`, nothing happens."""
    if os.environ.get("AGENTCTX_NO_SERVICE") == "1" or importlib.util.find_spec("agentctx_embed") is None:
        return
    import subprocess
    import sys
    import threading
    import time

    from agentctx_store import service_link

    def loop() -> None:
        time.sleep(HOST_DELAY_S)  # the server answers `initialize` first; the model loads after
        while True:
            note = service_link.lock_note()
            if note.get("unavailable") and time.time() - float(note.get("at") or 0) < MODEL_RETRY_S:
                time.sleep(HOST_RETRY_S)
                continue
            fd = service_link.try_lock()
            if fd is None:
                time.sleep(HOST_RETRY_S)
                continue
            try:
                child = subprocess.Popen(
                    [sys.executable, "-m", "agentctx_embed.service", "--hosted", str(fd)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    pass_fds=(fd,),
                    env={**service_link.SERVICE_ENV, **os.environ},  # the user's own setting wins
                )
            except OSError:
                logger.exception("could not start the warm search service")
                return
            finally:
                os.close(fd)  # the child holds the lock now
            logger.info("warm search service started, pid %d", child.pid)
            code = child.wait()
            logger.info("warm search service exited with %s", code)
            time.sleep(HOST_RETRY_S)

    threading.Thread(target=loop, daemon=True, name="agentctx-service-host").start()


def serve() -> int:
    """Run the stdio server until the client closes stdin. Returns the exit status."""
    from agentctx_store.private import restrict_umask

    restrict_umask()  # its log and the store files it creates are the user's alone
    configure_logging()
    logger.info("start pid=%d cwd=%s", os.getpid(), os.getcwd())
    host_search_service()
    try:
        build_server().run("stdio")
    except KeyboardInterrupt:
        return 0
    except Exception:  # the process boundary: a crash is logged, never printed to stdout
        logger.exception("the MCP server stopped on an error")
        return 1
    return 0
