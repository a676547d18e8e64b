"""The README's quick start is exactly two commands, and `.ci/run` runs the README's test command
(then the benchmarks, once each)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None, "the quick start has no bash block"
    return [line.split("#", 1)[0].strip() for line in block.group(1).splitlines() if line.split("#", 1)[0].strip()]


def test_readme_opens_with_two_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.index("## Quick start") < text.index("\n## ", text.index("## Quick start") + 1)
    assert text.split("\n## ")[1].startswith("Quick start")
    commands = quick_start_commands()
    assert commands == ["uv run --only-group demo agentctx demo", "uv run --frozen pytest"]


def test_ci_runs_the_readme_test_command_and_fails_on_failure() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    lines = [line.strip() for line in script.splitlines() if line.strip() and not line.strip().startswith("#")]
    assert "set -euo pipefail" in lines
    # the README's test command, then every benchmark body once (bench/README.md), nothing after
    assert lines[-2:] == [quick_start_commands()[1], "uv run --frozen pytest bench --benchmark-disable"]
    assert "uv sync --all-packages --all-extras --frozen" in lines
    assert "pip install" in script and "command -v uv" in script
