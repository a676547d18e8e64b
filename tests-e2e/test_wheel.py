"""The built wheels install and run on their own (issue 2, item 1).

`scripts/build-dist` (`uv build --all-packages`) builds every distribution; the `agentctx` wheel is then installed into a
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
import re
import shlex
import subprocess
import sys
import sysconfig
import time
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# every workspace member, as its wheel spells it (a new member is picked up without an edit here)
DISTRIBUTIONS = tuple(
    sorted(
        tomllib.loads(path.read_text(encoding="utf-8"))["project"]["name"].replace("-", "_")
        for path in ROOT.glob("packages/*/pyproject.toml")
    )
)
# The model's distribution carries the model's own licence (NOTICE says where it came from).
APACHE = {"agentctx_model_minilm"}


def run(args: list[str | Path], **kwargs) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(arg) for arg in args], capture_output=True, text=True, timeout=600, check=False, **kwargs
    )
    assert result.returncode == 0, f"{args}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return result


# `dist` (tests-e2e/conftest.py): the wheels and sdists `scripts/build-dist` makes, built once per session.


def third_party_only(farm: Path) -> Path:
    """A folder of links to this environment's site-packages entries minus every agentctx one, so
    pip sees the dependencies as installed but has to install agentctx itself from the wheels."""
    farm.mkdir(exist_ok=True)
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        if entry.name.lower().lstrip("_").startswith("agentctx") or entry.suffix == ".pth":
            continue
        if (farm / entry.name).exists():  # a folder that already has it (pip in a venv) keeps its own
            continue
        (farm / entry.name).symlink_to(entry)
    return farm


# -- issue 33, item 1: the install commands the docs print, as printed --------------------------

DOCS = (ROOT / "README.md", ROOT / "docs" / "install.md")
INSTALLER = re.compile(
    r"^(uv tool install|uv pip install|uvx|pipx install|pipx inject|pip3? install|\S*python3? -m pip install)\b"
)


def documented_commands() -> list[str]:
    """Every install command in the README and docs/install.md (fenced bash lines and inline
    code), exactly as printed, comments and all, each once."""
    found: list[str] = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        found += [line.strip() for block in re.findall(r"```bash\n(.*?)```", text, re.S) for line in block.splitlines()]
        found += re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    return list(dict.fromkeys(command for command in found if INSTALLER.match(command)))


def documented(prefix: str) -> str:
    """The one documented command that starts with `prefix`."""
    matches = {command for command in documented_commands() if command.startswith(prefix)}
    assert len(matches) == 1, f"{prefix!r}: {sorted(matches)}"
    return matches.pop()


def resolves_agentctx_from_an_index(command: str) -> bool:
    """Whether an installer would look `agentctx` (bare, or with extras) up in an index."""
    words = shlex.split(command.split(" #", 1)[0])
    named = any(re.fullmatch(r"agentctx(\[[\w,]+\])?", word) for word in words)
    return named and not any("--no-index" in word for word in words)


def hint_command(fix: str) -> str:
    """The command in an install hint: its first backticked span."""
    match = re.match(r"`([^`]+)`", fix)
    assert match, f"the hint does not start with a command: {fix}"
    return match.group(1)


def shell(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`command` through bash, as a user types it."""
    return run(["bash", "-c", command], cwd=cwd, env=env)


def doctor(agentctx: Path, env: dict[str, str]) -> dict[str, dict[str, str]]:
    checks = json.loads(run([agentctx, "doctor", "--json"], env=env).stdout)
    return {check["name"]: check for check in checks}


def test_no_documented_install_takes_agentctx_from_an_index() -> None:
    commands = documented_commands()
    assert any(command.startswith("pipx install") for command in commands), commands
    assert any(command.startswith("pip install") for command in commands), commands
    assert any(command.startswith("uv tool install") for command in commands), commands
    assert [command for command in commands if resolves_agentctx_from_an_index(command)] == []
    for command in commands:  # a uv tool install names the checkout's folder, never a registry name
        if command.startswith("uv tool install"):
            assert "./packages/agentctx" in command, command


