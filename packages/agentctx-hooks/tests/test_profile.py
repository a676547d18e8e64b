"""Profile detection from the manifests a repository has, and keyed refresh."""

from __future__ import annotations

import json
from pathlib import Path

from agentctx_store import Project, Store

from agentctx_hooks.ondemand.profile import detect, refresh


def _write(root: Path, name: str, text: str) -> None:
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text, encoding="utf-8")


def _by_key(root: Path) -> dict[str, str]:
    return {entry.key: entry.body for entry in detect(str(root))}


def test_python_uv_workspace(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname="x"\nrequires-python=">=3.11"\ndependencies=["typer>=0.15"]\n[project.scripts]\nx="x.__main__:main"\n[tool.uv.workspace]\nmembers=["packages/*"]\n[tool.ruff]\nline-length=120\n[dependency-groups]\ndev=["pytest>=8"]\n',
    )
    _write(tmp_path, "uv.lock", "")
    found = _by_key(tmp_path)
    assert found["stack"] == "Python >=3.11 (uv workspace): typer, pytest"
    assert found["commands"] == "test: uv run pytest; lint: uv run ruff check ."
    assert found["entry_points"] == "x → x.__main__:main"


def test_node_with_pnpm(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "package.json",
        json.dumps(
            {
                "main": "dist/index.js",
                "scripts": {"build": "tsc", "test": "vitest"},
                "devDependencies": {"typescript": "5", "vitest": "1"},
                "dependencies": {"react": "18"},
            }
        ),
    )
    _write(tmp_path, "pnpm-lock.yaml", "")
    found = _by_key(tmp_path)
    assert found["stack"] == "TypeScript (Node): react, vitest"
    assert found["commands"] == "build: pnpm run build; test: pnpm run test"
    assert found["entry_points"] == "main → dist/index.js"


def test_rust_go_and_makefile(tmp_path: Path) -> None:
    _write(
        tmp_path, "Cargo.toml", '[package]\nname="w"\nedition="2021"\n[[bin]]\nname="wctl"\npath="src/bin/wctl.rs"\n'
    )
    _write(tmp_path, "go.mod", "module github.com/acme/w\n\ngo 1.22\n")
    _write(tmp_path, "cmd/server/main.go", "package main")
    _write(tmp_path, "Makefile", "VAR := 1\n.PHONY: all\nall: build\nbuild:\n\tgo build\ntest: build\n\tgo test\n")
    found = _by_key(tmp_path)
    assert found["stack"] == "Rust (edition 2021); Go 1.22 (module github.com/acme/w)"
    # one entry per task name, its ways joined (issue 33: `lint` was listed twice)
    assert "test: cargo test or go test ./... or make test" in found["commands"]
    assert "build: cargo build or go build ./... or make build" in found["commands"]
    assert "VAR" not in found["commands"]
    names = [item.split(":", 1)[0] for item in found["commands"].split("; ")]
    assert len(names) == len(set(names)), found["commands"]
    assert found["entry_points"] == "wctl → src/bin/wctl.rs; cmd/server"


def test_unknown_or_broken_manifests_detect_nothing(tmp_path: Path) -> None:
    _write(tmp_path, "pyproject.toml", "this is [not toml")
    _write(tmp_path, "package.json", "{not json")
    assert detect(str(tmp_path)) == []
    assert detect(str(tmp_path / "missing")) == []


def test_refresh_adds_keeps_and_supersedes_by_key(store: Store, project: Project, project_dir: Path) -> None:
    _write(project_dir, "go.mod", "module github.com/acme/w\n\ngo 1.21\n")
    assert refresh(store, project, source="cli") == ["stack", "commands"]
    assert refresh(store, project, source="cli") == []  # nothing changed: nothing written
    _write(project_dir, "go.mod", "module github.com/acme/w\n\ngo 1.22\n")
    assert refresh(store, project, source="cli") == ["stack"]
    current = store.find_by_key(project, "profile", "stack")
    assert current is not None and "Go 1.22" in current.body
    history = store.history(project, current.record_id)
    assert [record.body.split(" ")[1] for record in history] == ["1.21", "1.22"]
    assert len(store.list_records(project, types=["profile"])) == 2


def test_a_manifest_that_is_a_fifo_or_links_out_is_passed_over(tmp_path: Path) -> None:
    """Detection reads the repository's manifests: a FIFO `pyproject.toml` would block the read,
    a `package.json` linked out of the tree would read another file. Both are passed over."""
    import os

    root = tmp_path / "repo"
    root.mkdir()
    os.mkfifo(root / "pyproject.toml")
    outside = tmp_path / "package.json"
    outside.write_text(json.dumps({"scripts": {"test": "outside-the-repo"}}), encoding="utf-8")
    (root / "package.json").symlink_to(outside)
    entries = detect(str(root))
    assert "outside-the-repo" not in json.dumps([entry.body for entry in entries])
