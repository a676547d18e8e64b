"""`agentctx learn`, `init --learn` and `agentctx team` through the installed entry point, and the
team round trip on two real git clones of one repository (each person with their own store)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agentctx_store import Store, resolve_project

AGENTCTX = Path(sys.executable).with_name("agentctx")

FIXTURES = (
    Path(__file__).resolve().parents[1]
    / "packages"
    / "agentctx-store"
    / "tests"
    / "learn"
    / "fixtures"
    / "project-docs"
)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "packages" / "agentctx-store" / "tests"))
from secrets_corpus import SECRETS  # noqa: E402  (the redaction corpus)

GIT_ENV = {
    "GIT_AUTHOR_NAME": "A",
    "GIT_AUTHOR_EMAIL": "a@example.org",
    "GIT_COMMITTER_NAME": "A",
    "GIT_COMMITTER_EMAIL": "a@example.org",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **GIT_ENV}, timeout=60, check=False
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stdout}{done.stderr}"
    return done


def agentctx(
    cwd: Path, home: Path, *args: str, check: bool = True, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AGENTCTX_HOME": str(home), "AGENTCTX_HOOKS_NO_SPAWN": "1"}
    done = subprocess.run(
        [str(AGENTCTX), *args], cwd=cwd, input=stdin, capture_output=True, text=True, env=env, timeout=120, check=False
    )
    if check:
        assert done.returncode == 0, f"agentctx {' '.join(args)}: {done.stdout}{done.stderr}"
    return done


def record(cwd: Path, home: Path, kind: str, title: str, body: str) -> str:
    out = agentctx(cwd, home, "record", "-t", kind, "--title", title, "-b", body, "--json").stdout
    return str(json.loads(out)["id"])


def records(cwd: Path, home: Path) -> dict[str, str]:
    """The current records of the repository's project in that person's store."""
    if not (home / "agentctx.db").exists():
        return {}
    with Store.open(home / "agentctx.db") as store:
        return {r.record_id: r.title for r in store.list_records(resolve_project(cwd), limit=None)}


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "--bare", "-b", "main", str(origin))
    alice, bob = tmp_path / "alice", tmp_path / "bob"
    git(tmp_path, "clone", str(origin), str(alice))
    (alice / "README.md").write_text("# app\n", encoding="utf-8")
    git(alice, "add", ".")
    git(alice, "commit", "-m", "start")
    git(alice, "push", "origin", "HEAD:main")
    git(tmp_path, "clone", str(origin), str(bob))
    return alice, bob, tmp_path / "alice-home", tmp_path / "bob-home"


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-m", message)


def test_team_round_trip_on_two_clones(clones: tuple[Path, Path, Path, Path]) -> None:
    alice, bob, alice_home, bob_home = clones
    postgres = record(alice, alice_home, "decision", "Postgres for state", "All run state lives in Postgres.")
    record(alice, alice_home, "convention", "Tests beside sources", "Test files sit next to the module they test.")
    record(alice, alice_home, "preference", "Terse replies", "Alice likes short answers.")
    label, secret_text, secret = SECRETS[0]
    record(alice, alice_home, "discovery", "Staging key", f"The staging deploy uses {secret_text}")
    out = agentctx(alice, alice_home, "team", "export").stdout
    assert "Left out 1 record" in out
    team_file = alice / ".agentctx" / "context.md"
    assert secret not in team_file.read_text(encoding="utf-8") and "Terse replies" not in team_file.read_text(
        encoding="utf-8"
    )
    commit_all(alice, "team context")
    git(alice, "push", "origin", "HEAD:main")

    git(bob, "pull", "origin", "main")
    agentctx(bob, bob_home, "team", "import")
    assert set(records(bob, bob_home).values()) == {"Postgres for state", "Tests beside sources"}
    assert postgres in records(bob, bob_home)  # the same id in both stores

    # both add a record on their own branch: git merges the file without a conflict
    record(alice, alice_home, "decision", "Redis for queues", "Job queues run on Redis streams.")
    agentctx(alice, alice_home, "team", "export")
    commit_all(alice, "redis")
    git(alice, "push", "origin", "HEAD:main")
    record(bob, bob_home, "discovery", "Flaky timer test", "test_timeout flakes under load; it waits on a real clock.")
    agentctx(bob, bob_home, "team", "export")
    commit_all(bob, "flaky")
    merged = git(bob, "pull", "--no-rebase", "origin", "main")
    assert "CONFLICT" not in merged.stdout
    assert "<<<<<<<" not in (bob / ".agentctx" / "context.md").read_text(encoding="utf-8")
    agentctx(bob, bob_home, "team", "import")
    assert {"Redis for queues", "Flaky timer test"} <= set(records(bob, bob_home).values())
    git(bob, "push", "origin", "HEAD:main")
    git(alice, "pull", "--no-rebase", "origin", "main")
    agentctx(alice, alice_home, "team", "import")
    assert "Flaky timer test" in records(alice, alice_home).values()
    assert git(alice, "diff").stdout == ""  # the file already says what alice's store holds

    # bob edits a block by hand: only the explicit import takes it, as a supersession
    path = bob / ".agentctx" / "context.md"
    path.write_text(
        path.read_text(encoding="utf-8").replace(
            "All run state lives in Postgres.", "All run state lives in Postgres 16."
        ),
        encoding="utf-8",
    )
    assert "changed since the last import" in agentctx(bob, bob_home, "team", "status").stdout
    out = agentctx(bob, bob_home, "team", "import").stdout
    assert "1 superseded" in out
    assert postgres not in records(bob, bob_home)
    history = json.loads(agentctx(bob, bob_home, "show", postgres, "--json").stdout)
    assert history["superseded_by"]
    commit_all(bob, "postgres 16")
    git(bob, "push", "origin", "HEAD:main")
    git(alice, "pull", "--no-rebase", "origin", "main")
    agentctx(alice, alice_home, "team", "import")
    assert postgres not in records(alice, alice_home)
    assert history["superseded_by"] in records(alice, alice_home)

    # both supersede the same record on their own branch: two heads, shown until one is kept
    redis = next(rid for rid, title in records(alice, alice_home).items() if title == "Redis for queues")
    agentctx(alice, alice_home, "supersede", redis, "-b", "Job queues run on SQS.")
    agentctx(alice, alice_home, "team", "export")
    commit_all(alice, "sqs")
    git(alice, "push", "origin", "HEAD:main")
    agentctx(bob, bob_home, "supersede", redis, "-b", "Job queues run on RabbitMQ.")
    agentctx(bob, bob_home, "team", "export")
    commit_all(bob, "rabbit")
    merged = git(bob, "pull", "--no-rebase", "origin", "main")
    assert "CONFLICT" not in merged.stdout
    out = agentctx(bob, bob_home, "team", "import").stdout
    assert "Two heads" in out, (
        out,
        merged.stdout,
        git(bob, "log", "--oneline", "-5").stdout,
        (bob / ".agentctx" / "context.md").read_text(),
    )
    status = agentctx(bob, bob_home, "status").stdout
    assert f"two heads for {redis}" in status
    heads = json.loads(agentctx(bob, bob_home, "team", "status", "--json").stdout)["conflicts"][0]["heads"]
    assert len(heads) == 2
    listed = json.loads(agentctx(bob, bob_home, "review", "--json").stdout)["two_heads"]
    assert listed == [{"record": redis, "heads": heads}]
    shown = agentctx(bob, bob_home, "review", stdin="1\n").stdout
    assert "superseded twice" in shown and f"kept {heads[0]}" in shown
    assert "two heads" not in agentctx(bob, bob_home, "status").stdout
    assert "two_heads" not in json.loads(agentctx(bob, bob_home, "review", "--json").stdout)
    for home, repo in ((alice_home, alice), (bob_home, bob)):
        text = (repo / ".agentctx" / "context.md").read_text(encoding="utf-8")
        assert not any(corpus_secret in text for _, _, corpus_secret in SECRETS), home


def test_the_exported_file_never_holds_a_corpus_secret(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-b", "main")
    home = tmp_path / "home-a"
    for index, (label, text, _) in enumerate(SECRETS):
        record(repo, home, "discovery", f"Secret case {index}", f"{label}: {text}")
    record(repo, home, "decision", "Plain decision", "Nothing secret here.")
    agentctx(repo, home, "team", "export")
    text = (repo / ".agentctx" / "context.md").read_text(encoding="utf-8")
    assert "Plain decision" in text
    leaked = [label for label, _, secret in SECRETS if secret in text]
    assert leaked == []


def test_session_start_says_when_the_team_file_changed(run_hook: Any, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-b", "main")
    home = Path(os.environ["AGENTCTX_HOME"])
    record(repo, home, "decision", "Postgres for state", "All run state lives in Postgres.")
    agentctx(repo, home, "team", "export")
    payload = {"session_id": "s1", "transcript_path": "", "cwd": str(repo), "source": "startup"}
    assert "team context changed" not in run_hook("SessionStart", payload).context
    path = repo / ".agentctx" / "context.md"
    path.write_text(path.read_text(encoding="utf-8").replace("in Postgres.", "in Postgres 16."), encoding="utf-8")
    context = run_hook("SessionStart", payload).context
    assert "team context changed: run `agentctx team import`" in context
    agentctx(repo, home, "config", "team_autoimport", "true")
    assert "importing it now" in run_hook("SessionStart", payload).context
    agentctx(repo, home, "team", "import")
    assert "team context changed" not in run_hook("SessionStart", {**payload, "source": "resume"}).context


def test_learn_cli_dry_run_then_learn_then_nothing_new(tmp_path: Path) -> None:
    repo = tmp_path / "trigger"
    shutil.copytree(FIXTURES / "trigger.dev", repo)
    git(repo, "init", "-b", "main")
    home = tmp_path / "home-l"
    out = agentctx(repo, home, "learn", "--dry-run").stdout
    assert "Would learn from 5 files" in out and "apps/webapp/CLAUDE.md:" in out
    assert not (home / "agentctx.db").exists() or records(repo, home) == {}
    assert "Learned from 5 files" in agentctx(repo, home, "learn").stdout
    again = agentctx(repo, home, "learn").stdout.strip()
    assert again.startswith("Learned from 5 files: ") and again.endswith(" unchanged.") and "new" not in again
    bad = agentctx(repo, home, "learn", "no/such/file.md", check=False)
    assert bad.returncode == 1 and "No such file or folder" in bad.stderr and "Traceback" not in bad.stderr


def test_init_learns_when_asked_and_not_when_told_not_to(tmp_path: Path) -> None:
    repo = tmp_path / "sdk"
    shutil.copytree(FIXTURES / "mcp-python-sdk", repo)
    git(repo, "init", "-b", "main")
    home = tmp_path / "home-i"
    out = agentctx(
        repo, home, "init", "--no-mcp", "--claude-version", "2.1.100", "--dir", str(repo), "--no-learn"
    ).stdout
    assert "Learn" not in out
    assert all(
        title.startswith(("Language", "Package", "Test", "Build")) or True for title in records(repo, home).values()
    )
    learned_before = [t for t in records(repo, home).values() if "uv" in t.lower() and "pip" in t.lower()]
    assert learned_before == []
    out = agentctx(repo, home, "init", "--no-mcp", "--claude-version", "2.1.100", "--dir", str(repo)).stdout
    assert "run `agentctx learn` to record them" in out  # not a terminal: it says how, learns nothing
    out = agentctx(repo, home, "init", "--no-mcp", "--claude-version", "2.1.100", "--dir", str(repo), "--learn").stdout
    assert "Learn: " in out and " new records from 2 files" in out
    assert any("NEVER pip" in title or "uv" in title for title in records(repo, home).values())


def test_inits_offer_counts_only_files_learn_would_read(tmp_path: Path) -> None:
    """A FIFO or an oversize instruction file is passed over by `learn`; the offer does not count it."""
    import os

    repo = tmp_path / "hostile"
    repo.mkdir()
    git(repo, "init", "-b", "main")
    (repo / "AGENTS.md").write_text("# Rules\n\n- Run the tests with `make test`.\n", encoding="utf-8")
    os.mkfifo(repo / "CLAUDE.md")
    with open(repo / "GEMINI.md", "wb") as handle:
        handle.truncate(2_000_000)  # sparse: over the 1 MB cap at no cost
    home = tmp_path / "home-o"
    out = agentctx(repo, home, "init", "--no-mcp", "--claude-version", "2.1.100", "--dir", str(repo)).stdout
    assert "found 1 file agentctx can learn from" in out, out
