"""Consolidation runs with real vectors (tiny model, sqlite-vec through apsw, or numpy):
embedding, near-duplicates, merges with a local Messages API, the digest, the rebuild
guarantee and the degradation rungs."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from agentctx_store import Project, Store, config, consolidate, digest, paths
from embed_testkit import add, seed

from agentctx_embed import EmbedPhase, VectorStore
from agentctx_embed.phase import EMBED_CHARS, TEXT_FORM, embedding_text

pytestmark = pytest.mark.embed


def run(projects: list[Project], **options) -> consolidate.RunReport:
    """A run in this process. The test's own `Store` must be closed first: an apsw and a stdlib
    connection to one file must never be open at once in one process
    (docs/adr/0018-one-sqlite-library-per-process.md)."""
    options.setdefault("vector_phase", EmbedPhase())
    return consolidate.run(projects, settings=config.load(), **options)


def reopen() -> Store:
    return Store.open()


def vector_count(backend_table: str = "records_vec") -> int:
    with VectorStore.open(Path(paths.db_path())) as vectors:
        return len(vectors.stored_ids())


def digest_text(project: Project) -> str:
    found = digest.read(project.project_id)
    assert found is not None
    return found[0]


def seeded(project: Project) -> dict[str, Any]:
    with reopen() as store:
        return seed(store, project)


def test_every_current_record_is_embedded_once_and_flags_cleared(tiny_model: Path, project: Project) -> None:
    with reopen() as store:
        records = seed(store, project)
        store.supersede(project, records["deploy"].record_id, body="Deploy to Fly.io from GitHub Actions on merge.")
    report = run([project])
    assert report.backend == "vec0"
    assert report.embedded == 7  # seven current records, the superseded one is skipped
    with reopen() as store:
        pending = store.conn.execute(
            "SELECT count(*) FROM records WHERE superseded_at IS NULL AND pending_embedding = 1"
        ).fetchone()[0]
    assert pending == 0
    assert vector_count() == 7
    again = run([project], force=True)
    assert again.embedded == 0  # nothing pending, nothing re-embedded


def test_vectors_of_superseded_and_deleted_records_are_dropped(tiny_model: Path, project: Project) -> None:
    records = seeded(project)
    run([project])
    with reopen() as store:
        store.supersede(
            project, records["jobs"].record_id, body="Run background jobs on Temporal workflows with retries."
        )
        store.delete(project, records["tests"].record_id)
    run([project])
    with VectorStore.open(Path(paths.db_path())) as vectors:
        ids = vectors.stored_ids()
    assert records["jobs"].record_id not in ids and records["tests"].record_id not in ids
    assert len(ids) == 6


def test_near_duplicates_without_a_key_are_listed_not_merged(tiny_model: Path, project: Project) -> None:
    records = seeded(project)
    report = run([project])
    assert report.merge_candidates == 1 and report.merged == 0
    with reopen() as store:
        sections = {section["key"]: section for section in consolidate.status_sections(store, project)}
        still_current = store.get(project, records["pg_dup"].record_id).superseded_at is None
    (pair,) = sections["merge_candidates"]["data"]
    assert (pair["keep"], pair["drop"]) == (records["pg"].record_id, records["pg_dup"].record_id)  # explicit wins
    assert pair["similarity"] > 0.92
    assert still_current


def test_pairs_never_cross_types_or_projects(tiny_model: Path, project: Project, other_project: Project) -> None:
    text = ("Use PostgreSQL as the main database", "All services store their data in PostgreSQL 16.")
    with reopen() as store:
        seed(store, project)
        add(store, project, "discovery", *text)
        add(store, other_project, "decision", *text)
    run([project, other_project])
    with reopen() as store:
        rows = store.conn.execute("SELECT keep_id, drop_id, type, project_id FROM merge_candidates").fetchall()
        assert len(rows) == 1
        for keep_id, drop_id, record_type, project_id in rows:
            keep = store.conn.execute("SELECT type, project_id FROM records WHERE id = ?", (keep_id,)).fetchone()
            drop = store.conn.execute("SELECT type, project_id FROM records WHERE id = ?", (drop_id,)).fetchone()
            assert tuple(keep) == tuple(drop) == (record_type, project_id)


def test_with_a_key_a_confirmed_duplicate_is_superseded_by_the_stronger(
    tiny_model: Path, project: Project, messages_server
) -> None:
    from agentctx_embed import make_judge

    records = seeded(project)
    report = run([project], judge=make_judge(config.load()))
    assert report.merged == 1
    with reopen() as store:
        dropped = store.get(project, records["pg_dup"].record_id)
        kept = store.get(project, records["pg"].record_id)
        edge = store.conn.execute(
            "SELECT 1 FROM edges WHERE from_id = ? AND to_id = ? AND rel_type = 'supersedes'",
            (records["pg"].record_id, records["pg_dup"].record_id),
        ).fetchone()
    assert dropped.superseded_by == records["pg"].record_id
    assert (dropped.source, dropped.session_id) == ("llm_extraction", "s-dup")  # provenance kept
    assert kept.superseded_at is None and kept.reinforce_count == 1
    assert edge is not None
    (request,) = messages_server.requests
    assert request["model"] == "claude-haiku-4-5"
    assert request["output_config"]["format"]["schema"]["properties"]["verdict"]["enum"] == ["DUPLICATE", "DIFFERENT"]
    assert "PostgreSQL" in request["messages"][0]["content"]
    sent = messages_server.headers[0]
    assert "sk-test-key" in (sent.get("x-api-key", "") + sent.get("authorization", ""))
    assert records["pg_dup"].record_id not in digest_text(project)


def test_a_rejected_pair_stays_apart_and_is_not_asked_again(
    tiny_model: Path, project: Project, messages_server
) -> None:
    from agentctx_embed import make_judge

    messages_server.answer = "DIFFERENT"
    records = seeded(project)
    run([project], judge=make_judge(config.load()))
    run([project], judge=make_judge(config.load()), force=True)
    assert len(messages_server.requests) == 1
    with reopen() as store:
        assert store.get(project, records["pg_dup"].record_id).superseded_at is None
        assert store.conn.execute("SELECT status FROM merge_candidates").fetchone()[0] == "rejected"


def test_digest_never_shows_superseded_or_other_projects_records(
    tiny_model: Path, project: Project, other_project: Project
) -> None:
    with reopen() as store:
        records = seed(store, project)
        _old, new = store.supersede(project, records["zod"].record_id, body="Validate request bodies with valibot.")
        foreign = add(store, other_project, "decision", "Sessions live in Redis", "With a TTL of one day.")
    run([project])
    text = digest_text(project)
    assert new.record_id in text and records["pg"].record_id in text
    assert records["zod"].record_id not in text and foreign.record_id not in text
    assert digest.read(project.project_id)[1].kind == "full"


def test_rebuild_deleting_vectors_scores_and_digests_gives_the_same_digest(tiny_model: Path, project: Project) -> None:
    seeded(project)
    first = run([project])
    assert first.backend == "vec0" and first.embedded > 0
    before = digest_text(project)
    with VectorStore.open(Path(paths.db_path())) as vectors:  # delete every derived thing
        vectors.conn.execute("DROP TABLE records_vec")
        vectors.conn.execute("DELETE FROM record_vectors")
        vectors.conn.execute("DELETE FROM vector_meta")
        vectors.conn.execute("UPDATE records SET score = 1.0, claudemd_drift_score = 0.0")
    for path in Path(paths.digests_dir()).iterdir():
        path.unlink()
    second = run([project])
    assert second.embedded == first.embedded
    assert digest_text(project) == before


def test_a_second_run_with_nothing_changed_is_skipped(tiny_model: Path, project: Project) -> None:
    seeded(project)
    assert not run([project]).skipped
    assert run([project]).skipped
    with reopen() as store:
        add(store, project, "decision", "Serve the dashboard assets from the package", "Never from a CDN.")
    assert not run([project]).skipped


def test_one_run_at_a_time(tiny_model: Path, project: Project) -> None:
    with consolidate.run_lock(Path(paths.db_path())), pytest.raises(consolidate.ConsolidationRunning):
        run([project])


def test_the_time_box_leaves_work_for_the_next_run(tiny_model: Path, project: Project) -> None:
    seeded(project)
    cut = run([project], time_limit=1e-9)
    assert cut.timed_out and cut.embedded == 0 and cut.pending == 7
    assert digest.read(project.project_id)[1].kind == "full"  # a digest anyway
    assert not run([project]).skipped  # no fingerprint was saved: the next run goes on
    assert vector_count() == 7


def test_changing_the_model_rebuilds_the_vectors(
    tiny_model: Path, tmp_path: Path, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    from embed_testkit import TEST_TEXTS

    from agentctx_embed.tiny import build_tiny_model, words_of

    seeded(project)
    run([project])
    other = build_tiny_model(tmp_path / "other-model", words_of(TEST_TEXTS), dims=16)
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", "agentctx/tiny-word-model-16")
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL_DIR", str(other))
    report = run([project], force=True)
    assert report.embedded == 7
    with VectorStore.open(Path(paths.db_path())) as vectors:
        assert vectors.meta() == {
            "model": "agentctx/tiny-word-model-16",
            "dims": "16",
            "backend": "vec0",
            "text": TEXT_FORM,
        }


def test_the_embedded_text_is_type_title_and_body_without_the_date() -> None:
    record = {
        "type": "decision",
        "title": "Redis for jobs",
        "body": "Streams hold the queue.",
        "valid_from": "2024-03-01",
    }
    assert embedding_text(record) == "[decision] Redis for jobs\nStreams hold the queue."
    assert len(embedding_text({**record, "body": "x" * 5000})) == EMBED_CHARS


def test_vectors_embedded_from_another_text_are_embedded_again(tiny_model: Path, project: Project) -> None:
    """A store whose vectors an older version embedded (another `embedding_text`, e.g. with the
    record's date in it): consolidation embeds every record again, and the warm service does not
    load those vectors (its background pass embeds the records itself)."""
    from agentctx_embed.models import choose_model, load
    from agentctx_embed.service import Service

    seeded(project)
    run([project])
    service = Service(paths.home(), load(choose_model(config.load()), allow_download=False))
    assert service.load_stored_vectors() == 7  # this version's vectors are used as stored
    with VectorStore.open(Path(paths.db_path())) as vectors:
        vectors.conn.execute("UPDATE vector_meta SET value = 'type-date-title-body' WHERE key = 'text'")
    assert Service(service.home, service.embedder).load_stored_vectors() == 0
    with VectorStore.open(Path(paths.db_path())) as vectors:  # an install older than the `text` key
        vectors.conn.execute("DELETE FROM vector_meta WHERE key = 'text'")
    assert Service(service.home, service.embedder).load_stored_vectors() == 0
    report = run([project], force=True)
    assert report.embedded == 7 and vector_count() == 7
    with VectorStore.open(Path(paths.db_path())) as vectors:
        assert vectors.meta()["text"] == TEXT_FORM
    assert Service(service.home, service.embedder).load_stored_vectors() == 7


# -- degradation rungs (docs/contracts.md#degradation) ----------------------------------------


def test_rung2_without_sqlite_vec_numpy_finds_the_same_duplicates(
    tiny_model: Path, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCTX_SIMULATE_NO_SQLITE_VEC", "1")
    records = seeded(project)
    report = run([project])
    assert report.backend == "numpy" and report.embedded == 7 and report.merge_candidates == 1
    assert any("numpy" in note for note in report.degraded)
    assert records["pg"].record_id in digest_text(project)
    with VectorStore.open(Path(paths.db_path())) as vectors:
        assert vectors.conn.execute("SELECT count(*) FROM record_vectors").fetchone()[0] == 7


def test_rung2_digest_equals_the_vec0_digest(
    tiny_model: Path, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded(project)
    run([project])
    with_vec0 = digest_text(project)
    monkeypatch.setenv("AGENTCTX_SIMULATE_NO_SQLITE_VEC", "1")
    report = run([project], force=True)
    assert report.backend == "numpy" and report.embedded == 7  # a backend switch rebuilds
    assert digest_text(project) == with_vec0


def test_rung1_without_embeddings_a_keyword_digest_is_still_written(project: Project) -> None:
    records = seeded(project)
    report = consolidate.run([project], settings=config.load(), vector_phase=None, degraded=["no-embeddings"])
    assert report.backend is None and report.embedded == 0
    assert report.merge_candidates == 1  # the seeded PostgreSQL pair, found by its words (no vectors)
    text = digest_text(project)
    assert records["pg"].record_id in text and records["handover"].body in text


def test_store_stays_intact_after_a_run(tiny_model: Path, project: Project) -> None:
    seeded(project)
    run([project])
    conn = sqlite3.connect(Path(paths.db_path()))
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()


def test_vector_work_refuses_to_share_the_process_with_an_open_stdlib_connection(
    tiny_model: Path, project: Project
) -> None:
    from agentctx_store.errors import StoreError

    store = reopen()
    try:
        seed(store, project)
        with pytest.raises(StoreError, match="apsw"):
            VectorStore.open(Path(paths.db_path()))
    finally:
        store.close()
    with VectorStore.open(Path(paths.db_path())) as vectors:  # closed: fine
        assert vectors.backend == "vec0"


def test_an_edited_record_is_embedded_again(tiny_model: Path, project: Project) -> None:
    records = seeded(project)
    run([project])
    with VectorStore.open(Path(paths.db_path())) as vectors:
        _ids, before = vectors.matrix([records["jobs"].record_id])
    with reopen() as store:
        store.edit(project, records["jobs"].record_id, body="Sessions live in Redis with a TTL of one day.")
    report = run([project])
    assert report.embedded == 1
    with VectorStore.open(Path(paths.db_path())) as vectors:
        _ids, after = vectors.matrix([records["jobs"].record_id])
    assert float(before[0] @ after[0]) < 0.9
