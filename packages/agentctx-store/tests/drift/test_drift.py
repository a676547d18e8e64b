"""CLAUDE.md drift (docs/consolidation.md#claudemd-drift) on realistic CLAUDE.md files (written
for these tests, in `fixtures/`), including superseded decisions that are still written there."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentctx_store import NewRecord, Project, Store, ValidationError, drift, resolve_project

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def store() -> Store:
    opened = Store.open()
    yield opened
    opened.close()


def make_project(tmp_path: Path, fixture: str | None, *, where: str = "CLAUDE.md") -> Project:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    if fixture is not None:
        target = root / where
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / fixture, target)
    return resolve_project(root)


def add(
    store: Store, project: Project, type_: str, title: str, body: str, *, confidence: str = "explicit", supersedes=None
):
    return store.add(
        project, NewRecord(type=type_, title=title, body=body, confidence=confidence), supersedes=supersedes
    )


def web_records(store: Store, project: Project) -> dict[str, str]:
    """The monorepo's history: two decisions superseded since CLAUDE.md was written."""
    ids: dict[str, str] = {}
    rest = add(
        store,
        project,
        "decision",
        "Expose the API over REST under /api/v1",
        "The web app talks to the Fastify server through REST endpoints under /api/v1.",
    )
    ids["rest"] = rest.record_id
    ids["grpc"] = add(
        store,
        project,
        "decision",
        "Move service-to-web API from REST to gRPC",
        "We replaced the REST endpoints with gRPC via Connect; /api/v1 is being removed.",
        supersedes=rest.record_id,
    ).record_id
    bull = add(store, project, "decision", "Background jobs on BullMQ", "Jobs run on BullMQ backed by Redis.")
    ids["bullmq"] = bull.record_id
    ids["temporal"] = add(
        store,
        project,
        "decision",
        "Background jobs on Temporal",
        "We moved background jobs from BullMQ to Temporal workflows for retries and visibility.",
        supersedes=bull.record_id,
    ).record_id
    ids["pnpm"] = add(
        store,
        project,
        "decision",
        "Use pnpm as the package manager",
        "We standardised on pnpm workspaces; npm and yarn lockfiles are rejected in CI.",
    ).record_id
    ids["components"] = add(
        store,
        project,
        "convention",
        "Function components only",
        "React components are written as function components with hooks, never classes.",
    ).record_id
    ids["commits"] = add(
        store,
        project,
        "convention",
        "Conventional Commits for commit messages",
        "feat:, fix:, chore: prefixes; the release tool reads them.",
    ).record_id
    ids["zod"] = add(
        store,
        project,
        "decision",
        "Validate request bodies with zod",
        "All API request bodies are validated with zod schemas at the route boundary.",
    ).record_id
    ids["sessions"] = add(
        store,
        project,
        "decision",
        "Store sessions in Redis with a 24h TTL",
        "Session data moved out of PostgreSQL into Redis; keys expire after 24 hours.",
    ).record_id
    ids["sentry"] = add(
        store,
        project,
        "decision",
        "Use Sentry for error tracking",
        "Errors from api and web are reported to Sentry with release tags.",
    ).record_id
    ids["inferred"] = add(
        store,
        project,
        "convention",
        "Prefer named exports",
        "Do not use default exports in TypeScript modules.",
        confidence="inferred",
    ).record_id
    return ids


def test_superseded_decisions_still_written_are_contradicted(store: Store, tmp_path: Path) -> None:
    project = make_project(tmp_path, "web-monorepo.md")
    ids = web_records(store, project)
    report = drift.analyse(store, project)
    contradicted = {entry.record_id: entry for entry in report.contradicted}
    assert set(contradicted) == {ids["rest"], ids["bullmq"]}
    assert contradicted[ids["bullmq"]].superseded_by == ids["temporal"]
    assert contradicted[ids["bullmq"]].line == 18
    assert contradicted[ids["rest"]].superseded_by == ids["grpc"]
    assert "REST endpoints" in contradicted[ids["rest"]].text
    # the replacements are not written there: they are missing
    missing = {entry.record_id for entry in report.missing}
    assert {ids["grpc"], ids["temporal"]} <= missing


def test_stated_records_are_not_missing_and_unstated_ones_are(store: Store, tmp_path: Path) -> None:
    project = make_project(tmp_path, "web-monorepo.md")
    ids = web_records(store, project)
    missing = {entry.record_id for entry in drift.analyse(store, project).missing}
    for stated in ("pnpm", "components", "commits", "zod"):
        assert ids[stated] not in missing, stated
    for unstated in ("sessions", "sentry", "grpc", "temporal"):
        assert ids[unstated] in missing, unstated
    assert ids["inferred"] not in missing  # only high-confidence records count


