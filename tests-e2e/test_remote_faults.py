"""Faults in a sync through a real PostgreSQL (docs/remote.md#faults): the network cut
mid-stream, a full disk on the client during a pull, and the backoff after failures.

The network is cut by a small TCP proxy on 127.0.0.1 between agentctx and the server
(`CuttableProxy`): it forwards bytes and, once armed, resets both sockets after a number of bytes.
The full disk is a small tmpfs mounted on the data dir (as root, where mounting is allowed) or,
where it is not, a file-size limit (RLIMIT_FSIZE) on the sync process: either way SQLite's write
fails mid-pull. Counts are checked on both sides: nothing lost, nothing duplicated.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import socket
import sqlite3
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from pg_cluster import Cluster, cluster_with_logins, free_port, pg_bin
from remote_rig import AGENTCTX, Machine
from test_remote_sync import ROLES, Remote, machine

pytestmark = pytest.mark.skipif(pg_bin() is None, reason="needs Debian's postgresql (.ci/run installs it)")

TOTAL = 3000
BATCH = "200"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with cluster_with_logins(ROLES) as started:
        yield started


@pytest.fixture
def remote(cluster: Cluster, tmp_path: Path) -> Remote:
    return Remote(cluster, tmp_path)


@pytest.fixture(autouse=True)
def _small_batches() -> Iterator[None]:
    os.environ["AGENTCTX_REMOTE_BATCH"] = BATCH
    try:
        yield
    finally:
        os.environ.pop("AGENTCTX_REMOTE_BATCH", None)


class CuttableProxy:
    """A TCP proxy on 127.0.0.1 to `upstream_port`. `cut_after(n, direction)` arms it: once `n`
    more bytes went that way ("up": client to server, "down": server to client), every open
    connection is reset (SO_LINGER 0, both sides) as a cut cable or a dropped NAT entry does.
    With `stall=True` it instead stops forwarding in both directions and keeps every socket open,
    as a link that silently drops packets does: neither end hears of it (the proxy's kernel still
    acknowledges what each end sends, so no TCP timeout fires either) until `heal` (new
    connections forward again) or `reset_all`."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.lock = threading.Lock()
        self.open: list[socket.socket] = []
        self.every: list[socket.socket] = []  # every socket it made, closed by `close` whatever raced
        self.budget: dict[str, int | None] = {"up": None, "down": None}
        self.stall = False
        self.stalled = False
        self.cuts = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def cut_after(self, count: int, direction: str, *, stall: bool = False) -> None:
        with self.lock:
            self.budget[direction] = count
            self.stall = stall

    def heal(self) -> None:
        with self.lock:
            self.budget = {"up": None, "down": None}
            self.stalled = False

    def close(self) -> None:
        self.listener.close()
        self.reset_all()
        with self.lock:
            every, self.every = self.every, []
        for each in every:
            each.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.upstream_port))
            except OSError:
                client.close()
                continue
            with self.lock:
                self.open += [client, server]
                self.every += [client, server]
            threading.Thread(target=self._pump, args=(client, server, "up"), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, "down"), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket, direction: str) -> None:
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            if not data:
                with contextlib.suppress(OSError):
                    target.shutdown(socket.SHUT_WR)
                return
            with self.lock:
                if self.stalled:
                    return  # stalled: nothing more goes either way, and nothing is closed
                left = self.budget[direction]
                if left is not None:
                    left -= len(data)
                    self.budget[direction] = left
                    self.stalled = self.stall and left <= 0
            if left is not None and left <= 0:
                if not self.stall:
                    self.reset_all()
                return
            try:
                target.sendall(data)
            except OSError:
                return

    def reset_all(self) -> None:
        with self.lock:
            sockets, self.open = self.open, []
            self.budget = {"up": None, "down": None}
            self.cuts += 1
        for each in sockets:  # a reset, not a close: the pumps' blocked `recv` must not hold them open
            with contextlib.suppress(OSError):
                each.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            with contextlib.suppress(OSError):
                each.shutdown(socket.SHUT_RDWR)
            each.close()


@pytest.fixture
def proxy(cluster: Cluster, remote: Remote) -> Iterator[CuttableProxy]:
    started = CuttableProxy(cluster.port)
    lines = [f"127.0.0.1:{started.port}:*:{role}:{pw}" for role, pw in ROLES.items()]
    with remote.pgpass.open("a", encoding="utf-8") as pgpass:
        pgpass.write("\n".join(lines) + "\n")
    try:
        yield started
    finally:
        started.close()


