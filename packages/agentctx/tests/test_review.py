"""`agentctx review` through the CLI's real entry point (issue 14): accept, edit, reject, skip,
end of input stops, skip changes nothing, --json lists, --all widens the inbox."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentctx_store import NewRecord, Project, Record, Store, global_project, paths, resolve_project

Cli = Callable[..., Any]


def extracted(
    project: Project, title: str, *, type: str = "decision", scope: str = "project", **fields: object
) -> Record:
    time.sleep(0.003)  # newest first is by recording time: no two in the same millisecond
    with Store.open() as store:
        owner = global_project() if scope == "global" else project
        return store.add(
            owner,
            NewRecord(
                type=type,
                title=title,
                body=f"{title}. Said in session s1.",
                scope=scope,
                confidence=str(fields.pop("confidence", "inferred")),
                source=str(fields.pop("source", "llm_extraction")),
                session_id="s1",
                reinforce_count=1,
            ),
        )


def rows() -> list[tuple[object, ...]]:
    conn = sqlite3.connect(Path(paths.db_path()))
    try:
        return conn.execute("SELECT id, title, body, confidence, superseded_at FROM records ORDER BY id").fetchall()
    finally:
        conn.close()


@pytest.fixture
def inbox(project_dir: Path) -> dict[str, Record]:
    """Four extracted, unconfirmed records (oldest first) and what must never be in the inbox."""
    project = resolve_project(project_dir)
    found = {
        name: extracted(project, title)
        for name, title in (
            ("first", "Use Postgres for the job queue"),
            ("second", "Deploy with Docker Compose"),
            ("third", "Keep migrations in alembic"),
            ("fourth", "Name branches after the ticket"),
        )
    }
    extracted(project, "Handover: moving the queue", type="handover")
    extracted(project, "Stated by the developer", confidence="explicit", source="cli")
    extracted(project, "Error: ModuleNotFoundError: redis", type="bugfix", source="hook_observation")
    return found


def test_json_lists_the_inbox_newest_first_and_changes_nothing(
    cli: Cli, project_dir: Path, inbox: dict[str, Record]
) -> None:
    before = rows()
    result = cli("review", "--json", "--project", str(project_dir))
    assert result.code == 0, result.err
    listed = result.json()["records"]
    assert [record["title"] for record in listed] == [
        "Name branches after the ticket",
        "Keep migrations in alembic",
        "Deploy with Docker Compose",
        "Use Postgres for the job queue",
    ]
    assert rows() == before
    everything = cli("review", "--json", "--all", "--project", str(project_dir)).json()["records"]
    assert {record["title"] for record in everything} - {record["title"] for record in listed} == {
        "Error: ModuleNotFoundError: redis"
    }


def test_accept_edit_reject_skip_then_end_of_input_stops(cli: Cli, project_dir: Path, inbox: dict[str, Record]) -> None:
    project = resolve_project(project_dir)
    # newest first: fourth accepted, third edited, second rejected, first skipped
    answers = "a\ne\nKeep migrations in Alembic, one per change\n\nr\ns\n"
    result = cli("review", "--project", str(project_dir), input=answers)
    assert result.code == 0, result.err
    assert "1 accepted, 1 edited, 1 rejected, 1 skipped; 1 left to review." in result.out
    with Store.open() as store:
        assert store.get(project, inbox["fourth"].record_id).confidence == "explicit"
        edited = store.get(project, inbox["third"].record_id)
        assert (edited.title, edited.confidence) == ("Keep migrations in Alembic, one per change", "explicit")
        assert edited.body == inbox["third"].body  # Enter kept the body
        assert store.get(project, inbox["first"].record_id) == inbox["first"]  # skipped: untouched
        assert all(
            record.record_id != inbox["second"].record_id
            for record in store.list_records(project, include_superseded=True)
        )
    again = cli("review", "--json", "--project", str(project_dir)).json()["records"]
    assert [record["id"] for record in again] == [inbox["first"].record_id]


def test_end_of_input_stops_with_nothing_more_changed(cli: Cli, project_dir: Path, inbox: dict[str, Record]) -> None:
    project = resolve_project(project_dir)
    result = cli("review", "--project", str(project_dir), input="a\n")  # then the input ends
    assert result.code == 0, result.err
    assert "1 accepted; 3 left to review." in result.out
    with Store.open() as store:
        assert [
            record.confidence
            for record in (store.get(project, inbox[name].record_id) for name in ("third", "second", "first"))
        ] == ["inferred"] * 3
    before = rows()
    assert cli("review", "--project", str(project_dir), input="").code == 0  # EOF at once: nothing changes
    assert cli("review", "--project", str(project_dir), input="e\nhalf an edit\n").code == 0  # EOF inside an edit
    assert rows() == before


def test_skipping_everything_changes_nothing(cli: Cli, project_dir: Path, inbox: dict[str, Record]) -> None:
    before = rows()
    result = cli("review", "--project", str(project_dir), input="s\ns\nwhat?\ns\ns\n")
    assert result.code == 0
    assert "Type one of a, e, r, s or q" in result.out
    assert "4 skipped; 4 left to review." in result.out
    assert rows() == before


def test_an_empty_inbox_says_so(cli: Cli, project_dir: Path) -> None:
    result = cli("review", "--project", str(project_dir))
    assert result.code == 0 and "Nothing to review" in result.out


def test_global_preferences_are_reviewed_from_any_project_other_projects_never(
    cli: Cli, project_dir: Path, other_dir: Path
) -> None:
    extracted(resolve_project(other_dir), "Beta uses Kafka")
    extracted(resolve_project(project_dir), "Prefers small commits", type="preference", scope="global")
    listed = cli("review", "--json", "--project", str(project_dir)).json()["records"]
    assert [record["title"] for record in listed] == ["Prefers small commits"]
