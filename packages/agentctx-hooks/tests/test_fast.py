"""The SessionStart fast path repeats three store functions; these tests hold them equal."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from agentctx_store import normalize_remote, paths, resolve_project
from agentctx_store.budget import estimate_tokens
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctx_hooks import _fast

URLS = [
    "git@github.com:Owner/Repo.git",
    "ssh://git@github.com:22/owner/repo",
    "https://user:token@github.com/owner/repo.git/",
    "https://github.com//owner///repo",
    "file:///srv/git/repo.git",
    "/srv/git/repo.git",
    "../relative/repo",
    "git@[::1]:owner/repo.git",
    "ssh://git@[fe80::1]:2222/owner/repo.GIT",
    "https://gitlab.example.com/group/sub/project.git",
    "",
    "HTTPS://GitHub.com/A/B",
    "git+ssh://x@h:22/p",
    "a@b@c:path",
    "a@b:/x",
    "a:b",
    "a://",
    "1a://x/y",
    ":x",
    "host:path\nmore",
    "ssh://h/a\nb",
    "user@host://x",
    "@host:x",
    "a/b@c:d",
]


@pytest.mark.parametrize("url", URLS)
def test_normalize_remote_matches_the_store(url: str) -> None:
    assert _fast.normalize_remote(url) == normalize_remote(url)


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab:/@._-[]G~ 1\nKh+")), max_size=40))
def test_normalize_remote_matches_the_store_on_any_text(url: str) -> None:
    assert _fast.normalize_remote(url) == normalize_remote(url)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_estimate_tokens_matches_the_store(text: str) -> None:
    assert _fast.estimate_tokens(text) == estimate_tokens(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120))
def test_safe_name_matches_the_store(value: str) -> None:
    assert _fast.safe_name(value) == paths.safe_name(value)


def test_digest_files_are_where_the_store_writes_them() -> None:
    text_path, meta_path = _fast.digest_files("abc/../x")
    assert Path(text_path) == paths.digest_path("abc/../x")
    assert Path(meta_path) == paths.digest_path("abc/../x").with_suffix(".json")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


GIT_CONFIGS = {
    "plain": '[core]\n\tbare = false\n[remote "origin"]\n\turl = git@github.com:Owner/Repo.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n',
    "colon": '[remote "origin"]\nurl: https://github.com/o/r\n',
    "comments": '# hi\n; there\n[remote "origin"]\n\turl = https://github.com/o/r.git\n[remote "upstream"]\n\turl = https://github.com/up/r\n',
    "twice": '[remote "origin"]\n\turl = https://a.example/o/one\n[remote "origin"]\n\turl = https://a.example/o/two\n',
    "no-origin": '[remote "upstream"]\n\turl = https://github.com/up/r\n',
    "broken": '[remote "origin"]\n\turl = https://github.com/o/r\nnot an option line\n',
    "no-section": "url = https://github.com/o/r\n",
    "empty": "",
}


@pytest.mark.parametrize("name", sorted(GIT_CONFIGS))
def test_project_id_matches_the_store_for_git_configs(tmp_path: Path, name: str) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text(GIT_CONFIGS[name], encoding="utf-8")
    (repo / "src" / "deep").mkdir(parents=True)
    for start in (repo, repo / "src" / "deep"):
        assert _fast.project_id(str(start)) == resolve_project(start).project_id


def test_project_id_matches_the_store_for_real_repositories_and_worktrees(tmp_path: Path) -> None:
    repo = tmp_path / "real"
    repo.mkdir()
    _git(repo, "init", "-q")
    assert _fast.project_id(str(repo)) == resolve_project(repo).project_id
    _git(repo, "remote", "add", "origin", "https://github.com/Acme/Widget.git")
    _git(repo, "-c", "user.email=a@b.c", "-c", "user.name=A", "commit", "-q", "--allow-empty", "-m", "x")
    _git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    for start in (repo, tmp_path / "wt"):
        assert _fast.project_id(str(start)) == resolve_project(start).project_id
    assert _fast.project_id(str(tmp_path / "wt")) == _fast.project_id(str(repo))


def test_project_id_matches_the_store_outside_git_and_through_symlinks(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (tmp_path / "link").symlink_to(plain)
    for start in (plain, tmp_path / "link", tmp_path / "missing" / "dir"):
        assert _fast.project_id(str(start)) == resolve_project(start).project_id


@pytest.mark.parametrize("name", sorted(GIT_CONFIGS))
def test_project_of_builds_the_same_project_as_the_store(tmp_path: Path, name: str) -> None:
    from agentctx_hooks.storage import project_of

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text(GIT_CONFIGS[name], encoding="utf-8")
    (repo / "sub").mkdir()
    for start in (repo, repo / "sub", tmp_path, tmp_path / "no" / "such"):
        assert project_of(str(start)) == resolve_project(start)
