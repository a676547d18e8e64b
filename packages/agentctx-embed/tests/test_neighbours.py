"""A project's warm answers do not depend on the other projects of its data dir (issue 31).

The same project is stored twice: alone in one data dir, and in another between two other
projects whose records were written in between its own. Each data dir is consolidated (the vector
phase embeds and stores every record, as `agentctx consolidate` does), and its warm search
service starts from the stored vectors, as a real one does. With the shipped model the two
services must give the project the same calibration, the same hits with the same scores and the
same injections. Batched embedding broke this: the int8 model quantises each layer's
activations over the whole batch, so a record's vector moved with the neighbours' records it was
embedded beside, and with it the project's `z`, its floor and what its prompts received.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentctx_store import Project, Store, config, consolidate, paths
from agentctx_store.service_link import PROTOCOL
from embed_testkit import add, make_project

from agentctx_embed import service
from agentctx_embed.models import DEFAULT_MODEL, Embedder, choose_model, load
from agentctx_embed.phase import EmbedPhase

pytestmark = pytest.mark.embed

OURS = [
    ("Use PostgreSQL 16", "All services keep durable state in PostgreSQL 16 behind pgbouncer."),
    ("Migrations with Alembic", "Schema changes are Alembic revisions, one per pull request."),
    ("Background jobs on Temporal", "Long work runs as Temporal workflows with retries."),
    ("Deploy from GitHub Actions", "Merges to main deploy to staging; production is a manual approval."),
    ("Validate bodies with pydantic", "Request bodies are pydantic models validated at the route boundary."),
    ("Tests beside the module", "Name test files after the module they test and keep them next to it."),
    ("Small pull requests", "Keep pull requests under four hundred changed lines."),
    ("Tenant id in cache keys", "Every cache key includes the tenant id to avoid cross-tenant leaks."),
    ("Dashboard assets from the package", "Serve the dashboard's static assets from the wheel, never a CDN."),
    ("Sessions in Redis", "Web sessions live in Redis with a TTL of one day."),
    ("Structured logging", "Log with structlog; every line carries the request id."),
    ("Money in cents", "Amounts are integers in minor units; never floats."),
    ("Feature flags in Unleash", "Read flags through flags.enabled, backed by Unleash."),
    ("API errors are problem+json", "Error responses follow RFC 7807."),
    ("Python 3.12 only", "CI runs 3.12; code may use its syntax."),
    ("Frontend in Vue 3", "The admin UI is Vue 3 with Pinia stores."),
    ("Emails through SES", "Transactional email goes through Amazon SES with a suppression list."),
    ("Search with OpenSearch", "Full-text search of orders runs on OpenSearch 2."),
    ("Secrets in Vault", "Services read secrets from Vault at start; nothing in env files."),
    ("Time zones in UTC", "Store timestamps in UTC; convert only when rendering."),
    ("Retries with backoff", "HTTP clients retry idempotent calls three times with jittered backoff."),
    ("Ruff for lint and format", "ruff check and ruff format run in pre-commit and CI."),
    ("Type hints everywhere", "pyright runs in strict mode on every package."),
    ("Containers on distroless", "Images build on distroless python, no shell."),
    ("Metrics in Prometheus", "Expose /metrics; dashboards live in Grafana."),
]
# The neighbours: other subjects, other lengths, written between our records.
NEIGHBOURS = {
    "mobile": [
        (
            f"Screen {n}: offline first",
            f"The {n}th screen caches its data in SQLite and syncs when the phone is online.",
        )
        for n in range(1, 26)
    ],
    "pipeline": [
        (
            f"Nightly job {n}",
            f"Job {n} reads the day's events from Kafka, aggregates them per customer in Spark "
            f"and writes Parquet files partitioned by date; a failed run is retried {n % 3 + 1} times.",
        )
        for n in range(1, 26)
    ],
}
PROMPTS = [
    "which database do the services keep their durable state in?",
    "how do we run long background work with retries?",
    "where do the static files of the dashboard come from?",
    "how should money amounts be stored?",
    "what do we use for feature flags?",
    "how are schema changes made?",
    "who painted the Mona Lisa?",
    "write a limerick about a sleepy cat",
    "how many legs does a spider have?",
]


@pytest.fixture
def shipped(monkeypatch: pytest.MonkeyPatch) -> Embedder:
    """The bundled all-MiniLM-L6-v2 int8: the model users get, and one that quantises per batch."""
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL", raising=False)
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL_DIR", raising=False)
    loaded = load(choose_model(config.load()), allow_download=False)
    assert loaded.name == DEFAULT_MODEL
    return loaded


def _store(home: Path, ours: Project, others: list[Project], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_HOME", str(home))
    with Store.open() as store:
        for number, (title, body) in enumerate(OURS):
            add(store, ours, "convention", title, body)
            for other in others:
                other_title, other_body = NEIGHBOURS[other.name][number]
                add(store, other, "decision", other_title, other_body)


def _answers(embedder: Embedder, ours: Project) -> dict[str, Any]:
    """Consolidate the current data dir, start its service from the stored vectors and ask it."""
    projects = [ours]
    report = consolidate.run(projects, settings=config.load(), vector_phase=EmbedPhase(loader=lambda _: embedder))
    assert report.embedded > 0
    served = service.Service(paths.home(), embedder)
    try:
        assert served.load_stored_vectors() > 0  # the service starts from what consolidation stored
        with served.open_store() as store:
            title_of = dict(store.conn.execute("SELECT id, title FROM records").fetchall())
        found: dict[str, Any] = {}
        for number, prompt in enumerate(PROMPTS):
            hits = served.search({"v": PROTOCOL, "op": "search", "cwd": str(ours.root), "query": prompt})
            injected = served.prompt(
                {"cwd": str(ours.root), "prompt": prompt, "session_id": f"s-{number}", "budget_ms": 600_000}
            )
            assert hits.get("ok") and injected.get("ok"), (hits, injected)
            text = re.sub(r'id="([^"]+)"', lambda match: f'id="{title_of[match.group(1)]}"', str(injected["text"]))
            found[prompt] = {
                "hits": [(title_of[record_id], score, relevance) for record_id, score, relevance in hits["hits"]],
                "text": text,
            }
        calibration = served._calibrations[ours.project_id].as_json()  # pyright: ignore[reportPrivateUsage]
        return {"prompts": found, "calibration": {key: calibration[key] for key in ("reference_z", "thresholds")}}
    finally:
        served.queries.close()
        served.close_store()


@pytest.fixture
def both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped: Embedder) -> Iterator[tuple[Any, Any]]:
    ours = make_project(tmp_path / "repos", "ours")
    others = [make_project(tmp_path / "repos", name) for name in NEIGHBOURS]
    _store(tmp_path / "alone", ours, [], monkeypatch)
    alone = _answers(shipped, ours)
    _store(tmp_path / "shared", ours, others, monkeypatch)
    shared = _answers(shipped, ours)
    yield alone, shared


def test_a_projects_warm_answers_are_the_same_alone_and_beside_other_projects(both: tuple[Any, Any]) -> None:
    alone, shared = both
    assert shared["calibration"] == alone["calibration"]
    answered = 0
    for prompt in PROMPTS:
        mine, theirs = alone["prompts"][prompt], shared["prompts"][prompt]
        assert [hit[0] for hit in theirs["hits"]] == [hit[0] for hit in mine["hits"]], prompt
        for (_, score, relevance), (_, alone_score, alone_relevance) in zip(theirs["hits"], mine["hits"], strict=True):
            assert score == pytest.approx(alone_score, rel=1e-6, abs=1e-9), prompt
            assert relevance == pytest.approx(alone_relevance, rel=1e-6, abs=1e-9), prompt
        assert theirs["text"] == mine["text"], prompt
        answered += bool(mine["text"])
    assert answered >= 3  # the prompts about the project's records are answered, so the test sees answers
