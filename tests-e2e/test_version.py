"""One version for the nine distributions, written once: the repository's `VERSION` file.

Each `packages/*/pyproject.toml` declares its version dynamic and reads it from `../../VERSION`
(hatchling with the uv-dynamic-versioning plugin), and every pin between the distributions is
the template `=={{ version }}`, so a release changes one line. These tests fail when a
pyproject writes a version or an internal pin of its own, and when what is installed disagrees
with the file (`test_wheel.py` checks the built wheels the same way).
"""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import distribution
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
VERSION = (ROOT / "VERSION").read_text(encoding="utf-8").strip()
DISTRIBUTIONS = sorted(path.parent.name for path in (ROOT / "packages").glob("*/pyproject.toml"))
INTERNAL = re.compile(r"^(agentctx(?:-[a-z]+)*)\b")


def _pyproject(name: str) -> dict[str, Any]:
    return tomllib.loads((ROOT / "packages" / name / "pyproject.toml").read_text(encoding="utf-8"))


def _requirements(config: dict[str, Any]) -> list[str]:
    """Every requirement a pyproject can state: static ones and the metadata hook's templates."""
    project = config["project"]
    hook = config.get("tool", {}).get("hatch", {}).get("metadata", {}).get("hooks", {}).get("uv-dynamic-versioning", {})
    found = list(project.get("dependencies", [])) + list(hook.get("dependencies", []))
    for extra in (project.get("optional-dependencies", {}), hook.get("optional-dependencies", {})):
        found += [requirement for requirements in extra.values() for requirement in requirements]
    return found


def test_the_version_file_holds_one_version() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", VERSION), VERSION
    assert (ROOT / "VERSION").read_text(encoding="utf-8") == f"{VERSION}\n"
    assert len(DISTRIBUTIONS) == 9, DISTRIBUTIONS


def test_every_distribution_reads_its_version_from_the_version_file() -> None:
    for name in DISTRIBUTIONS:
        config = _pyproject(name)
        assert "version" not in config["project"], f"{name} writes its own version"
        assert "version" in config["project"]["dynamic"], name
        assert config["tool"]["hatch"]["version"] == {"source": "uv-dynamic-versioning"}, name
        source = config["tool"]["uv-dynamic-versioning"]["from-file"]["source"]
        assert (ROOT / "packages" / name / source).resolve() == ROOT / "VERSION", name
        # without this key uv would keep an editable install's old version after a bump
        assert {"file": source} in config["tool"]["uv"]["cache-keys"], name
        assert "uv-dynamic-versioning" in config["build-system"]["requires"], name


def test_every_internal_pin_is_the_version_template() -> None:
    pins = 0
    for name in DISTRIBUTIONS:
        config = _pyproject(name)
        for requirement in _requirements(config):
            internal = INTERNAL.match(requirement)
            if internal:
                assert requirement == f"{internal.group(1)}=={{{{ version }}}}", f"{name}: {requirement}"
                pins += 1
        if any(INTERNAL.match(requirement) for requirement in _requirements(config)):
            assert "dependencies" in config["project"]["dynamic"], name
            assert "dependencies" not in config["project"], f"{name}: static dependencies beside the hook's"
    # six peers on the store, the embeddings on the bundled model; the CLI on four peers and six extra pins
    assert pins == 6 + 1 + 4 + 6


def test_the_installed_distributions_carry_the_version_and_pins() -> None:
    import agentctx
    import agentctx_ui

    for name in DISTRIBUTIONS:
        installed = distribution(name)
        assert installed.version == VERSION, name
        for requirement in installed.requires or []:
            internal = INTERNAL.match(requirement)
            if internal:
                assert re.match(rf"{internal.group(1)}=={re.escape(VERSION)}(;|$)", requirement.replace(" ", ""))
    assert agentctx.__version__ == VERSION
    assert agentctx_ui.__version__ == VERSION
