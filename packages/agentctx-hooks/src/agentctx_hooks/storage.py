"""Opening the store from a hook process, and leaving it without a checkpoint.

Closing the last connection to a WAL database checkpoints the log into the main file and
fsyncs, which costs a hook more than its own query. When the hook owns its process
(`__main__.main` run as `agentctx hook …`), it ends with `os._exit`, so the connection is left
open instead: every transaction has committed, the WAL stays valid for the next process, and
SQLite's auto-checkpoint (every 1,000 pages, on commit) keeps it bounded. Derived digests are
refreshed exactly as `Store.close()` would. In-process callers (tests) close normally.
"""

from __future__ import annotations

import sqlite3

from agentctx_hooks._process import ENDS_WITH_OS_EXIT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentctx_store import Project, Store

_kept: list[Store] = []  # referenced until os._exit, so nothing closes them on the way out


def project_of(cwd: str) -> Project:
    """`agentctx_store.resolve_project(cwd)`, computed by `_fast` (no configparser, no OpenSSL,
    no pathlib: the root is given as text and becomes a `Path` only if something reads it)."""
    return project_and_root(cwd)[0]


def project_and_root(cwd: str) -> tuple[Project, str]:
    """`project_of(cwd)` and its root as text (reading `Project.root` would import pathlib)."""
    import os

    from agentctx_store.projects import Project

    from agentctx_hooks._fast import resolve

    project_id, root, remote = resolve(cwd)
    return Project(project_id=project_id, root=root, name=os.path.basename(root) or root, remote=remote), root


def open_store(*, busy_ms: int) -> OpenStore:
    """`with open_store(busy_ms=...) as store:` the store, opened on entry."""
    return OpenStore(busy_ms)


class OpenStore:
    """The context manager of `open_store`. A class rather than a `contextlib.contextmanager`
    generator: contextlib (with collections and functools) costs the prompt hook about 1 ms."""

    def __init__(self, busy_ms: int) -> None:
        self.busy_ms = busy_ms
        self.store: Store | None = None

    def __enter__(self) -> Store:
        from agentctx_store.store import Store

        self.store = Store.open()
        self.store.conn.execute(f"PRAGMA busy_timeout = {int(self.busy_ms)}")
        return self.store

    def __exit__(self, *exc_info: object) -> None:
        store = self.store
        if store is None:
            return
        if ENDS_WITH_OS_EXIT["value"] and not store.conn.in_transaction:
            try:
                if store.dirty:
                    from agentctx_store.upkeep import digest

                    digest.refresh_after_write(store, store.dirty)
            except (OSError, sqlite3.Error):
                pass  # derived: the next write or consolidation rebuilds it (as Store.close does)
            store.dirty.clear()
            _kept.append(store)
        else:
            store.close()
