"""The clients agentctx supports are listed once, in the registry (`agentctx_store/clients.py`).

Every other module reads the names from there, so a new client is an entry there (and its setup
beside it), never a name added to a tuple in six packages. This test reads every source module
for a list of two or more client names written out: a tuple, list, set or dict of them, an
`x == "a" or x == "b"` chain, or a string that enumerates them ("claude, codex, gemini",
"claude|codex"). Docstrings may name clients in prose; code may name one client (its own).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentctx_store import clients

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = ROOT / "packages" / "agentctx-store" / "src" / "agentctx_store" / "clients.py"
NAMES = frozenset(clients.names())
_NAME = "|".join(sorted(NAMES))
ENUMERATION = re.compile(rf"\b({_NAME})\b\s*(?:,|\||/|\bor\b|\band\b)\s*\b({_NAME})\b")


def _sources() -> list[Path]:
    found = sorted(ROOT.glob("packages/*/src/**/*.py"))
    assert REGISTRY in found
    return [path for path in found if path != REGISTRY]


def _docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _named(nodes: list[ast.expr | None]) -> set[str]:
    return {node.value for node in nodes if isinstance(node, ast.Constant) and node.value in NAMES}


def client_lists(source: str) -> Iterator[tuple[int, str]]:
    """(line, what) for every list of client names written out in `source`."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        named: set[str] = set()
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            named = _named(list(node.elts))
        elif isinstance(node, ast.Dict):
            named = _named(list(node.keys))
        elif isinstance(node, ast.BoolOp):
            named = _named(
                [part for value in node.values if isinstance(value, ast.Compare) for part in value.comparators]
            )
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            match = ENUMERATION.search(node.value)
            named = {match.group(1), match.group(2)} if match else set()
        if len(named) >= 2:
            yield node.lineno, ast.unparse(node)[:80]


@pytest.mark.parametrize("path", _sources(), ids=lambda path: str(path.relative_to(ROOT / "packages")))
def test_client_names_are_listed_only_in_the_registry(path: Path) -> None:
    found = list(client_lists(path.read_text(encoding="utf-8")))
    assert not found, (
        f"{path.relative_to(ROOT)} lists client names {found}: read them from `agentctx_store.clients` "
        "(`names()`, `CLIENTS`, `others()`)"
    )


def test_the_check_finds_a_list_written_out() -> None:
    """Not vacuous: each way of writing the list is found; prose and a single name are not."""
    caught = [
        'SUPPORTED = ("claude", "codex", "gemini")',
        'if name in ["codex", "gemini"]: pass',
        'LABELS = {"claude": "Claude Code", "codex": "Codex CLI"}',
        'ok = client == "codex" or client == "gemini"',
        'message = f"unknown client {name!r}; supported: claude, codex, gemini"',
        'USAGE = "agentctx hook [--client claude|codex|gemini]"',
    ]
    for source in caught:
        assert list(client_lists(source)), source
    allowed = [
        '"""Claude Code, Codex CLI and Gemini CLI: claude, codex, gemini."""',
        'client = "claude"',
        'if client == "codex": pass',
        'names = ", ".join(clients.names())',
    ]
    for source in allowed:
        assert not list(client_lists(source)), source
