"""The prompt line (`agentctx_store.prompt_answer`): rank → compose → account on a real store.
Both paths call `compose` and `account`; tests-e2e/test_search_service.py compares the two."""

from __future__ import annotations

import pytest

from agentctx_store import NewRecord, Project, Store
from agentctx_store.digest_file import MAX_PENDING_COUNT, Pending
from agentctx_store.prompt_answer import Asked, Injection, account, compose, rank, shortlist

from .conftest import AddRecord

AT = "2026-12-04T10:00:00.000Z"


def _session(store: Store, session_id: str) -> dict[str, object]:
    session = store.get_session(session_id)
    assert session is not None
    return session


def test_one_prompt_through_the_line_records_what_it_showed(store: Store, project: Project, add: AddRecord) -> None:
    shown = add(title="Redis holds the job queue", body="Redis streams hold the job queue.", type="decision")
    asked = Asked(prompt="how does the redis job queue work?", session_id="s1", client="codex")
    ranked = rank(store, project, asked)
    assert [hit.record.record_id for hit in ranked.hits] == [shown.record_id]
    assert "redis" in ranked.terms
    injection = compose(store, project, asked, ranked)
    assert shown.record_id in injection.text and injection.ids == [shown.record_id]
    account(store, project, asked, injection, path="keyword", at=AT)
    session = _session(store, "s1")
    assert session["prompt_injections"] == 1 and session["tokens_injected"] == injection.tokens > 0
    meta = session["meta"]
    assert isinstance(meta, dict)
    assert meta["client"] == "codex" and meta["prompts_served_keyword"] == 1
    assert meta["injections"] == [
        {"at": AT, "client": "codex", "hook": "UserPromptSubmit", "ids": [shown.record_id], "tokens": injection.tokens}
    ]
    assert store.get(project, shown.record_id).access_count == 1


def test_already_shown_superseded_and_foreign_records_are_never_ranked(
    store: Store, project: Project, other_project: Project, add: AddRecord
) -> None:
    old = add(title="Redis holds the job queue", body="Redis streams hold the job queue.", type="decision")
    _, new = store.supersede(project, old.record_id, title="Redis holds the job queue, in streams", body="Redis.")
    foreign = store.add(other_project, type_body("Redis job queue of another project"))
    ids = [hit.record.record_id for hit in rank(store, project, Asked(prompt="redis job queue", session_id="s")).hits]
    assert old.record_id not in ids and foreign.record_id not in ids and ids == [new.record_id]
    asked = Asked(prompt="redis job queue", session_id="s", already=[new.record_id])
    assert rank(store, project, asked).hits == []


def type_body(title: str) -> NewRecord:
    return NewRecord(type="decision", title=title, body=title + ".")


def test_a_prompt_that_finds_nothing_records_only_what_was_pending(store: Store, project: Project) -> None:
    asked = Asked(prompt="weather on mars", session_id="s2", pending=Pending(tokens=90, ids=[], count=2))
    injection = compose(store, project, asked, rank(store, project, asked))
    assert injection.text == "" and injection.ids == []
    account(store, project, asked, injection, path="warm", at=AT)
    session = _session(store, "s2")
    assert session["injections"] == 2 and session["tokens_injected"] == 90 and session["prompt_injections"] == 0
    assert "injections" not in session["meta"]  # type: ignore[operator]
    account(store, project, Asked(prompt="x", session_id="s3"), Injection(), path="warm", at=AT)
    assert store.get_session("s3") is None  # nothing shown, nothing pending: nothing written


def test_the_review_gate_keeps_unaccepted_extraction_out(store: Store, project: Project, add: AddRecord) -> None:
    guess = add(title="Redis job queue", body="Redis job queue.", source="llm_extraction", confidence="inferred")
    asked = Asked(prompt="redis job queue", gated=True)
    assert asked.wanted == 10
    assert rank(store, project, asked).hits == []
    assert [hit.record.record_id for hit in rank(store, project, Asked(prompt="redis job queue")).hits] == [
        guess.record_id
    ]
    assert shortlist(asked, [], ["redis"]).terms == ["redis"]


def test_the_path_must_be_one_of_the_two(store: Store, project: Project) -> None:
    with pytest.raises(ValueError, match="path"):
        account(store, project, Asked(prompt="x", session_id="s"), Injection(text="x"), path="cold", at=AT)


@pytest.mark.parametrize(
    "entry",
    [
        {"client": "claude", "note": "password: hunter2hunter2"},  # free text
        {"client": "claude token=ghp_abcdefghijklmnopqrstuvwxyz0123456789"},
        {"client": "claude", "ids": ["01J", "a secret value"]},
        {"client": "claude", "meta": {"nested": "x"}},
    ],
)
def test_the_session_log_refuses_anything_but_ids_counts_times_and_names(
    store: Store, project: Project, entry: dict[str, object]
) -> None:
    """The injection log is written without the redactor, so it takes no text it would need."""
    with pytest.raises(ValueError, match="not an id"):
        store.log_in_session(project, "s", "injections", entry)
    assert store.get_session("s") is None


@pytest.mark.parametrize("value", [None, [], "x", {"tokens": "many"}, {"ids": "abc", "count": 1}, {"count": 10**400}])
def test_pending_from_anything_malformed_is_nothing_or_what_is_readable(value: object) -> None:
    pending = Pending.from_json(value)
    assert pending.tokens >= 0 and all(isinstance(item, str) for item in pending.ids)
    assert pending.count in (0, 1, MAX_PENDING_COUNT)  # a count no state file could hold is capped
    assert Pending.from_json(pending.to_json()).to_json() == pending.to_json()


def test_a_session_log_keeps_its_last_entries(store: Store, project: Project) -> None:
    from agentctx_store.sessions import SESSION_LOG_ENTRIES

    for index in range(SESSION_LOG_ENTRIES + 5):
        store.log_in_session(project, "s", "hook_records", {"id": f"R{index}", "client": "gemini", "hook": "AfterTool"})
    meta = _session(store, "s")["meta"]
    assert isinstance(meta, dict)
    kept = meta["hook_records"]
    assert (
        len(kept) == SESSION_LOG_ENTRIES and kept[-1]["id"] == f"R{SESSION_LOG_ENTRIES + 4}" and kept[0]["id"] == "R5"
    )
    assert meta["client"] == "gemini"
