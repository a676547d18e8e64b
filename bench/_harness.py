"""What the bench files share besides fixtures: sizes, the shared folder, whole-process timing.

Imported by name (`import _harness`) from test modules; `conftest.py` puts bench/ on `sys.path`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
SIZES = (1_000, 10_000, 100_000)
SIZE_IDS = {1_000: "1K", 10_000: "10K", 100_000: "100K"}
SIZES_ENV = "AGENTCTX_BENCH_SIZES"
SHARED_ENV = "AGENTCTX_BENCH_SHARED"
size_param = pytest.mark.parametrize("size", SIZES, ids=[SIZE_IDS[size] for size in SIZES])


def shared_root() -> Path:
    """`$AGENTCTX_BENCH_SHARED`, else the `shared/` folder beside the clone."""
    return Path(os.environ.get(SHARED_ENV) or REPO_ROOT.parent / "shared").resolve()


@dataclass(frozen=True)
class BenchMode:
    disabled: bool  # --benchmark-disable: each body runs once, nothing is timed

    def scale(self, full: int, cheap: int) -> int:
        return cheap if self.disabled else full


# -- whole processes -------------------------------------------------------------------------

FLOOR = (sys.executable, "-c", "pass")


def process_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a measured process: the store in `home`, no background spawns, and
    bytecode writing allowed (an installed wheel has compiled bytecode; without it every run
    would recompile the workspace's modules)."""
    env = {**os.environ, "AGENTCTX_HOME": str(home), "AGENTCTX_HOOKS_NO_SPAWN": "1", **extra}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("CLAUDE_PROJECT_DIR", None)
    return env


def run_process(command: tuple[str, ...] | list[str], stdin: bytes, env: dict[str, str]) -> bytes:
    """Run to completion; a non-zero exit fails the benchmark (a broken hook is not fast)."""
    done = subprocess.run(command, input=stdin, capture_output=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{command} exited {done.returncode}: {done.stderr[-500:]!r}")
    return done.stdout


class Floor:
    """Times `python -c pass` (same interpreter, same stdin, same env) between the rounds of a
    `benchmark.pedantic` run: pass `floor.round(make_args)` as its `setup`, so floor and
    measured command alternate and machine load hits both alike. `median_s` afterwards.

    `also` names further commands run in the same place of every round with the same stdin
    (their session ids prefixed with the name, so no two share a session's dedup state): another
    build of the hook, for a before/after comparison in one run (`median_of(name)`)."""

    def __init__(self, env: dict[str, str], also: dict[str, list[str]] | None = None) -> None:
        self.env = env
        self.times: list[float] = []
        self.also = also or {}
        self.times_of: dict[str, list[float]] = {name: [] for name in self.also}

    def setup(self, make_args: Callable[[], tuple[bytes, ...]]) -> Callable[[], tuple[tuple[bytes, ...], dict]]:
        def setup() -> tuple[tuple[bytes, ...], dict]:
            args = make_args()
            started = time.perf_counter()
            run_process(FLOOR, args[0], self.env)
            self.times.append(time.perf_counter() - started)
            for name, command in self.also.items():
                stdin = args[0].replace(b'"session_id": "', f'"session_id": "{name}-'.encode())
                started = time.perf_counter()
                run_process(command, stdin, self.env)
                self.times_of[name].append(time.perf_counter() - started)
            return args, {}

        return setup

    @property
    def median_s(self) -> float:
        return _median(self.times)

    def median_of(self, name: str) -> float:
        return _median(self.times_of[name])


def _median(times: list[float]) -> float:
    ordered = sorted(times)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


# -- the embedding model ---------------------------------------------------------------------

REAL_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
REAL_MODEL_DIR = "models/all-MiniLM-L6-v2-onnx-int8"  # under the shared folder


@dataclass(frozen=True)
class EmbedModel:
    """A model folder that loads offline through `AGENTCTX_EMBED_MODEL(_DIR)`, as a user's would."""

    name: str
    folder: Path
    real: bool  # False: the tiny test model (its figures say nothing about a real model)

    def select(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("AGENTCTX_EMBED_MODEL", self.name)
        monkeypatch.setenv("AGENTCTX_EMBED_MODEL_DIR", str(self.folder))