def through(remote: Remote, proxy: CuttableProxy, tmp_path: Path, name: str, role: str) -> Machine:
    """A machine whose remote URL goes through the proxy."""
    made = machine(remote, tmp_path, name, role)
    made.run("remote", "remove", "team")
    made.run("remote", "add", "team", remote.url(role).replace(f":{remote.cluster.port}/", f":{proxy.port}/"))
    return made


def distinct_ops(remote: Remote) -> int:
    return int(remote.sql("SELECT count(DISTINCT op_id) FROM agentctx.ops")[0][0])  # type: ignore[arg-type]


def local_counts(side: Machine) -> tuple[int, int, int, int]:
    """(records, their distinct ids, pulled operations, their distinct ids) of a machine's store."""
    conn = sqlite3.connect(side.data / "agentctx.db", timeout=30)
    try:
        records = conn.execute("SELECT count(*), count(DISTINCT id) FROM records").fetchone()
        ops = conn.execute("SELECT count(*), count(DISTINCT op_id) FROM record_ops WHERE origin IS NOT NULL").fetchone()
        return (records[0], records[1], ops[0], ops[1])
    finally:
        conn.close()


def cursor_of(side: Machine, column: str) -> int:
    conn = sqlite3.connect(side.data / "agentctx.db", timeout=30)
    try:
        return int(conn.execute(f"SELECT {column} FROM remotes WHERE name = 'team'").fetchone()[0])
    finally:
        conn.close()


def one_line_failure(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


# -- a network cut mid-stream ----------------------------------------------------------------


def test_a_network_cut_during_a_push_loses_and_duplicates_nothing(
    remote: Remote, proxy: CuttableProxy, tmp_path: Path
) -> None:
    laptop = through(remote, proxy, tmp_path, "laptop", "alice")
    laptop.bulk(TOTAL)
    proxy.cut_after(250_000, "up")  # a few batches of COPY data in (about 1 MB in all)
    done = laptop.run("remote", "sync", check=False)
    one_line_failure(done, "unreachable")
    assert proxy.cuts == 1
    assert 0 < remote.count() < TOTAL  # cut mid-push: some batches committed, not all
    assert "failing since 20" in laptop.run("remote", "status").stdout
    assert cursor_of(laptop, "pushed_seq") <= remote.count()  # the cursor never passes what the server holds

    laptop.run("remote", "sync")  # through a healthy connection
    assert remote.count() == TOTAL == distinct_ops(remote)
    again = json.loads(laptop.run("remote", "sync", "--json").stdout)[0]
    assert (again["pushed"], again["pulled"]) == (0, 0)
    assert "failing since" not in laptop.run("remote", "status").stdout


def test_a_network_cut_during_a_pull_loses_and_duplicates_nothing(
    remote: Remote, proxy: CuttableProxy, tmp_path: Path
) -> None:
    laptop = machine(remote, tmp_path, "laptop", "alice")  # pushes directly
    laptop.bulk(TOTAL)
    laptop.run("remote", "sync")
    assert remote.count() == TOTAL
    desk = through(remote, proxy, tmp_path, "desk", "bob")
    proxy.cut_after(400_000, "down")  # a few batches of rows out (about 1.5 MB in all)
    done = desk.run("remote", "sync", check=False)
    one_line_failure(done, "unreachable")
    assert proxy.cuts == 1
    records, ids, ops, op_ids = local_counts(desk)
    assert 0 < records < TOTAL and records == ids == ops == op_ids  # whole batches, each once
    assert cursor_of(desk, "pulled_seq") == ops  # the cursor is where the applied batches end

    done = desk.run("remote", "sync")  # through a healthy connection
    assert f"pulled {TOTAL - records}" in done.stdout, done.stdout
    assert local_counts(desk) == (TOTAL, TOTAL, TOTAL, TOTAL)
    assert desk.current() == laptop.current()
    assert remote.count() == TOTAL == distinct_ops(remote)


# -- a full disk on the client during a pull -------------------------------------------------


def _mount_tmpfs(where: Path, size: str) -> str | None:
    """Mount a tmpfs of `size` on `where`; None, or why it cannot be done here."""
    if os.geteuid() != 0:
        return "mounting a small filesystem needs root"
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    return None if done.returncode == 0 else f"mount -t tmpfs refused: {done.stderr.strip()}"


def _fill(where: Path, leave: int) -> Path:
    """A file that fills the filesystem of `where` but `leave` bytes."""
    filler = where / "filler"
    stats = os.statvfs(where)
    free = stats.f_bavail * stats.f_frsize
    with filler.open("wb") as out:
        out.truncate(0)
        chunk = b"\0" * 65536
        remaining = max(free - leave, 0)
        while remaining > 0:
            out.write(chunk[: min(len(chunk), remaining)])
            remaining -= min(len(chunk), remaining)
    return filler


def _pulled_state(side: Machine) -> tuple[str, tuple[int, int, int, int], int]:
    conn = sqlite3.connect(side.data / "agentctx.db", timeout=30)
    try:
        integrity = str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()
    return integrity, local_counts(side), cursor_of(side, "pulled_seq")


@pytest.mark.parametrize("how", ["tmpfs", "file-size limit"])
def test_a_full_disk_during_a_pull_keeps_the_store_and_the_next_sync_completes(
    remote: Remote, tmp_path: Path, how: str
) -> None:
    laptop = machine(remote, tmp_path, "laptop", "alice")
    laptop.bulk(TOTAL)
    laptop.run("remote", "sync")
    desk = machine(remote, tmp_path, "desk", "bob")
    limit: Callable[[], None] | None = None
    filler: Path | None = None
    mounted = False
    if how == "tmpfs":
        desk.run("remote", "remove", "team")  # the data dir moves onto the small filesystem
        for child in list(desk.data.iterdir()):
            if child.is_file():
                child.unlink()
        why = _mount_tmpfs(desk.data, "32m")
        if why is not None:
            pytest.skip(f"{why}; the file-size-limit case covers a full disk here")
        mounted = True
        desk.run("remote", "add", "team", remote.url("bob"))
        filler = _fill(desk.data, leave=600_000)  # room for a few batches, not for all
    else:
        size = os.path.getsize(desk.data / "agentctx.db") + 600_000

        def limit_file_size() -> None:  # a write past this size fails as a full disk does (EFBIG)
            resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

        limit = limit_file_size
    try:
        done = desk.run("remote", "sync", check=False, preexec_fn=limit)
        one_line_failure(done, "cannot be written" if how == "tmpfs" else "cannot be")
        integrity, (records, ids, ops, op_ids), cursor = _pulled_state(desk)
        assert integrity == "ok"
        assert 0 < records < TOTAL and records == ids == ops == op_ids, (records, ids, ops, op_ids)
        assert cursor == ops  # the cursor did not move past what was applied
        assert "failing since 20" in desk.run("remote", "status").stdout  # noted, and backed off

        if filler is not None:
            filler.unlink()  # space is freed
        desk.run("remote", "sync")
        integrity, counts, cursor = _pulled_state(desk)
        assert integrity == "ok" and counts == (TOTAL, TOTAL, TOTAL, TOTAL) and cursor == TOTAL
        assert desk.current() == laptop.current()
        assert remote.count() == TOTAL == distinct_ops(remote)
        assert "failing since" not in desk.run("remote", "status").stdout
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(desk.data)], check=False)


