"""Remote sync against a local PostgreSQL (docs/remote.md, issue 35): the first sync of a store,
the first sync of a new machine, and an incremental sync of 100 operations, at 1K/10K/100K records.

Targets: the first sync of 100K records (push, or the new machine's pull) <= 60 s; an
incremental sync of 100 new operations (one machine pushes, the other pulls) <= 1 s. The rule
shares every project, type and confidence of the bench store, so every record travels. Needs
Debian's postgresql (`.ci/run` installs it); skipped without. The cluster is the tests'
(`tests-e2e/pg_cluster.py`), started once for the module.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _harness import SIZE_IDS, size_param
from agentctx_store import NewRecord, Store
from agentctx_store.records import CONFIDENCES, RECORD_TYPES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests-e2e"))

from pg_cluster import SUPERUSER, SUPERUSER_PASSWORD, Cluster, pg_bin, start_cluster

pytestmark = pytest.mark.skipif(pg_bin() is None, reason="needs Debian's postgresql (.ci/run installs it)")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    started = start_cluster()
    pgpass = tmp_path_factory.mktemp("pg") / "pgpass"
    pgpass.write_text(f"127.0.0.1:{started.port}:*:{SUPERUSER}:{SUPERUSER_PASSWORD}\n", encoding="utf-8")
    pgpass.chmod(0o600)
    old = os.environ.get("PGPASSFILE")
    os.environ["PGPASSFILE"] = str(pgpass)
    try:
        yield started
    finally:
        if old is None:
            os.environ.pop("PGPASSFILE", None)
        else:
            os.environ["PGPASSFILE"] = old
        started.destroy()


def _add_remote(store: Store, url: str, projects: list[str]) -> None:
    from agentctx_remote import ShareRule, add

    add(store, "bench", url, ShareRule(projects=tuple(projects), types=RECORD_TYPES, confidences=CONFIDENCES))


@size_param
def test_remote_sync(benchmark, fresh_site, cluster: Cluster, tmp_path: Path, size: int) -> None:
    """First push of a whole store, first pull of a new machine, then 100 operations across."""
    from agentctx_remote import init_schema, sync
    from agentctx_remote.server import connect

    database = f"bench{size}"
    cluster.create_database(database)
    url = cluster.url(SUPERUSER, database)
    conn = connect(url, name="bench")
    init_schema(conn, "bench")
    conn.close()

    site = fresh_site(size)
    projects = [site.project.project_id, *(p.project_id for p in site.others)]
    first = site.open()
    second = Store.open(tmp_path / "second.db")
    try:
        _add_remote(first, url, projects)
        _add_remote(second, url, projects)
        started = time.perf_counter()
        pushed = sync(first, "bench")
        first_push_s = time.perf_counter() - started
        started = time.perf_counter()
        pulled = sync(second, "bench")
        first_pull_s = time.perf_counter() - started
        print(f"\n{SIZE_IDS[size]}: first push {first_push_s:.2f} s, first pull {first_pull_s:.2f} s")
        # every record but those the store redacted (the corpus holds a few secrets) travels
        shareable = first.conn.execute(
            "SELECT count(*) FROM records WHERE title NOT LIKE '%[REDACTED:%' AND body NOT LIKE '%[REDACTED:%'"
        ).fetchone()[0]
        assert pushed.pushed == pulled.applied == shareable > 0.99 * size
        assert second.conn.execute("SELECT count(*) FROM records").fetchone()[0] == shareable

        rounds = iter(range(1000))

        def incremental() -> None:
            round_ = next(rounds)
            for index in range(100):
                first.add(site.project, NewRecord(type="decision", title=f"Round {round_} fact {index}", body=f"Fact {index} of round {round_}.", confidence="explicit"))  # fmt: skip
            sync(first, "bench")
            report = sync(second, "bench")
            assert report.applied == 100

        benchmark.group = f"remote sync {SIZE_IDS[size]}"
        benchmark.pedantic(incremental, rounds=3, warmup_rounds=0)
        benchmark.extra_info.update(
            records=size,
            first_push_s=round(first_push_s, 2),
            first_pull_s=round(first_pull_s, 2),
            first_push_records_per_s=round(size / first_push_s),
            first_pull_records_per_s=round(size / first_pull_s),
        )
    finally:
        first.close()
        second.close()


HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "SessionEnd")


@pytest.mark.parametrize("event", HOOK_EVENTS)
def test_hooks_with_a_remote_whose_server_is_down(
    benchmark, fresh_site, bench_mode, tmp_path: Path, event: str
) -> None:
    """A hook with a remote added and its server down, against the same store without a remote,
    interleaved round by round (target: no hook slower by more than 2%). The schedule says the
    next detached sync is not due (the steady state while the server is down: the failed sync
    backs off); hooks never connect, so the server being down costs them nothing either way."""
    import json
    import shutil
    import statistics
    import uuid

    from _harness import process_env, run_process
    from agentctx_remote import ShareRule, add

    site = fresh_site(10_000)
    plain_home = site.home
    remote_home = tmp_path / "with-remote"
    shutil.copytree(site.home, remote_home)
    with Store.open(remote_home / "agentctx.db") as store:
        add(
            store,
            "down",
            f"postgresql://nobody@127.0.0.1:{_closed_port()}/agentctx",
            ShareRule(projects=(site.project.project_id,)),
        )
    (remote_home / "remote-sync.next").write_text(f"{int(time.time()) + 3600}\n", encoding="utf-8")
    agentctx = str(Path(sys.executable).with_name("agentctx"))
    plain_env = process_env(plain_home, TMPDIR=str(site.root))
    remote_env = process_env(remote_home, TMPDIR=str(site.root))
    plain_times: list[float] = []
    rounds = iter(range(10_000))

    def payload() -> bytes:
        data = {
            "session_id": str(uuid.UUID(int=next(rounds) + 1)),
            "cwd": str(site.project_dir),
            "hook_event_name": event,
        }
        data.update(
            transcript_path="",
            source="startup",
            prompt=site.prompts["topic"][next(rounds) % len(site.prompts["topic"])],
            reason="exit",
        )
        return json.dumps(data).encode("utf-8")

    def setup() -> tuple[tuple[bytes], dict[str, object]]:
        stdin = payload()
        started = time.perf_counter()
        run_process([agentctx, "hook", event], stdin, plain_env)
        plain_times.append(time.perf_counter() - started)
        return (stdin,), {}

    benchmark.group = "remote: hooks with the server down"
    benchmark.pedantic(
        lambda stdin: run_process([agentctx, "hook", event], stdin, remote_env),
        setup=setup,
        rounds=bench_mode.scale(30, 1),
        warmup_rounds=bench_mode.scale(3, 0),
    )
    benchmark.extra_info.update(records=10_000, target="≤ 1.02× the same hook without a remote")
    if benchmark.enabled:
        plain = statistics.median(plain_times)
        benchmark.extra_info.update(
            without_remote_median_ms=round(plain * 1000, 2),
            ratio_to_without_remote=round(benchmark.stats.stats.median / plain, 3),
        )


def _closed_port() -> int:
    from pg_cluster import free_port

    return free_port()
