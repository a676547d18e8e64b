"""Import boundaries of the workspace (uv cannot enforce them, so this test does).

- `agentctx_store` imports the standard library only.
- Peers (hooks, mcp, extract, embed, ui) import `agentctx_store` and their own third-party
  dependencies, never each other, and never the CLI.
- The CLI (`agentctx`) imports peers and heavy libraries only inside functions, so
  `agentctx --help` stays light.
- Inside the store, the top-level modules are the fast core and every subfolder is a feature
  named as users know it (FEATURES); the core never imports a feature, features import the core.
- No module uses another module's private name (`from agentctx_store.retrieval import _x`);
  private helper modules (`_sql.py`) are imported only inside their own distribution.
- Rows of `records` are written (INSERT, UPDATE, DELETE) by `agentctx_store/store.py` only:
  everything else calls a `Store` method.
"""

from __future__ import annotations

import ast
import re
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
    "agentctx_model_minilm": "agentctx-model-minilm",
    "agentctx_remote": "agentctx-remote",
    "agentctx": "agentctx",
}
PEERS = {"agentctx_hooks", "agentctx_mcp", "agentctx_extract", "agentctx_embed", "agentctx_ui", "agentctx_remote"}
HEAVY = {
    "anthropic",
    "fastembed",
    "sqlite_vec",
    "apsw",
    "numpy",
    "fastapi",
    "uvicorn",
    "mcp",
    "onnxruntime",
    "httpx",
    "psycopg",
}


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
    stdlib = set(sys.stdlib_module_names) | SHA256_MODULES
    foreign = {name for name, _ in _imports(path) if name != "agentctx_store" and name not in stdlib}
    assert not foreign, f"{path.name} imports {sorted(foreign)}"


def test_the_model_distribution_is_data_and_the_standard_library() -> None:
    """`agentctx-model-minilm` carries the default model's files; its code only says where they are."""
    stdlib = set(sys.stdlib_module_names)
    for path in _sources("agentctx_model_minilm"):
        foreign = {name for name, _ in _imports(path) if name != "agentctx_model_minilm" and name not in stdlib}
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


# -- the fast core and the feature subpackages (docs/architecture.md) ------------------------
# Every hook is a fresh process, so the modules at the top of `agentctx_store/` and
# `agentctx_hooks/` import at module level only what costs (almost) nothing: what a bare
# interpreter has already loaded, C modules (`_sqlite3`, not the `sqlite3` package, which adds
# `datetime`: 1.5 ms), and other core modules. Anything else (json, re, pathlib, dataclasses, typing, contextlib,
# hashlib, subprocess, …) is imported inside the function that needs it, or the code lives in
# a subfolder: one of the store's feature subpackages (FEATURES) or `agentctx_hooks/ondemand/`,
# where ordinary Python is the norm. `if TYPE_CHECKING:` imports cost nothing and are not counted.
SHA256_MODULES = {"_sha2", "_sha256"}  # CPython's built-in SHA-256 (3.12+, 3.11)
CORE_STDLIB = {"__future__", "os", "sys", "time", "stat", "errno", "math", "_sqlite3", "_json", "_socket"}
CORE_EXCEPTIONS = {  # module -> what else it may import at module level, and why
    "agentctx_store/redact.py": {"re"},  # secret patterns are regular expressions; loaded only to write text
}
CORE_FOLDERS = {
    "agentctx_store": ROOT / "packages" / "agentctx-store" / "src" / "agentctx_store",
    "agentctx_hooks": ROOT / "packages" / "agentctx-hooks" / "src" / "agentctx_hooks",
}
# The store's features, each a subpackage named as users know it from `agentctx --help`: its
# main module is the package itself (`agentctx_store.digest`), its helpers sit beside it.
# `sharing` holds two features (`team` and `transfer`: export/import) and is empty itself.
FEATURES = {"consolidate", "digest", "drift", "learn", "logs", "sharing", "stale"}
SUBFOLDERS = {"agentctx_store": FEATURES, "agentctx_hooks": {"clients", "ondemand"}}
OFFLINE = {"agentctx_store": FEATURES, "agentctx_hooks": {"ondemand"}}  # what a core module loads only in a function


def _core_modules() -> list[tuple[str, Path]]:
    found = [(package, path) for package, folder in CORE_FOLDERS.items() for path in sorted(folder.glob("*.py"))]
    clients = CORE_FOLDERS["agentctx_hooks"] / "clients"
    return found + [("agentctx_hooks", path) for path in sorted(clients.glob("*.py"))]


