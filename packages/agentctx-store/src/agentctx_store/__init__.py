"""The agentctx record store: SQLite, typed bi-temporal records, search and budgets.

Standard library only: this package is imported on every Claude Code prompt. Its names load
lazily (PEP 562), so `agentctx_store.service_link` (the prompt hook's warm path) can be imported
without `sqlite3` or the store.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentctx_store.errors import (
        AgentctxError,
        NotHeadError,
        RecordNotFound,
        StoreError,
        StoreLockedError,
        ValidationError,
    )
    from agentctx_store.projects import GLOBAL_PROJECT_ID, Project, global_project, normalize_remote, resolve_project
    from agentctx_store.records import CONFIDENCES, RECORD_TYPES, SCOPES, SOURCES, NewRecord, Record
    from agentctx_store.retrieval import SearchHit, SearchResult, search
    from agentctx_store.store import Store

_EXPORTS = {
    "AgentctxError": "errors",
    "NotHeadError": "errors",
    "RecordNotFound": "errors",
    "StoreError": "errors",
    "StoreLockedError": "errors",
    "ValidationError": "errors",
    "GLOBAL_PROJECT_ID": "projects",
    "Project": "projects",
    "global_project": "projects",
    "normalize_remote": "projects",
    "resolve_project": "projects",
    "CONFIDENCES": "records",
    "RECORD_TYPES": "records",
    "SCOPES": "records",
    "SOURCES": "records",
    "NewRecord": "records",
    "Record": "records",
    "SearchHit": "retrieval",
    "SearchResult": "retrieval",
    "search": "retrieval",
    "Store": "store",
}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentctx_store' has no attribute {name!r}")
    __import__(f"agentctx_store.{module}")  # not importlib: it costs the prompt hook its import
    value = getattr(sys.modules[f"agentctx_store.{module}"], name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "CONFIDENCES",
    "GLOBAL_PROJECT_ID",
    "RECORD_TYPES",
    "SCOPES",
    "SOURCES",
    "AgentctxError",
    "NewRecord",
    "NotHeadError",
    "Project",
    "Record",
    "RecordNotFound",
    "SearchHit",
    "SearchResult",
    "Store",
    "StoreError",
    "StoreLockedError",
    "ValidationError",
    "global_project",
    "normalize_remote",
    "resolve_project",
    "search",
]
