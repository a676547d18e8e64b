"""Ranking through the prompt hook's entry point with the warm search service up (issue 12).

`.venv/bin/python bench/eval_service.py [--set DIR ...]`: the set is loaded into a store under a temp
`AGENTCTX_HOME` (one directory per eval project), the service of that data dir is started in this
process (`agentctx_embed.service.start`, the real socket server, the real model: MiniLM int8 from
../shared/models unless `AGENTCTX_EMBED_MODEL[_DIR]` say otherwise), every current record is
embedded by the service itself, and every query goes through
`agentctx_hooks.__main__.run("UserPromptSubmit", payload)`, a fresh session per query. The ids
the hook injected, in order, are scored by the set's own `eval.py` (recall@3, MRR@10, empty
precision, stale, bleed). `per_project=True` does the same with each project alone in its own
data dir (and its own service): a new user's store.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from _eval import load_into_store, load_jsonl, load_module, scorer_path
from agentctx_store import resolve_project


def _embedder() -> Any:
    from ablate_hybrid import model_env

    model_env()
    from agentctx_embed.models import choose_model, load

    return load(choose_model({}), allow_download=False)


def _injected_ids(text: str, eval_id: dict[str, str]) -> list[str]:
    ids = []
    start = text.find('<agentctx-record id="')
    while start >= 0:
        start += len('<agentctx-record id="')
        record_id = text[start : text.find('"', start)]
        ids.append(eval_id.get(record_id, record_id))
        start = text.find('<agentctx-record id="', start)
    return ids


def _run_home(
    records: list[dict[str, Any]], queries: list[dict[str, Any]], scratch: Path, embedder: Any
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    from agentctx_embed.service import start
    from agentctx_hooks.__main__ import run

    home, roots = scratch / "home", scratch / "projects"
    saved = {
        name: os.environ.get(name)
        for name in ("AGENTCTX_HOME", "TMPDIR", "AGENTCTX_HOOKS_NO_SPAWN", "AGENTCTX_WARM_DEADLINE_MS")
    }
    # in one process the service and the hook share two cores: the deadline is timed in bench_service
    os.environ.update(
        AGENTCTX_HOME=str(home), TMPDIR=str(scratch), AGENTCTX_HOOKS_NO_SPAWN="1", AGENTCTX_WARM_DEADLINE_MS="10000"
    )
    served = {"warm": 0, "keyword": 0}
    running = None
    try:
        for name in {record["project"] for record in records}:
            (roots / name).mkdir(parents=True, exist_ok=True)
        loaded = load_into_store(records, home / "agentctx.db", lambda name: resolve_project(roots / name))
        current = loaded.store.conn.execute("SELECT count(*) FROM records WHERE superseded_at IS NULL").fetchone()[0]
        loaded.store.close()
        running = start(str(home), loader=lambda: embedder)
        assert running is not None, "another service holds this data dir"
        while len(running.service.index) < current:
            time.sleep(0.2)
        rows = []
        for query in queries:
            session = f"eval-{query['qid']}"
            payload = {"session_id": session, "cwd": str(roots / query["project"]), "prompt": query["query"]}
            out = run("UserPromptSubmit", json.dumps(payload).encode())
            text = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""
            ids = _injected_ids(text, loaded.eval_id)
            rows.append({"qid": query["qid"], "ids": ids, "scores": [1.0 / (rank + 1) for rank in range(len(ids))]})
            state_file = scratch / f"agentctx-{os.getuid()}" / f"{session}.json"
            if state_file.exists():  # none for a prompt the hook ignores (a slash command)
                served[json.loads(state_file.read_text(encoding="utf-8"))["served"]["last"]] += 1
    finally:
        if running is not None:
            running.close()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return rows, served


def hook_with_service(
    records: list[dict[str, Any]], queries: list[dict[str, Any]], scratch: Path, scorer: Any
) -> dict[str, Any]:
    embedder = _embedder()
    rows, served = _run_home(records, queries, scratch / "shared", embedder)
    report: dict[str, Any] = {"model": embedder.name, "shared": scorer.evaluate(queries, rows, records, None, 10)}
    report["shared"]["served"] = served
    alone_rows: list[dict[str, Any]] = []
    alone_served = {"warm": 0, "keyword": 0}
    for name in sorted({record["project"] for record in records}):
        own = [query for query in queries if query["project"] == name]
        part, counts = _run_home(
            [record for record in records if record["project"] == name], own, scratch / f"alone-{name}", embedder
        )
        alone_rows += part
        for key, value in counts.items():
            alone_served[key] += value
    report["per_project"] = scorer.evaluate(queries, alone_rows, records, None, 10)
    report["per_project"]["served"] = alone_served
    return report


def print_service_report(name: str, report: dict[str, Any]) -> None:
    print(f"through the prompt hook with the search service up ({report['model']}):")
    for label in ("shared", "per_project"):
        metrics = report[label]
        print(
            f"  {label:<12} recall@3 {metrics['recall@3']:.3f}  MRR@10 {metrics['MRR@10']:.3f}  "
            f"empty-prec {metrics['empty_precision']:.3f}  stale@3 {metrics['stale_rate@3']:.3f}  "
            f"bleed {metrics['bleed_rate']:.3f}  served {metrics['served']}"
        )


def main(argv: list[str] | None = None) -> int:
    import argparse
    import tempfile

    from ablate_hybrid import SHARED

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", type=Path)
    args = parser.parse_args(argv)
    for set_dir in args.set or [SHARED / "eval" / "adr-dev", SHARED / "eval" / "conv-dev"]:
        if not (set_dir / "records.jsonl").exists():
            print(f"skipping {set_dir}: no records.jsonl")
            continue
        scorer = load_module(scorer_path(set_dir), f"eval_{set_dir.name.replace('-', '_')}")
        records, queries = load_jsonl(set_dir / "records.jsonl"), load_jsonl(set_dir / "queries.jsonl")
        with tempfile.TemporaryDirectory(prefix="agentctx-eval-service-") as scratch:
            report = hook_with_service(records, queries, Path(scratch), scorer)
        print(f"== {set_dir.name}: {len(queries)} queries")
        print_service_report(set_dir.name, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
