"""Read-only endpoints behind the other views: projects, graph, profile, sessions, sync, meta."""

from __future__ import annotations

import dataclasses
import importlib
from typing import TYPE_CHECKING, Annotated, Any, Protocol, TypeGuard, cast, runtime_checkable

import pydantic
from agentctx_store import CONFIDENCES, RECORD_TYPES, SCOPES, Project, Store, config, global_project, spend
from agentctx_store.errors import AgentctxError
from agentctx_store.graph_view import record_graph
from agentctx_store.stale import counts as stale_counts
from fastapi import APIRouter, Query, Request

from agentctx_ui import __version__
from agentctx_ui.api_records import ERRORS, ProjectParam, dashboard, out
from agentctx_ui.models import (
    ExtractionOut,
    GraphOut,
    InjectionOut,
    MetaOut,
    ProjectList,
    ProjectOut,
    RecordList,
    RecordTypeName,
    SessionList,
    SessionOut,
    SyncOut,
)

if TYPE_CHECKING:
    from agentctx_store.jsontext import JsonValue

router = APIRouter(prefix="/api", tags=["views"])


@router.get("/meta", response_model=MetaOut)
def meta(request: Request) -> MetaOut:
    """What the page needs to draw its controls."""
    return MetaOut(
        version=__version__,
        default_project=dashboard(request).default_project.project_id,
        types=list(RECORD_TYPES),
        scopes=list(SCOPES),
        confidences=list(CONFIDENCES),
    )


@router.get("/projects", response_model=ProjectList)
def projects(request: Request) -> ProjectList:
    """Every project the store has seen (the one `agentctx ui` started in first), with counts by type
    (each count includes the `_global` records the project sees) and its stale records."""
    context = dashboard(request)
    default = context.default_project
    listed: list[ProjectOut] = []
    with context.store() as store:
        rows = store.list_projects()
        if all(row["project_id"] != default.project_id for row in rows):
            rows.insert(0, {"project_id": default.project_id, "name": default.name, "root": str(default.root)})
        for row in rows:
            project = Project(
                project_id=row["project_id"],
                root=row.get("root") or ".",  # counts need only the id; the root is shown as stored
                name=row.get("name") or row["project_id"][:12],
            )
            counts = store.counts_by_type(project)
            stale, _ = stale_counts(store, project)  # as the last check stored it
            moments = [row.get(key) for key in ("last_seen", "last_record", "last_session")]
            listed.append(
                ProjectOut(
                    project_id=project.project_id,
                    name=project.name,
                    root=row.get("root"),
                    remote=row.get("remote"),
                    is_default=project.project_id == default.project_id,
                    last_activity=max((moment for moment in moments if moment), default=None),
                    counts=counts,
                    total=sum(counts.values()),
                    stale=stale,
                )
            )
    listed.sort(key=lambda item: item.last_activity or "", reverse=True)  # latest first (ISO text sorts)
    listed.sort(key=lambda item: not item.is_default)  # stable: the default project leads
    return ProjectList(projects=listed, default_project=default.project_id)


@router.get("/graph", response_model=GraphOut, responses=ERRORS)
def graph(
    request: Request,
    project: ProjectParam = None,
    type: Annotated[list[RecordTypeName] | None, Query(description="Record types drawn (default: decision).")] = None,
    superseded: Annotated[bool, Query(description="Include superseded records (the chains).")] = True,
    limit: Annotated[int, Query(ge=1, le=2000)] = 400,
) -> GraphOut:
    """Records of the chosen types with their supersession chains, plus records linked to files."""
    context = dashboard(request)
    with context.store() as store:
        view = record_graph(
            store,
            context.project(store, project),
            types=tuple(type or ("decision",)),
            include_superseded=superseded,
            limit=limit,
        )
    data = view.to_dict()
    return GraphOut(
        records=[out(record) for record in view.records],
        entities=data["entities"],
        supersedes=data["supersedes"],
        links=data["links"],
        anchors=data["anchors"],
        truncated=view.truncated,
    )


@router.get("/profile", response_model=RecordList)
def profile(request: Request, limit: Annotated[int, Query(ge=1, le=1000)] = 500) -> RecordList:
    """The developer profile: current global records (`_global`, mostly preferences) with their
    confidence and how often each was seen (`reinforce_count`). Edit or delete them through
    `/api/records/{id}`."""
    context = dashboard(request)
    with context.store() as store:
        records = store.list_records(global_project(), scope="global", limit=limit)
    return RecordList(records=[out(record) for record in records], count=len(records))


