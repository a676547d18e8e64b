"""record, search, show, edit, pin, unpin, supersede, delete, history through the real CLI entry point."""

from __future__ import annotations

from pathlib import Path

import pytest


def ids(result) -> list[str]:
    return [hit["id"] for hit in result.json()]


def test_record_then_search_returns_it_with_score_confidence_age_and_degraded(cli, record, project_dir: Path) -> None:
    created = record("decision", "Use Postgres for the orders service", "Orders live in Postgres 16 via psycopg.")
    record("convention", "Four-space indents", "Python files indent with four spaces.")

    result = cli("search", "postgres", "orders", "--project", str(project_dir), "--json")

    assert result.code == 0, result.err
    hits = result.json()
    assert [hit["id"] for hit in hits] == [created["id"]]
    hit = hits[0]
    assert hit["type"] == "decision" and hit["title"] == "Use Postgres for the orders service"
    assert hit["score"] > 0 and hit["confidence"] == "explicit"
    assert hit["age_days"] == 0.0 and hit["degraded"] is None and hit["current"] is True


def test_search_human_output_lists_id_type_and_title(cli, record, project_dir: Path) -> None:
    created = record("bugfix", "Retry the flaky S3 upload", "Wrap uploads in three retries with backoff.")
    result = cli("search", "s3 upload", "--project", str(project_dir))
    assert result.code == 0
    assert created["id"] in result.out and "bugfix" in result.out and "Retry the flaky S3 upload" in result.out


def test_record_reads_the_body_from_stdin(cli, project_dir: Path) -> None:
    body = 'Quotes " and\nnewlines\n\nsurvive: `NEAR(a b)` -x *'
    result = cli(
        "record", "-t", "discovery", "--title", "Stdin body", "--body", "-", "--project", str(project_dir), "--json",
        input=body,
    )  # fmt: skip
    assert result.code == 0, result.err
    shown = cli("show", result.json()["id"], "--project", str(project_dir), "--json").json()
    assert shown["body"] == body


def test_superseded_record_never_returned_without_history(cli, record, project_dir: Path) -> None:
    old = record("decision", "Email goes through GOV.UK Notify", "Notify sends every submission email.")
    new = record(
        "decision", "Email goes through Amazon SES", "SES sends submission email now.", "--supersedes", old["id"]
    )

    plain = cli("search", "email notify ses submission", "--project", str(project_dir), "--json")
    with_history = cli("search", "email notify ses submission", "--project", str(project_dir), "--json", "--history")

    assert ids(plain) == [new["id"]]
    assert set(ids(with_history)) == {old["id"], new["id"]}
    superseded = next(hit for hit in with_history.json() if hit["id"] == old["id"])
    assert superseded["current"] is False and superseded["superseded_by"] == new["id"]


def test_other_projects_records_never_returned_or_shown(cli, record, project_dir: Path, other_dir: Path) -> None:
    mine = record("decision", "Kafka carries order events", "Order events go over Kafka topics.")
    theirs = record("decision", "Kafka carries invoice events", "Invoice events go over Kafka.", project=other_dir)

    result = cli("search", "kafka events", "--project", str(project_dir), "--json", "--history")
    shown = cli("show", theirs["id"], "--project", str(project_dir))

    assert ids(result) == [mine["id"]]
    assert shown.code == 1 and shown.err.startswith("Error: No record")
    assert cli("history", theirs["id"], "--project", str(project_dir)).code == 1


def test_global_record_is_seen_from_every_project(cli, record, project_dir: Path, other_dir: Path) -> None:
    shared = record("preference", "Prefer pathlib over os.path", "Use pathlib for paths.", "--scope", "global")
    result = cli("search", "pathlib", "--project", str(other_dir), "--json")
    assert ids(result) == [shared["id"]]


