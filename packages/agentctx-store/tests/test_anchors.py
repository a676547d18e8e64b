"""Anchors: a record's source in the project's files (path, lines or symbol, content hash)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from agentctx_store import Project, Record, RecordNotFound, Store, ValidationError
from agentctx_store.anchors import (
    Anchor,
    add_anchors,
    anchored_records,
    anchors_of,
    content_hash,
    normalize_anchor_path,
    replace_anchors,
)
from agentctx_store.db import APPLICATION_ID
from agentctx_store.migrations import MIGRATIONS
from agentctx_store.paths import db_path

AddRecord = Callable[..., Record]


def test_a_records_anchors_come_back_in_order_as_stored(store: Store, project: Project, add: AddRecord) -> None:
    record = add("Use uv", "Run uv sync before tests.")
    stored = add_anchors(
        store,
        project,
        record.record_id,
        [
            Anchor(path="./AGENTS.md", content_hash=content_hash("- Run uv sync"), line_start=3, line_end=4),
            Anchor(path="src\\app.py", content_hash="sha256:ab", symbol=" main "),
        ],
    )
    assert stored[0].path == "AGENTS.md" and stored[1].path == "src/app.py" and stored[1].symbol == "main"
    assert anchors_of(store, project, record.record_id) == stored
    assert anchors_of(store, project, add("Other").record_id) == []


def test_anchored_records_lists_only_current_anchored_records_of_this_project(
    store: Store, project: Project, other_project: Project, add: AddRecord
) -> None:
    first = add("Uses ruff", "Lint with ruff.", type="convention")
    add("Hand-made, no anchor")
    theirs = add("Their rule", in_project=other_project)
    add_anchors(
        store, project, first.record_id, [Anchor(path="AGENTS.md", content_hash="sha256:1", line_start=1, line_end=1)]
    )
    add_anchors(store, other_project, theirs.record_id, [Anchor(path="AGENTS.md", content_hash="sha256:2")])
    listed = anchored_records(store, project)
    assert [(record.record_id, [a.path for a in anchors]) for record, anchors in listed] == [
        (first.record_id, ["AGENTS.md"])
    ]
    assert anchored_records(store, project, paths=["CLAUDE.md"]) == []
    assert [r.record_id for r, _ in anchored_records(store, project, paths=["./AGENTS.md"])] == [first.record_id]
    _, newer = store.supersede(project, first.record_id, body="Lint and format with ruff.")
    assert anchored_records(store, project) == []  # the superseded one is history now
    history = anchored_records(store, project, include_superseded=True)
    assert [record.record_id for record, _ in history] == [first.record_id]
    assert newer.record_id not in {record.record_id for record, _ in history}


def test_another_projects_record_cannot_be_anchored_or_read(
    store: Store, project: Project, other_project: Project, add: AddRecord
) -> None:
    theirs = add("Their rule", in_project=other_project)
    with pytest.raises(RecordNotFound):
        add_anchors(store, project, theirs.record_id, [Anchor(path="a.md", content_hash="sha256:1")])
    with pytest.raises(RecordNotFound):
        anchors_of(store, project, theirs.record_id)


def test_replace_anchors_keeps_only_the_new_ones(store: Store, project: Project, add: AddRecord) -> None:
    record = add("Rule")
    add_anchors(store, project, record.record_id, [Anchor(path="a.md", content_hash="sha256:1")])
    replace_anchors(store, project, record.record_id, [Anchor(path="b.md", content_hash="sha256:2")])
    assert [a.path for a in anchors_of(store, project, record.record_id)] == ["b.md"]


def test_deleting_a_record_deletes_its_anchors(store: Store, project: Project, add: AddRecord) -> None:
    record = add("Rule")
    add_anchors(store, project, record.record_id, [Anchor(path="a.md", content_hash="sha256:1")])
    store.delete(project, record.record_id)
    assert store.conn.execute("SELECT count(*) FROM record_anchors").fetchone()[0] == 0


@pytest.mark.parametrize(
    ("anchor", "message"),
    [
        (Anchor(path="/etc/passwd", content_hash="sha256:1"), "absolute"),
        (Anchor(path="C:/x.md", content_hash="sha256:1"), "absolute"),
        (Anchor(path="docs/../../x.md", content_hash="sha256:1"), "leaves the project"),
        (Anchor(path="  ", content_hash="sha256:1"), "empty"),
        (Anchor(path="a.md", content_hash="sha256:1", line_start=3), "both line_start"),
        (Anchor(path="a.md", content_hash="sha256:1", line_start=5, line_end=2), "not a range"),
        (Anchor(path="a.md", content_hash=" "), "content hash is empty"),
    ],
)
def test_bad_anchors_are_refused_and_nothing_is_written(
    store: Store, project: Project, add: AddRecord, anchor: Anchor, message: str
) -> None:
    record = add("Rule")
    good = Anchor(path="ok.md", content_hash="sha256:1")
    with pytest.raises(ValidationError, match=message):
        add_anchors(store, project, record.record_id, [good, anchor])
    assert anchors_of(store, project, record.record_id) == []


def test_content_hash_ignores_line_endings_and_trailing_blanks_but_not_words() -> None:
    assert content_hash("- a rule  \r\n- two\n") == content_hash("- a rule\n- two")
    assert content_hash("- a rule") != content_hash("- a rules")
    assert content_hash("x").startswith("sha256:")
    assert normalize_anchor_path("./docs/adr/0001.md") == "docs/adr/0001.md"


def test_a_store_from_before_anchors_gets_the_table_and_keeps_its_records(project: Project) -> None:
    before = next(index for index, step in enumerate(MIGRATIONS) if step.__name__.endswith("_record_anchors"))
    path = Path(db_path())
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    for migrate in MIGRATIONS[:before]:
        migrate(conn, True)
    conn.execute(
        """INSERT INTO records (id, project_id, type, title, body, valid_from, recorded_at, source)
           VALUES ('01JOLDRECORD0000000000000B', 'p-alpha', 'decision', 'Old', 'Old body',
                   '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z', 'cli')"""
    )
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {before}")
    conn.close()
    with Store.open(path) as store:
        assert anchors_of(store, project, "01JOLDRECORD0000000000000B") == []
        add_anchors(store, project, "01JOLDRECORD0000000000000B", [Anchor(path="x.md", content_hash="sha256:1")])
        assert len(anchored_records(store, project)) == 1