@router.get("/sessions", response_model=SessionList, responses=ERRORS)
def sessions(
    request: Request, project: ProjectParam = None, limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> SessionList:
    """Session history: prompts with injections, tokens injected, extraction runs (tokens in, cached,
    out) and cost; this month's extraction spend and the cap."""
    context = dashboard(request)
    with context.store() as store:
        target = context.project(store, project)
        rows = store.list_sessions(target, limit=limit)
        total_tokens = store.total_tokens_injected(target)
        month = spend.month_spent(store)
    items = [
        SessionOut(
            session_id=str(row["session_id"]),
            project_id=row.get("project_id"),
            started_at=row.get("started_at"),
            ended_at=row.get("ended_at"),
            injections=int(row.get("injections") or 0),
            prompt_injections=int(row.get("prompt_injections") or 0),
            tokens_injected=int(row.get("tokens_injected") or 0),
            extraction_cost_usd=float(row.get("extraction_cost_usd") or 0.0),
            extraction=ExtractionOut(**spend.session_usage(row)),
            client=_client(row.get("meta")),
            injection_log=_injection_log(row.get("meta")),
            meta=row.get("meta") or {},
        )
        for row in rows
    ]
    return SessionList(
        sessions=items,
        total_tokens_injected=total_tokens,
        total_extraction_cost_usd=round(sum(item.extraction_cost_usd for item in items), 6),
        month_extraction_cost_usd=round(month, 6),
        monthly_cap_usd=float(config.load()["monthly_cap_usd"]),
    )


def _client(meta: JsonValue) -> str | None:
    client: JsonValue = meta.get("client") if isinstance(meta, dict) else None
    return client if isinstance(client, str) else None


def _injection_log(meta: JsonValue) -> list[InjectionOut]:
    """The session's logged injections (`agentctx_hooks.provenance`); malformed entries are skipped."""
    entries: JsonValue = meta.get("injections") if isinstance(meta, dict) else None
    log: list[InjectionOut] = []
    for entry in entries if isinstance(entries, list) else []:
        try:
            log.append(InjectionOut.model_validate(entry))
        except pydantic.ValidationError:
            continue
    return log


@router.get("/sync", response_model=SyncOut, responses=ERRORS)
def sync(request: Request, project: ProjectParam = None) -> SyncOut:
    """The CLAUDE.md drift report and proposed diff (`agentctx sync` without `--apply`): read only."""
    drift = _drift_module()
    if drift is None:
        return SyncOut(available=False, message="The CLAUDE.md drift report is not available in this version yet.")
    context = dashboard(request)
    with context.store() as store:
        target = context.project(store, project)
        report = _plain(drift.report(store, target))
        if isinstance(report, dict):
            _add_reasons(store, target, report)
    return SyncOut(available=True, report=report)


SOURCE_WORDS = {
    "cli": "recorded by you",
    "mcp_tool": "recorded by the agent",
    "llm_extraction": "extracted from a session",
    "hook_observation": "seen by a hook",
    "import": "imported",
}


def _add_reasons(store: Store, project: Project, report: dict[str, Any]) -> None:
    """Each drift entry's `reason`, in a line: where the record came from and why it is listed."""
    from agentctx_store.freshness import anchor_report

    missing = _entries(report, "missing")
    anchors = anchor_report(store, project, [str(entry.get("id")) for entry in missing])
    for entry in missing:
        try:
            record = store.get(project, str(entry.get("id")))
        except AgentctxError:
            continue
        first = (anchors.get(record.record_id) or [{}])[0]
        if record.source == "learn" and first:
            origin = f"learned from {first['anchor']}"
        else:
            origin = f"{SOURCE_WORDS.get(record.source, record.source)} on {record.recorded_at[:10]}"
        entry["reason"] = f"A current {record.type} ({record.confidence}), {origin}; no line of CLAUDE.md states it."
        entry["source"] = record.source
    for entry in _entries(report, "contradicted"):
        try:
            old = store.get(project, str(entry.get("id")))
        except AgentctxError:
            continue
        when = (old.superseded_at or "")[:10]
        root = str(project.root).rstrip("/") + "/"
        file = str(entry.get("file") or "")
        entry["file"] = file[len(root) :] if file.startswith(root) else file
        entry["reason"] = f"“{old.title}” was superseded on {when} by “{entry.get('current_title')}”."


def _entries(report: dict[str, Any], key: str) -> list[dict[str, Any]]:
    listed: object = report.get(key)
    return (
        [cast("dict[str, Any]", entry) for entry in listed if isinstance(entry, dict)] if _is_sequence(listed) else []
    )


def _drift_module() -> Any:
    try:
        return importlib.import_module("agentctx_store.drift")
    except ImportError:
        return None


@runtime_checkable
class _Reportable(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


def _plain(value: object) -> JsonValue:
    """A report object as JSON-ready data (its own `to_dict()` when it has one)."""
    if isinstance(value, _Reportable):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if _is_sequence(value):
        return [_plain(item) for item in value]
    if _is_mapping(value):
        return {str(key): _plain(item) for key, item in value.items()}
    return value if isinstance(value, str | int | float | bool | type(None)) else str(value)


def _is_sequence(value: object) -> TypeGuard[list[object] | tuple[object, ...]]:
    return isinstance(value, list | tuple)


def _is_mapping(value: object) -> TypeGuard[dict[object, object]]:
    return isinstance(value, dict)
