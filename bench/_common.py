"""Shared helpers of the bench scripts: where things are, loading eval sets into a real store.

Benches are plain scripts (`.venv/bin/python bench/<x>.py`); only they may read `../shared`.
Everything goes through the store's public API, so a figure printed here is a figure of the
product, not of a re-implementation.
"""

from __future__ import annotations

import importlib.util
import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from agentctx_store import NewRecord, Project, Store

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_EVAL = (REPO_ROOT.parent / "shared" / "eval").resolve()


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_module(path: Path, name: str) -> ModuleType:
    """Import a script by file path (the shared `eval.py` would shadow nothing this way)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True, kw_only=True)
class LoadedSet:
    """An eval set inside a throwaway store: eval ids ↔ store ids, one `Project` per eval project."""

    store: Store
    projects: dict[str, Project]
    store_id: dict[str, str]  # eval id -> ULID
    eval_id: dict[str, str]  # ULID -> eval id


def eval_project(name: str) -> Project:
    return Project(project_id=f"eval-{name}", root=Path("/eval") / name, name=name)


def load_into_store(records: list[dict[str, Any]], db_path: Path) -> LoadedSet:
    """Insert every eval record through `Store.add`; successors supersede through the store.

    Predecessors go in first so that `add(..., supersedes=)` sets `superseded_at` and
    `superseded_by` exactly as production does; `valid_from` is kept.
    """
    store = Store.open(db_path)
    projects: dict[str, Project] = {}
    predecessor_of = {record["superseded_by"]: record["id"] for record in records if record.get("superseded_by")}
    store_id: dict[str, str] = {}
    for record in _predecessors_first(records, predecessor_of):
        project = projects.setdefault(record["project"], eval_project(record["project"]))
        new = NewRecord(
            type=record.get("type", "decision"),
            title=record["title"],
            body=record["body"],
            confidence="explicit",
            source="import",
            valid_from=record.get("valid_from"),
        )
        old = predecessor_of.get(record["id"])
        added = store.add(project, new, supersedes=store_id[old] if old else None)
        store_id[record["id"]] = added.record_id
    store.dirty.clear()  # no digests for a throwaway store
    return LoadedSet(
        store=store,
        projects=projects,
        store_id=store_id,
        eval_id={value: key for key, value in store_id.items()},
    )


def _predecessors_first(records: list[dict[str, Any]], predecessor_of: dict[str, str]) -> list[dict[str, Any]]:
    """File order, except that a record comes after the record it supersedes (chains of any length)."""
    by_id = {record["id"]: record for record in records}
    placed: set[str] = set()
    ordered: list[dict[str, Any]] = []

    def place(record_id: str) -> None:
        if record_id in placed:
            return
        placed.add(record_id)
        if record_id in predecessor_of and predecessor_of[record_id] in by_id:
            place(predecessor_of[record_id])
        ordered.append(by_id[record_id])

    for record in records:
        place(record["id"])
    return ordered


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")
