"""What compiled bytecode buys and costs (issue 10, item 12).

1. The prompt hook of an installed agentctx, with and without `.pyc` files: the wheels
   (`uv build --all-packages --wheel`, as `scripts/build-dist` without the sdists) go into a throwaway venv (`pip install --no-compile`, third-party
   dependencies linked from this environment), then `agentctx hook UserPromptSubmit` runs with
   `PYTHONDONTWRITEBYTECODE=1` and no `__pycache__` (`test_hook[without-pyc]`), and after
   `compileall` (`test_hook[with-pyc]`, what `uv tool install --compile-bytecode` does).
2. `uv run --frozen agentctx --help` with `UV_COMPILE_BYTECODE=1` (what the workspace's old
   `[tool.uv] compile-bytecode = true` did on every run) and without.
"""

from __future__ import annotations

import compileall
import itertools
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from _harness import REPO_ROOT, run_process

PAYLOAD = REPO_ROOT / "tests-e2e" / "fixtures" / "claude-code" / "hooks" / "UserPromptSubmit.json"
OURS = ("agentctx", "agentctx_store", "agentctx_hooks", "agentctx_mcp", "agentctx_extract")


@dataclass(frozen=True)
class Installed:
    agentctx: str
    purelib: Path
    env: dict[str, str]
    stdin: bytes


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """agentctx installed from freshly built wheels into a venv, no bytecode of ours, one record stored."""
    work = tmp_path_factory.mktemp("bytecode")
    dist = work / "dist"
    # the wheels `scripts/build-dist` makes, without its sdists (half the build time)
    subprocess.run(
        ["uv", "build", "--all-packages", "--wheel", "--out-dir", str(dist), "--quiet"], cwd=REPO_ROOT, check=True
    )
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())  # fmt: skip
    deps = work / "deps"
    deps.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.lower().lstrip("_").startswith("agentctx") and entry.suffix != ".pth":
            (deps / entry.name).symlink_to(entry)
    (purelib / "zz_bench_dependencies.pth").write_text(f"{deps}\n", encoding="utf-8")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-compile", "--no-deps", "--no-index",
                    "--find-links", str(dist), *(name.replace("_", "-") for name in OURS)], check=True)  # fmt: skip
    agentctx = str(venv / "bin" / "agentctx")
    home = work / "home"
    env = os.environ | {"HOME": str(home), "AGENTCTX_HOME": str(home / ".agentctx"), "AGENTCTX_HOOKS_NO_SPAWN": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    project = work / "project"
    project.mkdir()
    subprocess.run([agentctx, "record", "-t", "decision", "--title", "Cache in Redis", "--body", "We cache in Redis.",
                    "-p", str(project)], env=env, check=True, capture_output=True)  # fmt: skip
    payload = json.loads(PAYLOAD.read_text(encoding="utf-8")) | {"cwd": str(project), "prompt": "how do we cache?"}
    yield Installed(agentctx, purelib, env, json.dumps(payload).encode())


@pytest.mark.parametrize("bytecode", ["without-pyc", "with-pyc"])
def test_hook(benchmark, installed: Installed, bench_mode, bytecode: str) -> None:
    if bytecode == "without-pyc":
        for cache in installed.purelib.glob("agentctx*/**/__pycache__"):
            shutil.rmtree(cache)
        env = installed.env | {"PYTHONDONTWRITEBYTECODE": "1"}
    else:
        for name in OURS:
            compileall.compile_dir(str(installed.purelib / name), quiet=1)
        env = installed.env
    benchmark.group = "bytecode: installed hook"
    sessions = itertools.count()

    def fresh_session() -> tuple[tuple[list[str], bytes, dict[str, str]], dict]:
        """A new session each round: the record is injected every time, never deduplicated away."""
        payload = json.loads(installed.stdin) | {"session_id": f"bench-{bytecode}-{next(sessions)}"}
        return ([installed.agentctx, "hook", "UserPromptSubmit"], json.dumps(payload).encode(), env), {}

    out = benchmark.pedantic(run_process, setup=fresh_session, rounds=bench_mode.scale(15, 1))
    assert b"Cache in Redis" in out, "the hook must inject the stored decision"
    if bytecode == "without-pyc":
        assert not list(installed.purelib.glob("agentctx*/**/__pycache__")), "no .pyc may appear in this mode"


@pytest.mark.parametrize("compiling", ["compile-every-run", "now"])
def test_uv_run_help(benchmark, bench_mode, compiling: str) -> None:
    uv = shutil.which("uv")
    assert uv is not None, "uv must be on PATH (it runs this suite)"
    env = {key: value for key, value in os.environ.items() if key != "UV_COMPILE_BYTECODE"}
    if compiling == "compile-every-run":
        env["UV_COMPILE_BYTECODE"] = "1"
    benchmark.group = "bytecode: uv run agentctx --help"
    benchmark.pedantic(
        lambda: subprocess.run(
            [uv, "run", "--frozen", "agentctx", "--help"], env=env, cwd=REPO_ROOT, check=True, capture_output=True
        ),
        rounds=bench_mode.scale(6, 1),
    )