def test_proposed_diff_strikes_superseded_text_and_adds_missing_lines(store: Store, tmp_path: Path) -> None:
    project = make_project(tmp_path, "web-monorepo.md")
    ids = web_records(store, project)
    diff = drift.analyse(store, project).proposed_diff
    assert diff.startswith("--- a/CLAUDE.md\n+++ b/CLAUDE.md\n")
    assert "-- Background jobs run on BullMQ with Redis.\n" in diff
    assert f"+- ~~Background jobs run on BullMQ with Redis.~~ *(superseded by {ids['temporal']}" in diff
    assert "~~It talks to the web app~~" in diff
    assert "all request bodies are validated with zod schemas." in diff  # the clause after `;` stays
    assert f"<!-- agentctx:{ids['sentry']} -->" in diff
    assert drift.SECTION_HEADING in diff


def test_apply_writes_only_the_proposal_and_then_nothing_drifts(store: Store, tmp_path: Path) -> None:
    project = make_project(tmp_path, "web-monorepo.md")
    web_records(store, project)
    original = (Path(project.root) / "CLAUDE.md").read_text(encoding="utf-8")
    report = drift.analyse(store, project)
    assert report.candidates == 6
    assert drift.apply(report) == [Path(project.root) / "CLAUDE.md"]
    written = (Path(project.root) / "CLAUDE.md").read_text(encoding="utf-8")
    assert written.startswith(original.split("## Architecture")[0])  # untouched part kept byte for byte
    assert "- Use pnpm, never npm or yarn." in written
    again = drift.analyse(store, project)
    assert (again.candidates, again.proposed_diff) == (0, "")


def test_apply_refuses_when_the_file_changed_meanwhile(store: Store, tmp_path: Path) -> None:
    project = make_project(tmp_path, "web-monorepo.md")
    web_records(store, project)
    report = drift.analyse(store, project)
    path = Path(project.root) / "CLAUDE.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n- A line the developer just added.\n", encoding="utf-8")
    with pytest.raises(ValidationError, match="changed since"):
        drift.apply(report)
    assert "agentctx" not in path.read_text(encoding="utf-8")


def test_dot_claude_file_numbered_lists_fences_and_struck_text(store: Store, tmp_path: Path) -> None:
    project = make_project(tmp_path, "python-service.md", where=".claude/CLAUDE.md")
    cents = add(
        store,
        project,
        "convention",
        "Store money as integer cents",
        "Amounts are integers in cents; floats are never used for money.",
    )
    celery = add(
        store,
        project,
        "decision",
        "Retries through Celery workers",
        "Celery workers handle retries of failed payments.",
    )
    outbox = add(
        store,
        project,
        "decision",
        "Retries through the outbox table",
        "Failed payment retries are driven from the outbox table, not Celery.",
        supersedes=celery.record_id,
    )
    weasy = add(
        store,
        project,
        "decision",
        "Render invoice PDFs with WeasyPrint",
        "Invoices are turned into PDF with WeasyPrint.",
    )
    render = add(store, project, "decision", "Deploy on Render", "The service is deployed to Render.")
    fly = add(
        store,
        project,
        "decision",
        "Deploy to Fly.io from GitHub Actions",
        "Each merge to main deploys to Fly.io through GitHub Actions.",
        supersedes=render.record_id,
    )
    report = drift.analyse(store, project)
    assert report.target == Path(project.root) / ".claude" / "CLAUDE.md"
    assert report.contradicted == []  # the Celery line is already struck; Render never written
    missing = {entry.record_id for entry in report.missing}
    assert missing.isdisjoint({cents.record_id, outbox.record_id, weasy.record_id, fly.record_id})
    assert report.to_dict()["files"] == [".claude/CLAUDE.md"]


def test_a_marker_of_a_superseded_record_is_a_contradiction_whatever_the_words(store: Store, tmp_path: Path) -> None:
    project = make_project(tmp_path, None)
    old = add(store, project, "convention", "Tabs for indentation", "Indent with tabs in every file.")
    (Path(project.root) / "CLAUDE.md").write_text(
        f"# Notes\n\n- Indentation style as agreed. <!-- agentctx:{old.record_id} -->\n", encoding="utf-8"
    )
    assert drift.analyse(store, project).candidates == 0
    (new,) = [
        store.supersede(project, old.record_id, body="Indent with four spaces; tabs are converted by the formatter.")[1]
    ]
    report = drift.analyse(store, project)
    assert [entry.record_id for entry in report.contradicted] == [old.record_id]
    assert [entry.record_id for entry in report.missing] == [new.record_id]


