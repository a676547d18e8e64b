"""The agentctx record store: SQLite, typed bi-temporal records, search and budgets.

Standard library only: this package is imported on every Claude Code prompt.
"""

# Loaded on first use (PEP 562): a hook that only needs `agentctx_store.redact` or `.private`
# must not pay for sqlite3 and the search code it does not use.
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
    "SearchHit": "search",
    "SearchResult": "search",
    "search": "search",
    "Store": "store",
}

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
    from agentctx_store.search import SearchHit, SearchResult, search
    from agentctx_store.store import Store


def _keep_the_function(package: object) -> None:
    """`agentctx_store.search` is the search function, as the eager imports made it: importing
    the submodule `agentctx_store.search` (which sets the package attribute to the module) must
    not replace it."""
    import types

    class Package(types.ModuleType):
        def __setattr__(self, name: str, value: object) -> None:
            if name == "search" and isinstance(value, types.ModuleType):
                value = value.search  # type: ignore[attr-defined]
            super().__setattr__(name, value)

    package.__class__ = Package  # type: ignore[attr-defined]


_keep_the_function(__import__("sys").modules[__name__])


def __getattr__(name: str) -> object:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'agentctx_store' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"agentctx_store.{module_name}"), name)
    globals()[name] = value
    return value


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
