"""The server side: one schema in a PostgreSQL database, created and migrated by agentctx.

`agentctx.ops` is the remote's append-only, ordered log (`seq`, an identity column); an
operation's `op_id` is unique, so pushing one twice changes nothing. Row-level security lets a
member read and append only the operations of projects granted to one of their roles
(`agentctx.grants`), and their own global records; nobody but the schema's owner may update or
delete a row. Pushers take one transaction-scoped advisory lock, so sequence numbers become
visible in order and a reader's cursor never skips a row committed late.
"""

from __future__ import annotations

import os
import socket
import threading
from types import TracebackType
from typing import Any

import psycopg
from agentctx_store.errors import AgentctxError
from psycopg import pq
from psycopg.conninfo import make_conninfo

SCHEMA_VERSION = 1
MEMBER_ROLE = "agentctx_member"
PUSH_LOCK = 0x61637478  # "actx": the advisory lock every push holds until it commits

# Each step is run once, in order, by `init` (the version is kept in `agentctx.meta`).
MIGRATIONS: list[str] = [
    f"""
    CREATE TABLE agentctx.meta (key text PRIMARY KEY, value text NOT NULL);
    CREATE TABLE agentctx.ops (
        seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        op_id     text NOT NULL UNIQUE,
        project   text NOT NULL,
        owner     name NOT NULL DEFAULT session_user,
        record_id text NOT NULL,
        kind      text NOT NULL CHECK (kind IN ('put', 'delete')),
        parent    text,
        state     jsonb NOT NULL,
        made_at   text NOT NULL,
        pushed_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX ops_project_seq ON agentctx.ops (project, seq);
    CREATE TABLE agentctx.grants (role name NOT NULL, project text NOT NULL, PRIMARY KEY (role, project));
    CREATE FUNCTION agentctx.may(p text, o name) RETURNS boolean
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, agentctx AS $$
        SELECT (p = '_global' AND o = session_user) OR EXISTS (
            SELECT 1 FROM agentctx.grants g WHERE g.project = p AND pg_has_role(session_user, g.role, 'MEMBER'))
    $$;
    ALTER TABLE agentctx.ops ENABLE ROW LEVEL SECURITY;
    ALTER TABLE agentctx.grants ENABLE ROW LEVEL SECURITY;
    CREATE POLICY ops_read ON agentctx.ops FOR SELECT USING (agentctx.may(project, owner));
    CREATE POLICY ops_append ON agentctx.ops FOR INSERT WITH CHECK (owner = session_user AND agentctx.may(project, owner));
    CREATE POLICY grants_own ON agentctx.grants FOR SELECT USING (pg_has_role(session_user, role, 'MEMBER'));
    DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{MEMBER_ROLE}') THEN
            CREATE ROLE {MEMBER_ROLE} NOLOGIN;
        END IF;
    END $$;
    REVOKE ALL ON SCHEMA agentctx FROM PUBLIC;
    REVOKE ALL ON FUNCTION agentctx.may(text, name) FROM PUBLIC;
    GRANT USAGE ON SCHEMA agentctx TO {MEMBER_ROLE};
    GRANT EXECUTE ON FUNCTION agentctx.may(text, name) TO {MEMBER_ROLE};
    GRANT SELECT ON agentctx.meta, agentctx.grants TO {MEMBER_ROLE};
    GRANT SELECT, INSERT ON agentctx.ops TO {MEMBER_ROLE};
    """,
]


# TCP keepalives on both ends: a dead peer is noticed after about a minute of silence
# (30 s idle, then 3 probes 10 s apart) instead of the kernel's two hours.
KEEPALIVES_SERVER = {"tcp_keepalives_idle": "30", "tcp_keepalives_interval": "10", "tcp_keepalives_count": "3"}
STEP_TIMEOUT_SECONDS = 120.0  # the longest one step of a sync (a batch's round trip) may wait on the server


class RemoteError(AgentctxError):
    """A remote cannot be used now: unreachable, refused, or of another version."""


class RemoteUnreachable(RemoteError):
    """The server did not answer (down, network cut, wrong host): retried later."""


class RemoteStalled(RemoteUnreachable):
    """The server stopped answering mid-sync (a link that died without a word): retried later."""


def connect(url: str, *, name: str, timeout: float = STEP_TIMEOUT_SECONDS) -> psycopg.Connection[tuple[Any, ...]]:
    """A connection to the remote `name` at `url` (password from PGPASSFILE/~/.pgpass or
    PGPASSWORD, TLS as the URL's `sslmode` says). `timeout` bounds one step with the server:
    the connection itself (at most 10 s of it), data left unacknowledged by the network
    (`tcp_user_timeout`), and on the server each statement and each idle moment in a
    transaction, so a client that stalls never holds a transaction (or the push lock) longer.

    Raises:
        RemoteUnreachable: the server did not answer or refused the login.
    """
    step_ms = str(max(int(timeout * 1000), 1))
    try:
        conninfo = make_conninfo(url, **({"tcp_user_timeout": step_ms} if pq.version() >= 120000 else {}))
    except psycopg.ProgrammingError as exc:  # libpq 12 has `tcp_user_timeout`; the URL is the user's
        raise RemoteError(f"Remote {name!r} has a URL libpq cannot read: {_first_line(exc)}.") from None
    try:
        conn = psycopg.connect(
            conninfo,
            connect_timeout=max(2, min(10, int(timeout))),
            application_name="agentctx",
            keepalives=1,
            keepalives_idle=30,
            keepalives_interval=10,
            keepalives_count=3,
        )
    except psycopg.OperationalError as exc:
        raise RemoteUnreachable(f"Remote {name!r} is unreachable: {_first_line(exc)}.") from None
    try:
        # and the server's side: a client that vanishes mid-push (laptop lid shut, link gone) is
        # dropped within about a minute, and no statement or open transaction of ours outlives
        # `timeout`, so its transaction ends and the push lock is free again
        settings = KEEPALIVES_SERVER | {"statement_timeout": step_ms, "idle_in_transaction_session_timeout": step_ms}
        if conn.info.server_version >= 120000:  # PostgreSQL 12 has it
            settings["tcp_user_timeout"] = step_ms
        with deadline(conn, timeout, name, "connecting"):
            for setting, value in settings.items():
                conn.execute("SELECT set_config(%s, %s, false)", (setting, value))
            conn.commit()
    except psycopg.Error as exc:
        conn.close()
        raise described(exc, name) from None
    return conn


