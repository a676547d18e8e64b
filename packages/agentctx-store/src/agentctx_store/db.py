"""Opening the store: one SQLite file, WAL, a busy timeout, migrations, and refusal of files
that are not ours (docs/store.md).

Only SQLite opens the store's files. POSIX advisory locks belong to a process, and closing any
descriptor of a file drops all of the process's locks on it: a long-lived process (the warm
service, the MCP server, the dashboard) that read the header with a plain `open()` beside its
live connection would lose its locks, and the next short process to close its connection would
think itself the last one and delete the `-wal` and `-shm` files under it. So whether a file is
ours is asked of SQLite (`PRAGMA user_version` on a file that is not a database fails with
"file is not a database"), never of the file itself; `tests-e2e/test_store_integrity.py` holds it.

Every process is short-lived (no daemon), so opening must be cheap: when `user_version` is
current, `connect` runs three pragmas and returns. The store's fast core uses the C module
`_sqlite3` (its classes are the very objects `sqlite3` exports): the `sqlite3` package on top of
it imports `datetime`, which a prompt hook does not need (docs/hooks.md#speed).
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # the C module (see above)
import os
import time

from agentctx_store.errors import StoreError, StoreLockedError
from agentctx_store.migrations import MIGRATIONS

APPLICATION_ID = 0x61637478  # "actx": marks a SQLite file as an agentctx store
BUSY_TIMEOUT_MS = 10_000


def schema_version() -> int:
    return len(MIGRATIONS)


def fts5_available(conn: sqlite3.Connection) -> bool:
    """Whether this SQLite has FTS5. `AGENTCTX_SIMULATE_NO_FTS5=1` pretends it does not (tests)."""
    if os.environ.get("AGENTCTX_SIMULATE_NO_FTS5") == "1":
        return False
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.agentctx_fts5_probe USING fts5(x)")
        conn.execute("DROP TABLE temp.agentctx_fts5_probe")
    except sqlite3.OperationalError:
        return False
    return True


def has_fts_table(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'records_fts'").fetchone()
    return row is not None


def connect(path: str, *, create: bool = True, readonly: bool = False) -> sqlite3.Connection:
    """Open (and if needed create and migrate) the store at `path`. `readonly` opens an existing,
    current store for reading only (one the user may read but not write).

    Raises:
        StoreError: the file is not ours, is corrupt, is from a newer agentctx, or cannot be written.
    """
    if readonly:
        return _connect_readonly(path)
    if not os.path.exists(path):
        if not create:
            raise StoreError(f"No store at {str(path)!r}. Record something first, or run `agentctx init`.")
        parent = os.path.dirname(os.fspath(path)) or "."
        try:
            from agentctx_store.private import create_file, make_dir

            make_dir(parent)
            create_file(os.fspath(path))  # 0600 before SQLite opens it: the WAL and SHM files inherit it
        except OSError as exc:
            raise StoreError(
                f"Cannot create the data dir {parent!r} ({exc.strerror}); set AGENTCTX_HOME to a writable directory."
            ) from None
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise StoreError(
            f"Cannot open the store at {str(path)!r} ({exc}); set AGENTCTX_HOME to a writable directory."
        ) from None
    conn.row_factory = sqlite3.Row
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != schema_version() or not _is_wal(conn):
            _prepare_with_retry(conn, path)
        conn.execute("PRAGMA synchronous = NORMAL")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise store_error(exc, path) from None
    except StoreError:
        conn.close()
        raise
    return conn


def _connect_readonly(path: str) -> sqlite3.Connection:
    """A read-only connection. WAL needs its `-shm` file; in a folder the user cannot write, where
    none exists, the file is read as immutable (no other process can be writing it there)."""
    from urllib.parse import quote

    if not os.path.exists(path):
        raise StoreError(f"No store at {str(path)!r}. Record something first, or run `agentctx init`.")
    base = f"file:{quote(os.path.abspath(path))}"
    for mode in ("mode=ro", "mode=ro&immutable=1"):
        conn = sqlite3.connect(f"{base}?{mode}", uri=True, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            _refuse_foreign(conn, path)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.OperationalError as exc:
            conn.close()
            if "readonly" in str(exc) and mode == "mode=ro":
                continue
            raise store_error(exc, path) from None
        except (sqlite3.DatabaseError, StoreError) as exc:
            conn.close()
            raise exc if isinstance(exc, StoreError) else store_error(exc, path) from None
        if version != schema_version():
            conn.close()
            raise StoreError(
                f"The store at {str(path)!r} is read-only for you and needs an upgrade (schema {version}); "
                "run agentctx once as a user who can write it."
            )
        return conn
    raise StoreError(f"Cannot read the store at {str(path)!r}; check its permissions.")  # pragma: no cover


def _is_wal(conn: sqlite3.Connection) -> bool:
    return conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"


def store_error(exc: sqlite3.DatabaseError, path: str) -> StoreError:
    """The one line to show for an SQLite error on the store at `path` (every caller that
    reports a failed open or write says it the same way)."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return StoreLockedError(f"The store at {str(path)!r} is locked by another process; try again in a moment.")
    if "readonly" in text or "read-only" in text or "unable to open" in text:
        return StoreError(f"The store at {str(path)!r} is not writable; fix its permissions or set AGENTCTX_HOME.")
    if "file is not a database" in text:  # SQLite read the header: not an SQLite file, or a damaged one
        return StoreError(
            f"{str(path)!r} is not an agentctx store (not an SQLite file, or a damaged one). Move it aside "
            "(a damaged store may be recoverable with `sqlite3 .recover`), or set AGENTCTX_HOME to another directory."
        )
    if "full" in text or _disk_full(path):
        return StoreError(
            f"The store at {str(path)!r} cannot be written: the disk is full. Free some space and try again "
            "(what failed was not written, and nothing is half-written)."
        )
    if "malformed" in text or "corrupt" in text:
        return StoreError(
            f"The store at {str(path)!r} is corrupt ({text}). Move it aside (it may be recoverable with "
            "`sqlite3 .recover`); agentctx will start a new one."
        )
    if "disk I/O error" in text:
        return StoreError(
            f"The store at {str(path)!r} cannot be used: disk I/O error; check that the disk holding it has free "
            "space and no file-size limit applies (`ulimit -f`)."
        )
    return StoreError(f"The store at {str(path)!r} cannot be used: {text}.")


