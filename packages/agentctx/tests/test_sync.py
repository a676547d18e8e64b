"""`agentctx sync` (CLAUDE.md drift) through the real entry point."""

from __future__ import annotations

from pathlib import Path

import pytest

WEB_CLAUDE_MD = """# CLAUDE.md

## Architecture

- Background jobs run on BullMQ with Redis.
- Use pnpm, never npm or yarn.
"""


@pytest.fixture
def drifted(cli, record, project_dir: Path) -> dict[str, str]:
    (project_dir / "CLAUDE.md").write_text(WEB_CLAUDE_MD, encoding="utf-8")
    old = record("decision", "Background jobs on BullMQ", "Jobs run on BullMQ backed by Redis.")
    result = cli(
        "supersede", old["id"], "--body", "We moved background jobs from BullMQ to Temporal workflows.",
        "--project", str(project_dir), "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    new_id = result.json()["new"]["id"] if "new" in result.json() else result.json()[1]["id"]
    return {"old": old["id"], "new": new_id}


def test_sync_prints_the_diff_and_writes_nothing(cli, drifted, project_dir: Path) -> None:
    result = cli("sync", "--project", str(project_dir))
    assert result.code == 0, result.err
    assert "1 missing from CLAUDE.md, 1 superseded but still written." in result.out
    assert "-- Background jobs run on BullMQ with Redis." in result.out
    assert f"<!-- agentctx:{drifted['new']} -->" in result.out
    assert (project_dir / "CLAUDE.md").read_text(encoding="utf-8") == WEB_CLAUDE_MD


def test_sync_apply_asks_and_a_no_writes_nothing(cli, drifted, project_dir: Path) -> None:
    result = cli("sync", "--project", str(project_dir), "--apply", input="n\n")
    assert result.code == 1
    assert (project_dir / "CLAUDE.md").read_text(encoding="utf-8") == WEB_CLAUDE_MD


def test_sync_apply_yes_writes_and_then_nothing_drifts(cli, drifted, project_dir: Path) -> None:
    result = cli("sync", "--project", str(project_dir), "--apply", "--yes")
    assert result.code == 0, result.err
    text = (project_dir / "CLAUDE.md").read_text(encoding="utf-8")
    assert "~~Background jobs run on BullMQ with Redis.~~" in text and drifted["new"] in text
    assert "- Use pnpm, never npm or yarn." in text
    again = cli("sync", "--project", str(project_dir), "--json")
    assert again.json()["missing"] == [] and again.json()["contradicted"] == []


def test_sync_json_is_the_drift_report(cli, drifted, project_dir: Path) -> None:
    report = cli("sync", "--project", str(project_dir), "--json").json()
    assert [entry["id"] for entry in report["contradicted"]] == [drifted["old"]]
    assert [entry["id"] for entry in report["missing"]] == [drifted["new"]]
    assert report["proposed_diff"].startswith("--- a/CLAUDE.md")


def test_yes_without_apply_is_refused(cli, project_dir: Path) -> None:
    result = cli("sync", "--project", str(project_dir), "--yes")
    assert result.code == 1 and "--apply" in result.err
