"""Issue 16 as a pytest-benchmark test: the prompt hook at 10K records with 1K anchored against
the same store without anchors (`bench_anchors.py` builds both and times them interleaved).

    uv run --frozen pytest bench -k anchors -s

Prints the figures (also in the benchmark's `extra_info`). Asserts the target, a median rise of
at most 3 ms, on the in-process figure (the same hits composed with and without the check),
which isolates the check; the whole-process medians are printed next to it (on a shared
2-core machine they move by a few ms from run to run either way). Under `--benchmark-disable`
(CI) the body runs once on a small store with a few runs, and only checks that it works.
"""

from __future__ import annotations

from typing import Any

import bench_anchors


def test_prompt_hook_with_anchored_records(benchmark: Any, bench_mode: Any) -> None:
    records = bench_mode.scale(10_000, 1_000)
    anchored = bench_mode.scale(1_000, 100)
    runs = bench_mode.scale(40, 3)
    benchmark.group = "anchors 10K"
    result = benchmark.pedantic(bench_anchors.measure, args=(records, anchored, runs), rounds=1, iterations=1)
    print()
    print(bench_anchors.report(result))
    benchmark.extra_info.update(result)
    assert result["in_process_ms"]["prompts_with_hits"] > 0
    if not bench_mode.disabled:
        assert result["prompts_with_a_marked_record"] > 0  # the check ran and found the edited files
        assert result["in_process_ms"]["check_rise"] <= bench_anchors.TARGET_MS, result