def _disk_full(path: str) -> bool:
    """Whether the store's file system has (almost) no room left: SQLite reports a write that
    failed for want of space as a plain "disk I/O error" on some paths."""
    try:
        info = os.statvfs(os.path.dirname(os.path.abspath(path)) or ".")
    except (OSError, AttributeError):  # AttributeError: no statvfs (Windows)
        return False
    return info.f_bavail * info.f_frsize < 1 << 20


def _prepare_with_retry(conn: sqlite3.Connection, path: str) -> None:
    """`_prepare`, tried again when processes racing to create the store make SQLite answer
    "locked" without waiting (switching to WAL and recovering a fresh WAL index can do that)."""
    for attempt in range(6):
        try:
            _prepare(conn, path)
            return
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if attempt == 5 or ("locked" not in text and "busy" not in text):
                raise
        time.sleep(0.05 * 2**attempt)


def _prepare(conn: sqlite3.Connection, path: str) -> None:
    """Make sure the file is ours, in WAL mode, and migrated to this version."""
    conn.execute("BEGIN")  # one snapshot: another process may be creating the store right now
    try:
        _refuse_foreign(conn, path)
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")  # it only read
    if not _is_wal(conn):
        conn.execute("PRAGMA journal_mode = WAL")
    fts5 = fts5_available(conn)
    conn.execute("BEGIN IMMEDIATE")
    try:
        _refuse_foreign(conn, path)  # again under the write lock
        version = conn.execute("PRAGMA user_version").fetchone()[0]  # another process may have migrated
        for index in range(version, schema_version()):
            MIGRATIONS[index](conn, fts5)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {schema_version()}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _refuse_foreign(conn: sqlite3.Connection, path: str) -> None:
    """Raise unless the file is empty or an agentctx store this version can read."""
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if app_id not in (0, APPLICATION_ID):
        raise StoreError(f"{str(path)!r} is another program's SQLite database; set AGENTCTX_HOME to another directory.")
    if app_id == 0 and version == 0:
        tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").fetchone()[0]
        if tables:
            raise StoreError(
                f"{str(path)!r} is an SQLite database agentctx did not create; set AGENTCTX_HOME to another directory."
            )
    if version > schema_version():
        raise StoreError(
            f"The store at {str(path)!r} was written by a newer agentctx (schema {version}, this one knows "
            f"{schema_version()}); upgrade agentctx."
        )


