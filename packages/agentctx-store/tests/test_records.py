"""ULID ids and the record contract (docs/contracts.md#records): invalid input is refused and
nothing is written."""

from __future__ import annotations

import pytest

from agentctx_store import NewRecord, Project, Store, ValidationError
from agentctx_store.records import MAX_BODY_CHARS, MAX_TITLE_CHARS, RECORD_TYPES
from agentctx_store.ulid import is_ulid, new_ulid


def test_ulids_are_26_crockford_chars_and_sort_by_creation_time() -> None:
    earlier, later = new_ulid(now_ms=1_700_000_000_000), new_ulid(now_ms=1_700_000_000_001)
    assert len(earlier) == 26 and is_ulid(earlier) and is_ulid(later)
    assert earlier < later
    assert not set(earlier) & set("ILOU")


def test_ulids_do_not_collide_within_one_millisecond() -> None:
    ids = {new_ulid(now_ms=42) for _ in range(10_000)}
    assert len(ids) == 10_000


def test_is_ulid_rejects_other_strings() -> None:
    assert not is_ulid("not-a-ulid")
    assert not is_ulid("0" * 25)
    assert not is_ulid("U" * 26)  # U is not in Crockford base32


def test_records_get_ulid_ids_and_timestamps(store: Store, project: Project) -> None:
    record = store.add(project, NewRecord(type="convention", title="Tabs", body="Use tabs in Makefiles."))
    assert is_ulid(record.record_id)
    assert record.recorded_at.endswith("Z") and record.valid_from == record.recorded_at
    assert record.superseded_at is None and record.is_current


@pytest.mark.parametrize("record_type", RECORD_TYPES)
def test_every_record_type_is_accepted(store: Store, project: Project, record_type: str) -> None:
    assert store.add(project, NewRecord(type=record_type, title="t", body="b")).type == record_type


def _count(store: Store) -> int:
    return int(store.conn.execute("SELECT count(*) FROM records").fetchone()[0])


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"type": "note"}, "Unknown record type 'note'"),
        ({"type": "Decision"}, "Unknown record type"),
        ({"title": "x" * (MAX_TITLE_CHARS + 1)}, "limit is 120"),
        ({"title": "   "}, "title is empty"),
        ({"title": "two\nlines"}, "one line"),
        ({"body": "y" * (MAX_BODY_CHARS + 1)}, "limit is 2000"),
        ({"body": " \n "}, "body is empty"),
        ({"scope": "team"}, "Invalid scope"),
        ({"confidence": "certain"}, "Invalid confidence"),
        ({"source": "web"}, "Invalid source"),
        ({"valid_from": "last tuesday"}, "ISO 8601"),
    ],
)
def test_invalid_records_are_refused_with_the_fix_and_nothing_is_written(
    store: Store, project: Project, fields: dict[str, str], message: str
) -> None:
    values = {"type": "decision", "title": "A title", "body": "A body."} | fields
    with pytest.raises(ValidationError, match=message) as caught:
        store.add(project, NewRecord(**values))  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)
    assert _count(store) == 0


def test_limits_are_inclusive_and_measured_after_trimming(store: Store, project: Project) -> None:
    title = "t" * MAX_TITLE_CHARS
    body = "b" * MAX_BODY_CHARS
    record = store.add(project, NewRecord(type="decision", title=f"  {title}  ", body=f"\n{body}\n"))
    assert record.title == title and record.body == body


def test_valid_from_is_normalised_to_utc(store: Store, project: Project) -> None:
    record = store.add(project, NewRecord(type="decision", title="t", body="b", valid_from="2024-03-01T12:00:00+02:00"))
    assert record.valid_from == "2024-03-01T10:00:00.000Z"
    dated = store.add(project, NewRecord(type="decision", title="t2", body="b", valid_from="2023-05-06"))
    assert dated.valid_from == "2023-05-06T00:00:00.000Z"


def test_a_global_record_lives_in_the_global_namespace_and_every_project_sees_it(
    store: Store, project: Project, other_project: Project
) -> None:
    record = store.add(project, NewRecord(type="preference", title="Terse answers", body="b", scope="global"))
    assert record.project_id == "_global"
    assert store.get(other_project, record.record_id).title == "Terse answers"
