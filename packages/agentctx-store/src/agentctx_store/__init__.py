"""The agentctx record store: SQLite, typed bi-temporal records, search and budgets.

Standard library only: this package is imported on every Claude Code prompt.
"""

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
from agentctx_store.search import SearchHit, SearchResult, search
from agentctx_store.store import Store

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
