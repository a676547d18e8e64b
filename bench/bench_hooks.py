"""Whole-process wall time of `agentctx hook <Event>`, next to a bare `python -c pass` of the
same interpreter measured in the same run (issue 3 targets).

Claude Code starts a fresh process for every hook, so what counts is the time from spawn to
exit: interpreter start-up, imports, opening the store, the work, the JSON out. Each run builds
a throwaway store (synthetic records shaped like real ones, from `bench_search.Corpus`) in a
real temp project directory, then times, interleaved round-robin so machine load hits every
command alike:

- `python -c pass` (the floor), with the same payload on stdin;
- `agentctx hook UserPromptSubmit`, a fresh session per run (nothing deduplicated away);
- `agentctx hook SessionStart` (source=startup, the digest file exists: the fast path);
- `agentctx hook PostToolUse` for an Edit (captured: file node, links, session meta) and for a
  Bash `echo` (nothing to capture).

Bytecode: the environment of this project sets PYTHONDONTWRITEBYTECODE=1, which would make
every run recompile the workspace's modules; an installed wheel has compiled bytecode, so the
bench unsets it for the measured processes.

Targets: UserPromptSubmit median ≤ 60 ms and ≤ 2.5× the floor at 10K records, ≤ 120 ms at
100K; SessionStart ≤ 1.5× the floor; PostToolUse ≤ 2× the floor.

usage: .venv/bin/python bench/bench_hooks.py [--sizes 10000,100000] [--runs 30] [--importtime] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _common import median  # bench/ is on sys.path
from agentctx_store import Store, resolve_project
from bench_search import Corpus, _vocabulary

AGENTCTX = Path(sys.executable).with_name("agentctx")
TARGETS = {
    "UserPromptSubmit": "≤ 60 ms and ≤ 2.5× floor (10K); ≤ 120 ms (100K)",
    "SessionStart": "≤ 1.5× floor",
    "PostToolUse(Edit)": "≤ 2× floor",
    "PostToolUse(Bash echo)": "≤ 2× floor",
}


def _build(home: Path, project_dir: Path, size: int, corpus: Corpus) -> list[str]:
    """`size` records: half in the project the hooks run in, half in two other projects.
    Returns prompts about the hook project's records."""
    os.environ["AGENTCTX_HOME"] = str(home)
    project = resolve_project(project_dir)
    own = _vocabulary(corpus.rng, 150)
    others = [(resolve_project(home / f"other-{index}"), _vocabulary(corpus.rng, 150)) for index in range(2)]
    store = Store.open()
    try:
        with store.transaction():
            for _ in range(size // 2):
                store.add(project, corpus.record(own))
            for other, words in others:
                for _ in range(size // 4):
                    store.add(other, corpus.record(words))
        titles = [record.title for record in store.list_records(project, limit=200)]
        store.dirty.clear()  # the first SessionStart composes the digest, as in real use
    finally:
        store.close()
    return [corpus.prompt(own, corpus.rng.choice(titles) if corpus.rng.random() < 0.8 else None) for _ in range(400)]


def _time(command: list[str], stdin: bytes, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, env=env, check=False)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"{command} exited {done.returncode}: {done.stderr[-500:]!r}")
    return elapsed


def measure(size: int, runs: int, corpus: Corpus) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="agentctx-bench-hooks-") as scratch:
        root = Path(scratch)
        home, project_dir, temp = root / "home", root / "project", root / "tmp"
        project_dir.mkdir()
        temp.mkdir()
        (project_dir / "pyproject.toml").write_text('[project]\nname = "bench"\n', encoding="utf-8")
        started = time.perf_counter()
        prompts = _build(home, project_dir, size, corpus)
        build_s = time.perf_counter() - started
        env = {**os.environ, "AGENTCTX_HOME": str(home), "TMPDIR": str(temp), "AGENTCTX_HOOKS_NO_SPAWN": "1"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.pop("CLAUDE_PROJECT_DIR", None)
        common = {"transcript_path": str(project_dir / "t.jsonl"), "cwd": str(project_dir)}
        edit_path = str(project_dir / "src" / "module.py")

        def payload(event: str, index: int) -> bytes:
            data: dict[str, Any] = {**common, "session_id": str(uuid.uuid4()), "hook_event_name": event}
            if event == "UserPromptSubmit":
                data["prompt"] = prompts[index % len(prompts)]
            elif event == "SessionStart":
                data["source"] = "startup"
            elif event == "PostToolUse(Edit)":
                data.update(hook_event_name="PostToolUse", tool_name="Edit", tool_input={"file_path": edit_path})
                data["tool_response"] = {"filePath": edit_path}
            elif event == "PostToolUse(Bash echo)":
                data.update(hook_event_name="PostToolUse", tool_name="Bash", tool_input={"command": "echo hi"})
                data["tool_response"] = {"stdout": "hi", "stderr": "", "interrupted": False}
            return json.dumps(data).encode("utf-8")

        commands = {
            "floor": [sys.executable, "-c", "pass"],
            "UserPromptSubmit": [str(AGENTCTX), "hook", "UserPromptSubmit"],
            "SessionStart": [str(AGENTCTX), "hook", "SessionStart"],
            "PostToolUse(Edit)": [str(AGENTCTX), "hook", "PostToolUse"],
            "PostToolUse(Bash echo)": [str(AGENTCTX), "hook", "PostToolUse"],
        }
        for name, command in commands.items():  # warm-up: bytecode, page cache, the digest file
            for index in range(3):
                _time(command, payload(name, index), env)
        timings: dict[str, list[float]] = {name: [] for name in commands}
        for index in range(runs):
            for name, command in commands.items():
                timings[name].append(_time(command, payload(name, index), env))
        injected = sum(
            bool(
                subprocess.run(
                    commands["UserPromptSubmit"], input=payload("UserPromptSubmit", i), capture_output=True, env=env
                ).stdout.strip()
            )
            for i in range(20)
        )
    floor = median(timings["floor"])
    results = {name: round(median(values), 1) for name, values in timings.items()}
    return {
        "records": size,
        "runs": runs,
        "build_s": round(build_s, 1),
        "median_ms": results,
        "ratio_to_floor": {name: round(value / floor, 2) for name, value in results.items() if name != "floor"},
        "prompts_with_injection_of_20": injected,
    }


def importtime(size: int, corpus: Corpus) -> list[tuple[int, str]]:
    """`python -X importtime` of one UserPromptSubmit: the 15 largest cumulative imports (µs)."""
    with tempfile.TemporaryDirectory(prefix="agentctx-bench-hooks-") as scratch:
        root = Path(scratch)
        (root / "project").mkdir()
        prompts = _build(root / "home", root / "project", size, corpus)
        env = {**os.environ, "AGENTCTX_HOME": str(root / "home"), "AGENTCTX_HOOKS_NO_SPAWN": "1"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        stdin = json.dumps({"session_id": "x", "cwd": str(root / "project"), "prompt": prompts[0]}).encode()
        command = [sys.executable, "-X", "importtime", "-m", "agentctx", "hook", "UserPromptSubmit"]
        subprocess.run(command, input=stdin, capture_output=True, env=env, check=False)  # bytecode
        done = subprocess.run(command, input=stdin, capture_output=True, env=env, check=False)
    rows = []
    for line in done.stderr.decode("utf-8", errors="replace").splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:15]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated record counts")
    parser.add_argument("--runs", type=int, default=30, help="timed runs per command (interleaved)")
    parser.add_argument("--importtime", action="store_true", help="also print the largest imports of one prompt hook")
    parser.add_argument("--json", action="store_true", help="print only the JSON line")
    args = parser.parse_args(argv)
    corpus = Corpus(seed=3)
    results = []
    for size in (int(value) for value in args.sizes.split(",")):
        result = measure(size, args.runs, corpus)
        results.append(result)
        if not args.json:
            floor = result["median_ms"]["floor"]
            print(f"\n{size:,} records (store built in {result['build_s']} s), {args.runs} runs each, medians:")
            print(f"  {'python -c pass (floor)':<34} {floor:7.1f} ms")
            for name, value in result["median_ms"].items():
                if name != "floor":
                    ratio = result["ratio_to_floor"][name]
                    print(
                        f"  {'agentctx hook ' + name:<34} {value:7.1f} ms  {ratio:4.2f}× floor   target {TARGETS[name]}"
                    )
            print(f"  prompts that injected something: {result['prompts_with_injection_of_20']} of 20")
    if args.importtime and not args.json:
        print("\nlargest cumulative imports of one UserPromptSubmit (python -X importtime, µs):")
        for micros, name in importtime(10_000, corpus):
            print(f"  {micros:8d}  {name}")
    print(json.dumps({"hook_latency": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
