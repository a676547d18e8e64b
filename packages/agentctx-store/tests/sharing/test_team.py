"""The team file `.agentctx/context.md`: what goes in, how it reads back, two heads."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctx_store import NewRecord, Project, Store, ValidationError
from agentctx_store.sharing import team, team_state


@pytest.fixture
def repo(tmp_path: Path, project: Project) -> Path:
    root = Path(project.root)
    root.mkdir(parents=True)
    (root / ".git").mkdir()
    return root


def _add(store: Store, project: Project, kind: str, title: str, **fields: object) -> str:
    return store.add(project, NewRecord(type=kind, title=title, body=f"{title}.", **fields)).record_id  # type: ignore[arg-type]


def test_export_holds_only_current_explicit_team_types_and_no_secrets(
    store: Store, project: Project, repo: Path
) -> None:
    keep = [
        _add(store, project, "decision", "Postgres for state"),
        _add(store, project, "convention", "Tests next to sources"),
        _add(store, project, "discovery", "request.signal is broken"),
    ]
    left_out = [
        _add(store, project, "preference", "Short answers"),
        _add(store, project, "handover", "Half-done refactor", key=None),
        _add(store, project, "decision", "A guess", confidence="inferred"),
        _add(store, project, "convention", "Mine everywhere", scope="global"),
        _add(store, project, "discovery", "The token is ghp_abcdefghijklmnopqrstuvwxyz0123456789AB"),
    ]
    old = _add(store, project, "decision", "Redis for queues")
    store.supersede(project, old, body="Redis streams for queues.")
    report = team.export_team(store, project, repo, is_secret=lambda text: "ghp_" in text)
    text = (repo / team.TEAM_FILE).read_text(encoding="utf-8")
    for record_id in keep:
        assert f'"id": "{record_id}"' in text
    for record_id in [*left_out, old]:
        assert record_id not in text.split("supersedes")[0] or record_id == old
    assert "ghp_" not in text and "Short answers" not in text and "A guess" not in text
    assert report.withheld == 1
    assert "Redis streams for queues." in text and f'"supersedes": "{old}"' in text


def test_export_is_stable_and_independent_of_time(store: Store, project: Project, repo: Path) -> None:
    for index in range(6):
        _add(store, project, "convention", f"Rule number {index}")
    team.export_team(store, project, repo)
    first = (repo / team.TEAM_FILE).read_bytes()
    team.export_team(store, project, repo)
    assert (repo / team.TEAM_FILE).read_bytes() == first
    assert b"recorded_at" not in first and b"T0" not in first.split(b"valid_from")[-1][:40]


def test_import_creates_supersedes_and_retires_from_hand_edits(store: Store, project: Project, repo: Path) -> None:
    stays = _add(store, project, "decision", "Postgres for state")
    edited = _add(store, project, "convention", "Tests next to sources")
    deleted = _add(store, project, "discovery", "Old gotcha")
    team.export_team(store, project, repo)
    path = repo / team.TEAM_FILE
    text = path.read_text(encoding="utf-8")
    text = text.replace("Tests next to sources.", "Tests live next to their sources, one file per module.")
    start = text.index("### Old gotcha")
    end = text.index(f"<!-- /agentctx {deleted} -->") + len(f"<!-- /agentctx {deleted} -->")
    text = text[:start] + text[end:]
    text = text.replace(
        "## Decisions\n", "## Decisions\n\n### Ship on Fridays\n\nWe release every Friday at noon.\n", 1
    )
    path.write_text(text, encoding="utf-8")
    assert team_state.changed(str(repo), project.project_id)
    report = team.import_team(store, project, repo)
    assert len(report.created) == 1 and report.retired == [deleted] and report.unchanged == [stays]
    (old_new,) = report.superseded
    assert old_new[0] == edited
    assert store.get(project, edited).superseded_by == old_new[1]
    assert store.get(project, old_new[1]).body == "Tests live next to their sources, one file per module."
    assert store.get(project, deleted).superseded_at is not None
    assert store.get(project, report.created[0]).title == "Ship on Fridays"
    assert not team_state.changed(str(repo), project.project_id)
    again = team.import_team(store, project, repo)  # the same file twice: nothing more
    assert (again.created, again.superseded, again.retired) == ([], [], [])


def test_a_second_supersession_of_the_same_record_gives_two_heads(store: Store, project: Project, repo: Path) -> None:
    base = _add(store, project, "decision", "Use REST")
    _, mine = store.supersede(project, base, body="Use gRPC.")
    theirs = team.TeamBlock(type="decision", title="Use GraphQL", body="Use GraphQL.", line=1, supersedes=base)
    team.export_team(store, project, repo)
    path = repo / team.TEAM_FILE
    extra = f'### Use GraphQL <!-- agentctx {{"id": "01JTHEMS00000000000000000B", "type": "decision", "supersedes": "{base}"}} -->\n{theirs.body}\n<!-- /agentctx 01JTHEMS00000000000000000B -->\n'
    path.write_text(path.read_text(encoding="utf-8") + extra, encoding="utf-8")
    report = team.import_team(store, project, repo)
    assert report.conflicts == [(base, "01JTHEMS00000000000000000B")]
    ((old, heads),) = team.heads_conflicts(store, project)
    assert old.record_id == base and {head.record_id for head in heads} == {
        mine.record_id,
        "01JTHEMS00000000000000000B",
    }
    assert team.resolve_heads(store, project, mine.record_id) == ["01JTHEMS00000000000000000B"]
    assert team.heads_conflicts(store, project) == []
    assert store.get(project, "01JTHEMS00000000000000000B").superseded_by == mine.record_id


def test_a_damaged_file_is_refused_before_anything_is_written(store: Store, project: Project, repo: Path) -> None:
    _add(store, project, "decision", "Postgres for state")
    team.export_team(store, project, repo)
    path = repo / team.TEAM_FILE
    path.write_text(path.read_text(encoding="utf-8").replace("## Decisions", "## Wishes"), encoding="utf-8")
    before = store.list_records(project, include_superseded=True, limit=None)
    with pytest.raises(ValidationError, match="Line 5: unknown section 'Wishes'"):
        team.import_team(store, project, repo)
    assert store.list_records(project, include_superseded=True, limit=None) == before


def test_no_team_file_is_a_clear_error(store: Store, project: Project, repo: Path) -> None:
    with pytest.raises(ValidationError, match="team export"):
        team.import_team(store, project, repo)
    assert team_state.notice(str(repo), project.project_id) == ""


def test_the_notice_is_cheap_and_only_for_a_real_change(store: Store, project: Project, repo: Path) -> None:
    _add(store, project, "decision", "Postgres for state")
    team.export_team(store, project, repo)
    path = repo / team.TEAM_FILE
    assert team_state.notice(str(repo), project.project_id) == ""
    path.write_bytes(path.read_bytes())  # touched, same content (a checkout): no notice
    assert team_state.notice(str(repo), project.project_id) == ""
    path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    (repo / "sub").mkdir()
    assert team_state.notice(str(repo / "sub"), project.project_id) == team_state.NOTICE
    assert "team import" in team_state.NOTICE
