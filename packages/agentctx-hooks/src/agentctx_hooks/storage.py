"""Opening the store from a hook process, and leaving it without a checkpoint.

Closing the last connection to a WAL database checkpoints the log into the main file and
fsyncs, which costs a hook more than its own query. When the hook owns its process
(`HookInput.ends_process`: run as `agentctx hook …`, ended with `os._exit`), the connection is
left open instead: every transaction has committed, the WAL stays valid for the next process,
and SQLite's auto-checkpoint (every 1,000 pages, on commit) keeps it bounded. In-process callers
(tests) close normally. Either way the digests of the projects a hook changed are refreshed.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentctx_store import Store

    from agentctx_hooks.payload import HookInput

_kept: list[Store] = []  # referenced until os._exit, so nothing closes them on the way out


class open_store:
    """The store, opened on entry with a busy timeout of `busy_ms`."""

    def __init__(self, hook: HookInput, *, busy_ms: int) -> None:
        self.keep_open = hook.ends_process
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
        if store.dirty:
            from agentctx_store import digest

            digest.refresh_changed(store)
        if self.keep_open and not store.conn.in_transaction:
            _kept.append(store)
        else:
            store.close()
