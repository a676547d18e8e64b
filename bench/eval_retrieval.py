"""Retrieval quality of the store's real `search()` on the shared eval sets, next to the FTS5 baseline.

For each set (default: `../shared/eval/adr-dev` and `../shared/eval/conv-dev`, skipped with a
message when absent) this script:
  1. loads `records.jsonl` into a throwaway store through `Store.add` (one `Project` per eval
     project, supersession through the store, `valid_from` kept);
  2. runs every query of `queries.jsonl` through `agentctx_store.search.search()` with the
     production relevance floor, again without a floor, and once more with each project
     alone in its own store (a new user's store: small, one project);
  3. writes `results.jsonl` files and scores them with the set's own `eval.py`;
  4. runs the set's `baseline_fts5.py` into a temp file and scores it the same way, with and
     without its dev-tuned cut-off;
  5. loads the set once more into a store under a temp `AGENTCTX_HOME` (one directory per eval
     project) and sends every query through the prompt hook's entry point
     (`agentctx_hooks.__main__.run("UserPromptSubmit", payload)`, a fresh session per query), then
     measures what it injected: over answerable prompts, the share of injected characters that
     sit in relevant records' `<agentctx-record>` blocks, the mean characters per injected
     prompt, full and title-only entries, and recall@3 of the injected ids (title-only counted).

usage: .venv/bin/python bench/eval_retrieval.py [--set DIR ...] [--out DIR] [--json] [--now ISO]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from _common import SHARED_EVAL, LoadedSet, load_into_store, load_jsonl, load_module  # bench/ is on sys.path
from agentctx_store import resolve_project
from agentctx_store.records import parse_time
from agentctx_store.search import search

DEFAULT_SETS = ("adr-dev", "conv-dev")
BASELINE_CUTOFF = {"adr-dev": 7.0, "conv-dev": 7.5}  # the cut-offs the sets' READMEs report
METRICS = ("recall@3", "MRR@10", "nDCG@10", "stale_rate@3", "bleed_rate", "empty_precision")
LABELS = ("recall@3", "MRR@10", "nDCG@10", "stale@3", "bleed", "empty-prec")


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


def hook_injections(records: list[dict[str, Any]], queries: list[dict[str, Any]], scratch: Path) -> dict[str, Any]:
    """Every query through the prompt hook's entry point; what it injected, measured (module doc, 5)."""
    from agentctx_hooks.__main__ import run

    home, roots = scratch / "home", scratch / "projects"
    saved = {name: os.environ.get(name) for name in ("AGENTCTX_HOME", "TMPDIR", "AGENTCTX_HOOKS_NO_SPAWN")}
    os.environ.update(AGENTCTX_HOME=str(home), TMPDIR=str(scratch), AGENTCTX_HOOKS_NO_SPAWN="1")
    try:
        for name in {record["project"] for record in records}:
            (roots / name).mkdir(parents=True, exist_ok=True)
        loaded = load_into_store(records, home / "agentctx.db", lambda name: resolve_project(roots / name))
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


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


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


def scorer_path(set_dir: Path) -> Path:
    """The set's own `eval.py`, else the shared one (every set so far ships the same scorer)."""
    for candidate in (set_dir / "eval.py", SHARED_EVAL / "adr-dev" / "eval.py", SHARED_EVAL / "conv-dev" / "eval.py"):
        if candidate.exists():
            return candidate
    raise SystemExit(f"no eval.py in {set_dir} or {SHARED_EVAL}: cannot score")


def default_now(records: list[dict[str, Any]]) -> datetime:
    """A fixed 'today' (newest record + 90 days) so figures do not drift with the calendar."""
    newest = max(parse_time(record["valid_from"]) for record in records if record.get("valid_from"))
    return newest + timedelta(days=90)


