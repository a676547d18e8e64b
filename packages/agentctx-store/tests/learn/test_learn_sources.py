"""Where `learn` looks and what it makes of it: ADR folders found by content wherever they sit,
instruction files at any depth (dot-folders too), each file once, each rule once, a reason
for every file looked at, and `sync` right after `learn` finding nothing missing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agentctx_store import Store, drift, resolve_project
from agentctx_store.anchors import anchors_of
from agentctx_store.learn import find, learn

MADR = """---
status: accepted
date: 2024-0{n}-01
---
# Use tool {n}

## Context and Problem Statement

We need tool number {n} for the build.

## Considered Options

* Tool {n}
* Something else

## Decision Outcome

Chosen option: "Tool {n}", because it is fast.
"""
RULES = """# Agent guide

## Testing

- Run `uv run pytest tests/unit -q` before every commit.
- Never mock the database in integration tests; use the real SQLite file.

## Style

- Keep functions under 40 lines and name them for what they return.
"""


def _repo(tmp_path: Path, *, git: bool = False) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    if git and shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True, timeout=60)
    else:
        (root / ".git").mkdir()
    return root


def _write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("git", [False, True])
def test_an_adr_folder_under_any_name_and_instruction_files_in_dot_folders_are_found(tmp_path: Path, git: bool) -> None:
    root = _repo(tmp_path, git=git)
    for n in (1, 2, 3):
        _write(root, f"handbook/engineering/choices/{n:04d}-use-tool-{n}.md", MADR.format(n=n))
    _write(root, "handbook/engineering/choices/README.md", "# Choices\n\n- [1](0001-use-tool-1.md)\n")
    _write(root, "handbook/guides/01-setup.md", "# Setup\n\nInstall things.\n")
    _write(root, "handbook/guides/02-deploy.md", "# Deploy\n\nShip things.\n")
    _write(root, ".agents/AGENTS.md", RULES)
    _write(root, ".windsurf/rules/style.md", "- Prefer small pull requests over large ones.\n")
    _write(root, ".claude/rules/tests.md", "- Write the failing test first.\n")
    _write(root, ".github/instructions/py.instructions.md", "- Type every public function.\n")
    _write(root, "node_modules/pkg/AGENTS.md", RULES)
    found = find(root)
    kinds = {(source.rel, source.kind) for source in found.sources}
    assert kinds == {
        ("handbook/engineering/choices/0001-use-tool-1.md", "adr"),
        ("handbook/engineering/choices/0002-use-tool-2.md", "adr"),
        ("handbook/engineering/choices/0003-use-tool-3.md", "adr"),
        (".agents/AGENTS.md", "rules"),
        (".windsurf/rules/style.md", "rules"),
        (".claude/rules/tests.md", "rules"),
        (".github/instructions/py.instructions.md", "rules"),
    }
    reasons = "\n".join(found.reasons)
    assert "handbook/engineering/choices/0001-use-tool-1.md: taken, a decision record" in reasons
    assert ".agents/AGENTS.md: taken, instruction file" in reasons
    assert "handbook/guides/01-setup.md: not taken, it does not read as a decision record" in reasons


def test_a_git_work_tree_skips_ignored_files(tmp_path: Path) -> None:
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    root = _repo(tmp_path, git=True)
    _write(root, ".gitignore", "generated/\n")
    _write(root, "generated/AGENTS.md", RULES)
    _write(root, "pkg/AGENTS.md", RULES)
    assert [source.rel for source in find(root).sources] == ["pkg/AGENTS.md"]


def test_a_symlinked_instruction_file_and_a_repeated_rule_give_one_record_each(store: Store, tmp_path: Path) -> None:
    root = _repo(tmp_path)
    for folder in ("", "api/", "web/"):
        _write(root, f"{folder}AGENTS.md", RULES)
        (root / f"{folder}CLAUDE.md").symlink_to("AGENTS.md")
    project = resolve_project(root)
    plan = learn(store, project, root)
    records = store.list_records(project, limit=None)
    titles = [record.title for record in records]
    assert len(titles) == len(set(titles)) == 2, titles
    run = next(r for r in records if "uv run pytest" in r.body)
    assert sorted(anchor.path for anchor in anchors_of(store, project, run.record_id)) == [
        "AGENTS.md",
        "api/AGENTS.md",
        "web/AGENTS.md",
    ]
    assert any("CLAUDE.md: read once, as AGENTS.md" in line for line in plan.reasons)
    again = learn(store, project, root)
    assert again.count("add") + again.count("move") + again.count("retire") + again.count("supersede") == 0
    (root / "web" / "CLAUDE.md").unlink()
    (root / "web" / "AGENTS.md").unlink()
    third = learn(store, project, root)
    assert (third.count("add"), third.count("retire"), third.count("move")) == (0, 0, 2)
    assert len(anchors_of(store, project, run.record_id)) == 2


def test_sync_right_after_learn_finds_nothing_missing_and_never_writes_through_a_link(
    store: Store, tmp_path: Path
) -> None:
    root = _repo(tmp_path)
    _write(root, "AGENTS.md", RULES)
    (root / "CLAUDE.md").symlink_to("AGENTS.md")
    _write(root, "services/billing/AGENTS.md", "- Amounts are integers in cents, never floats.\n")
    for n in (1, 2):
        _write(root, f"docs/adr/{n:04d}-use-tool-{n}.md", MADR.format(n=n))
    project = resolve_project(root)
    learn(store, project, root)
    report = drift.analyse(store, project)
    learned_rules = [r.title for r in store.list_records(project, limit=None) if r.type != "decision"]
    assert learned_rules and not any(entry.title in learned_rules for entry in report.missing)
    assert {entry.title for entry in report.missing} == {"Use tool 1", "Use tool 2"}  # no instruction file says them
    assert report.target_note.startswith("CLAUDE.md is a link")
    assert report.proposed == {}
    named = drift.analyse(store, project, target="docs/CLAUDE.md")
    assert list(named.proposed) == [root / "docs" / "CLAUDE.md"]
    drift.apply(named)
    assert (root / "AGENTS.md").read_text(encoding="utf-8") == RULES
    assert drift.analyse(store, project, target="docs/CLAUDE.md").missing == []


def test_an_empty_or_malformed_adr_is_skipped_with_one_line_naming_it(store: Store, tmp_path: Path) -> None:
    root = _repo(tmp_path)
    for n in (1, 2):
        _write(root, f"docs/decisions/{n:04d}-use-tool-{n}.md", MADR.format(n=n))
    _write(root, "docs/decisions/0003-empty.md", "")
    _write(root, "docs/decisions/0004-garbled.md", "\x00\x01 not markdown at all }}}")
    project = resolve_project(root)
    plan = learn(store, project, root)
    assert [line for line in plan.skipped if "0003" in line or "0004" in line] == [
        "docs/decisions/0003-empty.md: skipped, an ADR with no decision record in it (empty or malformed)",
        "docs/decisions/0004-garbled.md: skipped, an ADR with no decision record in it (empty or malformed)",
    ]
    assert {r.title for r in store.list_records(project, limit=None)} == {"Use tool 1", "Use tool 2"}


def test_a_repository_config_naming_a_program_for_git_never_runs_it(tmp_path: Path) -> None:
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    root = _repo(tmp_path, git=True)
    marker = tmp_path / "ran"
    hook = tmp_path / "monitor.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
    hook.chmod(0o755)
    subprocess.run(["git", "-C", str(root), "config", "core.fsmonitor", str(hook)], check=True, timeout=60)
    _write(root, "AGENTS.md", RULES)
    subprocess.run(["git", "-C", str(root), "add", "AGENTS.md"], check=True, timeout=60, capture_output=True)
    marker.unlink(missing_ok=True)
    assert [source.rel for source in find(root).sources] == ["AGENTS.md"]
    assert not marker.exists()
