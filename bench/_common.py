"""Shared helpers of the bench scripts: where things are, loading eval sets into a real store.

Benches are plain scripts (`.venv/bin/python bench/<x>.py`); only they may read `../shared`.
Everything goes through the store's public API, so a figure printed here is a figure of the
product, not of a re-implementation.
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from agentctx_store import RECORD_TYPES, NewRecord, Project, Store
from agentctx_store.records import MAX_BODY_CHARS, MAX_TITLE_CHARS

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


def load_into_store(
    records: list[dict[str, Any]], db_path: Path, project_of: Callable[[str], Project] = eval_project
) -> LoadedSet:
    """Insert every eval record through `Store.add`; successors supersede through the store.

    Predecessors go in first so that `add(..., supersedes=)` sets `superseded_at` and
    `superseded_by` exactly as production does; `valid_from` is kept. A successor of several
    records supersedes the first through `add` and retires the others with the store's own
    supersession step. Records outside the store's contract (unknown type, over-long title
    or body) are adjusted to it, with a note on stderr.
    """
    store = Store.open(db_path)
    projects: dict[str, Project] = {}
    by_id = {record["id"]: record for record in records}
    predecessors: dict[str, list[str]] = {}
    for record in records:
        if record.get("superseded_by") in by_id:
            predecessors.setdefault(record["superseded_by"], []).append(record["id"])
    store_id: dict[str, str] = {}
    adjusted = 0
    for record in _predecessors_first(records, predecessors):
        project = projects.setdefault(record["project"], project_of(record["project"]))
        olds = [store_id[old] for old in predecessors.get(record["id"], []) if old in store_id]
        new, changed = _contract_record(record, store.get(project, olds[0]).type if olds else None)
        adjusted += changed
        added = store.add(project, new, supersedes=olds[0] if olds else None)
        with store.transaction():
            for old in olds[1:]:
                store._mark_superseded(old, added.record_id, added.recorded_at)
        store_id[record["id"]] = added.record_id
    store.dirty.clear()  # no digests for a throwaway store
    if adjusted:
        print(f"note: {adjusted} records adjusted to the store's contract (type, title/body limits)", file=sys.stderr)
    return LoadedSet(
        store=store,
        projects=projects,
        store_id=store_id,
        eval_id={value: key for key, value in store_id.items()},
    )


def _contract_record(record: dict[str, Any], predecessor_type: str | None) -> tuple[NewRecord, bool]:
    """The eval record as a `NewRecord` the store accepts (a successor keeps its predecessor's type)."""
    record_type = record.get("type") if record.get("type") in RECORD_TYPES else "decision"
    record_type = predecessor_type or record_type
    title = " ".join(str(record["title"]).split())[:MAX_TITLE_CHARS] or str(record["id"])
    body = str(record["body"]).strip()[:MAX_BODY_CHARS] or title
    changed = (record_type, title, body) != (record.get("type"), record["title"], record["body"])
    new = NewRecord(
        type=record_type,
        title=title,
        body=body,
        confidence="explicit",
        source="import",
        valid_from=record.get("valid_from"),
    )
    return new, changed


def _predecessors_first(records: list[dict[str, Any]], predecessors: dict[str, list[str]]) -> list[dict[str, Any]]:
    """File order, except that a record comes after the records it supersedes (chains of any length)."""
    by_id = {record["id"]: record for record in records}
    placed: set[str] = set()
    ordered: list[dict[str, Any]] = []

    def place(record_id: str) -> None:
        if record_id in placed:
            return
        placed.add(record_id)
        for old in predecessors.get(record_id, []):
            if old in by_id:
                place(old)
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
