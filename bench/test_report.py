"""`report.py` turns a saved run into the README's tables (a plain test: it runs under
`--benchmark-disable`, and is skipped by `--benchmark-only`)."""

from __future__ import annotations

import json
from pathlib import Path

import report


def saved_run(path: Path) -> Path:
    def bench(group: str, name: str, median: float, **extra: object) -> dict[str, object]:
        stats = {"median": median, "iqr": median / 10, "min": median * 0.9, "rounds": 30}
        return {"group": group, "name": name, "stats": stats, "extra_info": extra}

    run = {
        "datetime": "2026-12-02T01:00:00.000000+00:00",
        "machine_info": {
            "cpu": {"count": 2, "brand_raw": "Test CPU"},
            "python_version": "3.11.9",
            "loadavg_start": [1.02, 0.5, 0.2],
        },
        "commit_info": {"id": "0123456789abcdef", "dirty": False},
        "benchmarks": [
            bench("hooks 10K", "test_floor[10K]", 0.009),
            bench("hooks 10K", "test_hook[UserPromptSubmit-10K]", 0.024, floor_median_ms=8.6, ratio_to_floor=2.81),
            bench(
                "quality adr-dev",
                "test_retrieval[adr-dev-production]",
                0.2,
                **{"recall@3": 0.879, "by_kind": {"keyword": {"n": 44}}},
            ),
            bench("mcp", "test_initialize", 0.5, per_tool_estimated_tokens={"ctx_search": 120, "ctx_get": 80}),
        ],
    }
    path.write_text(json.dumps(run), encoding="utf-8")
    return path


def test_tables_per_group_with_extra_info(tmp_path: Path) -> None:
    text = report.render(json.loads(saved_run(tmp_path / "run.json").read_text()), "run.json")
    assert "### hooks 10K" in text and "### quality adr-dev" in text
    assert "| `hook[UserPromptSubmit-10K]` | 24 | 2.40 | 21.6 | 30 | 8.60 | 2.81 |" in text
    assert "median (ms)" in text and "median (s)" not in text.split("### mcp")[0]
    assert "recall@3" in text and "by_kind" not in text  # nested breakdowns stay in the JSON
    assert "per_tool_estimated_tokens.ctx_search" in text
    assert "2 CPUs (Test CPU)" in text
    assert "1.0 / 0.5 / 0.2 at the start, not recorded at the end" in text
    assert "e+" not in text  # no exponent form in a table a person reads
    assert report.number(1112.25) == "1,112" and report.number(0.02413) == "0.0241" and report.number(90.61) == "90.6"


def test_write_replaces_only_the_marked_section(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# Bench\n\nintro\n\n{report.BEGIN}\nold table\n{report.END}\n\nafter\n", encoding="utf-8")
    assert report.main([str(saved_run(tmp_path / "run.json")), "--write", "--readme", str(readme)]) == 0
    text = readme.read_text(encoding="utf-8")
    assert "old table" not in text and "### hooks 10K" in text
    assert text.startswith("# Bench\n\nintro\n\n") and text.endswith("\n\nafter\n")
