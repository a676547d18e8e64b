"""Machines for the remote tests: each a data dir and a clone of one repository, driven through
the installed `agentctx` (subprocess) and read through the store, against a real PostgreSQL
(`pg_cluster`)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentctx_store import NewRecord, Project, Store, resolve_project

AGENTCTX = Path(sys.executable).with_name("agentctx")
ORIGIN = "https://github.com/acme/shop.git"


class Machine:
    """One machine: its data dir, its clone, the role it logs in as."""

    def __init__(self, root: Path, role: str, pgpass: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.data = self.home / ".agentctx"
        self.repo = root / "shop"
        self.role = role
        self.pgpass = pgpass
        self.repo.mkdir(parents=True)
        self.data.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(self.repo)], check=True)
        subprocess.run(["git", "-C", str(self.repo), "remote", "add", "origin", ORIGIN], check=True)

    @property
    def project(self) -> Project:
        return resolve_project(self.repo)

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            HOME=str(self.home),
            AGENTCTX_HOME=str(self.data),
            PGPASSFILE=str(self.pgpass),
            AGENTCTX_HOOKS_NO_SPAWN="1",
        )
        env.pop("PGPASSWORD", None)
        return env

    def run(self, *args: str, check: bool = True, **options: object) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(AGENTCTX), *args],
            cwd=self.repo,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=300,
            **options,  # type: ignore[arg-type]
        )
        if check:
            assert done.returncode == 0, done.stderr
        return done

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(AGENTCTX), *args],
            cwd=self.repo,
            env=self.env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    @contextmanager
    def store(self) -> Iterator[Store]:
        store = Store.open(self.data / "agentctx.db")
        try:
            yield store
        finally:
            store.close()

    def add(self, title: str, body: str | None = None, **fields: object) -> str:
        with self.store() as store:
            new = NewRecord(
                type=str(fields.pop("type", "decision")),
                title=title,
                body=body or title,
                confidence=str(fields.pop("confidence", "explicit")),
                **fields,
            )  # type: ignore[arg-type]
            return store.add(self.project, new).record_id

    def bulk(self, count: int, prefix: str = "Fact") -> None:
        """`count` explicit decisions in one transaction (each still one logged operation)."""
        from agentctx_store.records import utc_now
        from agentctx_store.ulid import new_ulid

        project = self.project
        now = utc_now()
        with self.store() as store, store.transaction():
            for index in range(count):
                store.insert_row(
                    {
                        "id": new_ulid(),
                        "project_id": project.project_id,
                        "type": "decision",
                        "title": f"{prefix} {index}",
                        "body": f"{prefix} number {index} of the bulk set.",
                        "scope": "project",
                        "pinned": 0,
                        "confidence": "explicit",
                        "reinforce_count": 0,
                        "valid_from": now,
                        "recorded_at": now,
                        "superseded_at": None,
                        "superseded_by": None,
                        "access_count": 0,
                        "last_accessed": None,
                        "score": 1.0,
                        "claudemd_drift_score": 0.0,
                        "source": "cli",
                        "session_id": None,
                        "pending_embedding": 1,
                        "key": None,
                        "updated_at": None,
                    }
                )

    def current(self) -> dict[str, str]:
        """Current records of the project: id -> body."""
        with self.store() as store:
            return {r.record_id: r.body for r in store.list_records(self.project, scope="project")}

    def ids(self) -> set[str]:
        with self.store() as store:
            return {row[0] for row in store.conn.execute("SELECT id FROM records")}