@pytest.mark.slow
def test_every_distribution_builds_a_wheel(dist: Path) -> None:
    wheels = {path.name.split("-")[0] for path in dist.glob("*.whl")}
    assert set(DISTRIBUTIONS) <= wheels, sorted(wheels)


@pytest.mark.slow
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

    # doctor's hint for pip in a virtual environment, run as printed where dist/ is: adds the dashboard
    work = tmp_path / "work"
    work.mkdir()
    (work / "dist").symlink_to(dist)
    fix = doctor(agentctx, env)["dashboard"]["fix"]
    assert "in the folder holding the dist/" in fix and not resolves_agentctx_from_an_index(hint_command(fix))
    shell(hint_command(fix), work, env)
    checks = doctor(agentctx, env)
    assert checks["dashboard"]["state"] == "ok" and checks["embeddings"]["state"] == "warn"
    # a uv tool environment's hint names the checkout folder its receipt records, and keeps the dashboard
    (venv / "uv-receipt.toml").write_text(
        f'[tool]\nrequirements = [{{ name = "agentctx", directory = "{ROOT / "packages" / "agentctx"}" }}]\n',
        encoding="utf-8",
    )
    fix = doctor(agentctx, env)["embeddings"]["fix"]
    source = shlex.quote(f"{ROOT / 'packages' / 'agentctx'}[all]")
    assert hint_command(fix) == f"uv tool install --reinstall --compile-bytecode {source}"


@pytest.mark.slow
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


# -- issue 10: what `scripts/build-dist` makes, installed the way a user does -------------------

INTERNAL = {name.replace("_", "-") for name in DISTRIBUTIONS}
VERSION = (Path(__file__).resolve().parents[1] / "VERSION").read_text(encoding="utf-8").strip()  # all nine's


def wheel_metadata(wheel: Path) -> tuple[dict[str, list[str]], str, str, str]:
    """(header fields, long description, entry_points.txt, the licence text) of a wheel."""
    import zipfile
    from email.parser import Parser

    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        meta = next(name for name in names if name.endswith(".dist-info/METADATA"))
        message = Parser().parsestr(archive.read(meta).decode("utf-8"))
        entry = next((name for name in names if name.endswith(".dist-info/entry_points.txt")), None)
        entry_points = archive.read(entry).decode("utf-8") if entry else ""
        licence = next((name for name in names if name.endswith(".dist-info/licenses/LICENSE")), None)
        licence_text = archive.read(licence).decode("utf-8") if licence else ""
    fields: dict[str, list[str]] = {}
    for key, value in message.items():
        fields.setdefault(key, []).append(value)
    return fields, message.get_payload(), entry_points, licence_text


