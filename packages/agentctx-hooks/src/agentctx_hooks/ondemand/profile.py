"""Project profile detection (the `profile` type, docs/contracts.md#record-types): stack, commands,
entry points.

Rule-based and read-only: it parses the manifests a repository already has (pyproject.toml,
package.json, Cargo.toml, go.mod, Makefile, …) with the standard library. `agentctx init` and
the CwdChanged hook both call `refresh`, which keeps one current `profile` record per key and
supersedes it only when the detected text changed.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from dataclasses import dataclass

from agentctx_store.jsontext import is_array, is_object

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentctx_store import Project, Store

MAX_ITEMS = 8
MAX_BODY_CHARS = 400


@dataclass(frozen=True, kw_only=True)
class ProfileEntry:
    key: str  # "stack" | "commands" | "entry_points"
    title: str
    body: str


def _read(root: str, name: str) -> str | None:
    """A manifest of the repository (`pyproject.toml`, `package.json`, …), read bounded and only
    inside its real tree (a FIFO or a link out of it is passed over)."""
    from agentctx_store.bounded import read_repo_text

    try:
        return read_repo_text(root, name, limit=512_000)
    except OSError:  # missing, unreadable, over 512 KB, not UTF-8, or refused
        return None


def _toml(root: str, name: str) -> dict[str, Any]:
    text = _read(root, name)
    if text is None:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _dep_names(specs: Any) -> list[str]:
    names: list[str] = []
    for spec in specs if is_array(specs) else []:
        if isinstance(spec, str) and (match := re.match(r"\s*([A-Za-z0-9_.-]+)", spec)):
            names.append(match.group(1).lower())
    return names


PY_FRAMEWORKS = ("django", "flask", "fastapi", "typer", "click", "pydantic", "sqlalchemy", "pytest", "numpy", "pandas")
JS_FRAMEWORKS = ("react", "next", "vue", "svelte", "express", "typescript", "vite", "jest", "vitest", "@angular/core")


def _python(root: str, stack: list[str], commands: list[str], entries: list[str]) -> None:
    data = _toml(root, "pyproject.toml")
    has_requirements = os.path.exists(os.path.join(root, "requirements.txt"))
    if not data and not has_requirements and not os.path.exists(os.path.join(root, "setup.py")):
        return
    project = data.get("project")
    project = project if is_object(project) else {}
    tool = data.get("tool")
    tool = tool if is_object(tool) else {}
    label = "Python"
    if isinstance(project.get("requires-python"), str):
        label += f" {project['requires-python']}"
    uv = tool.get("uv")
    if isinstance(uv, dict) and "workspace" in uv:
        label += " (uv workspace)"
    elif os.path.exists(os.path.join(root, "uv.lock")):
        label += " (uv)"
    elif "poetry" in tool:
        label += " (poetry)"
    deps = _dep_names(project.get("dependencies"))
    groups = data.get("dependency-groups", {})
    dev = [name for group in groups.values() for name in _dep_names(group)] if is_object(groups) else []
    notable = [name for name in PY_FRAMEWORKS if name in deps or name in dev]
    stack.append(label + (f": {', '.join(notable)}" if notable else ""))
    runner = "uv run " if os.path.exists(os.path.join(root, "uv.lock")) else ""
    if "pytest" in deps + dev or "pytest" in tool or os.path.isdir(os.path.join(root, "tests")):
        commands.append(f"test: {runner}pytest")
    if "ruff" in tool or "ruff" in dev:
        commands.append(f"lint: {runner}ruff check .")
    scripts = project.get("scripts", {})
    if is_object(scripts):
        entries.extend(f"{name} → {target}" for name, target in scripts.items() if isinstance(target, str))


def _node(root: str, stack: list[str], commands: list[str], entries: list[str]) -> None:
    text = _read(root, "package.json")
    if text is None:
        return
    try:
        data = json.loads(text)
    except ValueError:
        return
    if not is_object(data):
        return
    deps: dict[str, Any] = {}
    for field in ("dependencies", "devDependencies"):
        if isinstance(data.get(field), dict):
            deps.update(data[field])
    label = (
        "TypeScript" if "typescript" in deps or os.path.exists(os.path.join(root, "tsconfig.json")) else "JavaScript"
    )
    notable = [name for name in JS_FRAMEWORKS if name in deps and name != "typescript"]
    stack.append(f"{label} (Node)" + (f": {', '.join(notable)}" if notable else ""))
    manager = "npm"
    for lock, name in (("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn"), ("bun.lockb", "bun"), ("bun.lock", "bun")):
        if os.path.exists(os.path.join(root, lock)):
            manager = name
            break
    scripts = data.get("scripts")
    if is_object(scripts):
        for name in ("dev", "build", "test", "lint", "start", "typecheck", "format"):
            if isinstance(scripts.get(name), str):
                commands.append(f"{name}: {manager} run {name}")
    if isinstance(data.get("main"), str):
        entries.append(f"main → {data['main']}")
    binaries = data.get("bin")
    if isinstance(binaries, str):
        entries.append(f"bin → {binaries}")
    elif is_object(binaries):
        entries.extend(f"{name} → {target}" for name, target in binaries.items() if isinstance(target, str))


def _rust(root: str, stack: list[str], commands: list[str], entries: list[str]) -> None:
    data = _toml(root, "Cargo.toml")
    if not data:
        return
    package = data.get("package")
    package = package if is_object(package) else {}
    edition = f" (edition {package['edition']})" if isinstance(package.get("edition"), str) else ""
    stack.append(f"Rust{edition}" + (" workspace" if "workspace" in data else ""))
    commands.extend(["build: cargo build", "test: cargo test"])
    binaries = data.get("bin")
    for binary in binaries if is_array(binaries) else []:
        if is_object(binary) and isinstance(binary.get("name"), str):
            entries.append(f"{binary['name']} → {binary.get('path', 'src/main.rs')}")
    if os.path.exists(os.path.join(root, "src", "main.rs")) and not entries:
        entries.append("src/main.rs")


def _go(root: str, stack: list[str], commands: list[str], entries: list[str]) -> None:
    text = _read(root, "go.mod")
    if text is None:
        return
    module = re.search(r"^module\s+(\S+)", text, re.MULTILINE)
    version = re.search(r"^go\s+(\S+)", text, re.MULTILINE)
    stack.append(
        f"Go {version.group(1) if version else ''}".strip() + (f" (module {module.group(1)})" if module else "")
    )
    commands.extend(["build: go build ./...", "test: go test ./..."])
    if os.path.exists(os.path.join(root, "main.go")):
        entries.append("main.go")
    cmd_dir = os.path.join(root, "cmd")
    if os.path.isdir(cmd_dir):
        entries.extend(f"cmd/{name}" for name in sorted(os.listdir(cmd_dir))[:MAX_ITEMS])


def _others(root: str, stack: list[str], commands: list[str]) -> None:
    for marker, label in (
        ("Gemfile", "Ruby (bundler)"),
        ("pom.xml", "Java (Maven)"),
        ("build.gradle", "JVM (Gradle)"),
        ("build.gradle.kts", "Kotlin/JVM (Gradle)"),
        ("composer.json", "PHP (composer)"),
        ("mix.exs", "Elixir (mix)"),
        ("CMakeLists.txt", "C/C++ (CMake)"),
        ("Dockerfile", "Docker"),
    ):
        if os.path.exists(os.path.join(root, marker)):
            stack.append(label)
    makefile = _read(root, "Makefile") or _read(root, "makefile")
    if makefile:
        targets = re.findall(r"^([A-Za-z][A-Za-z0-9_-]*):(?!=)", makefile, re.MULTILINE)
        seen = list(dict.fromkeys(targets))[:MAX_ITEMS]
        commands.extend(f"{target}: make {target}" for target in seen)
    justfile = _read(root, "justfile") or _read(root, "Justfile")
    if justfile:
        recipes = re.findall(r"^([A-Za-z][A-Za-z0-9_-]*)\s*(?:[^:=\n]*)?:(?!=)", justfile, re.MULTILINE)
        commands.extend(f"{name}: just {name}" for name in list(dict.fromkeys(recipes))[:MAX_ITEMS])


def _join(items: list[str]) -> str:
    text = "; ".join(list(dict.fromkeys(items))[: MAX_ITEMS * 2])
    return text if len(text) <= MAX_BODY_CHARS else text[: MAX_BODY_CHARS - 1].rsplit(";", 1)[0] + "; …"


def _one_per_name(commands: list[str]) -> list[str]:
    """`name: command` items with one line per name: `lint: uv run ruff check .` and `lint: make
    lint` (a manifest and a Makefile naming the same task) become `lint: uv run ruff check . or make lint`."""
    ways: dict[str, list[str]] = {}
    for item in commands:
        name, _, command = item.partition(": ")
        known = ways.setdefault(name, [])
        if command not in known:
            known.append(command)
    return [f"{name}: {' or '.join(commands)}" for name, commands in ways.items()]


def detect(root: str) -> list[ProfileEntry]:
    """Profile entries for the project at `root` (empty when nothing is recognised)."""
    stack: list[str] = []
    commands: list[str] = []
    entries: list[str] = []
    _python(root, stack, commands, entries)
    _node(root, stack, commands, entries)
    _rust(root, stack, commands, entries)
    _go(root, stack, commands, entries)
    _others(root, stack, commands)
    found: list[ProfileEntry] = []
    if stack:
        found.append(ProfileEntry(key="stack", title="Stack", body=_join(stack)))
    if commands:
        found.append(ProfileEntry(key="commands", title="Commands", body=_join(_one_per_name(commands))))
    if entries:
        found.append(ProfileEntry(key="entry_points", title="Entry points", body=_join(entries)))
    return found


def refresh(store: Store, project: Project, *, source: str, session_id: str | None = None) -> list[str]:
    """Write the detected profile: add missing keys, supersede changed ones, keep equal ones.

    Returns the keys that were written.
    """
    from agentctx_store import NewRecord

    written: list[str] = []
    for entry in detect(str(project.root)):
        current = store.find_by_key(project, "profile", entry.key)
        if current is not None and current.body == entry.body:
            continue
        new = NewRecord(
            type="profile",
            title=entry.title,
            body=entry.body,
            confidence="explicit",
            source=source,
            session_id=session_id,
            key=entry.key,
        )
        store.add(project, new, supersedes=current.record_id if current is not None else None)
        written.append(entry.key)
    return written
