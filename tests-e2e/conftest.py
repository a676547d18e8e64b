"""Helpers of the end-to-end tests: run the installed `agentctx` entry point in a subprocess.

`agentctx hook <Event>` is what Claude Code runs, so these tests start the console script
beside this interpreter (`.venv/bin/agentctx`) with a payload on stdin and the isolated HOME,
AGENTCTX_HOME and TMPDIR the root conftest sets. Payloads come from `fixtures/claude-code/`,
captured from the real CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

AGENTCTX = Path(sys.executable).with_name("agentctx")
FIXTURES = Path(__file__).parent / "fixtures" / "claude-code"


@dataclass(frozen=True, kw_only=True)
class HookRun:
    code: int
    out: str
    err: str

    @property
    def output(self) -> dict[str, Any] | None:
        """The hook JSON, or None for empty stdout. Fails the test on anything else."""
        if not self.out.strip():
            return None
        parsed = json.loads(self.out)
        assert isinstance(parsed, dict) and set(parsed) == {"hookSpecificOutput"}, self.out[:300]
        return parsed

    @property
    def context(self) -> str:
        output = self.output
        return "" if output is None else output["hookSpecificOutput"]["additionalContext"]


RunHook = Callable[..., HookRun]


@pytest.fixture
def hook_env(isolated_home: Path) -> dict[str, str]:
    """The environment a hook process gets: the isolated dirs, background spawns off."""
    env = dict(os.environ)
    env["AGENTCTX_HOOKS_NO_SPAWN"] = "1"
    env.pop("CLAUDE_PROJECT_DIR", None)
    return env


@pytest.fixture
def run_hook(hook_env: dict[str, str]) -> RunHook:
    """`run_hook(event, payload_or_bytes, **env_overrides)` through the installed entry point."""

    def run(event: str, payload: dict[str, Any] | bytes, **env: str) -> HookRun:
        stdin = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
        done = subprocess.run(
            [str(AGENTCTX), "hook", event],
            input=stdin,
            capture_output=True,
            env={**hook_env, **env},
            timeout=120,
            check=False,
        )
        return HookRun(
            code=done.returncode,
            out=done.stdout.decode("utf-8", errors="replace"),
            err=done.stderr.decode("utf-8", errors="replace"),
        )

    return run


@pytest.fixture
def hooks_log(isolated_home: Path) -> Callable[[], str]:
    """The text of `$AGENTCTX_HOME/logs/hooks.log` ("" when absent)."""

    def read() -> str:
        path = Path(os.environ["AGENTCTX_HOME"]) / "logs" / "hooks.log"
        return path.read_text(encoding="utf-8") if path.exists() else ""

    return read


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every distribution's wheel and sdist, built once per test session by `scripts/build-dist`
    (what a user runs) into a temp folder; `--ours-only` skips the download of the third-party
    wheels (no network in tests: test_wheel.py puts the test environment's own on the path)."""
    import shutil

    if shutil.which("uv") is None:
        pytest.skip("uv is not on PATH")
    out = tmp_path_factory.mktemp("dist")
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run(
        [str(root / "scripts" / "build-dist"), "--ours-only", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, f"scripts/build-dist failed:\n{result.stdout}\n{result.stderr}"
    return out