@pytest.mark.slow
def test_build_dist_makes_every_wheel_and_sdist_with_true_metadata(dist: Path) -> None:
    wheels = {path.name.split("-")[0]: path for path in dist.glob("*.whl")}
    sdists = {path.name.rsplit("-", 1)[0]: path for path in dist.glob("*.tar.gz")}
    assert set(wheels) == set(DISTRIBUTIONS), sorted(wheels)
    assert set(sdists) == set(DISTRIBUTIONS), sorted(sdists)
    versions = set()
    for name, wheel in wheels.items():
        fields, description, entry_points, licence = wheel_metadata(wheel)
        versions.add(fields["Version"][0])
        if name in APACHE:
            assert fields["License-Expression"] == ["Apache-2.0"], name
            assert fields["License-File"] == ["LICENSE", "NOTICE"] and "Apache License" in licence, name
        else:
            assert fields["License-Expression"] == ["MIT"], name
            assert fields["License-File"] == ["LICENSE"] and licence.startswith("MIT License"), name
        assert fields["Requires-Python"] == [">=3.11"], name
        assert fields["Description-Content-Type"] == ["text/markdown"], name
        assert description.strip(), f"{name} has no readme"
        for requirement in fields.get("Requires-Dist", []):
            dependency = re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]
            if dependency in INTERNAL:  # an internal dependency is pinned to exactly this version
                pinned = rf"^{re.escape(dependency)}=={re.escape(VERSION)}(;|$)"
                assert re.match(pinned, requirement.replace(" ", "")), requirement
        if name == "agentctx":
            assert "[console_scripts]\nagentctx = agentctx.__main__:main" in entry_points
            assert sorted(fields["Provides-Extra"]) == ["all", "embeddings", "remote", "ui"]
            extras: dict[str, set[str]] = {}
            for requirement in fields["Requires-Dist"]:
                if "extra ==" in requirement:
                    target, extra = re.match(rf"([\w-]+)=={re.escape(VERSION)}; extra == '(\w+)'", requirement).groups()
                    extras.setdefault(extra, set()).add(target)
            assert extras == {
                "embeddings": {"agentctx-embed"},
                "ui": {"agentctx-ui"},
                "remote": {"agentctx-remote"},
                "all": {"agentctx-embed", "agentctx-ui", "agentctx-remote"},
            }
        else:
            assert entry_points == "", f"{name} should not install a command"
    assert versions == {VERSION}


def offline_env(tmp_path: Path, deps: Path) -> dict[str, str]:
    """No index, the isolated HOME, and the third-party dependencies already on the path."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    path = os.pathsep.join(entry for entry in os.environ.get("PATH", "").split(os.pathsep) if "claude" not in entry)
    return os.environ | {
        "HOME": str(home),
        "AGENTCTX_HOME": str(home / ".agentctx"),
        "PYTHONPATH": str(deps),
        "PIP_NO_INDEX": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PATH": path,
        "USE_EMOJI": "0",
    }


def check_init(agentctx: Path, env: dict[str, str], project: Path) -> None:
    """`agentctx init` registers this installation's own `agentctx` as the hook command."""
    run([agentctx, "init", "--claude-version", "2.1.0", "--dir", project], env=env)
    settings = json.loads((Path(env["HOME"]) / ".claude" / "settings.json").read_text(encoding="utf-8"))
    commands = [hook["command"] for groups in settings["hooks"].values() for group in groups for hook in group["hooks"]]
    scripts = {Path(command.rsplit(" hook ", 1)[0]).resolve() for command in commands}
    assert scripts == {agentctx.resolve()}, commands  # pipx's bin link resolves to its venv's script


