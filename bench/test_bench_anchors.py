"""Issue 16 as a pytest-benchmark test: the prompt hook at 10K records with 1K anchored against
the same store without anchors (see `bench_anchors.py`).

    uv run --frozen pytest bench/test_bench_anchors.py -s -p no:randomly

Prints the figures (also in the benchmark's `extra_info`). Asserts the target, a median rise of
at most 3 ms, on the in-process figure (the same hits composed with and without the check),
which isolates the check; the whole-process medians are printed next to it (on a shared
2-core machine they move by a few ms from run to run either way).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_anchors


def test_the_prompt_hook_with_1k_anchored_records(benchmark: Any) -> None:
    result = benchmark.pedantic(bench_anchors.measure, rounds=1, iterations=1)
    print()
    print(bench_anchors.report(result))
    benchmark.extra_info.update(result)
    assert result["prompts_with_a_marked_record"] > 0  # the check ran and found the edited files
    assert result["in_process_ms"]["check_rise"] <= bench_anchors.TARGET_MS, result
