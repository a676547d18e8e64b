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
from embed_testkit import TOPICS, add, make_project

from agentctx_embed import service
from agentctx_embed.models import DEFAULT_MODEL, Embedder, choose_model, load
from agentctx_embed.phase import EmbedPhase

pytestmark = pytest.mark.embed

# The neighbours: other subjects, other lengths, written between our records.
NEIGHBTOPICS = {
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
        for number, (title, body) in enumerate(TOPICS):
            add(store, ours, "convention", title, body)
            for other in others:
                other_title, other_body = NEIGHBTOPICS[other.name][number]
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
    others = [make_project(tmp_path / "repos", name) for name in NEIGHBTOPICS]
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
