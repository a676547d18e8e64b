"""The everyday experience through the installed `agentctx` (issue 33, items 7 and 9): which
folder is the project outside git, and the small things a user reads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

AGENTCTX = Path(sys.executable).with_name("agentctx")


def agentctx(*args: str, cwd: Path, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(AGENTCTX), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False, env=os.environ.copy()
    )
    assert done.returncode == code, f"{args}: {done.stdout}\n{done.stderr}"
    return done


def record(cwd: Path, title: str, body: str, kind: str = "decision") -> str:
    done = agentctx("record", "-t", kind, "--title", title, "--body", body, "--json", cwd=cwd)
    return json.loads(done.stdout)["id"]


# -- item 7: outside git ------------------------------------------------------------------------


def test_outside_git_the_project_is_the_folder_until_a_marker_joins_its_subfolders(tmp_path: Path) -> None:
    top = tmp_path / "notgit"
    sub = top / "sub"
    sub.mkdir(parents=True)
    first = agentctx("record", "-t", "decision", "--title", "Tabs in the notes", "--body", "Indent with tabs.", cwd=top)
    assert f"Note: {top.resolve()} is not in a git repository, so it is a project of its own" in first.stdout
    second = agentctx("record", "-t", "decision", "--title", "Spaces in code", "--body", "Four spaces.", cwd=top)
    assert "Note:" not in second.stdout  # said once, at the project's first record

    assert "Tabs in the notes" not in agentctx("search", "tabs", cwd=sub).stdout  # each folder its own project
    status = agentctx("status", cwd=sub).stdout
    assert "not in a git repository, and no folder above holds .agentctx/: this folder alone is the project" in status
    assert "`mkdir .agentctx` here" in status
    assert json.loads(agentctx("status", "--json", cwd=sub).stdout)["project_rule"] == "folder"

    exported = agentctx("team", "export", cwd=top).stdout
    assert "Commit it with your code" not in exported
    assert "is not in a git repository: nothing commits this file for you" in exported
    assert f"{top / '.agentctx'}/ is new: from now on this folder is the project for its subfolders too" in exported
    assert "Tabs in the notes" in agentctx("search", "tabs", cwd=sub).stdout
    status = json.loads(agentctx("status", "--json", cwd=sub).stdout)
    assert status["project_rule"] == "marker" and status["root"] == str(top.resolve())
    assert "the nearest folder at or above this one holding .agentctx/" in agentctx("status", cwd=sub).stdout
    again = agentctx("team", "export", cwd=top).stdout
    assert "is new" not in again and "nothing commits this file" in again


def test_in_git_team_export_still_says_commit(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    record(repo, "Use ruff", "Lint with ruff.", kind="convention")
    assert "Commit it with your code" in agentctx("team", "export", cwd=repo).stdout
    assert json.loads(agentctx("status", "--json", cwd=repo / ".git").stdout)["project_rule"] == "git"


def test_the_data_dir_and_a_stranger_s_folder_are_no_project_markers(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    work = home / "work"
    (work / "sub").mkdir(parents=True)
    record(work, "Home is no project", "The data dir ~/.agentctx joins nothing.")
    assert (home / ".agentctx").is_dir()  # the data dir
    assert "Home is no project" not in agentctx("search", "project", cwd=work / "sub").stdout
    if os.geteuid() != 0:
        pytest.skip("making a folder another user's needs root")
    shared = tmp_path / "shared"
    (shared / "a").mkdir(parents=True)
    (shared / ".agentctx").mkdir()
    os.chown(shared / ".agentctx", 65534, 65534)
    record(shared, "Not joined", "A stranger's marker joins nothing.")
    assert "Not joined" not in agentctx("search", "joined", cwd=shared / "a").stdout


# -- item 9: the smaller things -----------------------------------------------------------------


def test_top_level_help_shows_each_summary_whole(tmp_path: Path) -> None:
    text = agentctx("--help", cwd=tmp_path).stdout
    commands = text.split("Commands:", 1)[1]
    summaries: list[str] = []
    for line in commands.splitlines():
        if line.startswith("  ") and not line.startswith("   "):  # a command's first line
            summaries.append(line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else "")
        elif line.strip() and summaries:  # a wrapped continuation
            summaries[-1] += " " + line.strip()
    assert len(summaries) > 20
    cut = [summary for summary in summaries if summary.endswith("...")]
    assert cut == []
    assert any(
        summary.startswith("Embed new records") and summary.endswith("SessionStart digest.") for summary in summaries
    )


def test_status_says_what_a_rung_means_and_how_to_move_up(tmp_path: Path) -> None:
    record(tmp_path, "Anything", "Something.")
    text = agentctx("status", cwd=tmp_path).stdout  # no ANTHROPIC_API_KEY here: rung 3
    assert "rung 1 is full service, each higher rung works with less" in text
    section = text.split("Degradation", 1)[1]
    assert "rung 3 no-llm: ANTHROPIC_API_KEY is not set" in section
    assert "what you lose: finished sessions are not turned into records" in section
    assert "to move up: export ANTHROPIC_API_KEY=..." in section
    data = json.loads(agentctx("status", "--json", cwd=tmp_path).stdout)["degradation"]
    assert any(rung["name"] == "no-llm" and rung["loses"] for rung in data)


def test_the_project_profile_lists_each_command_once(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "p"\n[dependency-groups]\ndev = ["ruff", "pytest"]\n', encoding="utf-8"
    )
    (project / "uv.lock").write_text("", encoding="utf-8")
    (project / "Makefile").write_text("lint:\n\truff check .\ntest:\n\tpytest\n", encoding="utf-8")
    out = agentctx("init", "--dry-run", "--dir", str(project), "--no-learn", cwd=project).stdout
    commands = next(line for line in out.splitlines() if line.startswith("profile commands: "))
    names = [item.split(":", 1)[0] for item in commands.removeprefix("profile commands: ").split("; ")]
    assert sorted(names) == ["lint", "test"], commands
    assert "lint: uv run ruff check . or make lint" in commands


def test_search_history_never_prints_a_weaker_match_above_a_stronger_one(tmp_path: Path) -> None:
    old = record(tmp_path, "Redis cache: Redis for every Redis lookup", "Redis, Redis and Redis for the cache.")
    agentctx("supersede", old, "--title", "Valkey replaces the cache store", "--body", "Valkey, not Redis.",
             cwd=tmp_path)  # fmt: skip
    record(tmp_path, "Sessions live in memory", "No Redis for sessions.")
    text = agentctx("search", "redis", "--history", cwd=tmp_path).stdout
    runs: list[list[int]] = [[]]
    for line in text.splitlines():
        if line.startswith("Superseded"):
            runs.append([])
        elif line.strip().endswith(("%", ")")) or "%  " in line:
            runs[-1].append(int(line.split("%", 1)[0]))
    assert all(run == sorted(run, reverse=True) and (not run or run[0] == 100) for run in runs), text
    assert len(runs) == 2 and runs[1], text  # the superseded match is under its own heading
    assert "superseded by" in text.split("Superseded", 1)[1]


def test_a_file_that_is_not_utf8_is_named_with_its_likely_encoding(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "CLAUDE.md").write_bytes("# Rules\n\n- Café au lait, always.\n".encode("latin-1"))
    (repo / "AGENTS.md").write_text("# Rules\n\n- Run the tests before pushing.\n", encoding="utf-8")
    out = agentctx("learn", "--dry-run", cwd=repo)
    text = out.stdout + out.stderr
    assert "CLAUDE.md: skipped, not UTF-8 text (byte 14 is 0xE9: Windows-1252 or Latin-1, it seems)" in text
    assert "UnicodeDecodeError" not in text


def test_team_export_names_the_preferences_it_leaves_out(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    preference = record(repo, "PR titles in the imperative", "Write PR titles in the imperative.", kind="preference")
    record(repo, "Use ruff", "Lint with ruff.", kind="convention")
    text = agentctx("team", "export", cwd=repo).stdout
    assert f"Left out 1 preference of this project ({preference})" in text
    assert "`agentctx edit ID --type convention`" in text
    assert "PR titles" not in (repo / ".agentctx" / "context.md").read_text(encoding="utf-8")
    agentctx("edit", preference, "--type", "convention", cwd=repo)
    again = agentctx("team", "export", cwd=repo).stdout
    assert "preference" not in again
    assert "PR titles in the imperative" in (repo / ".agentctx" / "context.md").read_text(encoding="utf-8")