def test_without_a_claude_md_everything_is_missing_but_no_digest_hint(store: Store, tmp_path: Path) -> None:
    project = make_project(tmp_path, None)
    first = add(store, project, "decision", "Use SQLite in WAL mode", "One file, WAL, busy timeout of ten seconds.")
    second = add(
        store, project, "convention", "Errors say the fix", "Every user-facing error is one sentence naming the fix."
    )
    report = drift.analyse(store, project)
    assert {entry.record_id for entry in report.missing} == {first.record_id, second.record_id}
    assert (report.candidates, report.digest_candidates) == (2, 0)
    assert report.proposed_diff.startswith("--- /dev/null\n+++ b/CLAUDE.md\n")


def test_other_projects_and_global_records_never_appear(store: Store, tmp_path: Path) -> None:
    project = make_project(tmp_path, "web-monorepo.md")
    other_root = tmp_path / "other"
    (other_root / ".git").mkdir(parents=True)
    other = resolve_project(other_root)
    foreign_old = add(store, other, "decision", "Background jobs on BullMQ", "Jobs run on BullMQ backed by Redis.")
    add(
        store,
        other,
        "decision",
        "Background jobs on Sidekiq",
        "Jobs moved to Sidekiq.",
        supersedes=foreign_old.record_id,
    )
    foreign = add(store, other, "decision", "Use Sentry for error tracking", "Errors are reported to Sentry.")
    glob = store.add(
        project, NewRecord(type="decision", title="Prefer small PRs", body="Keep PRs under 400 lines.", scope="global")
    )
    report = drift.report(store, project)
    seen = {entry["id"] for entry in report["missing"] + report["contradicted"]}
    assert seen.isdisjoint({foreign_old.record_id, foreign.record_id, glob.record_id})
    assert report["missing"] == [] and report["contradicted"] == []


def test_report_shape_is_plain_json(store: Store, tmp_path: Path) -> None:
    project = make_project(tmp_path, "web-monorepo.md")
    web_records(store, project)
    report = drift.report(store, project)
    assert set(report) >= {"missing", "contradicted", "proposed_diff"}
    assert all("id" in entry for entry in report["missing"] + report["contradicted"])
    assert json.loads(json.dumps(report)) == report
    assert not (Path(project.root) / "CLAUDE.md").read_text(encoding="utf-8").count("agentctx:")  # read-only


def test_write_scores_stores_the_derived_drift_score(store: Store, tmp_path: Path) -> None:
    project = make_project(tmp_path, "web-monorepo.md")
    ids = web_records(store, project)
    report = drift.analyse(store, project)
    assert drift.write_scores(store, project, report) > 0
    score = {
        record.record_id: record.claudemd_drift_score for record in store.list_records(project, include_superseded=True)
    }
    assert score[ids["bullmq"]] == 1.0
    assert score[ids["sentry"]] > 1 - drift.STATED_THRESHOLD
    assert score[ids["pnpm"]] <= 1 - drift.STATED_THRESHOLD
    assert score[ids["inferred"]] == 0.0


def test_a_claude_md_linked_out_of_the_repository_is_not_read_and_never_written_through(
    tmp_path: Path,
) -> None:

    root = tmp_path / "repo"
    root.mkdir()
    secret = tmp_path / "id_rsa"
    secret.write_text("- Use PRIVATE KEY material from outside\n", encoding="utf-8")
    (root / "CLAUDE.md").symlink_to(secret)
    assert drift.read_claude_files(root) == {}
    (root / "CLAUDE.md").unlink()
    (root / "AGENTS.md").write_text("# Rules\n", encoding="utf-8")
    (root / "CLAUDE.md").symlink_to("AGENTS.md")  # inside the tree: read by its target
    assert list(drift.read_claude_files(root).values()) == ["# Rules\n"]
    report = drift.DriftReport(
        project_id="p", root=root, files={root / "CLAUDE.md": "# Rules\n"}, target=root / "CLAUDE.md"
    )
    report.proposed[root / "CLAUDE.md"] = "# Rules\n\n- new\n"
    with pytest.raises(ValidationError, match="symbolic link"):
        drift.apply(report)
    assert (root / "AGENTS.md").read_text(encoding="utf-8") == "# Rules\n"
