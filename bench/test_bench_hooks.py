"""Whole-process wall time of `agentctx hook <Event>` next to a bare `python -c pass` (issue 3).

Claude Code starts a new process for every hook, so what counts is spawn to exit: interpreter
start-up, imports, opening the store, the work, the JSON out. Each hook benchmark times the
installed `.venv/bin/agentctx hook <Event>` with `benchmark.pedantic` (fixed rounds, warm-up)
and, between its rounds, `python -c pass` of the same interpreter with the same stdin (the
floor): load hits both alike, and the ratio measured in the same test goes to `extra_info`
(`floor_median_ms`, `ratio_to_floor`). `test_floor` prints the floor in the same group, so
the table shows hook and floor side by side.

Targets: UserPromptSubmit median ≤ 60 ms and ≤ 2.5× the floor at 10K records, ≤ 120 ms at
100K; SessionStart ≤ 1.5× the floor; PostToolUse ≤ 2× the floor.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from _harness import FLOOR, SIZE_IDS, Floor, process_env, run_process

AGENTCTX = Path(sys.executable).with_name("agentctx")
HOOK_SIZES = (10_000, 100_000)
ROUNDS, WARMUP = 30, 3
EVENTS = {  # name -> (hook event argument, target)
    "UserPromptSubmit": ("UserPromptSubmit", "≤ 60 ms and ≤ 2.5× floor (10K); ≤ 120 ms (100K)"),
    "SessionStart": ("SessionStart", "≤ 1.5× floor"),
    "PostToolUse(Edit)": ("PostToolUse", "≤ 2× floor"),
    "PostToolUse(Bash echo)": ("PostToolUse", "≤ 2× floor"),
}
hook_size_param = pytest.mark.parametrize("size", HOOK_SIZES, ids=[SIZE_IDS[size] for size in HOOK_SIZES])


def payloads(name: str, project_dir: Path, prompts: dict[str, list[str]]) -> itertools.cycle[bytes]:
    """Stdin of successive runs: a new session each time (nothing deduplicated away); prompts
    rotate over the three classes (about a record, about nothing, with a pasted error)."""
    common = {"transcript_path": str(project_dir / "t.jsonl"), "cwd": str(project_dir)}
    edit_path = str(project_dir / "src" / "module.py")
    mixed = [prompt for trio in zip(*prompts.values(), strict=False) for prompt in trio]
    out = []
    for index in range(60):
        data: dict[str, Any] = {**common, "session_id": str(uuid.UUID(int=index + 1)), "hook_event_name": name}
        if name == "UserPromptSubmit":
            data["prompt"] = mixed[index % len(mixed)]
        elif name == "SessionStart":
            data["source"] = "startup"
        elif name == "PostToolUse(Edit)":
            data.update(hook_event_name="PostToolUse", tool_name="Edit", tool_input={"file_path": edit_path})
            data["tool_response"] = {"filePath": edit_path}
        elif name == "PostToolUse(Bash echo)":
            data.update(hook_event_name="PostToolUse", tool_name="Bash", tool_input={"command": "echo hi"})
            data["tool_response"] = {"stdout": "hi", "stderr": "", "interrupted": False}
        out.append(json.dumps(data).encode("utf-8"))
    return itertools.cycle(out)


@hook_size_param
def test_floor(benchmark, hook_site, bench_mode, size: int) -> None:
    """`python -c pass`: the cost of starting this interpreter at all."""
    site = hook_site(size)
    env = process_env(site.home, TMPDIR=str(site.root))
    benchmark.group = f"hooks {SIZE_IDS[size]}"
    benchmark.pedantic(
        run_process,
        args=(FLOOR, b"{}", env),
        rounds=bench_mode.scale(ROUNDS, 1),
        warmup_rounds=bench_mode.scale(WARMUP, 0),
    )


@hook_size_param
@pytest.mark.parametrize("name", list(EVENTS))
def test_hook(benchmark, hook_site, bench_mode, size: int, name: str) -> None:
    site = hook_site(size)
    env = process_env(site.home, TMPDIR=str(site.root))
    event, target = EVENTS[name]
    stdin = payloads(name, site.project_dir, site.prompts)
    before = os.environ.get("AGENTCTX_BENCH_BEFORE")  # another build's `agentctx`, run in the same rounds
    floor = Floor(env, also={"before": [before, "hook", event]} if before else None)
    outputs: list[bytes] = []

    def hook(payload: bytes) -> None:
        outputs.append(run_process([str(AGENTCTX), "hook", event], payload, env))

    benchmark.group = f"hooks {SIZE_IDS[size]}"
    benchmark.pedantic(
        hook,
        setup=floor.setup(lambda: (next(stdin),)),
        rounds=bench_mode.scale(ROUNDS, 1),
        warmup_rounds=bench_mode.scale(WARMUP, 0),
    )
    for output in outputs:  # whatever a hook prints is JSON Claude Code can read (or nothing)
        if output.strip():
            json.loads(output)
    benchmark.extra_info.update(records=size, target=target, floor_median_ms=round(floor.median_s * 1000, 2))
    if benchmark.enabled:
        median = benchmark.stats.stats.median
        benchmark.extra_info["ratio_to_floor"] = round(median / floor.median_s, 2)
        if before:
            benchmark.extra_info["before_median_ms"] = round(floor.median_of("before") * 1000, 2)
            benchmark.extra_info["before_ratio_to_floor"] = round(floor.median_of("before") / floor.median_s, 2)
    if name == "UserPromptSubmit":
        benchmark.extra_info["runs_that_injected"] = round(sum(1 for out in outputs if out.strip()) / len(outputs), 2)