@pytest.mark.slow
def test_pipx_installs_agentctx_from_dist_offline(dist: Path, tmp_path: Path) -> None:
    env = offline_env(tmp_path, tmp_path / "unused")
    pipx_home = tmp_path / "pipx"
    env |= {
        "PIPX_HOME": str(pipx_home),
        "PIPX_BIN_DIR": str(tmp_path / "bin"),
        "PIPX_MAN_DIR": str(tmp_path / "man"),
        "PIPX_DISABLE_SHARED_LIBS_AUTO_UPGRADE": "1",  # offline: keep the pip bundled with Python
    }
    # pipx drops PYTHONPATH, but every pipx venv sees its shared-libraries venv: made here (as pipx
    # would, with the bundled pip) with the third-party dependencies linked in, so pip finds them
    # installed and takes only the agentctx distributions from dist/.
    shared = pipx_home / "shared"
    run([sys.executable, "-m", "venv", shared], env=env)
    shared_site = Path(
        run(
            [shared / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
        ).stdout.strip()
    )
    third_party_only(shared_site)
    # the documented command, as printed, where `dist` is the folder scripts/build-dist filled
    work = tmp_path / "work"
    work.mkdir()
    (work / "dist").symlink_to(dist)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # pipx from the dev group
    env["PIPX_DEFAULT_BACKEND"] = "pip"
    shell(documented("pipx install"), work, env)
    agentctx = tmp_path / "bin" / "agentctx"
    assert "record" in run([agentctx, "--help"], env=env).stdout
    venv = tmp_path / "pipx" / "venvs" / "agentctx"
    located = run([venv / "bin" / "python", "-c", "import agentctx_store; print(agentctx_store.__file__)"], env=env)
    assert Path(located.stdout.strip()).is_relative_to(venv)
    project = tmp_path / "project"
    project.mkdir()
    check_init(agentctx, env, project)
    run([agentctx, "record", "-t", "decision", "--title", "Pipx works", "--body", "Installed by pipx.", "-p", project],
        env=env)  # fmt: skip
    assert "Pipx works" in run([agentctx, "search", "pipx", "-p", project], env=env).stdout
    # the dashboard is an extra: without it, `agentctx ui` names the command that adds it
    ui = subprocess.run([agentctx, "ui", "--no-open", "-p", project], capture_output=True, text=True, env=env,
                        timeout=120, check=False)  # fmt: skip
    fix = doctor(agentctx, env)["dashboard"]["fix"]
    assert ui.returncode == 1 and fix in ui.stderr, ui.stderr
    # doctor's hint on this pipx install, as printed: pipx injects the part (a second `pipx install`
    # says "already installed" and does nothing) from the same dist/ (pipx recorded it), from any folder
    assert hint_command(fix).startswith("pipx inject ") and str(dist) in fix
    shell(hint_command(fix), tmp_path, env)
    assert doctor(agentctx, env)["dashboard"]["state"] == "ok"
    assert "Pipx works" in run([agentctx, "search", "pipx", "-p", project], env=env).stdout


@pytest.mark.slow
def test_pip_installs_embeddings_and_ui_from_dist_offline(dist: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv])
    env = offline_env(tmp_path, third_party_only(tmp_path / "deps"))
    # the README's command, as printed, in the activated virtual environment beside dist/
    env |= {"VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{env['PATH']}"}
    work = tmp_path / "work"
    work.mkdir()
    (work / "dist").symlink_to(dist)
    shell(documented("pip install --no-index"), work, env)
    agentctx = venv / "bin" / "agentctx"
    located = run([venv / "bin" / "python", "-c", "import agentctx_embed, agentctx_ui; "
                   "print(agentctx_embed.__file__, agentctx_ui.__file__)"], env=env)  # fmt: skip
    assert all(Path(path).is_relative_to(venv) for path in located.stdout.split())
    # the default embedding model came with the extra and embeds offline (HF_HUB_OFFLINE: no hub)
    model = json.loads(run([agentctx, "models", "--json"], env=env).stdout)
    assert model["bundled"] and model["measured"] and Path(model["folder"]).is_relative_to(venv), model
    embedded = run([venv / "bin" / "python", "-c", "from agentctx_embed.models import choose_model, load; "
                    "from agentctx_store import config; e = load(choose_model(config.load()), allow_download=False); "
                    "print(e.name, e.passages(['offline']).shape)"], env=env | {"HF_HUB_OFFLINE": "1"})  # fmt: skip
    assert embedded.stdout.split() == ["sentence-transformers/all-MiniLM-L6-v2", "(1,", "384)"], embedded.stdout
    assert not any((Path(env["AGENTCTX_HOME"]) / "models").rglob("*.onnx"))  # nothing downloaded or cached
    project = tmp_path / "project"
    project.mkdir()
    check_init(agentctx, env, project)

    import signal
    import urllib.request

    server = subprocess.Popen([agentctx, "ui", "--no-open", "--port", "0", "-p", project], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
    try:
        line = server.stdout.readline() if server.stdout else ""
        match = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert match, line + (server.stderr.read() if server.poll() is not None and server.stderr else "")
        for _ in range(100):
            try:
                with urllib.request.urlopen(match.group(0), timeout=5) as response:
                    page = response.read().decode("utf-8")
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError("the dashboard never answered")
        assert "<html" in page.lower() and "agentctx" in page
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=30)  # waits and closes the pipes


