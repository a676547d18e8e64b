"""The keyword floor a project calibrates for itself (`agentctx_store.calibration`, issue 31): the
reference texts, the rule (a quantile of what they reach, within bounds), the file the prompt hook
reads and when it is measured again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentctx_store import NewRecord, Project, Store, paths
from agentctx_store.calibration import (
    KEYWORD_BOUNDS,
    REFERENCE_PROMPTS,
    keyword_floor,
    read_keyword_floor,
    reference_texts,
    refresh_keyword,
)
from agentctx_store.prompt_answer import PROMPT_TYPES, Asked, compose, rank
from agentctx_store.retrieval import RELEVANCE_FLOOR

TOPICS = [
    ("Use PostgreSQL 16", "All services keep durable state in PostgreSQL 16 behind pgbouncer."),
    ("Migrations with Alembic", "Schema changes are Alembic revisions, one per pull request."),
    ("Background jobs on Temporal", "Long work runs as Temporal workflows with retries."),
    ("Deploy from GitHub Actions", "Merges to main deploy to staging; production is a manual approval."),
    ("Validate request bodies", "Request bodies are pydantic models validated at the route boundary."),
    ("Tests beside the module", "Name test files after the module they test and keep them next to it."),
    ("Small pull requests", "Keep pull requests under four hundred changed lines."),
    ("Tenant id in cache keys", "Every cache key includes the tenant id to avoid cross-tenant leaks."),
    ("Sessions in Redis", "Web sessions live in Redis with a TTL of one day."),
    ("Structured logging", "Log with structlog; every request line carries the request id."),
    ("Money in cents", "Amounts are integers in minor units; never floats."),
    ("Feature flags in Unleash", "Read flags through flags.enabled, backed by Unleash."),
    ("API errors are problem+json", "Error responses follow RFC 7807 for every request."),
    ("Python 3.12 only", "CI runs 3.12; code may use its syntax."),
    ("Frontend in Vue 3", "The admin UI is Vue 3 with Pinia stores."),
    ("Emails through SES", "Transactional email goes through Amazon SES with a suppression list."),
    ("Search with OpenSearch", "Full-text search of orders runs on OpenSearch 2."),
    ("Secrets in Vault", "Services read secrets from Vault at start; nothing in env files."),
    ("Time zones in UTC", "Store timestamps in UTC; convert only when rendering."),
    ("Retries with backoff", "HTTP clients retry idempotent request calls three times with jittered backoff."),
    ("Ruff for lint and format", "ruff check and ruff format run in pre-commit and CI."),
    ("Containers on distroless", "Images build on distroless python, no shell."),
]
UNRELATED = [
    "what's the tallest mountain in Europe?",
    "write a limerick about a sleepy cat",
    "how do I convert celsius to fahrenheit in my head?",
    "who painted the Mona Lisa?",
    "how many legs does a spider have?",
]


def seed(store: Store, project: Project, topics: list[tuple[str, str]] = TOPICS) -> None:
    for title, body in topics:
        store.add(project, NewRecord(type="convention", title=title, body=body))


@pytest.fixture
def seeded(store: Store, project: Project) -> Store:
    seed(store, project)
    return store


def test_an_unrelated_store_injects_nothing_with_the_calibrated_floor(seeded: Store, project: Project) -> None:
    measured = refresh_keyword(seeded, project, types=PROMPT_TYPES)
    floor, problem = read_keyword_floor(project.project_id)
    assert problem is None and floor == measured["floor"]
    for prompt in UNRELATED:
        asked = Asked(prompt=prompt)
        assert compose(seeded, project, asked, rank(seeded, project, asked, floor=floor)).text == "", prompt
    asked = Asked(prompt="which version of PostgreSQL keeps the durable state behind pgbouncer?")
    assert "Use PostgreSQL 16" in compose(seeded, project, asked, rank(seeded, project, asked, floor=floor)).text


def test_the_reference_texts_are_the_fixed_prompts_whatever_the_project(seeded: Store, project: Project) -> None:
    texts = reference_texts(seeded, project, PROMPT_TYPES)
    assert texts == list(REFERENCE_PROMPTS)  # none made of the project's words (it silenced real answers)
    other = Project(project_id="e" * 64, root="/elsewhere/other", name="other")
    assert reference_texts(seeded, other, PROMPT_TYPES) == texts


def test_the_floor_is_a_quantile_of_the_reference_levels_within_bounds() -> None:
    low, high = KEYWORD_BOUNDS
    assert keyword_floor([0.0] * 50, records=100) == low  # references reach nothing: the lower bound
    assert keyword_floor([9.0] * 50, records=100) == high
    assert keyword_floor([0.0] * 8 + [1.5, 1.5], records=100, level=0.9) == pytest.approx(1.5)
    assert keyword_floor([9.0] * 50, records=5) == RELEVANCE_FLOOR  # too small to measure
    assert keyword_floor([float("inf")], records=100) == RELEVANCE_FLOOR


def test_it_is_measured_once_and_again_when_the_project_changes_by_a_tenth(seeded: Store, project: Project) -> None:
    first = refresh_keyword(seeded, project, types=PROMPT_TYPES)
    path = Path(paths.keyword_calibration_path(project.project_id))
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved == first and saved["records"] == len(TOPICS) and saved["prompts"] == len(saved["reference_levels"])
    saved["at"] = "marker"
    path.write_text(json.dumps(saved), encoding="utf-8")
    assert refresh_keyword(seeded, project, types=PROMPT_TYPES)["at"] == "marker"  # unchanged: not measured
    seed(seeded, project, [(f"Extra rule {n}", f"Extra body {n}.") for n in range(4)])
    again = refresh_keyword(seeded, project, types=PROMPT_TYPES)
    assert again["at"] != "marker" and again["records"] == len(TOPICS) + 4


def test_without_a_calibration_the_constant_floor_applies(project: Project) -> None:
    assert read_keyword_floor(project.project_id) == (RELEVANCE_FLOOR, None)
