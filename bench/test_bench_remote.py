"""Remote sync against a local PostgreSQL (docs/remote.md, issue 35): the first sync of a store,
the first sync of a new machine, and an incremental sync of 100 operations, at 1K/10K/100K records.

Targets: the first sync of 100K records (push, or the new machine's pull) <= 60 s; an
incremental sync of 100 new operations (one machine pushes, the other pulls) <= 1 s. The rule
shares every project, type and confidence of the bench store, so every record travels. Needs
Debian's postgresql (`.ci/run` installs it); skipped without. The cluster is the tests'
(`tests-e2e/pg_cluster.py`), started once for the module.

The new machine's first pull runs in a process of its own, as on a new machine: in this one the
redactor already knows the bench store's texts (it keeps the texts it found clean), which made
a first pull look several times faster than it is. `test_remote_team_scale` (opt-in,
`AGENTCTX_BENCH_REMOTE_SCALE=1`) is a team's remote: 500K operations over 50 projects by 20 roles.
"""

from __future__ import annotations

import json
import os
import subprocess
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
        pulled, first_pull_s = _sync_in_a_new_process(tmp_path / "second.db", "bench")
        print(f"\n{SIZE_IDS[size]}: first push {first_push_s:.2f} s, first pull {first_pull_s:.2f} s")
        # every record but those the store redacted (the corpus holds a few secrets) travels
        shareable = first.conn.execute(
            "SELECT count(*) FROM records WHERE title NOT LIKE '%[REDACTED:%' AND body NOT LIKE '%[REDACTED:%'"
        ).fetchone()[0]
        assert pushed.pushed == pulled["applied"] == shareable > 0.99 * size
        assert second.conn.execute("SELECT count(*) FROM records").fetchone()[0] == shareable

        rounds = iter(range(1000))
        syncs: list[tuple[float, float]] = []  # each round's push and pull (the round also adds the records)

        def incremental() -> None:
            round_ = next(rounds)
            for index in range(100):
                first.add(site.project, NewRecord(type="decision", title=f"Round {round_} fact {index}", body=f"Fact {index} of round {round_}.", confidence="explicit"))  # fmt: skip
            started = time.perf_counter()
            sync(first, "bench")
            pushed_at = time.perf_counter()
            _forget_clean_texts()  # as on the other machine: these texts were redacted here by `add`
            report = sync(second, "bench")
            syncs.append((pushed_at - started, time.perf_counter() - pushed_at))
            assert report.applied == 100

        benchmark.group = f"remote sync {SIZE_IDS[size]}"
        benchmark.pedantic(incremental, rounds=3, warmup_rounds=0)
        benchmark.extra_info.update(
            records=size,
            first_push_s=round(first_push_s, 2),
            first_pull_s=round(first_pull_s, 2),
            first_push_records_per_s=round(size / first_push_s),
            first_pull_records_per_s=round(size / first_pull_s),
            push_100_ops_median_s=round(sorted(push for push, _pull in syncs)[len(syncs) // 2], 3),
            pull_100_ops_median_s=round(sorted(pull for _push, pull in syncs)[len(syncs) // 2], 3),
        )
        print(
            f"{SIZE_IDS[size]}: 100 operations: push {benchmark.extra_info['push_100_ops_median_s']} s, "
            f"pull {benchmark.extra_info['pull_100_ops_median_s']} s (medians)"
        )
    finally:
        first.close()
        second.close()


def _sync_in_a_new_process(db: Path, name: str) -> tuple[dict[str, object], float]:
    """One sync of the store at `db` in a fresh interpreter: its report, and the seconds the sync
    took there (not the interpreter's start)."""
    script = (
        "import json, sys, time\n"
        "from agentctx_store import Store\n"
        "from agentctx_remote import sync\n"
        "with Store.open(sys.argv[1]) as store:\n"
        "    started = time.perf_counter()\n"
        "    report = sync(store, sys.argv[2])\n"
        "    print(json.dumps(vars(report) | {'seconds': time.perf_counter() - started}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(db), name], capture_output=True, text=True, check=False, timeout=3600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report, float(report["seconds"])


def _forget_clean_texts() -> None:
    from agentctx_store import redact

    # the bench's stand-in for another machine's process: a private of the redactor, on purpose
    redact._clean.clear()
    redact._clean_chars[0] = 0


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


# -- a team's remote (opt-in) ---------------------------------------------------------------

SCALE_ENV = "AGENTCTX_BENCH_REMOTE_SCALE"
TEAM_PROJECTS = 50
TEAM_ROLES = 20
TEXTS = 2000  # distinct texts the server's records are made of (each record's text is made unique)


def _scale() -> int:
    """Records on the team's server: 500K with AGENTCTX_BENCH_REMOTE_SCALE=1, or the number it gives."""
    value = os.environ.get(SCALE_ENV, "").strip()
    return 0 if not value or value == "0" else 500_000 if value == "1" else int(value.upper().replace("K", "000"))


@pytest.mark.skipif(not _scale(), reason=f"a team's remote is opt-in ({SCALE_ENV}=1)")
def test_remote_team_scale(benchmark, cluster: Cluster, tmp_path: Path) -> None:
    """A team's remote: records over 50 projects written by 20 roles (generated on the server in
    bulk: pushing them through 20 clients would take most of the run), then a new machine of a
    member granted 5 of the projects pulls one project, then all 5, then a few thousand new
    operations (new records and edits of pulled ones). The pull query must read the log through
    the (project, seq) index."""
    from agentctx_remote import init_schema
    from agentctx_remote.server import MEMBER_ROLE, connect
    from agentctx_remote.sync import _LAST_SEQ, _pull_params, _pull_query

    total = _scale()
    cluster.create_database("team")
    conn = connect(cluster.url(SUPERUSER, "team"), name="team")
    init_schema(conn, "team")
    conn.close()
    projects = [f"project-{index:02d}" for index in range(TEAM_PROJECTS)]
    granted = projects[:5]
    started = time.perf_counter()
    _generate_team_log(cluster, total, projects)
    generate_s = time.perf_counter() - started
    cluster.sql(
        f"CREATE ROLE newcomer LOGIN PASSWORD 'newcomer-secret'; GRANT {MEMBER_ROLE} TO newcomer", database="team"
    )
    cluster.sql("CREATE ROLE web_team NOLOGIN; GRANT web_team TO newcomer", database="team")
    for project in granted:
        cluster.sql(f"INSERT INTO agentctx.grants (role, project) VALUES ('web_team', '{project}')", database="team")
    pgpass = Path(os.environ["PGPASSFILE"])
    pgpass.write_text(
        pgpass.read_text(encoding="utf-8") + f"127.0.0.1:{cluster.port}:*:newcomer:newcomer-secret\n", encoding="utf-8"
    )
    url = cluster.url("newcomer", "team")

    plans: dict[str, str] = {}
    explain = connect(url, name="team")  # as the member: row-level security on, as in a sync
    try:
        for name, chosen in (("one project", granted[:1]), ("5 projects", granted)):
            plan = explain.execute(
                b"EXPLAIN " + _pull_query(len(chosen)), _pull_params(chosen, 0, _LAST_SEQ, 5000, (0, [], [], []))
            ).fetchall()
            plans[name] = "\n".join(str(row[0]) for row in plan)
            assert "ops_project_seq" in plans[name], plans[name]
    finally:
        explain.close()

    figures: dict[str, object] = {"server_records": total, "generate_s": round(generate_s, 1)}
    for name, chosen in (("one_project", granted[:1]), ("five_projects", granted)):
        db = tmp_path / f"{name}.db"
        with Store.open(db) as store:
            from agentctx_remote import ShareRule, add

            add(store, "team", url, ShareRule(projects=tuple(chosen), types=RECORD_TYPES, confidences=CONFIDENCES))
        report, seconds = _sync_in_a_new_process(db, "team")
        expected = sum(1 for index in range(total) if projects[index % TEAM_PROJECTS] in chosen)
        assert report["applied"] == expected, report
        figures[f"first_pull_{name}_s"] = round(seconds, 1)
        figures[f"first_pull_{name}_records"] = expected
        print(
            f"\nteam remote, {total} records: first pull of {name.replace('_', ' ')} ({expected} records) {seconds:.1f} s"
        )

    edits = _add_team_ops(cluster, total, projects, granted, new=2000, edits=1000)
    db = tmp_path / "five_projects.db"

    def incremental() -> None:
        report, seconds = _sync_in_a_new_process(db, "team")
        assert report["applied"] == 2000 + edits and report["conflicts"] == 0, report
        figures["incremental_ops"] = 2000 + edits
        figures["incremental_s"] = round(seconds, 2)

    benchmark.group = "remote sync: a team's remote"
    benchmark.pedantic(incremental, rounds=1, warmup_rounds=0)
    with Store.open(db) as store:
        edited = store.conn.execute("SELECT count(*) FROM records WHERE title LIKE 'Edited:%'").fetchone()[0]
    assert edited == edits
    print(f"incremental: {2000 + edits} operations (2000 new records, {edits} edits) {figures['incremental_s']} s")
    print(f"EXPLAIN, 5 projects:\n{plans['5 projects']}")
    benchmark.extra_info.update(figures)


def _team_texts() -> tuple[list[str], list[str]]:
    from _corpus import Corpus, vocabulary

    corpus = Corpus(7)
    own = vocabulary(corpus.rng, 300)
    records = [corpus.record(own) for _ in range(TEXTS)]
    return [record.title for record in records], [record.body for record in records]


def _generate_team_log(cluster: Cluster, total: int, projects: list[str]) -> None:
    """`total` put operations in `agentctx.ops`, round-robin over the projects, owners over 20
    roles, each text one of the corpus' texts made unique (so no cache of clean texts helps)."""
    import psycopg

    titles, bodies = _team_texts()
    with psycopg.connect(cluster.admin_url("team"), autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("CREATE TEMP TABLE texts (n int PRIMARY KEY, title text, body text)")
        with cur.copy("COPY texts FROM STDIN") as copy:
            for index, (title, body) in enumerate(zip(titles, bodies, strict=True)):
                copy.write_row((index, title, body))
        cur.execute("CREATE TEMP TABLE projects (n int PRIMARY KEY, project text)")
        with cur.copy("COPY projects FROM STDIN") as copy:
            for index, project in enumerate(projects):
                copy.write_row((index, project))
        for start in range(0, total, 100_000):
            cur.execute(
                f"""INSERT INTO agentctx.ops (op_id, project, owner, record_id, kind, parent, state, made_at)
                    SELECT 'op-' || i, p.project, 'dev' || lpad((i %% {TEAM_ROLES})::text, 2, '0'), {_RECORD_ID}, 'put', NULL,
                           jsonb_build_object('type', (ARRAY['decision','convention','discovery','bugfix'])[1 + i %% 4],
                               'title', left(t.title, 100) || ' #' || i, 'body', t.body || ' (' || i || ')',
                               'scope', 'project', 'pinned', 0, 'confidence', 'explicit', 'reinforce_count', 0,
                               'valid_from', '2026-01-01T00:00:00.000Z', 'recorded_at', '2026-01-01T00:00:00.000Z',
                               'superseded_at', NULL, 'superseded_by', NULL, 'source', 'import', 'session_id', NULL,
                               'key', NULL),
                           '2026-01-01T00:00:00.000Z'
                    FROM generate_series(%s::bigint, %s::bigint) AS i
                    JOIN projects p ON p.n = i %% {len(projects)}
                    JOIN texts t ON t.n = (i * 7919) %% {TEXTS}
                    ORDER BY i""",
                (start, min(start + 100_000, total) - 1),
            )
        cur.execute("ANALYZE agentctx.ops")


_RECORD_ID = "'01J0000000' || upper(lpad(to_hex(i), 16, '0'))"  # a valid ULID per record


def _add_team_ops(
    cluster: Cluster, total: int, projects: list[str], granted: list[str], *, new: int, edits: int
) -> int:
    """`new` new records and `edits` edits of existing records in the granted projects, each edit
    made on the version the machines have (its parent), as other members would push them."""
    import psycopg

    slots = [index for index in range(total) if projects[index % TEAM_PROJECTS] in granted]
    edited = slots[: edits * 7 : 7]
    with psycopg.connect(cluster.admin_url("team"), autocommit=True) as conn, conn.cursor() as cur:
        cur.execute(
            f"""INSERT INTO agentctx.ops (op_id, project, owner, record_id, kind, parent, state, made_at)
                SELECT 'new-' || i, (%s::text[])[1 + i %% %s], 'dev01', {_RECORD_ID.replace("(i)", "(i + 100000000)")}, 'put', NULL,
                       jsonb_build_object('type', 'decision', 'title', 'New fact ' || i, 'body', 'Fact ' || i || ' of the day.',
                           'scope', 'project', 'pinned', 0, 'confidence', 'explicit', 'reinforce_count', 0,
                           'valid_from', '2026-02-01T00:00:00.000Z', 'recorded_at', '2026-02-01T00:00:00.000Z',
                           'superseded_at', NULL, 'superseded_by', NULL, 'source', 'import', 'session_id', NULL, 'key', NULL),
                       '2026-02-01T00:00:00.000Z'
                FROM generate_series(0, %s::bigint) AS i ORDER BY i""",
            (granted, len(granted), new - 1),
        )
        cur.execute(
            """INSERT INTO agentctx.ops (op_id, project, owner, record_id, kind, parent, state, made_at)
               SELECT 'edit-' || o.op_id, o.project, 'dev02', o.record_id, 'put', o.op_id,
                      o.state || jsonb_build_object('title', 'Edited: ' || (o.state->>'title')), '2026-02-01T00:00:00.000Z'
               FROM agentctx.ops o WHERE o.op_id = ANY(%s) ORDER BY o.seq""",
            ([f"op-{index}" for index in edited],),
        )
    return len(edited)