def test_supersede_command_retires_the_old_record_and_keeps_the_chain(cli, record, project_dir: Path) -> None:
    old = record("convention", "Tests use unittest", "All tests are unittest classes.")
    result = cli(
        "supersede", old["id"], "--body", "Tests are plain pytest functions.", "--why", "less boilerplate",
        "--project", str(project_dir), "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    new = result.json()["new"]
    assert new["body"] == "Tests are plain pytest functions.\n\nWhy: less boilerplate"

    chain = cli("history", new["id"], "--project", str(project_dir), "--json").json()
    assert [link["id"] for link in chain] == [old["id"], new["id"]]
    assert [link["current"] for link in chain] == [False, True]

    shown_new = cli("show", new["id"], "--project", str(project_dir), "--json").json()
    shown_old = cli("show", old["id"], "--project", str(project_dir), "--json").json()
    assert shown_new["supersedes"] == [old["id"]] and shown_old["superseded_by"] == new["id"]
    assert shown_old["superseded_at"] is not None


def test_superseding_a_non_head_names_the_current_head(cli, record, project_dir: Path) -> None:
    old = record("decision", "Deploy with Heroku", "We deploy on Heroku.")
    new = record("decision", "Deploy with Fly", "We deploy on Fly.io.", "--supersedes", old["id"])

    result = cli("supersede", old["id"], "--body", "We deploy on k8s.", "--project", str(project_dir))

    assert result.code == 1
    assert result.err.startswith("Error: ") and new["id"] in result.err and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_search_as_of_shows_what_was_true_then(cli, record, project_dir: Path) -> None:
    old = record("decision", "Cache with Memcached", "Memcached caches sessions.", "--valid-from", "2024-01-10")
    new = record("decision", "Cache with Redis", "Redis caches sessions.", "--supersedes", old["id"])

    then = cli("search", "cache sessions", "--as-of", "2025-01-01", "--project", str(project_dir), "--json")
    before = cli("search", "cache sessions", "--as-of", "2023-06-01", "--project", str(project_dir), "--json")
    now = cli("search", "cache sessions", "--project", str(project_dir), "--json")

    assert ids(then) == [old["id"]]
    assert ids(before) == []
    assert ids(now) == [new["id"]]


def test_show_prints_bitemporal_fields_and_provenance(cli, record, project_dir: Path) -> None:
    created = record("discovery", "The API rate limit is 100/min", "Bursts above 100 requests a minute get 429s.")
    result = cli("show", created["id"].lower(), "--project", str(project_dir))
    assert result.code == 0
    for label in ("valid_from:", "recorded_at:", "superseded_at:", "source:", "session:", "confidence:"):
        assert label in result.out
    assert "Bursts above 100 requests a minute get 429s." in result.out


def test_edit_corrects_in_place_and_refuses_nothing_to_change(cli, record, project_dir: Path) -> None:
    created = record("discovery", "Teh build needs Java 17", "Gradle needs JDK 17.")
    edited = cli(
        "edit", created["id"], "--title", "The build needs Java 17", "--type", "convention",
        "--project", str(project_dir), "--json",
    )  # fmt: skip
    assert edited.code == 0, edited.err
    assert edited.json()["id"] == created["id"]
    assert edited.json()["title"] == "The build needs Java 17" and edited.json()["type"] == "convention"

    nothing = cli("edit", created["id"], "--project", str(project_dir))
    bad = cli("edit", created["id"], "--confidence", "certain", "--project", str(project_dir))
    assert nothing.code == 1 and "Nothing to change" in nothing.err
    assert bad.code == 1 and "Invalid confidence 'certain'" in bad.err


def test_pin_and_unpin(cli, record, project_dir: Path) -> None:
    created = record("convention", "Commit messages in the imperative", "Write 'Add x', not 'Added x'.")
    assert cli("pin", created["id"], "--project", str(project_dir), "--json").json()["pinned"] is True
    assert cli("show", created["id"], "--project", str(project_dir), "--json").json()["pinned"] is True
    assert cli("unpin", created["id"], "--project", str(project_dir), "--json").json()["pinned"] is False
    assert cli("show", created["id"], "--project", str(project_dir), "--json").json()["pinned"] is False


def test_delete_asks_first_and_then_removes_the_record(cli, record, project_dir: Path) -> None:
    created = record("bugfix", "Null check in the parser", "The parser crashed on empty input.")

    declined = cli("delete", created["id"], "--project", str(project_dir), input="n\n")
    assert declined.code == 1
    assert cli("show", created["id"], "--project", str(project_dir)).code == 0

    accepted = cli("delete", created["id"], "--project", str(project_dir), input="y\n")
    assert accepted.code == 0, accepted.err
    assert cli("show", created["id"], "--project", str(project_dir)).code == 1
    assert ids(cli("search", "parser null", "--project", str(project_dir), "--json")) == []


def test_delete_yes_skips_the_prompt_and_deleting_a_head_restores_its_predecessor(
    cli, record, project_dir: Path
) -> None:
    old = record("decision", "Logs go to Papertrail", "Ship logs to Papertrail.")
    wrong = record("decision", "Logs go to Loki", "Ship logs to Loki.", "--supersedes", old["id"])

    result = cli("delete", wrong["id"], "--yes", "--project", str(project_dir))

    assert result.code == 0
    assert ids(cli("search", "logs ship", "--project", str(project_dir), "--json")) == [old["id"]]


@pytest.mark.parametrize(
    "query",
    ['"unbalanced', "a:b (c", "-x AND NEAR(y z)", "*", "🦀 naïve café", "x" * 5000, "SELECT * FROM records; --"],
)
def test_search_takes_any_text(cli, record, project_dir: Path, query: str) -> None:
    record("decision", "Something about records", "Any text must search.")
    result = cli("search", "--project", str(project_dir), "--json", "--", query)
    assert result.code == 0, result.err
    assert isinstance(result.json(), list)


def test_search_type_filter_and_unknown_type(cli, record, project_dir: Path) -> None:
    decision = record("decision", "Use uv for Python envs", "uv manages the venv.")
    record("convention", "uv lock is committed", "Commit uv.lock with dependency changes.")

    only = cli("search", "uv", "--type", "decision", "--project", str(project_dir), "--json")
    bad = cli("search", "uv", "--type", "decisions", "--project", str(project_dir))

    assert ids(only) == [decision["id"]]
    assert bad.code == 1 and bad.err.startswith("Error: Unknown record type 'decisions'")


def test_search_applies_the_relevance_floor_unless_all(cli, record, project_dir: Path) -> None:
    for index in range(30):
        record("discovery", f"Fact number {index} about widgets", f"Widget detail {index} for the catalogue.")
    record("decision", "Payments go through Stripe", "Card payments use Stripe Checkout; webhooks verify signatures.")
    weak = "which weather service does the catalogue use"  # one common word in common, nothing relevant
    floored = cli("search", weak, "--project", str(project_dir), "--json")
    everything = cli("search", weak, "--all", "--project", str(project_dir), "--json")
    relevant = cli("search", "how do we check stripe webhook signatures", "--project", str(project_dir), "--json")
    assert ids(floored) == []
    assert len(ids(everything)) > 0
    assert [hit["title"] for hit in relevant.json()] == ["Payments go through Stripe"]


def test_search_scope_filters_global_and_project_records(cli, record, project_dir: Path) -> None:
    own = record("convention", "Tabs in Makefiles", "Makefiles indent with tabs.")
    mine = record("preference", "Tabs shown as 4 columns", "Editors show tabs as 4 columns.", "--scope", "global")
    both = cli("search", "tabs", "--project", str(project_dir), "--json")
    only_project = cli("search", "tabs", "--scope", "project", "--project", str(project_dir), "--json")
    only_global = cli("search", "tabs", "--scope", "global", "--project", str(project_dir), "--json")
    assert set(ids(both)) == {own["id"], mine["id"]}
    assert ids(only_project) == [own["id"]] and ids(only_global) == [mine["id"]]


def test_delete_json_keeps_stdout_clean_of_the_prompt(cli, record, project_dir: Path) -> None:
    created = record("bugfix", "Off-by-one in pagination", "Pages started at 1, offsets at 0.")
    result = cli("delete", created["id"], "--json", "--project", str(project_dir), input="y\n")
    assert result.code == 0 and result.json() == {"deleted": created["id"]}
    assert "for good?" in result.err


def test_show_as_of_picks_the_version_current_then(cli, record, project_dir: Path) -> None:
    old = record("decision", "Cache with Memcached", "Memcached caches sessions.", "--valid-from", "2024-01-10")
    new = record("decision", "Cache with Redis", "Redis caches sessions.", "--supersedes", old["id"])

    then = cli("show", new["id"], "--as-of", "2025-01-01", "--project", str(project_dir), "--json")
    now = cli("show", old["id"], "--as-of", "2999-01-01", "--project", str(project_dir), "--json")
    before = cli("show", new["id"], "--as-of", "2020-01-01", "--project", str(project_dir))

    assert then.json()["id"] == old["id"]
    assert now.json()["id"] == new["id"]
    assert before.code == 1 and before.err.startswith("Error: No version of")
