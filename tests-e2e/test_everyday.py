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
    record(top, "Tabs in the notes", "Indent the notes with tabs.")

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