# -- issue 33, item 1: the documented `uv tool install`s, run as printed, offline -------------------


PLAIN_UV_TOOL = "uv tool install --compile-bytecode ./packages/agentctx"


# The environment as it was before the root conftest gave each test its own HOME: where uv keeps
# the cache `.ci/run` filled (asked under a test's HOME, uv names an empty one).
USER_ENV = dict(os.environ)


def uv_tool_env(tmp_path: Path) -> dict[str, str]:
    """Offline uv with its tool folders and HOME in `tmp_path`; uv's cache and Python installs stay
    where they are (HOME would move them): `.ci/run` fills that cache for these installs."""
    located = {name: run(["uv", name, "dir"], env=USER_ENV).stdout.strip() for name in ("cache", "python")}
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return os.environ | {
        "HOME": str(home),
        "AGENTCTX_HOME": str(home / ".agentctx"),
        "UV_OFFLINE": "1",
        "UV_TOOL_DIR": str(tmp_path / "tools"),
        "UV_TOOL_BIN_DIR": str(tmp_path / "bin"),
        "UV_CACHE_DIR": located["cache"],
        "UV_PYTHON_INSTALL_DIR": located["python"],
        "USE_EMOJI": "0",
    }


@pytest.mark.slow
def test_the_documented_uv_tool_installs_work_as_printed(tmp_path: Path) -> None:
    env = uv_tool_env(tmp_path)
    # the README and docs/install.md print it three times, differing only in their comments
    plain = [command for command in documented_commands() if command.startswith("uv tool install --compile-bytecode")]
    assert {command.split(" #", 1)[0].strip() for command in plain} == {PLAIN_UV_TOOL} and len(plain) == 3, plain
    agentctx = tmp_path / "bin" / "agentctx"
    tool = tmp_path / "tools" / "agentctx"
    shell(plain[-1], ROOT, env)  # as printed, comment and all, from the checkout's root
    assert run([agentctx, "--version"], env=env).stdout.strip().endswith(VERSION)
    located = run([tool / "bin" / "python", "-c", "import agentctx_store; print(agentctx_store.__file__)"], env=env)
    assert Path(located.stdout.strip()).is_relative_to(tool), located.stdout  # installed, not the checkout's
    project = tmp_path / "project"
    project.mkdir()
    run([agentctx, "record", "-t", "decision", "--title", "Uv tool works", "--body", "Installed by uv tool.",
         "-p", project], env=env)  # fmt: skip
    assert "Uv tool works" in run([agentctx, "search", "uv tool", "-p", project], env=env).stdout
    checks = doctor(agentctx, env)
    assert checks["embeddings"]["state"] == "warn", checks["embeddings"]

    # the README's optional part, as printed, then doctor's hint on this uv tool (it names the
    # checkout by its absolute path, so it works from any folder), as printed
    shell(documented("uv tool install --reinstall"), ROOT, env)
    model = json.loads(run([agentctx, "models", "--json"], env=env).stdout)
    assert model["bundled"] and Path(model["folder"]).is_relative_to(tool), model
    assert "Uv tool works" in run([agentctx, "search", "uv tool", "-p", project], env=env).stdout
    fix = doctor(agentctx, env)["dashboard"]["fix"]
    source = shlex.quote(f"{ROOT / 'packages' / 'agentctx'}[all]")
    assert hint_command(fix) == f"uv tool install --reinstall --compile-bytecode {source}", fix
    shell(hint_command(fix), tmp_path, env)
    checks = doctor(agentctx, env)
    assert checks["embeddings"]["state"] == "ok" and checks["dashboard"]["state"] == "ok", checks
