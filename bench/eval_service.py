"""Ranking through the prompt hook's entry point with the warm search service up (issue 12).

A helper of `test_bench_hybrid.py` (no entry point of its own):

    uv run --frozen pytest bench/test_bench_hybrid.py -k service --benchmark-only

`hook_with_service()`: the set is loaded into a store under a temp
`AGENTCTX_HOME` (one directory per eval project), the service of that data dir is started in this
process (`agentctx_embed.service.start`, the real socket server, the real model: MiniLM int8 from
the shared folder, `ablate_hybrid.load_embedder`), every current record is
embedded by the service itself, and every query goes through
`agentctx_hooks.__main__.run("UserPromptSubmit", payload)`, a fresh session per query. The ids
the hook injected, in order, are scored by the set's own `eval.py` (recall@3, MRR@10, empty
precision, stale, bleed), and what it injected is measured as `test_bench_quality.py`'s
`test_hook_injection` measures the keyword path (`_eval.injection_figures`: relevant share of the
injected characters, mean characters, full and title-only records). `per_project=True` does the same with each project alone in its own
data dir (and its own service): a new user's store.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _eval import injected_blocks, injection_figures, load_into_store
from _harness import REAL_MODEL_NAME
from ablate_hybrid import MINILM
from agentctx_store import resolve_project


def _injected_ids(text: str, eval_id: dict[str, str]) -> list[str]:
    ids = []
    start = text.find('<agentctx-record id="')
    while start >= 0:
        start += len('<agentctx-record id="')
        record_id = text[start : text.find('"', start)]
        ids.append(eval_id.get(record_id, record_id))
        start = text.find('<agentctx-record id="', start)
    return ids


def _load(records: list[dict[str, Any]], home: Path, roots: Path) -> tuple[Any, int]:
    """The set in `home`'s store, each eval project at its own folder under `roots` (closed
    again: the service and the hooks open it); and how many current records it holds."""
    for name in {record["project"] for record in records}:
        (roots / name).mkdir(parents=True, exist_ok=True)
    loaded = load_into_store(records, home / "agentctx.db", lambda name: resolve_project(roots / name))
    current = loaded.store.conn.execute("SELECT count(*) FROM records WHERE superseded_at IS NULL").fetchone()[0]
    loaded.store.close()
    return loaded, current


@dataclass
class _Outcomes:
    """Each query's injection as the set's scorer reads it (`rows`) and as
    `_eval.injection_figures` measures it (`injected`), and which path served it (`served`)."""

    eval_id: dict[str, str]
    rows: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    served: dict[str, int] = field(default_factory=lambda: {"warm": 0, "keyword": 0})
    injected: list[Any] = field(default_factory=list[Any])  # (query, text, blocks)

    def add(self, query: dict[str, Any], out: str | bytes, state_file: Path) -> None:
        """The hook's stdout for `query`, and its session's state file in the data dir (none for
        a prompt the hook ignores, a slash command)."""
        text = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.strip() else ""
        ids = _injected_ids(text, self.eval_id)
        self.injected.append((query, text, injected_blocks(text, self.eval_id)))
        self.rows.append({"qid": query["qid"], "ids": ids, "scores": [1.0 / (rank + 1) for rank in range(len(ids))]})
        if state_file.exists():
            self.served[json.loads(state_file.read_text(encoding="utf-8"))["served"]["last"]] += 1


def _run_home(
    records: list[dict[str, Any]], queries: list[dict[str, Any]], scratch: Path, embedder: Any
) -> tuple[list[dict[str, Any]], dict[str, int], list[Any]]:
    from agentctx_embed.service import start
    from agentctx_hooks.__main__ import run
    from agentctx_hooks.state import state_path

    home, roots = scratch / "home", scratch / "projects"
    saved = {
        name: os.environ.get(name)
        for name in (
            "AGENTCTX_HOME",
            "TMPDIR",
            "AGENTCTX_HOOKS_NO_SPAWN",
            "AGENTCTX_WARM_DEADLINE_MS",
            "AGENTCTX_EMBED_MODEL",
            "AGENTCTX_EMBED_MODEL_DIR",
        )
    }
    # in one process the service and the hook share two cores: the deadline is timed in bench_service
    os.environ.update(
        AGENTCTX_HOME=str(home),
        TMPDIR=str(scratch),
        AGENTCTX_HOOKS_NO_SPAWN="1",
        AGENTCTX_WARM_DEADLINE_MS="10000",
        AGENTCTX_EMBED_MODEL=REAL_MODEL_NAME,
        AGENTCTX_EMBED_MODEL_DIR=str(MINILM),
    )
    running = None
    try:
        loaded, current = _load(records, home, roots)
        outcomes = _Outcomes(loaded.eval_id)
        running = start(str(home), loader=lambda: embedder)
        assert running is not None, "another service holds this data dir"
        while len(running.service.index) < current:
            time.sleep(0.2)
        for query in queries:
            session = f"eval-{query['qid']}"
            payload = {"session_id": session, "cwd": str(roots / query["project"]), "prompt": query["query"]}
            out = run("UserPromptSubmit", json.dumps(payload).encode())
            outcomes.add(query, out, Path(state_path(session)))  # per-session state lives in the data dir (issue 13)
    finally:
        if running is not None:
            running.close()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return outcomes.rows, outcomes.served, outcomes.injected


def hook_with_service(
    records: list[dict[str, Any]],
    queries: list[dict[str, Any]],
    scratch: Path,
    scorer: Any,
    embedder: Any,
    per_project: bool = True,
) -> dict[str, Any]:
    """The set's metrics (and which path served each prompt: `warm` or `keyword`) through the
    hook with the service up, in one data dir (`shared`) and, with `per_project`, one per project."""
    rows, served, injected = _run_home(records, queries, scratch / "shared", embedder)
    report: dict[str, Any] = {"model": embedder.name, "shared": scorer.evaluate(queries, rows, records, None, 10)}
    report["shared"]["served"] = served
    report["shared"]["injection"] = injection_figures(injected)
    if not per_project:
        return report
    alone_rows: list[dict[str, Any]] = []
    alone_served = {"warm": 0, "keyword": 0}
    alone_injected: list[Any] = []
    for number, name in enumerate(sorted({record["project"] for record in records})):
        own = [query for query in queries if query["project"] == name]
        # a short folder name: the service's Unix socket lives in it (AF_UNIX paths are short)
        part, counts, part_injected = _run_home(
            [record for record in records if record["project"] == name], own, scratch / f"p{number}", embedder
        )
        alone_rows += part
        alone_injected += part_injected
        for key, value in counts.items():
            alone_served[key] += value
    report["per_project"] = scorer.evaluate(queries, alone_rows, records, None, 10)
    report["per_project"]["served"] = alone_served
    report["per_project"]["injection"] = injection_figures(alone_injected)
    return report


def hook_processes_with_service(
    records: list[dict[str, Any]], queries: list[dict[str, Any]], scratch: Path, scorer: Any
) -> dict[str, Any]:
    """As a user's machine runs it: `agentctx serve` in its own process (the shipped settings:
    one onnxruntime thread, `service.load_model`), and every query through its own
    `agentctx hook UserPromptSubmit` process with the shipped deadline (150 ms from the hook's
    start), a fresh session per query, one data dir for the set. Each project is asked one
    `search` first and waited for, so its calibration (seconds, once per project) is not what
    is timed. The set's metrics, which path served each prompt, and what was injected."""
    import subprocess
    import sys

    from agentctx_hooks.state import file_name

    home, roots = scratch / "home", scratch / "projects"
    env = {
        **os.environ,
        "AGENTCTX_HOME": str(home),
        "TMPDIR": str(scratch),
        "AGENTCTX_HOOKS_NO_SPAWN": "1",
        "AGENTCTX_EMBED_MODEL": REAL_MODEL_NAME,
        "AGENTCTX_EMBED_MODEL_DIR": str(MINILM),
    }
    for name in ("AGENTCTX_WARM_DEADLINE_MS", "AGENTCTX_NO_SERVICE", "CLAUDE_PROJECT_DIR"):
        env.pop(name, None)
    agentctx = Path(sys.executable).with_name("agentctx")
    ask = (
        "import json, sys\nfrom agentctx_store.service_link import exchange\n"
        "print(exchange(sys.stdin.buffer.read(), timeout=600).decode())\n"
    )

    def exchange(request: dict[str, Any]) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-c", ask], input=json.dumps(request).encode(), capture_output=True, env=env, check=True
        )
        return json.loads(done.stdout)

    loaded, current = _load(records, home, roots)
    outcomes = _Outcomes(loaded.eval_id)
    service = subprocess.Popen([str(agentctx), "serve"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    times: list[float] = []
    try:
        assert service.stdout is not None and service.stdout.readline().startswith(b"agentctx service ready")
        deadline = time.monotonic() + 900
        while exchange({"v": 1, "op": "ping"}).get("vectors", 0) < current:
            assert time.monotonic() < deadline, "the service did not embed the set in 15 minutes"
            time.sleep(1)
        for name in sorted({query["project"] for query in queries}):
            exchange({"v": 1, "op": "search", "cwd": str(roots / name), "query": "calibrate", "limit": 1})
        for query in queries:
            session = f"eval-{query['qid']}"
            payload = {"session_id": session, "cwd": str(roots / query["project"]), "prompt": query["query"]}
            started = time.perf_counter()
            out = subprocess.run(
                [str(agentctx), "hook", "UserPromptSubmit"],
                input=json.dumps(payload).encode(),
                capture_output=True,
                env=env,
                check=True,
            ).stdout
            times.append((time.perf_counter() - started) * 1000)
            outcomes.add(query, out, home / "state" / f"{file_name(session)}.json")  # the data dir's, not ours
    finally:
        service.terminate()
        service.wait(60)
        if service.stdout is not None:
            service.stdout.close()
    report = scorer.evaluate(queries, outcomes.rows, records, None, 10)
    report["served"] = outcomes.served
    report["injection"] = injection_figures(outcomes.injected)
    times.sort()
    report["hook_ms"] = {"median": round(times[len(times) // 2], 1), "p90": round(times[int(len(times) * 0.9)], 1)}
    return report
