"""A project's own keyword floor is in force from its first prompt: every command that writes
records in bulk (`learn`, `import`, `team import`) measures it once it has written
(`agentctx_store.calibration.refresh_prompt_floor`), as consolidation does; a dry run measures
nothing. Before, a project filled by `learn` answered on the constant floor until a
consolidation or the warm service measured it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentctx_store import paths, resolve_project

SUBJECTS = (
    "payments through Stripe", "email through Amazon SES", "queues on RabbitMQ", "search in OpenSearch",
    "feature flags in Unleash", "logs shipped to Loki", "metrics in Prometheus", "traces with Jaeger",
    "secrets in Vault", "images on Harbor", "DNS in Route53", "CDN on CloudFront", "auth with Keycloak",
    "builds on Buildkite", "deploys with Argo CD", "schemas in Protobuf", "migrations with Flyway",
    "caching in Redis", "uploads to S3", "cron on Kubernetes", "PDFs with WeasyPrint", "maps with Leaflet",
    "charts with Vega", "i18n with Crowdin", "tests with Playwright", "lint with Ruff", "docs on MkDocs",
    "alerts through PagerDuty", "billing in Chargebee", "chat through Slack",
)  # fmt: skip
ADR = "# {n}. Use {subject}\n\n## Status\n\nAccepted\n\n## Context\n\nWe need {subject}.\n\n## Decision\n\nWe use {subject}.\n"


def _adrs(project_dir: Path, count: int) -> None:
    folder = project_dir / "docs" / "adr"
    folder.mkdir(parents=True, exist_ok=True)
    for n, subject in enumerate(SUBJECTS[:count], start=1):
        (folder / f"{n:04d}-adr-{n}.md").write_text(ADR.format(n=n, subject=subject), encoding="utf-8")


def _measured(project_dir: Path) -> dict[str, object] | None:
    path = Path(paths.keyword_calibration_path(resolve_project(project_dir).project_id))
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def test_learn_measures_the_floor_and_again_when_the_project_grew(
    cli, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project_dir / ".git").mkdir()
    _adrs(project_dir, 24)
    monkeypatch.chdir(project_dir)
    assert cli("learn", "--dry-run").code == 0
    assert _measured(project_dir) is None  # a dry run writes nothing, the calibration included
    assert cli("learn").code == 0
    first = _measured(project_dir)
    assert first is not None and first["records"] == 24
    assert len(first["reference_levels"]) == first["prompts"]  # type: ignore[arg-type]
    _adrs(project_dir, 30)  # six more ADRs: the project changed by more than a tenth
    assert cli("learn").code == 0
    again = _measured(project_dir)
    assert again is not None and again["records"] == 30 and len(again["reference_levels"]) == again["prompts"]  # type: ignore[arg-type]


def test_import_measures_the_floor(cli, project_dir: Path, tmp_path: Path) -> None:
    lines = [
        {
            "id": f"p-{n:03d}",
            "project": "p",
            "type": "decision",
            "title": f"Use {subject}",
            "body": f"We use {subject}.",
        }
        for n, subject in enumerate(SUBJECTS[:22])
    ]
    file = tmp_path / "records.jsonl"
    file.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert cli("import", str(file), "--dry-run", "-p", str(project_dir)).code == 0
    assert _measured(project_dir) is None
    result = cli("import", str(file), "-p", str(project_dir))
    assert result.code == 0, result.err
    measured = _measured(project_dir)
    assert measured is not None and measured["records"] == 22


def test_team_import_measures_the_floor(cli, record, project_dir: Path) -> None:
    (project_dir / ".git").mkdir()
    for subject in SUBJECTS[:21]:
        record("decision", f"Use {subject}", f"We use {subject}.")
    assert cli("team", "export", "-p", str(project_dir)).code == 0
    # a teammate's checkout: the team file arrives with git, this data dir has never measured it
    Path(paths.keyword_calibration_path(resolve_project(project_dir).project_id)).unlink(missing_ok=True)
    result = cli("team", "import", "-p", str(project_dir))
    assert result.code == 0, result.err
    measured = _measured(project_dir)
    assert measured is not None and measured["records"] == 21


def test_calibrate_measures_the_floor_once_and_is_not_listed(cli, record, project_dir: Path) -> None:
    for subject in SUBJECTS[:21]:
        record("decision", f"Use {subject}", f"We use {subject}.")
    assert _measured(project_dir) is None  # `record` writes one record: nothing measures
    result = cli("calibrate", "-p", str(project_dir), "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["records"] == 21 == _measured(project_dir)["records"]  # type: ignore[index]
    assert "calibrate" not in cli("--help").out
