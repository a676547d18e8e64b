"""Project namespacing (docs/contracts.md#namespaces): every form of one remote is one project;
no remote → the path."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentctx_store.projects import hash_id, normalize_remote, resolve_project

SAME_REPOSITORY = [
    "git@github.com:Owner/Repo.git",
    "git@github.com:owner/repo",
    "github.com:owner/repo.git",
    "ssh://git@github.com/owner/repo.git",
    "ssh://git@github.com:22/owner/repo.git",
    "ssh://git@github.com:2222/Owner/Repo",
    "https://github.com/owner/repo",
    "https://github.com/owner/repo.git",
    "https://github.com/owner/repo/",
    "https://github.com/owner/repo.git/",
    "https://user:s3cr3t-token@github.com/owner/repo.git",
    "https://x-access-token:ghp_abc123@github.com/Owner/Repo",
    "http://github.com:443/owner/repo",
    "git://github.com/owner/repo.git",
    "HTTPS://GITHUB.COM/OWNER/REPO.GIT",
    "  https://github.com/owner/repo.git\n",
    "https://github.com//owner//repo",
]


@pytest.mark.parametrize("url", SAME_REPOSITORY)
def test_every_form_of_a_remote_url_normalises_to_host_and_path(url: str) -> None:
    assert normalize_remote(url) == "github.com/owner/repo"


@pytest.mark.parametrize(
    "url", ["https://user:s3cr3t-token@github.com/owner/repo.git", "https://x-access-token:ghp_abc123@github.com/o/r"]
)
def test_credentials_never_survive_normalisation(url: str) -> None:
    normalised = normalize_remote(url)
    assert "s3cr3t" not in normalised and "ghp_abc123" not in normalised and "@" not in normalised


def test_different_repositories_or_hosts_stay_apart() -> None:
    assert normalize_remote("git@github.com:owner/repo.git") != normalize_remote("git@github.com:owner/other.git")
    assert normalize_remote("git@github.com:owner/repo.git") != normalize_remote("git@gitlab.com:owner/repo.git")
    assert normalize_remote("https://gitlab.com/group/sub/repo.git") == "gitlab.com/group/sub/repo"


def test_a_local_path_remote_is_kept_as_a_path() -> None:
    assert normalize_remote("/srv/git/repo.git") == "file//srv/git/repo"
    assert normalize_remote("file:///srv/git/repo.git") == normalize_remote("/srv/git/repo.git")


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


def _repo(path: Path, remote: str | None = None) -> Path:
    path.mkdir(parents=True)
    _git("init", "-q", cwd=path)
    if remote:
        _git("remote", "add", "origin", remote, cwd=path)
    return path


def test_clones_with_different_url_forms_share_one_project(tmp_path: Path) -> None:
    ssh = _repo(tmp_path / "a", "git@github.com:Owner/Repo.git")
    https = _repo(tmp_path / "b", "https://me:token@github.com/owner/repo/")
    first, second = resolve_project(ssh), resolve_project(https)
    assert first.project_id == second.project_id == hash_id("github.com/owner/repo")
    assert first.remote == "git@github.com:Owner/Repo.git"
    assert first.name == "a"


def test_a_subdirectory_resolves_to_its_repository(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", "git@github.com:owner/repo.git")
    deep = repo / "src" / "pkg"
    deep.mkdir(parents=True)
    assert resolve_project(deep).project_id == resolve_project(repo).project_id
    assert resolve_project(deep).root == str(repo.resolve())


def test_a_worktree_with_a_dot_git_file_shares_the_main_checkouts_project(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "main", "git@github.com:owner/repo.git")
    (repo / "README").write_text("hello\n", encoding="utf-8")
    _git("add", "README", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init", cwd=repo)
    worktree = tmp_path / "feature-wt"
    _git("worktree", "add", "-q", str(worktree), cwd=repo)
    assert (worktree / ".git").is_file()
    resolved = resolve_project(worktree)
    assert resolved.project_id == resolve_project(repo).project_id == hash_id("github.com/owner/repo")
    assert resolved.root == str(worktree.resolve())


def test_a_repository_without_a_remote_is_keyed_on_its_root_path(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "local-only")
    (repo / "sub").mkdir()
    resolved = resolve_project(repo / "sub")
    assert resolved.project_id == hash_id(str(repo.resolve()))
    assert resolved.remote is None
    other = _repo(tmp_path / "another-local")
    assert resolve_project(other).project_id != resolved.project_id


def test_a_directory_outside_git_is_its_own_project(tmp_path: Path) -> None:
    plain = tmp_path / "notes"
    plain.mkdir()
    resolved = resolve_project(plain)
    assert resolved.project_id == hash_id(str(plain.resolve()))
    assert resolved.root == str(plain.resolve())


def test_a_path_that_does_not_exist_still_resolves(tmp_path: Path) -> None:
    assert resolve_project(tmp_path / "missing" / "dir").project_id == hash_id(str(tmp_path / "missing" / "dir"))


def test_a_corrupt_git_config_falls_back_to_the_path(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "broken")
    (repo / ".git" / "config").write_bytes(b"\xff\xfe[[[ not ini")
    assert resolve_project(repo).project_id == hash_id(str(repo.resolve()))
