"""agentctx-remote: sync the local store with a PostgreSQL remote (docs/remote.md)."""

from agentctx_remote.remotes import Remote, add, all_remotes, get, remove, set_rule
from agentctx_remote.rule import ShareRule
from agentctx_remote.server import SCHEMA_VERSION, RemoteError, RemoteUnreachable, connect, init_schema
from agentctx_remote.sync import SyncReport, sync

__all__ = [
    "SCHEMA_VERSION",
    "Remote",
    "RemoteError",
    "RemoteUnreachable",
    "ShareRule",
    "SyncReport",
    "add",
    "all_remotes",
    "connect",
    "get",
    "init_schema",
    "remove",
    "set_rule",
    "sync",
]
