"""Eval sets in a real store: loading `../shared/eval/<set>` through the store's API, running
its queries through `search()`, scoring with the set's own `eval.py`.

Everything goes through the store's public API, so a figure is a figure of the product, not
of a re-implementation. Used by `test_bench_quality.py` (and any bench that scores retrieval).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

from agentctx_store import RECORD_TYPES, NewRecord, Project, Store, resolve_project
from agentctx_store.records import MAX_BODY_CHARS, MAX_TITLE_CHARS, parse_time
from agentctx_store.retrieval import search

SETS = ("adr-dev", "conv-dev")
BASELINE_CUTOFF = {"adr-dev": 7.0, "conv-dev": 7.5}  # the cut-offs the sets' READMEs report
METRICS = ("recall@3", "MRR@10", "nDCG@10", "stale_rate@3", "bleed_rate", "empty_precision")


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_module(path: Path, name: str) -> ModuleType:
    """Import a script by file path (the shared `eval.py` would shadow nothing this way)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # the shared folder may be read-only
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = saved
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


def run_queries(
    loaded: LoadedSet, queries: list[dict[str, Any]], *, floor_on: bool, now: datetime, floor: float | None = None
) -> list[dict[str, Any]]:
    """Every query through `search()`: production floor, `floor` when given, or none (`floor_on=False`)."""
    results = []
    for query in queries:
        project = loaded.projects.get(query["project"])
        if project is None:
            results.append({"qid": query["qid"], "ids": [], "scores": []})
            continue
        kwargs: dict[str, Any] = {"floor": floor} if floor_on and floor is not None else {}
        if not floor_on:
            kwargs = {"floor": None}
        found = search(loaded.store, project, query["query"], limit=10, now=now, **kwargs)
        results.append(
            {
                "qid": query["qid"],
                "ids": [loaded.eval_id.get(hit.record.record_id, hit.record.record_id) for hit in found.hits],
                "scores": [round(hit.score, 4) for hit in found.hits],
            }
        )
    return results


def top3_load(queries: list[dict[str, Any]], rows: list[dict[str, Any]]) -> dict[str, float]:
    """What the prompt hook would inject (the top 3): how many records, and how many of them are relevant."""
    relevant = {query["qid"]: set(query["relevant"]) for query in queries}
    shown = [(row["qid"], record_id) for row in rows for record_id in row["ids"][:3]]
    useful = sum(1 for qid, record_id in shown if record_id in relevant.get(qid, set()))
    return {"top3_records": len(shown), "top3_precision": useful / len(shown) if shown else float("nan")}


