"""What anchors cost the prompt hook (issue 16): whole-process `agentctx hook UserPromptSubmit`
on a store of 10K records of which 1K are anchored to project files, against the same store
without the anchors, next to a bare `python -c pass`, interleaved round-robin in one run.

The two stores hold the same records (one is a copy of the other before the anchors are added),
the project holds the same files, and every prompt is about a record that is anchored in the
first store (80% of prompts; the rest are noise), so the check runs on nearly every prompt.
A fifth of the anchored files are then edited (the anchored function's body changed, new size
and mtime), so those prompts also read and hash a file and mark the record.

Target: the median rises by at most 3 ms. Whole-process medians on a shared machine move by a
few ms between runs, so the bench also times the same prompts in-process (search, then compose
with and without the anchor check; median of all prompts), which isolates the check's cost.

The pytest-benchmark form is `test_bench_anchors.py` (`uv run pytest bench -k anchors -s`); this
module also runs alone: .venv/bin/python bench/bench_anchors.py [--records 10000] [--anchored 1000]
[--runs 40] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from statistics import median

from _corpus import Corpus, vocabulary
from _harness import process_env
from agentctx_store import Store, resolve_project

AGENTCTX = Path(sys.executable).with_name("agentctx")
TARGET_MS = 3.0
FILES = 200  # the anchored functions are spread over this many modules


def _module(index: int, anchored: int, edited: bool) -> str:
    parts = []
    for number in range(index, anchored, FILES):
        value = number * 2 if edited else number
        parts.append(f"def handler_{number}(request):\n    total = {value}\n    return request.respond(total)\n")
    return "\n\n".join(parts)


def build(root: Path, records: int, anchored: int, corpus: Corpus) -> tuple[Path, Path, Path, list[str]]:
    """Two data dirs with the same records (`plain`, `anchored`) and the project; the prompts."""
    from agentctx_store.freshness import anchor_record

    project_dir, plain, with_anchors = root / "project", root / "plain", root / "anchored"
    (project_dir / "src").mkdir(parents=True)
    (project_dir / "pyproject.toml").write_text('[project]\nname = "bench"\n', encoding="utf-8")
    for index in range(FILES):
        (project_dir / "src" / f"m{index}.py").write_text(_module(index, anchored, False), encoding="utf-8")
    os.environ["AGENTCTX_HOME"] = str(plain)
    project = resolve_project(project_dir)
    own = vocabulary(corpus.rng, 150)
    others = [(resolve_project(root / f"other-{index}"), vocabulary(corpus.rng, 150)) for index in range(2)]
    store = Store.open()
    try:
        with store.transaction():
            ids = [store.add(project, corpus.record(own)).record_id for _ in range(records // 2)]
            for other, words in others:
                for _ in range(records // 4):
                    store.add(other, corpus.record(words))
        store.dirty.clear()
        chosen = ids[:: max(1, len(ids) // anchored)][:anchored]
        titles = [store.get(project, record_id).title for record_id in chosen]
        with_anchors.mkdir()
        target = sqlite3.connect(with_anchors / "agentctx.db")
        store.conn.backup(target)
        target.close()
    finally:
        store.close()
    os.environ["AGENTCTX_HOME"] = str(with_anchors)
    store = Store.open()
    try:
        with store.transaction():
            for number, record_id in enumerate(chosen):
                anchor_record(store, project, record_id, [f"src/m{number % FILES}.py:handler_{number}"])
        store.dirty.clear()
    finally:
        store.close()
    for index in range(0, FILES, 5):  # a fifth of the files change under their records
        path = project_dir / "src" / f"m{index}.py"
        path.write_text(_module(index, anchored, True), encoding="utf-8")
    prompts = [
        corpus.prompt(own, corpus.rng.choice(titles) if corpus.rng.random() < 0.8 else None, error=False)
        for _ in range(400)
    ]
    return project_dir, plain, with_anchors, prompts


def _time(command: list[str], stdin: bytes, env: dict[str, str]) -> tuple[float, bytes]:
    started = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, env=env, check=False)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"{command} exited {done.returncode}: {done.stderr[-500:]!r}")
    return elapsed, done.stdout


def measure(records: int = 10_000, anchored: int = 1_000, runs: int = 40, seed: int = 5) -> dict[str, Any]:
    corpus = Corpus(seed=seed)
    with tempfile.TemporaryDirectory(prefix="agentctx-bench-anchors-") as scratch:
        root = Path(scratch)
        started = time.perf_counter()
        project_dir, plain, with_anchors, prompts = build(root, records, anchored, corpus)
        build_s = time.perf_counter() - started
        temp = root / "tmp"
        temp.mkdir()
        envs = {
            "floor": process_env(plain, TMPDIR=str(temp)),
            "without anchors": process_env(plain, TMPDIR=str(temp)),
            "with 1K anchored": process_env(with_anchors, TMPDIR=str(temp)),
        }
        hook = [str(AGENTCTX), "hook", "UserPromptSubmit"]
        commands = {"floor": [sys.executable, "-c", "pass"], "without anchors": hook, "with 1K anchored": hook}

        def payload(index: int) -> bytes:
            data = {
                "session_id": str(uuid.uuid4()),
                "cwd": str(project_dir),
                "hook_event_name": "UserPromptSubmit",
                "prompt": prompts[index % len(prompts)],
                "transcript_path": str(project_dir / "t.jsonl"),
            }
            return json.dumps(data).encode("utf-8")

        for name, command in commands.items():  # warm-up: bytecode, page cache
            for index in range(3):
                _time(command, payload(index), envs[name])
        timings: dict[str, list[float]] = {name: [] for name in commands}
        marked = injected = 0
        for index in range(runs):
            for name, command in commands.items():
                elapsed, out = _time(command, payload(index), envs[name])
                timings[name].append(elapsed)
                if name == "with 1K anchored":
                    injected += bool(out.strip())
                    marked += b"anchor-changed" in out
        in_process = _in_process(project_dir, with_anchors, prompts)
    medians = {name: round(median(values), 2) for name, values in timings.items()}
    return {
        "records": records,
        "anchored": anchored,
        "runs": runs,
        "build_s": round(build_s, 1),
        "median_ms": medians,
        "rise_ms": round(medians["with 1K anchored"] - medians["without anchors"], 2),
        "ratio_to_floor": {name: round(value / medians["floor"], 2) for name, value in medians.items()},
        "prompts_injected": injected,
        "prompts_with_a_marked_record": marked,
        "in_process_ms": in_process,
    }


def _in_process(project_dir: Path, home: Path, prompts: list[str]) -> dict[str, float]:
    """Median ms per prompt of composing the injection from the same hits without and with the
    anchor check (alternating which goes first; prompts with hits only), next to the search."""
    from agentctx_store import search
    from agentctx_store.freshness import Checker
    from agentctx_store.inject import compose_injection
    from agentctx_store.prompt_answer import PROMPT_TYPES

    os.environ["AGENTCTX_HOME"] = str(home)
    project = resolve_project(project_dir)
    store = Store.open()
    searching: list[float] = []
    plain: list[float] = []
    checked: list[float] = []
    try:
        for index, prompt in enumerate(prompts):
            started = time.perf_counter()
            hits = search(store, project, prompt, limit=3, types=PROMPT_TYPES).hits
            searching.append((time.perf_counter() - started) * 1000)
            if not hits:  # nothing to compose, nothing to check
                continue
            order = [(plain, None), (checked, Checker(store, project))]
            for bucket, freshness in order if index % 2 else order[::-1]:
                started = time.perf_counter()
                compose_injection(hits, prompt, freshness=freshness)
                bucket.append((time.perf_counter() - started) * 1000)
    finally:
        store.close()
    return {
        "search": round(median(searching), 3),
        "compose": round(median(plain), 3),
        "compose_with_check": round(median(checked), 3),
        "check_rise": round(median(checked) - median(plain), 3),
        "prompts_with_hits": len(plain),
    }


def report(result: dict[str, Any]) -> str:
    lines = [
        f"{result['records']:,} records, {result['anchored']:,} anchored (store built in {result['build_s']} s), "
        f"{result['runs']} interleaved runs each, medians:"
    ]
    for name, value in result["median_ms"].items():
        lines.append(f"  {name:<28} {value:7.2f} ms  {result['ratio_to_floor'][name]:4.2f}× floor")
    lines.append(f"  rise with anchors: {result['rise_ms']:+.2f} ms (target ≤ {TARGET_MS} ms)")
    inner = result["in_process_ms"]
    lines.append(
        f"  in-process, median per prompt: search {inner['search']:.3f} ms; compose {inner['compose']:.3f} ms, "
        f"with the anchor check {inner['compose_with_check']:.3f} ms (rise {inner['check_rise']:+.3f} ms; "
        f"{inner['prompts_with_hits']} prompts with hits)"
    )
    lines.append(
        f"  prompts that injected: {result['prompts_injected']} of {result['runs']}; "
        f"with an anchor-changed mark: {result['prompts_with_a_marked_record']}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--anchored", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--json", action="store_true", help="print only the JSON line")
    args = parser.parse_args(argv)
    result = measure(args.records, args.anchored, args.runs)
    if not args.json:
        print(report(result))
    print(json.dumps({"anchor_check": result}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
