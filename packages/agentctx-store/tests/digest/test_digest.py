"""The cheap SessionStart digest: rewritten when a writing `Store` closes; a full one is only marked stale."""

from __future__ import annotations

from agentctx_store import NewRecord, Project, Store, digest
from agentctx_store.budget import SESSION_START, estimate_tokens
from agentctx_store.fence import DIGEST_CLOSE, DIGEST_OPEN


def test_the_store_itself_writes_no_derived_file_on_close(project: Project) -> None:
    with Store.open() as store:
        store.add(project, NewRecord(type="decision", title="Use WAL mode", body="Many writers, one file."))
    assert digest.read(project.project_id) is None


def test_a_writer_opened_refreshing_refreshes_the_cheap_digest(project: Project) -> None:
    with digest.refreshing(Store.open()) as store:
        store.add(project, NewRecord(type="decision", title="Use WAL mode", body="Many writers, one file."))
    found = digest.read(project.project_id)
    assert found is not None
    text, info = found
    assert "Use WAL mode" in text
    assert info.kind == "cheap" and not info.stale and info.tokens == estimate_tokens(text)


def test_a_read_only_session_does_not_write_a_digest(project: Project) -> None:
    with digest.refreshing(Store.open()) as store:
        store.list_records(project)
    assert digest.read(project.project_id) is None


def test_a_write_marks_a_full_digest_stale_instead_of_overwriting_it(project: Project) -> None:
    full = f"{DIGEST_OPEN}\n## Full digest from consolidation\n{DIGEST_CLOSE}"
    digest.write(project.project_id, full, kind="full")
    with digest.refreshing(Store.open()) as store:
        store.add(project, NewRecord(type="decision", title="New fact", body="Arrived after consolidation."))
    found = digest.read(project.project_id)
    assert found is not None
    text, info = found
    assert text == full
    assert info.kind == "full" and info.stale


def test_a_full_digest_naming_a_superseded_record_is_replaced_at_once(project: Project) -> None:
    """A stale full digest is still served until consolidation runs again (seen with Codex: the
    session's extraction superseded a decision right after consolidation wrote the digest), so
    one that names a record no longer current is replaced by the cheap digest on the write."""
    with digest.refreshing(Store.open()) as store:
        old = store.add(project, NewRecord(type="decision", title="Use SQLite for the queue", body="Old."))
    digest.write(
        project.project_id,
        f"{DIGEST_OPEN}\n## Full\n- [decision {old.record_id}] Use SQLite for the queue\n{DIGEST_CLOSE}",
        kind="full",
    )
    with digest.refreshing(Store.open()) as store:
        store.supersede(project, old.record_id, title="Use PostgreSQL for the queue", body="New.")
    text, info = digest.read(project.project_id)
    assert info.kind == "cheap" and not info.stale
    assert "PostgreSQL" in text and "Use SQLite" not in text and old.record_id not in text


def test_superseded_and_other_projects_records_stay_out_of_the_digest(project: Project, other_project: Project) -> None:
    with digest.refreshing(Store.open()) as store:
        old = store.add(project, NewRecord(type="decision", title="Deploy on Heroku", body="Old."))
        store.supersede(project, old.record_id, title="Deploy on Fly", body="New.")
        store.add(other_project, NewRecord(type="decision", title="Beta secret plan", body="Theirs."))
    found = digest.read(project.project_id)
    assert found is not None
    assert "Deploy on Fly" in found[0]
    assert "Heroku" not in found[0] and "Beta secret plan" not in found[0]


def test_the_digest_respects_the_session_start_budget(project: Project) -> None:
    with digest.refreshing(Store.open()) as store:
        for index in range(80):
            store.add(project, NewRecord(type="decision", title=f"Decision number {index}", body="word " * 300))
    found = digest.read(project.project_id)
    assert found is not None
    assert SESSION_START.allows(found[0])


def test_inferred_profile_lines_and_the_handover_are_marked_unconfirmed(project: Project) -> None:
    """Issue 14: a guessed profile line must not read like a detected one; the handover stays in
    the digest (the next session needs it most) but marked."""
    with digest.refreshing(Store.open()) as store:
        store.add(project, NewRecord(type="profile", title="Stack", body="Python 3.12, uv", key="stack"))
        store.add(
            project,
            NewRecord(type="profile", title="Guessed", body="uses Docker", key="docker", confidence="inferred"),
        )
        store.add(
            project,
            NewRecord(
                type="handover",
                title="Handover: queue migration",
                body="Moving the queue.",
                key="handover",
                confidence="inferred",
                source="llm_extraction",
            ),
        )
        text = digest.compose(store, project)
    lines = text.splitlines()
    assert "- Stack: Python 3.12, uv" in lines
    assert "- Guessed (unconfirmed — inferred, not stated by the developer): uses Docker" in lines
    assert "## Last handover (unconfirmed — inferred, not stated by the developer)" in lines


def test_session_start_trusts_the_saved_token_count_only_for_the_text_it_was_saved_for(project: Project) -> None:
    from agentctx_store import digest_file

    text = f"{DIGEST_OPEN}\n## Decisions\n- [decision 01J0000000000000000000000A] Use SQLite for the queue\n"
    digest.write(project.project_id, text, kind="cheap")
    found = digest_file.read(project.project_id)
    assert found is not None
    saved_text, meta, _age = found
    assert meta["tokens"] == estimate_tokens(text) == digest_file.token_count(saved_text, meta)
    forged = {**meta, "tokens": 1}  # a count that is no longer the text's: used only while the hash matches
    assert digest_file.token_count(saved_text, forged) == 1
    edited = saved_text + "- [convention 01J0000000000000000000000B] " + "a much longer line " * 40 + "\n"
    assert digest_file.token_count(edited, forged) == estimate_tokens(edited) > 100
    assert digest_file.token_count(saved_text, {"tokens": 1}) == estimate_tokens(saved_text)  # an old digest: no hash
