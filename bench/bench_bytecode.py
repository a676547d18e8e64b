"""What compiled bytecode buys and costs (issue 10, item 12).

1. The prompt hook of an installed agentctx, with and without `.pyc` files: the wheels of
   `scripts/build-dist` go into a throwaway venv (`pip install --no-compile`, third-party
   dependencies linked from this environment), then `agentctx hook UserPromptSubmit` runs N times
   with `PYTHONDONTWRITEBYTECODE=1` and no `__pycache__`, and N times after `compileall` (what
   `uv tool install --compile-bytecode` does at install).
2. `uv run agentctx --help` twice in a row, with `UV_COMPILE_BYTECODE=1` (what the workspace's old
   `[tool.uv] compile-bytecode = true` did on every run) and without.

usage: .venv/bin/python bench/bench_bytecode.py [--runs 15] [--json]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAYLOAD = ROOT / "tests-e2e" / "fixtures" / "claude-code" / "hooks" / "UserPromptSubmit.json"
OURS = ("agentctx", "agentctx_store", "agentctx_hooks", "agentctx_mcp", "agentctx_extract")


def timed(args: list[str], *, env: dict[str, str], stdin: bytes = b"") -> float:
    start = time.perf_counter()
    subprocess.run(args, input=stdin, env=env, capture_output=True, check=True, cwd=ROOT)
    return time.perf_counter() - start


def installed_venv(work: Path) -> tuple[Path, Path]:
    """A venv with agentctx installed from freshly built wheels and no bytecode of ours."""
    dist = work / "dist"
    subprocess.run([str(ROOT / "scripts" / "build-dist"), str(dist)], check=True, capture_output=True)
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
    return venv, purelib


def hook_figures(runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        venv, purelib = installed_venv(work)
        agentctx = str(venv / "bin" / "agentctx")
        home = work / "home"
        env = os.environ | {"HOME": str(home), "AGENTCTX_HOME": str(home / ".agentctx"), "AGENTCTX_HOOKS_NO_SPAWN": "1"}
        project = work / "project"
        project.mkdir()
        subprocess.run([agentctx, "record", "-t", "decision", "--title", "Cache in Redis", "--body", "We cache in Redis.",
                        "-p", str(project)], env=env, check=True, capture_output=True)  # fmt: skip
        payload = json.loads(PAYLOAD.read_text(encoding="utf-8")) | {"cwd": str(project), "prompt": "how do we cache?"}
        stdin = json.dumps(payload).encode()
        for cache in purelib.glob("agentctx*/**/__pycache__"):
            shutil.rmtree(cache)
        cold_env = env | {"PYTHONDONTWRITEBYTECODE": "1"}
        without = [timed([agentctx, "hook", "UserPromptSubmit"], env=cold_env, stdin=stdin) for _ in range(runs)]
        for name in OURS:
            compileall.compile_dir(str(purelib / name), quiet=1)
        with_pyc = [timed([agentctx, "hook", "UserPromptSubmit"], env=env, stdin=stdin) for _ in range(runs)]
    return {
        "hook_ms_without_pyc": statistics.median(without) * 1000,
        "hook_ms_with_pyc": statistics.median(with_pyc) * 1000,
    }


def uv_run_figures(rounds: int) -> dict[str, list[float]]:
    uv = shutil.which("uv")
    if uv is None:
        return {}
    figures: dict[str, list[float]] = {"uv_run_s_compile_every_run": [], "uv_run_s_now": []}
    for _ in range(rounds):
        for key, extra in (("uv_run_s_compile_every_run", {"UV_COMPILE_BYTECODE": "1"}), ("uv_run_s_now", {})):
            env = {k: v for k, v in os.environ.items() if k != "UV_COMPILE_BYTECODE"} | extra
            figures[key] += [timed([uv, "run", "--frozen", "agentctx", "--help"], env=env) for _ in range(2)]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures: dict[str, object] = dict(hook_figures(args.runs))
    figures |= uv_run_figures(3)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"agentctx hook UserPromptSubmit, median of {args.runs}: "
          f"{figures['hook_ms_without_pyc']:.0f} ms without .pyc, {figures['hook_ms_with_pyc']:.0f} ms with")  # fmt: skip
    for key in ("uv_run_s_compile_every_run", "uv_run_s_now"):
        if key in figures:
            values = figures[key]
            assert isinstance(values, list)
            print(f"uv run agentctx --help ({key}): " + ", ".join(f"{value:.2f}" for value in values) + " s "
                  f"(median {statistics.median(values):.2f} s)")  # fmt: skip


if __name__ == "__main__":
    main()
