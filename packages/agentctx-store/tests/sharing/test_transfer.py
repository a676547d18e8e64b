"""transfer: the Markdown export round-trips any valid record exactly; import is all or nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctx_store import NewRecord, Project, Store, ValidationError
from agentctx_store.records import MAX_BODY_CHARS, MAX_TITLE_CHARS, RECORD_TYPES
from agentctx_store.sharing import transfer

PROJECT = Project(project_id="p-transfer", root=str(Path("/nowhere/transfer")), name="transfer")
OTHER = Project(project_id="p-elsewhere", root=str(Path("/nowhere/elsewhere")), name="elsewhere")

texts = st.text(st.characters(exclude_categories=("Cs",)), min_size=1)
titles = texts.map(lambda text: text.replace("\n", " ").strip()[:MAX_TITLE_CHARS]).filter(bool)
bodies = texts.map(lambda text: text.strip()[:MAX_BODY_CHARS]).filter(bool)


def dump(store: Store, project: Project) -> list[dict[str, object]]:
    records = store.list_records(project, include_superseded=True, order="recorded_at ASC")
    return sorted((record.to_dict() for record in records), key=lambda row: str(row["id"]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    items=st.lists(
        st.tuples(st.sampled_from(RECORD_TYPES), titles, bodies, st.booleans(), st.sampled_from(["project", "global"])),
        min_size=1,
        max_size=4,
    ),
    supersede_first=st.booleans(),
)
def test_markdown_export_round_trips_any_valid_records(tmp_path: Path, items, supersede_first: bool) -> None:
    source_path, target_path = tmp_path / "a.db", tmp_path / "b.db"
    source_path.unlink(missing_ok=True)
    target_path.unlink(missing_ok=True)
    with Store.open(source_path) as source:
        created = [
            source.add(PROJECT, NewRecord(type=kind, title=title, body=body, pinned=pinned, scope=scope))
            for kind, title, body, pinned, scope in items
        ]
        if supersede_first:
            source.supersede(PROJECT, created[0].record_id, body="Replaced.\n\n  indented  ")
        text = transfer.render_markdown(source, PROJECT, include_history=True)
        expected = dump(source, PROJECT)
    with Store.open(target_path) as target:
        report = transfer.import_items(target, PROJECT, transfer.parse_markdown(text))
        assert len(report.created) == len(expected)
        assert dump(target, PROJECT) == expected
        assert transfer.render_markdown(target, PROJECT, include_history=True) == text


def test_a_body_quoting_the_bare_end_marker_survives(store: Store) -> None:
    body = "Before\n<!-- /agentctx-record -->\n### not a title\n<!-- agentctx-record {} -->\nafter"
    record = store.add(PROJECT, NewRecord(type="discovery", title="Markers in a body", body=body))
    items = transfer.parse_markdown(transfer.render_markdown(store, PROJECT))
    assert [(item.record_id, item.body.strip()) for item in items] == [(record.record_id, body)]


def test_import_is_all_or_nothing(store: Store) -> None:
    items = transfer.parse_jsonl(
        '{"id": "a", "type": "decision", "title": "Good", "body": "Fine."}\n'
        '{"id": "b", "type": "decision", "title": "Bad", "body": "Fine.", "confidence": "sure"}\n'
    )
    with pytest.raises(ValidationError, match=r"^Line 2: Invalid confidence 'sure'"):
        transfer.import_items(store, PROJECT, items)
    assert store.list_records(PROJECT, include_superseded=True) == []


def test_importing_another_projects_record_id_is_refused(store: Store) -> None:
    theirs = store.add(OTHER, NewRecord(type="decision", title="Theirs", body="Belongs to the other project."))
    text = transfer.render_markdown(store, OTHER)
    with pytest.raises(ValidationError, match="belongs to another project"):
        transfer.import_items(store, PROJECT, transfer.parse_markdown(text))
    assert store.get(OTHER, theirs.record_id).title == "Theirs"
    assert store.list_records(PROJECT) == []


def test_jsonl_supersedes_a_stored_head_by_its_id(store: Store) -> None:
    old = store.add(PROJECT, NewRecord(type="decision", title="Use Jenkins", body="CI runs on Jenkins."))
    line = f'{{"type": "decision", "title": "Use GitHub Actions", "body": "CI runs on Actions.", "supersedes": ["{old.record_id}"]}}'
    report = transfer.import_items(store, PROJECT, transfer.parse_jsonl(line))
    assert store.get(PROJECT, old.record_id).superseded_by == report.created[0]
    assert [record.title for record in store.list_records(PROJECT)] == ["Use GitHub Actions"]


def test_a_record_cannot_be_superseded_twice_in_one_file(store: Store) -> None:
    text = (
        '{"id": "a", "type": "decision", "title": "A", "body": "a"}\n'
        '{"id": "b", "type": "decision", "title": "B", "body": "b", "supersedes": ["a"]}\n'
        '{"id": "c", "type": "decision", "title": "C", "body": "c", "supersedes": ["a"]}\n'
    )
    with pytest.raises(ValidationError, match="^Line 3: .*superseded twice"):
        transfer.import_items(store, PROJECT, transfer.parse_jsonl(text))


def test_supersession_across_keyed_types_is_refused(store: Store) -> None:
    # issue 10 item 1: a fact may change type, but a handover is superseded only by a handover
    text = (
        '{"id": "a", "type": "handover", "title": "A", "body": "a"}\n'
        '{"id": "b", "type": "decision", "title": "B", "body": "b", "supersedes": ["a"]}\n'
    )
    with pytest.raises(ValidationError, match="^Line 2: a handover is superseded only by a handover"):
        transfer.import_items(store, PROJECT, transfer.parse_jsonl(text))
    assert store.conn.execute("SELECT count(*) FROM records").fetchone()[0] == 0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3),
    max_leaves=6,
)
record_like = st.fixed_dictionaries(
    {},
    optional={
        "id": st.text(max_size=5) | st.integers(),
        "type": st.sampled_from([*RECORD_TYPES, "nope"]) | json_values,
        "title": st.text(max_size=150) | json_values,
        "body": st.text(max_size=50) | json_values,
        "valid_from": st.sampled_from(["2024-01-01", "yesterday"]) | json_values,
        "supersedes": st.lists(st.text(max_size=5), max_size=2) | json_values,
        "pinned": json_values,
        "scope": st.sampled_from(["project", "global", "team"]),
    },
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(record_like.map(json.dumps), st.text(max_size=40)), max_size=5))
def test_any_file_imports_fully_or_fails_with_a_line_error_and_writes_nothing(store: Store, lines) -> None:
    before = len(store.list_records(PROJECT, include_superseded=True))
    try:
        items = transfer.parse_file_text("\n".join(lines))
        report = transfer.import_items(store, PROJECT, items)
    except ValidationError as exc:
        assert str(exc).startswith("Line "), str(exc)
        assert len(store.list_records(PROJECT, include_superseded=True)) == before
        return
    after = len(store.list_records(PROJECT, include_superseded=True))
    assert after == before + len(report.created)


def test_the_export_names_the_client_and_hook_and_round_trips_them(tmp_path: Path) -> None:
    """Issue 20: which client and hook produced a record is in its metadata comment, and an import
    into another store keeps it, so the re-export is byte for byte the same."""
    with Store.open(tmp_path / "a.db") as source:
        stub = source.add(PROJECT, NewRecord(type="bugfix", title="pytest failed", body="Exit 1.", session_id="g-1"))
        source.update_session_meta(
            PROJECT,
            "g-1",
            client="gemini",
            hook_records=[{"id": stub.record_id, "client": "gemini", "hook": "AfterTool"}],
        )
        extracted = source.add(
            PROJECT, NewRecord(type="decision", title="Use SQLite", body="One file.", session_id="c-1")
        )
        source.update_session_meta(PROJECT, "c-1", client="codex")
        by_mcp = source.add(
            PROJECT, NewRecord(type="convention", title="Tabs", body="Tabs.", session_id="mcp-claude-1")
        )
        source.update_session_meta(PROJECT, "mcp-claude-1", client="claude", hook="MCP")
        plain = source.add(PROJECT, NewRecord(type="preference", title="Short answers", body="Be brief."))
        text = transfer.render_markdown(source, PROJECT)
    metas = {
        json.loads(line.removeprefix("<!-- agentctx-record ").removesuffix(" -->"))["id"]: line
        for line in text.split("\n")
        if line.startswith("<!-- agentctx-record ")
    }
    assert '"client": "gemini", "hook": "AfterTool"' in metas[stub.record_id]
    assert '"client": "codex"' in metas[extracted.record_id] and '"hook"' not in metas[extracted.record_id]
    assert '"client": "claude", "hook": "MCP"' in metas[by_mcp.record_id]
    assert '"client"' not in metas[plain.record_id]
    with Store.open(tmp_path / "b.db") as target:
        transfer.import_items(target, PROJECT, transfer.parse_markdown(text))
        assert transfer.render_markdown(target, PROJECT) == text
        again = transfer.import_items(target, PROJECT, transfer.parse_markdown(text))
        assert len(again.unchanged) == 4 and transfer.render_markdown(target, PROJECT) == text


def test_a_damaged_client_in_the_export_is_refused_naming_the_line(store: Store) -> None:
    store.add(PROJECT, NewRecord(type="decision", title="Use SQLite", body="One file."))
    text = transfer.render_markdown(store, PROJECT).replace('"source": "cli"', '"source": "cli", "client": "co dex"')
    with pytest.raises(ValidationError, match=r"^Line \d+: client must be a name like `codex`"):
        transfer.parse_markdown(text)