# -- retries with backoff ---------------------------------------------------------------------


def test_failures_back_off_and_status_says_since_when_and_the_next_try(tmp_path: Path) -> None:
    """No server at all (a port nobody listens on): each failed sync doubles the wait before the
    next detached attempt (1, 2, 4 minutes …), `failing since` keeps the first failure, and a
    detached sync that is not due does not try."""
    from datetime import UTC, datetime

    pgpass = tmp_path / "pgpass"
    pgpass.write_text("*:*:*:alice:pw\n", encoding="utf-8")
    pgpass.chmod(0o600)
    laptop = Machine(tmp_path / "laptop", "alice", pgpass)
    laptop.run("remote", "add", "team", f"postgresql://alice@127.0.0.1:{free_port()}/team")

    def state() -> dict[str, object]:
        return json.loads(laptop.run("remote", "status", "--json").stdout)[0]

    def seconds_to_next(row: dict[str, object]) -> float:
        when = datetime.strptime(str(row["next_attempt"]), "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
        return (when - datetime.now(UTC)).total_seconds()

    waits: list[float] = []
    first: object = None
    for attempt in range(3):
        one_line_failure(laptop.run("remote", "sync", check=False), "unreachable")
        row = state()
        first = first or row["failing_since"]
        assert row["failing_since"] == first, attempt
        waits.append(seconds_to_next(row))
    assert [round(w / 60) for w in waits] == [1, 2, 4], waits
    shown = laptop.run("remote", "status").stdout
    assert f"failing since {first}" in shown and "next attempt 20" in shown

    before = state()  # not due: the detached sync does not try (nothing changes)
    laptop.run("remote", "sync", "--background")
    assert state() == before


# -- a link that dies without a word, and a push lock held too long ------------------------------


BOUND = "5"  # seconds one step with the server may take (AGENTCTX_REMOTE_TIMEOUT), short for the tests


def bounded_sync(side: Machine) -> subprocess.CompletedProcess[str]:
    """`agentctx remote sync` with a short step bound; the subprocess timeout is far above it,
    so a client without a bound of its own fails the test instead of hanging it."""
    env = {**side.env(), "AGENTCTX_REMOTE_TIMEOUT": BOUND}
    return subprocess.run(
        [str(AGENTCTX), "remote", "sync"], cwd=side.repo, env=env, capture_output=True, text=True, timeout=90
    )


def advisory_locks(remote: Remote) -> int:
    return int(remote.sql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted")[0][0])  # type: ignore[arg-type]


def test_a_push_whose_link_goes_silent_gives_up_within_its_bound_and_the_others_go_on(
    remote: Remote, proxy: CuttableProxy, tmp_path: Path
) -> None:
    """The laptop's link stops carrying packets mid-push and nothing is closed: its sync gives
    up after the step bound with one line and a noted failure; it holds no push lock (it takes
    the lock only once its batch is on the server), so another machine syncs at once; once the
    link is back, the next sync completes with exact counts."""
    laptop = through(remote, proxy, tmp_path, "laptop", "alice")
    desk = machine(remote, tmp_path, "desk", "bob")
    laptop.bulk(TOTAL)
    desk.bulk(10, prefix="Desk fact")
    proxy.cut_after(250_000, "up", stall=True)  # a few batches of COPY data in (about 1 MB in all)
    one_line_failure(bounded_sync(laptop), "stopped answering", f"{BOUND} s")
    assert proxy.stalled and proxy.cuts == 0  # silent: nothing was reset or closed
    assert 0 < remote.count() < TOTAL
    assert "failing since 20" in laptop.run("remote", "status").stdout
    assert advisory_locks(remote) == 0

    done = bounded_sync(desk)  # another machine, while the laptop's dead connection is still open
    assert done.returncode == 0, done.stderr
    assert remote.count("state->>'title' LIKE 'Desk fact%'") == 10

    proxy.heal()
    laptop.run("remote", "sync")
    desk.run("remote", "sync")
    assert remote.count() == TOTAL + 10 == distinct_ops(remote)
    assert local_counts(desk)[:2] == (TOTAL + 10, TOTAL + 10)
    assert desk.current() == laptop.current()
    assert "failing since" not in laptop.run("remote", "status").stdout


def test_a_pull_whose_link_goes_silent_gives_up_within_its_bound_and_resumes_exactly(
    remote: Remote, proxy: CuttableProxy, tmp_path: Path
) -> None:
    laptop = machine(remote, tmp_path, "laptop", "alice")  # pushes directly
    laptop.bulk(TOTAL)
    laptop.run("remote", "sync")
    desk = through(remote, proxy, tmp_path, "desk", "bob")
    proxy.cut_after(400_000, "down", stall=True)  # a few batches of rows out (about 1.5 MB in all)
    one_line_failure(bounded_sync(desk), "stopped answering while pulling", f"{BOUND} s")
    assert proxy.stalled and proxy.cuts == 0
    records, ids, ops, op_ids = local_counts(desk)
    assert 0 < records < TOTAL and records == ids == ops == op_ids  # whole batches, each once
    assert cursor_of(desk, "pulled_seq") == ops
    assert "failing since 20" in desk.run("remote", "status").stdout

    laptop.bulk(5, prefix="Later fact")  # another machine goes on syncing meanwhile
    done = bounded_sync(laptop)
    assert done.returncode == 0, done.stderr

    proxy.heal()
    done = desk.run("remote", "sync")
    assert f"pulled {TOTAL + 5 - records}" in done.stdout, done.stdout
    assert local_counts(desk) == (TOTAL + 5,) * 4
    assert desk.current() == laptop.current()
    assert remote.count() == TOTAL + 5 == distinct_ops(remote)


def test_a_push_lock_held_too_long_fails_the_other_push_with_one_line(remote: Remote, tmp_path: Path) -> None:
    """Whoever holds the push lock (a push cut off after taking it, until the server ends its
    transaction), another machine's push waits at most the lock timeout, fails with one line,
    and completes once the lock is free."""
    import psycopg

    desk = machine(remote, tmp_path, "desk", "bob")
    desk.bulk(10, prefix="Desk fact")
    holder = psycopg.connect(remote.cluster.admin_url(remote.database), autocommit=True)
    try:
        holder.execute("SELECT pg_advisory_lock(%s)", (0x61637478,))
        env = {**desk.env(), "AGENTCTX_REMOTE_LOCK_TIMEOUT": "2"}
        done = subprocess.run(
            [str(AGENTCTX), "remote", "sync"], cwd=desk.repo, env=env, capture_output=True, text=True, timeout=60
        )
        one_line_failure(done, "busy")
        assert "failing since 20" in desk.run("remote", "status").stdout
        assert remote.count() == 0
    finally:
        holder.close()
    desk.run("remote", "sync")
    assert remote.count() == 10 == distinct_ops(remote)