class Transaction:
    """The context manager `transaction()` returns: `BEGIN IMMEDIATE` on entry, then `COMMIT`,
    or `ROLLBACK` on an exception; inside another one it joins the outer transaction."""

    __slots__ = ("conn", "owned")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.owned = False

    def __enter__(self) -> sqlite3.Connection:
        if not self.conn.in_transaction:  # else: nested, join the outer transaction
            self.conn.execute("BEGIN IMMEDIATE")
            self.owned = True
        return self.conn

    def __exit__(self, exc_type: type[BaseException] | None, *exc_info: object) -> None:
        if not self.owned:
            return
        if exc_type is None:
            try:
                self.conn.execute("COMMIT")
            except sqlite3.Error:  # a full disk at the commit: undo it, then say so
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
        elif self.conn.in_transaction:  # SQLite itself rolls back on a full disk: nothing left to undo
            self.conn.execute("ROLLBACK")


class Snapshot:
    """The context manager `snapshot()` returns: one read transaction (`BEGIN`, ended on exit), so
    a reader's several queries see the store as it was at one moment, not each as it was when it
    ran, while other processes commit between them. Inside another transaction it joins it."""

    __slots__ = ("conn", "owned")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.owned = False

    def __enter__(self) -> sqlite3.Connection:
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN")  # deferred: the first read takes the snapshot, no lock to wait for
            self.owned = True
        return self.conn

    def __exit__(self, *exc_info: object) -> None:
        if self.owned and self.conn.in_transaction:
            self.conn.execute("ROLLBACK")  # it only read


class Connected:
    """What the parts of `Store` (`graph.Graph`, `sessions.Sessions`) build on: one connection."""

    conn: sqlite3.Connection

    def transaction(self) -> Transaction:
        """A write transaction: taken at once (`BEGIN IMMEDIATE`), all or nothing. Inside
        another one, it joins the outer transaction."""
        return Transaction(self.conn)

    def snapshot(self) -> Snapshot:
        """A read transaction: every query inside sees the same state of the store."""
        return Snapshot(self.conn)

    @property
    def has_fts(self) -> bool:
        return has_fts_table(self.conn)


def in_use_elsewhere(path: str) -> bool:
    """Whether another process has the store at `path` open now (the warm service, an MCP
    server, the dashboard, a hook): every SQLite connection in WAL mode holds a read lock on
    one byte of the `-shm` file for as long as it is open (its "DMS" byte, offset 128), so a
    write lock on that byte is granted only when no other process is connected.

    The one place a store file is opened outside SQLite, so it is only for a process with no
    connection of its own to the store (`agentctx uninstall --purge` before it deletes the
    files): closing this descriptor would drop such a connection's locks (module doc).
    """
    try:
        import fcntl
    except ImportError:  # Windows: no POSIX locks; mandatory locking keeps files in use anyway
        return False
    try:
        fd = os.open(path + "-shm", os.O_RDWR)
    except FileNotFoundError:
        return False  # no connection in WAL mode is open (the first one creates the file)
    except OSError:
        return True  # cannot tell: assume it is
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 128, os.SEEK_SET)
    except OSError:
        return True
    finally:
        os.close(fd)  # drops the probe's lock with it
    return False
