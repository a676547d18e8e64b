"""The built wheels install and run on their own (issue 2, item 1).

`uv build --all-packages` builds every distribution; the `agentctx` wheel is then installed into a
fresh `python -m venv` with `pip install --no-index --find-links dist agentctx`, so every agentctx
distribution provably comes from the wheels just built, never from a registry (on PyPI the name
`agentctx` belongs to an unrelated package).

Third-party dependencies (typer, mcp, anthropic, …) are not downloaded: a `.pth` line puts a
folder of links to this test environment's site-packages, minus every agentctx entry, on the fresh
venv's path, where pip finds them already installed. That keeps the test offline, and agentctx
itself can only come from the wheels.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTIONS = (
    "agentctx",
    "agentctx_store",
    "agentctx_hooks",
    "agentctx_mcp",
    "agentctx_extract",
    "agentctx_embed",
    "agentctx_ui",
)

pytestmark = pytest.mark.slow


def run(args: list[str | Path], **kwargs) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(arg) for arg in args], capture_output=True, text=True, timeout=600, check=False, **kwargs
    )
    assert result.returncode == 0, f"{args}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH")
    out = tmp_path_factory.mktemp("dist")
    run([uv, "build", "--all-packages", "-o", out], cwd=ROOT)
    return out


def third_party_only(farm: Path) -> Path:
    """A folder of links to this environment's site-packages entries minus every agentctx one, so
    pip sees the dependencies as installed but has to install agentctx itself from the wheels."""
    farm.mkdir()
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        if entry.name.lower().lstrip("_").startswith("agentctx") or entry.suffix == ".pth":
            continue
        (farm / entry.name).symlink_to(entry)
    return farm


def test_every_distribution_builds_a_wheel(dist: Path) -> None:
    wheels = {path.name.split("-")[0] for path in dist.glob("*.whl")}
    assert set(DISTRIBUTIONS) <= wheels, sorted(wheels)


def test_the_agentctx_wheel_installs_offline_and_runs(dist: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv])
    python = venv / "bin" / "python"
    purelib = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    (purelib / "zz_test_dependencies.pth").write_text(f"{third_party_only(tmp_path / 'deps')}\n", encoding="utf-8")

    run([python, "-m", "pip", "install", "--no-index", "--find-links", dist, "agentctx"], env=os.environ.copy())
    plain = run([python, "-m", "pip", "list", "--format=freeze", "--path", purelib]).stdout
    assert "agentctx-embed" not in plain and "agentctx-ui" not in plain  # extras stay optional

    modules = "agentctx, agentctx_store, agentctx_hooks, agentctx_mcp, agentctx_extract"
    located = run([python, "-c", f"import {modules}; print({modules.replace(', ', '.__file__, ')}.__file__)"])
    for path in located.stdout.split():
        assert Path(path).is_relative_to(venv), f"{path} was not installed from the wheel"
    help_text = run([venv / "bin" / "agentctx", "--help"]).stdout
    assert "record" in help_text and "search" in help_text

    project = tmp_path / "project"
    project.mkdir()
    env = os.environ | {"AGENTCTX_HOME": str(tmp_path / "data")}
    agentctx = venv / "bin" / "agentctx"
    run([agentctx, "record", "-t", "decision", "--title", "Wheel works", "--body", "Installed from dist.",
         "--project", project], env=env)  # fmt: skip
    found = run([agentctx, "search", "wheel installed", "--project", project, "--json"], env=env)
    assert '"title": "Wheel works"' in found.stdout


def test_the_all_extra_brings_embeddings_and_the_dashboard(dist: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv])
    python = venv / "bin" / "python"
    purelib = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    (purelib / "zz_test_dependencies.pth").write_text(f"{third_party_only(tmp_path / 'deps')}\n", encoding="utf-8")

    run([python, "-m", "pip", "install", "--no-index", "--find-links", dist, "agentctx[all]"], env=os.environ.copy())

    located = run(
        [python, "-c", "import agentctx_embed, agentctx_ui; print(agentctx_embed.__file__, agentctx_ui.__file__)"]
    )
    for path in located.stdout.split():
        assert Path(path).is_relative_to(venv), f"{path} was not installed from the wheel"
    env = os.environ | {"AGENTCTX_HOME": str(tmp_path / "data")}
    checks = json.loads(run([venv / "bin" / "agentctx", "doctor", "--json"], env=env).stdout)
    states = {check["name"]: check["state"] for check in checks}
    assert states["embeddings"] == "ok" and states["dashboard"] == "ok"