class deadline:  # lower case: used as a context manager, like `contextlib.suppress`
    """Give up one step with the server after `seconds`: a watchdog shuts the connection's
    socket down, which wakes the blocked read or write at once (a link that died without a word
    otherwise blocks until TCP gives up, minutes later, or never when a middlebox still answers
    for the peer). The step then fails with one line naming the bound.

    Raises:
        RemoteStalled: on leaving, when the watchdog fired.
    """

    def __init__(self, conn: psycopg.Connection[tuple[Any, ...]], seconds: float, name: str, what: str) -> None:
        self.conn, self.seconds, self.name, self.what = conn, seconds, name, what
        self.lock = threading.Lock()
        self.fired = self.done = False
        self.timer = threading.Timer(seconds, self._cut)
        self.timer.daemon = True

    def __enter__(self) -> deadline:
        self.timer.start()
        return self

    def restart(self, seconds: float) -> None:
        """Start the count again for the next part of the step, bounded by `seconds`."""
        self.timer.cancel()
        self.seconds = seconds
        self.timer = threading.Timer(seconds, self._cut)
        self.timer.daemon = True
        self.timer.start()

    def _cut(self) -> None:
        with self.lock:
            if self.done:
                return
            self.fired = True
            try:
                duplicate = socket.socket(fileno=os.dup(self.conn.pgconn.socket))
            except (OSError, psycopg.Error):
                return
            try:
                duplicate.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            finally:
                duplicate.close()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        with self.lock:
            self.done = True
        self.timer.cancel()
        if self.fired and isinstance(exc, Exception):
            raise RemoteStalled(
                f"Remote {self.name!r} stopped answering while {self.what}: gave up after {self.seconds:g} s "
                "(AGENTCTX_REMOTE_TIMEOUT); the next sync resumes where this one stopped."
            ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[-1] if text else type(exc).__name__).rstrip(".")[:300]


def described(exc: psycopg.Error, name: str) -> RemoteError:
    """One line for a server error (no traceback): what went wrong and what to do."""
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return RemoteError(
            f"Remote {name!r} refused this role: {_first_line(exc)}; ask its admin for a grant (docs/remote.md#access-grants)."
        )
    if isinstance(exc, psycopg.errors.UndefinedTable | psycopg.errors.InvalidSchemaName):
        return RemoteError(f"Remote {name!r} has no agentctx schema; its admin runs `agentctx remote init {name}`.")
    if isinstance(exc, psycopg.OperationalError):
        return RemoteUnreachable(f"Remote {name!r} is unreachable: {_first_line(exc)}.")
    return RemoteError(f"Remote {name!r} failed: {_first_line(exc)}.")


def server_version(conn: psycopg.Connection[tuple[Any, ...]], name: str) -> int:
    """The schema version of the remote; refuses one made by a newer agentctx.

    Raises:
        RemoteError: no schema, or a newer one.
    """
    row = conn.execute("SELECT value FROM agentctx.meta WHERE key = 'schema_version'").fetchone()
    version = int(row[0]) if row else 0
    if version > SCHEMA_VERSION:
        raise RemoteError(
            f"Remote {name!r} was created by a newer agentctx (schema {version}, this one knows {SCHEMA_VERSION}); "
            "upgrade agentctx."
        )
    if version < SCHEMA_VERSION:
        raise RemoteError(
            f"Remote {name!r} has an older agentctx schema; its admin runs `agentctx remote init {name}`."
        )
    return version


def init_schema(conn: psycopg.Connection[tuple[Any, ...]], name: str) -> tuple[int, int]:
    """Create or migrate the agentctx schema (run by an admin). Returns (version before, after).

    Raises:
        RemoteError: the schema is newer than this agentctx, or the role may not create it.
    """
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (PUSH_LOCK,))
            exists = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = 'agentctx'").fetchone()
            before = 0
            if exists:
                row = conn.execute("SELECT value FROM agentctx.meta WHERE key = 'schema_version'").fetchone()
                before = int(row[0]) if row else 0
            else:
                conn.execute("CREATE SCHEMA agentctx")
            if before > SCHEMA_VERSION:
                server_version(conn, name)  # raises: a newer agentctx made it
            for step in MIGRATIONS[before:]:
                conn.execute(step.encode())
            conn.execute(
                """INSERT INTO agentctx.meta(key, value) VALUES ('schema_version', %s)
                   ON CONFLICT (key) DO UPDATE SET value = excluded.value""",
                (str(SCHEMA_VERSION),),
            )
    except psycopg.Error as exc:
        raise described(exc, name) from None
    return before, SCHEMA_VERSION