def _module_level_imports(path: Path) -> Iterator[str]:
    """Dotted names imported at module level, `if TYPE_CHECKING:` blocks left out. `from a import b`
    gives `a` and `a.b` (`b` may be a subpackage: `from agentctx_store import digest`)."""

    def walk(body: list[ast.stmt]) -> Iterator[str]:
        for node in body:
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                walk_else = node.orelse
                yield from walk(walk_else)
            elif isinstance(node, ast.If):
                yield from walk(node.body)
                yield from walk(node.orelse)
            elif isinstance(node, ast.Try):
                for block in (node.body, *(handler.body for handler in node.handlers), node.orelse, node.finalbody):
                    yield from walk(block)
            elif isinstance(node, ast.Import):
                yield from (alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                yield node.module
                yield from (f"{node.module}.{alias.name}" for alias in node.names)

    yield from walk(ast.parse(path.read_text(encoding="utf-8")).body)


def _core_offenders(relative: str, path: Path) -> list[str]:
    """What the core module `relative` (`agentctx_store/x.py`) imports at module level against the rule."""
    allowed = CORE_STDLIB | SHA256_MODULES | CORE_EXCEPTIONS.get(relative, set())
    offenders: list[str] = []
    for name in _module_level_imports(path):
        parts = name.split(".")
        if parts[0] in OFFLINE:
            if len(parts) > 1 and parts[1] in OFFLINE[parts[0]]:
                offenders.append(name)  # the core never loads a feature subpackage at import
        elif parts[0] not in allowed:
            offenders.append(name)
    return sorted(set(offenders))


@pytest.mark.parametrize("package, path", _core_modules(), ids=lambda value: getattr(value, "name", value))
def test_core_modules_import_only_what_costs_nothing(package: str, path: Path) -> None:
    relative = f"{package}/{path.relative_to(CORE_FOLDERS[package]).as_posix()}"
    offenders = _core_offenders(relative, path)
    assert not offenders, f"{relative} imports {offenders} at module level (move it into the function that needs it)"


def test_the_core_rule_catches_a_heavy_import_and_a_feature_import(tmp_path: Path) -> None:
    """The rule above is not vacuous: a module-level `import json` and a feature subpackage, in
    either spelling, are found; `TYPE_CHECKING` imports, imports in functions and core modules are not."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from __future__ import annotations\nimport os\nimport json\nTYPE_CHECKING = False\n"
        "if TYPE_CHECKING:\n    from pathlib import Path\n    from agentctx_store.stale import scan\n"
        "from agentctx_store import digest, paths\nfrom agentctx_store.sharing.team_state import notice\n"
        "from agentctx_store.records import Record\ndef f():\n    import re\n    from agentctx_store import drift\n",
        encoding="utf-8",
    )
    assert _core_offenders("agentctx_store/sample.py", sample) == [
        "agentctx_store.digest",
        "agentctx_store.sharing.team_state",
        "agentctx_store.sharing.team_state.notice",
        "json",
    ]


def test_every_subfolder_is_a_named_feature_and_the_old_offline_folder_is_gone() -> None:
    """The store's subfolders are exactly FEATURES, each a package; no `upkeep/` (named after when
    its code ran) is left, and nothing imports it."""
    for package, folder in CORE_FOLDERS.items():
        found = {path.name for path in folder.iterdir() if path.is_dir() and path.name != "__pycache__"}
        assert found == SUBFOLDERS[package], f"{package}: {sorted(found ^ SUBFOLDERS[package])}"
        assert all((folder / name / "__init__.py").is_file() for name in found), package
    importers = [
        str(path.relative_to(ROOT))
        for import_name in PACKAGES
        for path in _sources(import_name)
        for name in _module_level_imports(path)
        if "upkeep" in name.split(".")
    ]
    assert not importers, importers


@pytest.mark.parametrize("path", sorted(CORE_FOLDERS["agentctx_store"].glob("*.py")), ids=lambda path: path.name)
def test_the_store_core_never_imports_a_feature(path: Path) -> None:
    """Features build on the store's core, never the other way round, not even inside a function:
    what a core module needs from a feature (anchors, reading settings) lives in the core."""
    features = [
        name
        for name in _all_imports(path)
        if name.split(".")[0] == "agentctx_store" and len(name.split(".")) > 1 and name.split(".")[1] in FEATURES
    ]
    assert not features, f"{path.name} imports {features}"


def _all_imports(path: Path) -> Iterator[str]:
    """Every dotted name a file imports, wherever the import is (`from a import b` gives `a.b` too)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


# -- private names stay in their module ------------------------------------------------------
# A name with a leading underscore is free to change with its module; a module that needs it
# from outside needs a public name for it (or the code moves). Private helper modules
# (`agentctx/cli/_config_file.py`) are importable by their siblings, not by other distributions.


