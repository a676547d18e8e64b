"""A temporary PostgreSQL cluster from Debian's binaries, for the remote tests and benchmarks.

`Cluster.start()` runs `initdb` into a fresh directory and `pg_ctl start` on 127.0.0.1 at a free
port; logins use passwords (scram-sha-256), which the clients read from a PGPASSFILE as a user
would. PostgreSQL refuses to run as root: as root (CI), the cluster runs as the `postgres`
user Debian's package creates, through `runuser`. `.ci/run` installs the package
(`apt-get install postgresql`); without it the tests that need it are skipped.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

SUPERUSER = "agentctx_admin"
SUPERUSER_PASSWORD = "admin-secret"


def pg_bin() -> str | None:
    """The directory of Debian's PostgreSQL server binaries (newest), or None."""
    configured = os.environ.get("AGENTCTX_PG_BIN")
    if configured:
        return configured if os.path.exists(os.path.join(configured, "initdb")) else None
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return os.path.dirname(found[-1]) if found else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Cluster:
    def __init__(self) -> None:
        binaries = pg_bin()
        if binaries is None:
            raise RuntimeError("no PostgreSQL server binaries (apt-get install postgresql)")
        self.bin = binaries
        self.root = Path(tempfile.mkdtemp(prefix="agentctx-pg-", dir="/tmp"))
        self.data = self.root / "data"
        self.port = free_port()
        self.as_root = os.geteuid() == 0

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = list(args)
        if self.as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, check=check, capture_output=True, text=True, timeout=120)

    def init(self) -> Cluster:
        os.chmod(self.root, 0o755)
        if self.as_root:
            shutil.chown(self.root, "postgres", "postgres")
        pwfile = self.root / "pw"
        pwfile.write_text(SUPERUSER_PASSWORD + "\n", encoding="utf-8")
        if self.as_root:
            shutil.chown(pwfile, "postgres", "postgres")
        self._run(
            f"{self.bin}/initdb",
            "-D",
            str(self.data),
            "-U",
            SUPERUSER,
            f"--pwfile={pwfile}",
            "--auth-local=scram-sha-256",
            "--auth-host=scram-sha-256",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
        )
        pwfile.unlink()
        return self

    def start(self) -> Cluster:
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c fsync=off -c max_connections=40"
        self._run(
            f"{self.bin}/pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-w", "-o", options, "start"
        )
        return self

    def stop(self, mode: str = "fast") -> None:
        self._run(f"{self.bin}/pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, role: str = SUPERUSER, database: str = "agentctx") -> str:
        return f"postgresql://{role}@127.0.0.1:{self.port}/{database}"

    def admin_url(self, database: str = "agentctx") -> str:
        return f"postgresql://{SUPERUSER}:{SUPERUSER_PASSWORD}@127.0.0.1:{self.port}/{database}"

    def sql(self, statement: str, *, database: str = "agentctx") -> list[tuple[object, ...]]:
        import psycopg

        with psycopg.connect(self.admin_url(database), autocommit=True) as conn, conn.cursor() as cur:
            cur.execute(statement.encode())
            return list(cur.fetchall()) if cur.description else []

    def create_database(self, name: str = "agentctx") -> None:
        self.sql(f"CREATE DATABASE {name}", database="postgres")

    def create_login(self, role: str, password: str) -> None:
        self.sql(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")


def start_cluster() -> Cluster:
    cluster = Cluster().init().start()
    deadline = time.monotonic() + 30
    while True:
        try:
            cluster.create_database()
            return cluster
        except Exception:
            if time.monotonic() > deadline:
                cluster.destroy()
                raise
            time.sleep(0.2)


@contextmanager
def cluster_with_logins(roles: Mapping[str, str]) -> Iterator[Cluster]:
    """A started cluster with a login for each role (name: password), destroyed after: a test
    module's `cluster` fixture."""
    started = start_cluster()
    try:
        for role, password in roles.items():
            started.create_login(role, password)
        yield started
    finally:
        started.destroy()