def evaluate_set(set_dir: Path, out_dir: Path, now_text: str | None) -> dict[str, Any]:
    scorer = load_module(scorer_path(set_dir), f"shared_eval_{set_dir.name.replace('-', '_')}")
    records = load_jsonl(set_dir / "records.jsonl")
    queries = load_jsonl(set_dir / "queries.jsonl")
    now = parse_time(now_text) if now_text else default_now(records)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="agentctx-eval-") as scratch:
        loaded = load_into_store(records, Path(scratch) / "eval.db")
        try:
            for name, floor_on in (("agentctx search (production floor)", True), ("agentctx search, no floor", False)):
                rows = run_queries(loaded, queries, floor_on=floor_on, now=now)
                file_name = "results.jsonl" if floor_on else "results-nofloor.jsonl"
                write_jsonl(out_dir / f"{set_dir.name}-{file_name}", rows)
                runs[name] = scorer.evaluate(queries, rows, records, None, 10) | top3_load(queries, rows)
        finally:
            loaded.store.close()
        rows = []
        for name in sorted({record["project"] for record in records}):  # a store holding one small project
            alone = load_into_store(
                [record for record in records if record["project"] == name], Path(scratch) / f"alone-{name}.db"
            )
            try:
                own = [query for query in queries if query["project"] == name]
                rows += run_queries(alone, own, floor_on=True, now=now)
            finally:
                alone.store.close()
        runs["agentctx search, one store per project"] = scorer.evaluate(queries, rows, records, None, 10)
        hook = hook_injections(records, queries, Path(scratch) / "hook")
        baseline = baseline_results(set_dir, Path(scratch) / "baseline.jsonl")
    if baseline is not None:
        cutoff = BASELINE_CUTOFF.get(set_dir.name, 7.0)
        runs["shared FTS5 baseline, no cut-off"] = scorer.evaluate(queries, baseline, records, None, 10)
        runs[f"shared FTS5 baseline, cut-off {cutoff}"] = scorer.evaluate(queries, baseline, records, cutoff, 10)
    return {"set": set_dir.name, "now": now.isoformat(), "queries": len(queries), "runs": runs, "hook": hook}


def print_report(report: dict[str, Any]) -> None:
    print(f"\n== {report['set']}: {report['queries']} queries (recency 'now' = {report['now'][:10]})")
    print(f"{'run':<42}" + "".join(f"{label:>11}" for label in LABELS))
    for name, metrics in report["runs"].items():
        print(f"{name:<42}" + "".join(f"{metrics[key]:>11.3f}" for key in METRICS))
    production = report["runs"]["agentctx search (production floor)"]
    print("by kind (production floor):")
    for kind, values in production["by_kind"].items():
        figures = "  ".join(f"{key}={value:.3f}" for key, value in values.items() if key != "n")
        print(f"  {kind:<13} n={values['n']:<4} {figures}")
    print(f"superseded ids returned anywhere: {production['superseded_returned']}")
    print(
        f"top 3 (what the prompt hook injects): {production['top3_records']} records over {report['queries']} "
        f"prompts, {production['top3_precision']:.3f} of them relevant"
    )
    hook = report["hook"]
    print(
        f"through the prompt hook (answerable prompts; recency 'now' = today): injected into "
        f"{hook['injected_prompts']}/{hook['answerable']}, recall@3 {hook['hook_recall@3']:.3f} "
        f"(title-only counted), relevant share of injected chars {hook['relevant_char_share']:.3f}, "
        f"mean chars per injected prompt {hook['mean_chars']:.0f}, records full {hook['full_records']} / "
        f"title-only {hook['title_records']}; no-answer prompts injected "
        f"{hook['no_answer_injected']}/{hook['no_answer_prompts']}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", type=Path, help="eval set dir (repeatable)")
    parser.add_argument("--out", type=Path, help="where results*.jsonl go (default: a temp dir)")
    parser.add_argument("--now", help="ISO date used as 'today' for recency (default: newest record + 90 days)")
    parser.add_argument("--json", action="store_true", help="print the metrics as JSON")
    args = parser.parse_args(argv)
    set_dirs = args.set or [SHARED_EVAL / name for name in DEFAULT_SETS]
    out_dir = args.out or Path(tempfile.mkdtemp(prefix="agentctx-eval-results-"))
    reports = []
    for set_dir in set_dirs:
        if not (set_dir / "records.jsonl").exists() or not (set_dir / "queries.jsonl").exists():
            print(f"skipping {set_dir}: no records.jsonl/queries.jsonl there", file=sys.stderr)
            continue
        reports.append(evaluate_set(set_dir, out_dir, args.now))
    if not reports:
        print("no eval set found; nothing measured", file=sys.stderr)
        return 0
    if args.json:
        print(json.dumps(reports, indent=1, default=str))
    else:
        for report in reports:
            print_report(report)
        print(f"\nresults files: {out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