def _source_file(dotted: str) -> Path | None:
    """The package folder or `.py` file of an `agentctx*` module in this workspace, if any."""
    top = dotted.split(".")[0]
    if top not in PACKAGES:
        return None
    base = ROOT / "packages" / PACKAGES[top] / "src" / Path(*dotted.split("."))
    return base if base.is_dir() else base.with_suffix(".py")


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_uses(path: Path, package: str) -> Iterator[str]:
    """Every private name of another module that `path` (a module of `package`) imports or
    reads as an attribute of a module it imported, as `module.name`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    modules: dict[str, str] = {}  # local name -> dotted module, for `import x` and submodule imports
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top in PACKAGES:
                    modules[alias.asname or top] = alias.name if alias.asname else top
                    if top != package and any(map(_is_private, alias.name.split("."))):
                        yield alias.name
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.split(".")[0] in PACKAGES
        ):
            foreign = node.module.split(".")[0] != package
            if foreign and any(map(_is_private, node.module.split("."))):
                yield node.module
            folder = _source_file(node.module)
            for alias in node.names:
                submodule = (
                    folder is not None
                    and folder.is_dir()
                    and ((folder / f"{alias.name}.py").is_file() or (folder / alias.name).is_dir())
                )
                if submodule:
                    modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                    if foreign and _is_private(alias.name):
                        yield f"{node.module}.{alias.name}"
                elif _is_private(alias.name):
                    yield f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            owner = _dotted(node.value, modules)
            if owner is not None and (found := _source_file(owner)) is not None and found.exists():
                yield f"{owner}.{node.attr}"


def _dotted(node: ast.expr, modules: dict[str, str]) -> str | None:
    """`a.b.c` as the dotted module name it reads, when `a` is a module imported here."""
    if isinstance(node, ast.Name):
        return modules.get(node.id)
    if isinstance(node, ast.Attribute):
        owner = _dotted(node.value, modules)
        return None if owner is None else f"{owner}.{node.attr}"
    return None


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_module_uses_another_modules_private_names(package: str) -> None:
    offenders = [
        (str(path.relative_to(ROOT)), name) for path in _sources(package) for name in _private_uses(path, package)
    ]
    assert not offenders, f"private names used across modules (give them a public name): {offenders}"


def test_the_private_name_rule_catches_each_kind_of_use(tmp_path: Path) -> None:
    """The rule above is not vacuous: a private function, a private module of another
    distribution and a private attribute of an imported module are found; a sibling's private
    helper module is not."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from agentctx_store.retrieval import _current_heads, search\n"
        "from agentctx_store import _frozen, retrieval\n"
        "from agentctx.cli import _config_file\n"
        "import agentctx_store.rows\n"
        "def f():\n    retrieval._filters\n    _config_file.write_text\n    agentctx_store.rows._private\n",
        encoding="utf-8",
    )
    assert sorted(_private_uses(sample, "agentctx")) == [
        "agentctx_store._frozen",
        "agentctx_store.retrieval._current_heads",
        "agentctx_store.retrieval._filters",
        "agentctx_store.rows._private",
    ]


# -- record writes go through Store ------------------------------------------------------------
# The SQL that writes rows of `records` lives in one module, so supersession, the time axes and
# the derived columns follow one set of rules; the FTS and vector tables (`records_fts`,
# `records_vec`) are not `records`.
RECORD_WRITES = re.compile(
    r"\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+records(?!\w)",
    re.IGNORECASE,
)
RECORD_WRITER = "agentctx_store/store.py"


def _record_writes(path: Path) -> list[str]:
    """The SQL in the string literals of a file (f-string parts included) that writes `records`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        match.group(0)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        for match in RECORD_WRITES.finditer(node.value)
    ]


def test_rows_of_records_are_written_by_one_module() -> None:
    writers = {
        path.relative_to(ROOT / "packages" / PACKAGES[package] / "src").as_posix(): writes
        for package in PACKAGES
        for path in _sources(package)
        if (writes := _record_writes(path))
    }
    assert set(writers) == {RECORD_WRITER}, f"record writes outside {RECORD_WRITER} (call a Store method): {writers}"


def test_the_record_write_rule_finds_each_form_of_write(tmp_path: Path) -> None:
    """Not vacuous: every form is found, over line breaks and in f-strings; the FTS and vector
    tables and reads are not."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        'a = "INSERT INTO records (id) VALUES (?)"\n'
        'b = f"UPDATE records SET {x} WHERE id = ?"\n'
        'c = """update\n    records set score = 1"""\n'
        'd = "INSERT OR IGNORE INTO records VALUES (1)"\n'
        'e = "DELETE FROM records WHERE id = ?"\n'
        "f = \"INSERT INTO records_fts(records_fts) VALUES ('rebuild')\"\n"
        'g = "UPDATE records_vec SET x = 1; SELECT id FROM records"\n',
        encoding="utf-8",
    )
    found = sorted(" ".join(write.split()).upper() for write in _record_writes(sample))
    assert (
        found
        == ["DELETE FROM RECORDS", "INSERT INTO RECORDS", "INSERT OR IGNORE INTO RECORDS"] + ["UPDATE RECORDS"] * 2
    )
