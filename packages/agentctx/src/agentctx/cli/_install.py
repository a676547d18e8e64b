"""The one install hint every message gives (`doctor`, `status`, `ui`, `models download`).

The hint is the command that changes *this* installation, found from how it was made: a `uv tool`
environment (its `uv-receipt.toml` names the checkout it came from), a pipx one (its
`pipx_metadata.json` names the wheel folder; the part is injected, since `pipx install` of an
installed package does nothing), the checkout's own environment, or a virtual environment pip
filled from the wheels. It keeps the extras already installed, so adding the dashboard does not
drop the embeddings.

Until agentctx is published on PyPI under its own name, the name `agentctx` there belongs to an
unrelated package: a hint never lets an index resolve it. It installs from a checkout's folder,
or with `--no-index` from the folder `scripts/build-dist` fills (docs/install.md).
"""

from __future__ import annotations

import importlib.util
import json
import shlex
import sys
import tomllib
from pathlib import Path

from agentctx_store.jsontext import is_array, is_object, strings

# Where `uv tool install` takes agentctx from: the CLI's package in a checkout.
INSTALL_SOURCE = "./packages/agentctx"
NOT_PYPI = "the `agentctx` on PyPI is another project"
# extra -> the module it installs
EXTRAS = {"embeddings": "agentctx_embed", "ui": "agentctx_ui"}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _extras(extra: str | None) -> str:
    """`[embeddings]`, `[ui]`, `[all]` or "": `extra` and every extra already installed."""
    wanted = {name for name, module in EXTRAS.items() if _installed(module)}
    if extra:
        wanted.add(extra)
    if wanted >= set(EXTRAS):
        return "[all]"
    return f"[{','.join(sorted(wanted))}]" if wanted else ""


def _small_file(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > 1_000_000:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _uv_tool_source(prefix: Path) -> str | None:
    """The checkout folder `uv tool install` took agentctx from, per the tool's receipt."""
    text = _small_file(prefix / "uv-receipt.toml")
    if text is None:
        return None
    try:
        tool = tomllib.loads(text).get("tool")
    except tomllib.TOMLDecodeError:
        return ""
    requirements = tool.get("requirements") if is_object(tool) else None
    for requirement in requirements if is_array(requirements) else []:
        if is_object(requirement) and requirement.get("name") == "agentctx":
            directory = requirement.get("directory")
            return directory if isinstance(directory, str) else ""
    return ""


def _pipx_wheel_folder(prefix: Path) -> str | None:
    """The `--find-links` folder of a pipx install made with `--no-index` (pipx records it made
    absolute), "" for a pipx install without one, None when this is not a pipx environment."""
    text = _small_file(prefix / "pipx_metadata.json")
    if text is None:
        return None
    try:
        metadata = json.loads(text)
    except ValueError:
        return ""
    main = metadata.get("main_package") if is_object(metadata) else None
    args = strings(main.get("pip_args")) if is_object(main) else []
    if "--no-index" not in args:
        return ""
    for flag, value in zip(args, args[1:], strict=False):
        if flag in ("--find-links", "-f"):
            return value
    return ""


def _checkout_root() -> Path | None:
    """The checkout this module runs from (an editable install in the workspace), or None."""
    here = Path(__file__).resolve()
    root = here.parents[5] if len(here.parents) > 5 else None
    if root is None or here.parents[3] != root / "packages" / "agentctx":
        return None
    return root if (root / "uv.lock").is_file() and (root / "packages" / "agentctx-store").is_dir() else None


def install_command(extra: str | None = None) -> str:
    """The command that adds `extra` (e.g. `ui`, `embeddings`) to this installation, or
    reinstalls it whole (`extra` None), in backticks, with where to run it."""
    extras = _extras(extra)
    prefix = Path(sys.prefix)
    source = _uv_tool_source(prefix)
    if source:
        return f"`uv tool install --reinstall --compile-bytecode {shlex.quote(source + extras)}`"
    if source is not None:  # a uv tool without a recorded folder
        return (
            f"`uv tool install --reinstall --compile-bytecode '{INSTALL_SOURCE}{extras}'` in your agentctx checkout "
            f"({NOT_PYPI})"
        )
    folder = _pipx_wheel_folder(prefix)
    if folder is not None:
        if extra is None:  # pipx reinstalls from what it recorded (the same --no-index and wheel folder)
            return "`pipx reinstall agentctx`"
        links = shlex.quote(folder) if folder else "dist"
        where = "" if folder else " in the folder holding the dist/ of scripts/build-dist"
        part = "agentctx-" + EXTRAS[extra].removeprefix("agentctx_") if extra in EXTRAS else "agentctx"
        return f'`pipx inject --pip-args="--no-index --find-links {links}" agentctx {part}`{where} ({NOT_PYPI})'
    root = _checkout_root()
    if root is not None:
        return f"`uv sync --all-packages --all-extras --frozen` in {root} (the checkout this agentctx runs from)"
    python = shlex.quote(sys.executable)
    return (
        f"`{python} -m pip install --no-index --find-links dist 'agentctx{extras}'` in the folder holding the dist/ "
        f"of scripts/build-dist, or `uv tool install --compile-bytecode '{INSTALL_SOURCE}{extras}'` in an agentctx "
        f"checkout ({NOT_PYPI})"
    )