def baseline_results(set_dir: Path, out: Path) -> list[dict[str, Any]] | None:
    script = set_dir / "baseline_fts5.py"
    if not script.exists():
        return None
    subprocess.run(
        [sys.executable, str(script), "--dir", str(set_dir), "--out", str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    return load_jsonl(out)


def hook_injections(
    records: list[dict[str, Any]], queries: list[dict[str, Any]], scratch: Path, *, calibrated: bool = True
) -> dict[str, Any]:
    """Every query through the prompt hook's entry point (`agentctx_hooks.__main__.run`, a fresh
    session per query), the set loaded once more under a temp `AGENTCTX_HOME` (one directory per
    eval project); what it injected, measured: over answerable prompts, the share of injected
    characters inside relevant records' `<agentctx-record>` blocks, mean characters per injected
    prompt, full and title-only entries, recall@3 of the injected ids (title-only counted).
    `calibrated`: each project's keyword floor measured first, as consolidation does
    (`agentctx_store.calibration.refresh_keyword`); else the hook falls back to the constant."""
    from agentctx_hooks.__main__ import run
    from agentctx_store.calibration import refresh_keyword
    from agentctx_store.prompt_answer import PROMPT_TYPES

    home, roots = scratch / "home", scratch / "projects"
    saved = {name: os.environ.get(name) for name in ("AGENTCTX_HOME", "TMPDIR", "AGENTCTX_HOOKS_NO_SPAWN")}
    os.environ.update(AGENTCTX_HOME=str(home), TMPDIR=str(scratch), AGENTCTX_HOOKS_NO_SPAWN="1")
    try:
        for name in {record["project"] for record in records}:
            (roots / name).mkdir(parents=True, exist_ok=True)
        loaded = load_into_store(records, home / "agentctx.db", lambda name: resolve_project(roots / name))
        if calibrated:
            for project in loaded.projects.values():
                refresh_keyword(loaded.store, project, types=PROMPT_TYPES)
        loaded.store.close()
        rows = []
        for query in queries:
            payload = {
                "session_id": f"eval-{query['qid']}",
                "cwd": str(roots / query["project"]),
                "prompt": query["query"],
            }
            out = run("UserPromptSubmit", json.dumps(payload).encode())
            text = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""
            rows.append((query, text, injected_blocks(text, loaded.eval_id)))
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return injection_figures(rows)


def injected_blocks(text: str, eval_id: dict[str, str]) -> list[tuple[str, bool, int]]:
    """(eval id, title only?, characters) of each `<agentctx-record>` block of an injection."""
    blocks = []
    start = text.find("<agentctx-record ")
    while start >= 0:
        end = text.find("</agentctx-record>", start)
        end = len(text) if end < 0 else end + len("</agentctx-record>")
        head = text[start : text.find(">", start)]
        record_id = head.split('id="', 1)[1].split('"', 1)[0]
        blocks.append((eval_id.get(record_id, record_id), 'detail="title"' in head, end - start))
        start = text.find("<agentctx-record ", end)
    return blocks


def injection_figures(rows: list[tuple[dict[str, Any], str, list[tuple[str, bool, int]]]]) -> dict[str, Any]:
    answerable = [(query, text, blocks) for query, text, blocks in rows if query["relevant"]]
    injected = [(query, text, blocks) for query, text, blocks in answerable if text]
    chars = sum(len(text) for _, text, _ in injected)
    relevant_chars = sum(size for query, _, blocks in injected for rid, _, size in blocks if rid in query["relevant"])
    recalls = [
        len(set(query["relevant"]) & {rid for rid, _, _ in blocks[:3]}) / len(set(query["relevant"]))
        for query, _, blocks in answerable
    ]
    full = sum(1 for _, _, blocks in injected for _, title, _ in blocks if not title)
    titles = sum(1 for _, _, blocks in injected for _, title, _ in blocks if title)
    return {
        "answerable": len(answerable),
        "injected_prompts": len(injected),
        "relevant_char_share": relevant_chars / chars if chars else float("nan"),
        "mean_chars": chars / len(injected) if injected else float("nan"),
        "full_records": full,
        "title_records": titles,
        "hook_recall@3": sum(recalls) / len(recalls) if recalls else float("nan"),
        "no_answer_injected": sum(1 for query, text, _ in rows if not query["relevant"] and text),
        "no_answer_prompts": sum(1 for query, _, _ in rows if not query["relevant"]),
    }


def scorer_path(set_dir: Path) -> Path:
    """The set's own `eval.py`, else a sibling set's (every set so far ships the same scorer)."""
    for candidate in (set_dir / "eval.py", *(set_dir.parent / name / "eval.py" for name in SETS)):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"no eval.py in {set_dir} or its sibling sets: cannot score")


def default_now(records: list[dict[str, Any]]) -> datetime:
    """A fixed 'today' (newest record + 90 days) so figures do not drift with the calendar."""
    newest = max(parse_time(record["valid_from"]) for record in records if record.get("valid_from"))
    return newest + timedelta(days=90)


@dataclass(frozen=True, kw_only=True)
class EvalSet:
    """One eval set, loaded: its records and queries, its scorer, and a store holding it."""

    name: str
    folder: Path
    records: list[dict[str, Any]]
    queries: list[dict[str, Any]]
    scorer: ModuleType
    loaded: LoadedSet
    now: datetime

    def score(
        self, rows: list[dict[str, Any]], cutoff: float | None = None, *, queries: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """The set's own `eval.py` metrics for result rows (`{"qid", "ids", "scores"}`) of
        `queries` (default: all of the set's)."""
        return self.scorer.evaluate(self.queries if queries is None else queries, rows, self.records, cutoff, 10)


def load_set(folder: Path, scratch: Path) -> EvalSet:
    """Load `folder` (records.jsonl, queries.jsonl, eval.py) into a new store under `scratch`."""
    records = load_jsonl(folder / "records.jsonl")
    return EvalSet(
        name=folder.name,
        folder=folder,
        records=records,
        queries=load_jsonl(folder / "queries.jsonl"),
        scorer=load_module(scorer_path(folder), f"shared_eval_{folder.name.replace('-', '_')}"),
        loaded=load_into_store(records, scratch / f"{folder.name}.db"),
        now=default_now(records),
    )


def rounded(metrics: dict[str, Any]) -> dict[str, Any]:
    """Metrics for `extra_info`: floats to 3 places (nested per-kind dicts too)."""
    return {
        key: rounded(value) if isinstance(value, dict) else round(value, 3) if isinstance(value, float) else value
        for key, value in metrics.items()
    }
