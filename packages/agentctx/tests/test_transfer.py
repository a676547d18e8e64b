"""export and import through the CLI: exact Markdown round trips, JSONL in the ADR eval-set shape,
and bad files that leave the store untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

# Lines in the shape of the ADR dev set (`eval/adr-dev/records.jsonl`: id, project, type, title,
# body, valid_from, supersedes, superseded_by, status, source, license), written for this test.
ADR_LINES = [
    {
        "id": "forms-002", "project": "forms", "type": "decision", "title": "Use GOV.UK Notify for email",
        "body": "Context: forms send submission emails.\nDecision: we send them through GOV.UK Notify.",
        "valid_from": "2022-02-01", "supersedes": [], "superseded_by": "forms-019",
        "status": "Superseded by ADR019", "source": "alphagov/forms:ADR/ADR002.md", "license": "MIT",
    },
    {
        "id": "forms-019", "project": "forms", "type": "decision", "title": "Use Amazon SES",
        "body": "Context: Notify limits attachments.\nDecision: submission emails go through Amazon SES.",
        "valid_from": "2023-03-27", "supersedes": ["forms-002"], "superseded_by": None,
        "status": "Accepted", "source": "alphagov/forms:ADR/ADR019.md", "license": "MIT",
    },
    {
        "id": "forms-020", "project": "forms", "type": "decision", "title": "Store drafts in Postgres",
        "body": "Decision: form drafts live in the Postgres database of forms-api.",
        "valid_from": "2023-04-02", "supersedes": [], "superseded_by": None,
        "status": "Accepted", "source": "alphagov/forms:ADR/ADR020.md", "license": "MIT",
    },
]  # fmt: skip


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def count(cli, project_dir: Path) -> int:
    status = cli("status", "--project", str(project_dir), "--json").json()
    records = status.get("records")
    return 0 if records is None else records["current"] + records["superseded"]


@pytest.fixture
def populated(cli, record, project_dir: Path) -> dict[str, dict]:
    old = record("decision", "Queue jobs with Celery", "Celery runs background jobs.", "--valid-from", "2024-02-01")
    new = record(
        "decision", "Queue jobs with RQ", "RQ runs background jobs.\n\n## Why\n- simpler", "--supersedes", old["id"]
    )
    pinned = record("convention", "Black formats Python", "Run `black .` before commit.", "--pin")
    inferred = record("preference", "Short PR descriptions", "Keep PR text brief.", "--confidence", "inferred")
    shared = record("preference", "No emoji in commits", "Plain commit subjects.", "--scope", "global")
    return {"old": old, "new": new, "pinned": pinned, "inferred": inferred, "shared": shared}


def test_export_groups_by_type_and_hides_superseded_without_history(cli, populated, project_dir: Path) -> None:
    result = cli("export", "--project", str(project_dir))
    assert result.code == 0
    text = result.out
    assert text.index("## Decisions") < text.index("## Conventions") < text.index("## Preferences")
    assert "### Queue jobs with RQ" in text and populated["new"]["id"] in text
    assert populated["old"]["id"] not in text

    history = cli("export", "--history", "--project", str(project_dir)).out
    assert "### Queue jobs with Celery" in history
    assert f"Superseded by {populated['new']['id']}" in history


def test_export_then_import_into_a_fresh_store_round_trips_exactly(
    cli, populated, project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exported = tmp_path / "context.md"
    assert cli("export", "--history", "-o", str(exported), "--project", str(project_dir)).code == 0
    before = {
        row["id"]: row
        for row in cli(
            "search", "jobs black pr emoji commits", "--history", "--project", str(project_dir), "--json"
        ).json()
    }

    monkeypatch.setenv("AGENTCTX_HOME", str(tmp_path / "second-home"))
    result = cli("import", str(exported), "--project", str(project_dir))
    assert result.code == 0, result.err
    assert "5 new" in result.out

    again = cli("export", "--history", "--project", str(project_dir)).out
    assert again == exported.read_text(encoding="utf-8")
    for key in ("old", "new", "pinned", "inferred", "shared"):
        original = populated[key]
        copy = cli("show", original["id"], "--project", str(project_dir), "--json").json()
        for field in ("id", "type", "title", "body", "scope", "confidence", "pinned", "valid_from", "recorded_at"):
            assert copy[field] == original[field], (key, field)
    old_copy = cli("show", populated["old"]["id"], "--project", str(project_dir), "--json").json()
    assert old_copy["superseded_by"] == populated["new"]["id"]
    after = cli("search", "jobs black pr emoji commits", "--history", "--project", str(project_dir), "--json").json()
    assert {row["id"] for row in after} == set(before)
    current = cli("search", "celery rq jobs", "--project", str(project_dir), "--json").json()
    assert [row["id"] for row in current] == [populated["new"]["id"]]


def test_importing_the_same_export_twice_changes_nothing(cli, populated, project_dir: Path, tmp_path: Path) -> None:
    exported = tmp_path / "context.md"
    cli("export", "--history", "-o", str(exported), "--project", str(project_dir))
    result = cli("import", str(exported), "--project", str(project_dir), "--json")
    assert result.json()["created"] == 0 and result.json()["updated"] == 0 and result.json()["unchanged"] == 5


def test_a_hand_edited_body_is_honoured_on_import(cli, populated, project_dir: Path, tmp_path: Path) -> None:
    exported = tmp_path / "context.md"
    cli("export", "-o", str(exported), "--project", str(project_dir))
    text = exported.read_text(encoding="utf-8")
    exported.write_text(
        text.replace("Run `black .` before commit.", "Run `ruff format` before commit."), encoding="utf-8"
    )

    result = cli("import", str(exported), "--project", str(project_dir), "--json")

    assert result.json()["updated_ids"] == [populated["pinned"]["id"]]
    shown = cli("show", populated["pinned"]["id"], "--project", str(project_dir), "--json").json()
    assert shown["body"] == "Run `ruff format` before commit." and shown["pinned"] is True


def test_jsonl_import_resolves_supersedes_within_the_file_and_keeps_valid_from(
    cli, project_dir: Path, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "adrs.jsonl", ADR_LINES)

    result = cli("import", str(path), "--project", str(project_dir), "--json")

    assert result.code == 0, result.err
    assert result.json()["created"] == 3
    hits = cli("search", "submission emails notify ses", "--project", str(project_dir), "--json").json()
    assert [hit["title"] for hit in hits] == ["Use Amazon SES"]
    assert hits[0]["valid_from"] == "2023-03-27T00:00:00.000Z"
    chain = cli("history", hits[0]["id"], "--project", str(project_dir), "--json").json()
    assert [link["title"] for link in chain] == ["Use GOV.UK Notify for email", "Use Amazon SES"]
    assert chain[0]["superseded_at"] == "2023-03-27T00:00:00.000Z"  # the successor's validity retires it
    then = cli(
        "search", "submission emails notify ses", "--as-of", "2022-06-01", "--project", str(project_dir), "--json"
    )
    assert [hit["title"] for hit in then.json()] == ["Use GOV.UK Notify for email"]
    assert all(link["source"] == "import" and link["confidence"] == "explicit" for link in chain)


def test_jsonl_records_go_to_the_target_project_only(cli, project_dir: Path, other_dir: Path, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "adrs.jsonl", ADR_LINES)
    cli("import", str(path), "--project", str(project_dir))
    assert cli("search", "postgres drafts", "--project", str(other_dir), "--json").json() == []
    assert len(cli("search", "postgres drafts", "--project", str(project_dir), "--json").json()) == 1


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ({"id": "x-1", "type": "decisions", "title": "T", "body": "B"}, "Unknown record type 'decisions'"),
        ({"id": "x-1", "type": "decision", "title": "T", "body": "b" * 2001}, "the limit is 2000"),
        ({"id": "x-1", "type": "decision", "title": "", "body": "B"}, "The title is empty"),
        ({"id": "x-1", "type": "decision", "title": "T", "body": "B", "valid_from": "last week"}, "not an ISO 8601"),
        ({"id": "x-1", "type": "decision", "title": "T", "body": "B", "supersedes": ["nope-9"]}, "'nope-9' is neither"),
        ({"id": "forms-019", "type": "decision", "title": "T", "body": "B"}, "appears twice"),
    ],
)
def test_a_bad_jsonl_line_fails_the_whole_import_naming_the_line(
    cli, project_dir: Path, tmp_path: Path, bad_line: dict, message: str
) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", [*ADR_LINES, bad_line])

    result = cli("import", str(path), "--project", str(project_dir))

    assert result.code == 1
    assert result.err.startswith("Error: Line 4: ") and message in result.err, result.err
    assert len(result.err.strip().splitlines()) == 1
    assert count(cli, project_dir) == 0


def test_jsonl_that_is_not_json_names_the_line(cli, project_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(ADR_LINES[0]) + "\n\n{not json\n", encoding="utf-8")
    result = cli("import", str(path), "--project", str(project_dir))
    assert result.code == 1 and result.err.startswith("Error: Line 3: not valid JSON")
    assert count(cli, project_dir) == 0


def test_markdown_with_a_damaged_record_imports_nothing(
    cli, populated, project_dir: Path, tmp_path: Path, monkeypatch
) -> None:
    exported = tmp_path / "context.md"
    cli("export", "-o", str(exported), "--project", str(project_dir))
    lines = exported.read_text(encoding="utf-8").split("\n")
    last_end = max(index for index, line in enumerate(lines) if line.startswith("<!-- /agentctx-record"))
    del lines[last_end]
    exported.write_text("\n".join(lines), encoding="utf-8")

    monkeypatch.setenv("AGENTCTX_HOME", str(tmp_path / "fresh"))
    result = cli("import", str(exported), "--project", str(project_dir))

    assert result.code == 1 and "has no closing" in result.err and result.err.startswith("Error: Line ")
    assert count(cli, project_dir) == 0


def test_dry_run_writes_nothing(cli, project_dir: Path, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "adrs.jsonl", ADR_LINES)
    cli("record", "-t", "decision", "--title", "Existing", "--body", "Already here.", "--project", str(project_dir))
    result = cli("import", str(path), "--dry-run", "--project", str(project_dir), "--json")
    assert result.code == 0 and result.json()["created"] == 3 and result.json()["dry_run"] is True
    assert count(cli, project_dir) == 1


def test_import_of_a_missing_or_binary_file_is_one_line(cli, project_dir: Path, tmp_path: Path) -> None:
    missing = cli("import", str(tmp_path / "nope.md"), "--project", str(project_dir))
    binary = tmp_path / "blob.md"
    binary.write_bytes(b"# title\n\xff\xfe\x00garbage")
    not_text = cli("import", str(binary), "--project", str(project_dir))
    assert missing.code == 1 and missing.err.startswith("Error: No such file")
    assert not_text.code == 1 and "Line 2" in not_text.err and "not UTF-8" in not_text.err


def test_import_reads_stdin(cli, project_dir: Path) -> None:
    text = "".join(json.dumps(row) + "\n" for row in ADR_LINES)
    result = cli("import", "-", "--project", str(project_dir), "--json", input=text)
    assert result.code == 0, result.err
    assert result.json()["created"] == 3


def test_export_to_a_missing_directory_is_an_error(cli, project_dir: Path, tmp_path: Path) -> None:
    result = cli("export", "-o", str(tmp_path / "no" / "such" / "out.md"), "--project", str(project_dir))
    assert result.code == 1 and result.err.startswith("Error: No such directory")


def test_a_hand_written_record_without_an_id_is_created(cli, project_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "new.md"
    path.write_text(
        "## Conventions\n\n### Branch names start with the ticket\n\n"
        '<!-- agentctx-record {"type": "convention"} -->\n\n'
        "Name branches `ABC-123-short-title`.\n\n<!-- /agentctx-record -->\n",
        encoding="utf-8",
    )
    result = cli("import", str(path), "--project", str(project_dir), "--json")
    assert result.code == 0, result.err
    hits = cli("search", "branch names ticket", "--project", str(project_dir), "--json").json()
    assert [hit["title"] for hit in hits] == ["Branch names start with the ticket"]
    assert hits[0]["id"] == result.json()["created_ids"][0]


def test_an_old_export_never_brings_back_a_superseded_record(cli, record, project_dir: Path, tmp_path: Path) -> None:
    old = record("decision", "Deploy on Fridays", "Releases go out on Friday afternoons.")
    exported = tmp_path / "old.md"
    cli("export", "-o", str(exported), "--project", str(project_dir))
    new = record(
        "decision", "Never deploy on Fridays", "Releases go out Monday to Thursday.", "--supersedes", old["id"]
    )

    result = cli("import", str(exported), "--project", str(project_dir), "--json")

    assert result.code == 0 and result.json()["unchanged"] == 1
    hits = cli("search", "deploy fridays releases", "--project", str(project_dir), "--json").json()
    assert [hit["id"] for hit in hits] == [new["id"]]


def test_importing_the_same_jsonl_twice_adds_nothing(cli, project_dir: Path, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "adrs.jsonl", ADR_LINES)
    first = cli("import", str(path), "--project", str(project_dir), "--json").json()
    second = cli("import", str(path), "--project", str(project_dir), "--json").json()
    assert (first["created"], second["created"], second["updated"], second["unchanged"]) == (3, 0, 0, 3)
    assert count(cli, project_dir) == 3
    hits = cli("search", "submission emails notify ses", "--project", str(project_dir), "--json").json()
    assert [hit["title"] for hit in hits] == ["Use Amazon SES"]


def test_export_to_a_directory_is_an_error(cli, project_dir: Path, tmp_path: Path) -> None:
    result = cli("export", "-o", str(tmp_path), "--project", str(project_dir))
    assert result.code == 1 and "is a directory" in result.err


def test_export_scope_project_leaves_out_global_records(cli, populated, project_dir: Path) -> None:
    team = cli("export", "--scope", "project", "--project", str(project_dir)).out
    mine = cli("export", "--scope", "global", "--project", str(project_dir)).out
    assert populated["shared"]["id"] not in team and populated["pinned"]["id"] in team
    assert populated["shared"]["id"] in mine and populated["pinned"]["id"] not in mine
    assert cli("export", "--scope", "team", "--project", str(project_dir)).code == 1


def test_a_fifo_or_an_oversize_file_is_refused_unread(
    cli, project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file to import may be anyone's: a FIFO would block the read forever, a huge file would
    be read whole into memory. Both are one line, before a byte is read."""
    import os

    from agentctx.cli import transfer

    fifo = tmp_path / "export.md"
    os.mkfifo(fifo)
    result = cli("import", str(fifo), "--project", str(project_dir))
    assert result.code == 1 and "is not a regular file" in result.err and len(result.err.strip().splitlines()) == 1
    monkeypatch.setattr(transfer, "MAX_IMPORT_BYTES", 1_000)
    big = write_jsonl(tmp_path / "big.jsonl", ADR_LINES * 20)
    result = cli("import", str(big), "--project", str(project_dir))
    assert result.code == 1 and "over the 1,000-byte limit" in result.err
    assert count(cli, project_dir) == 0
