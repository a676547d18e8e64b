"""Import boundaries of the workspace (uv cannot enforce them, so this test does).

- `agentctx_store` imports the standard library only.
- Peers (hooks, mcp, extract, embed, ui) import `agentctx_store` and their own third-party
  dependencies, never each other, and never the CLI.
- The CLI (`agentctx`) imports peers and heavy libraries only inside functions, so
  `agentctx --help` stays light.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "agentctx_store": "agentctx-store",
    "agentctx_hooks": "agentctx-hooks",
    "agentctx_mcp": "agentctx-mcp",
    "agentctx_extract": "agentctx-extract",
    "agentctx_embed": "agentctx-embed",
    "agentctx_ui": "agentctx-ui",
    "agentctx": "agentctx",
}
PEERS = {"agentctx_hooks", "agentctx_mcp", "agentctx_extract", "agentctx_embed", "agentctx_ui"}
HEAVY = {"anthropic", "fastembed", "sqlite_vec", "apsw", "numpy", "fastapi", "uvicorn", "mcp", "onnxruntime", "httpx"}


def _imports(path: Path) -> Iterator[tuple[str, bool]]:
    """(top-level module name, imported at module level?) for every import in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    module_level = {id(node) for node in tree.body}
    for parent in ast.walk(tree):
        for node in ast.iter_child_nodes(parent):
            if isinstance(node, ast.If | ast.Try):  # `if TYPE_CHECKING:` / try-imports at top level
                module_level.update(id(child) for child in ast.walk(node) if parent is tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0], id(node) in module_level
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module.split(".")[0], id(node) in module_level


def _sources(import_name: str) -> list[Path]:
    return sorted((ROOT / "packages" / PACKAGES[import_name] / "src" / import_name).rglob("*.py"))


@pytest.mark.parametrize("path", _sources("agentctx_store"), ids=lambda path: path.name)
def test_store_imports_only_the_standard_library(path: Path) -> None:
    foreign = {name for name, _ in _imports(path) if name != "agentctx_store" and name not in sys.stdlib_module_names}
    assert not foreign, f"{path.name} imports {sorted(foreign)}"


@pytest.mark.parametrize("package", sorted(PEERS))
def test_peers_never_import_each_other_or_the_cli(package: str) -> None:
    offenders = [
        (path.name, name)
        for path in _sources(package)
        for name, _ in _imports(path)
        if name != package and (name in PEERS or name == "agentctx")
    ]
    assert not offenders, f"{package} imports {offenders}"


def test_cli_imports_heavy_modules_and_peers_only_inside_functions() -> None:
    offenders = [
        (str(path.relative_to(ROOT)), name)
        for path in _sources("agentctx")
        for name, top_level in _imports(path)
        if top_level and (name in HEAVY or name in PEERS)
    ]
    assert not offenders, f"module-level heavy imports in the CLI: {offenders}"
