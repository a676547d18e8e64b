"""kill -9 in the middle of a consolidation run (a real `agentctx consolidate` process), then a
re-run completes and the store passes `PRAGMA integrity_check`."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agentctx_store import Project, Store, config, consolidate, digest, paths
from embed_testkit import seed

from agentctx_embed import EmbedPhase, VectorStore

pytestmark = [pytest.mark.embed, pytest.mark.slow]


def start_consolidate(project: Project, hang_at: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, AGENTCTX_TEST_HANG_AT=hang_at)
    return subprocess.Popen(
        [sys.executable, "-m", "agentctx", "consolidate", "--project", str(project.root)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def wait_for_marker(process: subprocess.Popen[bytes], name: str, timeout: float = 90.0) -> None:
    marker = Path(paths.home()) / f"hang-{name}"
    deadline = time.monotonic() + timeout
    while not marker.exists():
        if process.poll() is not None:
            out, err = process.communicate()
            raise AssertionError(f"the run ended before {name}: {out.decode()} {err.decode()}")
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"the run never reached {name}")
        time.sleep(0.02)
    marker.unlink()


def integrity() -> str:
    conn = sqlite3.connect(Path(paths.db_path()))
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize("hang_at", ["scores", "embed", "merge", "digest"])
def test_kill_9_mid_run_then_rerun_completes(hang_at: str, tiny_model: Path, project: Project, messages_server) -> None:
    with Store.open() as store:
        records = seed(store, project)
    process = start_consolidate(project, hang_at)
    wait_for_marker(process, hang_at)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)  # waits and closes the pipes
    assert process.returncode == -signal.SIGKILL
    assert integrity() == "ok"

    from agentctx_embed import make_judge

    report = consolidate.run(
        [project], settings=config.load(), vector_phase=EmbedPhase(), judge=make_judge(config.load())
    )
    assert not report.skipped and not report.timed_out
    assert integrity() == "ok"
    with Store.open() as store:
        current = {record.record_id for record in store.list_records(project, include_superseded=False)}
        pending = store.conn.execute(
            "SELECT count(*) FROM records WHERE superseded_at IS NULL AND pending_embedding = 1"
        ).fetchone()[0]
        dropped = store.get(project, records["pg_dup"].record_id)
    assert pending == 0
    assert dropped.superseded_by == records["pg"].record_id  # the merge happened exactly once
    assert records["pg_dup"].record_id not in current
    with VectorStore.open(Path(paths.db_path())) as vectors:
        # every current record has its vector; the one merged in this run loses its vector next run
        assert current <= vectors.stored_ids() <= current | {records["pg_dup"].record_id}
    found = digest.read(project.project_id)
    assert found is not None and found[1].kind == "full" and records["pg"].record_id in found[0]
