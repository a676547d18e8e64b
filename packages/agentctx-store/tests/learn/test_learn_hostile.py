"""`learn` on a repository that is out to get us: links to secret files outside it, an ADR folder
linked elsewhere, a FIFO named like an ADR, a file over the size cap, a file that is not UTF-8,
and secrets in an instruction file. Nothing outside the tree is read, nothing blocks, each file
passed over gets one line, and nothing `learn` returns holds what the store would redact."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentctx_store import Project, Store, resolve_project
from agentctx_store.anchors import anchored_records
from agentctx_store.bounded import MAX_REPO_FILE
from agentctx_store.learn import discover, find, learn, plan_learn
from agentctx_store.learn.discover import sanitize

RULE = "# Rules\n\n- Run the unit tests with pytest before every commit.\n"
SHADOW = "root:$6$Zq8hUnLikelySaltValue$hashhashhashhash:19000:0:99999:7:::"
ADR = "# {n}. Use {what}\n\n## Status\n\nAccepted\n\n## Context\n\nWe needed {what}.\n\n## Decision\n\nWe use {what}.\n"

# The five kinds of secret the issue found printed in clear (shapes the redactor knows).
SECRETS = {
    "aws key id": "AKIAIOSFODNN7EXAMPLE",
    "github token": "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "slack bot token": "xoxb-2048394857-1029384756123-AbCdEfGhIjKlMnOpQrStUvWx",
    "mysql password": "Hunter2Hunter2",
    "google api key": "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
}
SECRET_RULES = (
    "# Setup\n\n"
    f"- Configure the CLI with aws configure set aws_access_key_id {SECRETS['aws key id']} for the sandbox.\n"
    f"- Clone with git clone https://{SECRETS['github token']}@github.com/o/r.git when SSH is blocked.\n"
    f"- Post deploy notices with SLACK_BOT={SECRETS['slack bot token']} in the environment.\n"
    f"- Open the database with mysql -u root -p{SECRETS['mysql password']} app_db to inspect it.\n"
    f"- Maps need const key = '{SECRETS['google api key']}'; in the config module.\n"
)


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".git").mkdir()
    return root


def _outside(tmp_path: Path) -> Path:
    """Secret files beside the repository, where a link in it may point."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "shadow").write_text(SHADOW + "\n", encoding="utf-8")
    adrs = outside / "adrs"
    adrs.mkdir()
    for n, what in ((1, "Outsideonly Postgres"), (2, "Outsideonly Kafka")):
        (adrs / f"000{n}-x.md").write_text(ADR.format(n=n, what=what), encoding="utf-8")
    return outside


def _texts(store: Store) -> str:
    """Every text value of every table of the store, for grepping."""
    found: list[str] = []
    tables = [row[0] for row in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        for row in store.conn.execute(f'SELECT * FROM "{table}"'):
            found += [value for value in row if isinstance(value, str)]
    return "\n".join(found)


def test_a_link_out_of_the_repository_is_passed_over_with_one_line(store: Store, tmp_path: Path) -> None:
    root, outside = _repo(tmp_path), _outside(tmp_path)
    (root / "CLAUDE.md").symlink_to(outside / "shadow")
    (root / "GEMINI.md").symlink_to("../outside/shadow")  # relative links too
    (root / "pkg").mkdir()
    (root / "pkg" / "AGENTS.md").write_text(RULE, encoding="utf-8")
    project = resolve_project(root)
    plan = learn(store, project, root)
    assert [source.rel for source in plan.sources] == ["pkg/AGENTS.md"]
    assert plan.skipped == [
        "CLAUDE.md: skipped, it links outside the repository",
        "GEMINI.md: skipped, it links outside the repository",
    ]
    assert "Zq8hUnLikelySaltValue" not in _texts(store)
    assert [record.title for record in store.list_records(project, limit=None)] == [
        "Run the unit tests with pytest before every commit"
    ]


def test_an_adr_folder_linked_outside_is_never_entered(store: Store, tmp_path: Path) -> None:
    root, outside = _repo(tmp_path), _outside(tmp_path)
    (root / "docs").mkdir()
    (root / "docs" / "adr").symlink_to(outside / "adrs", target_is_directory=True)
    (root / "decisions").mkdir()
    for n in (1, 2):
        (root / "decisions" / f"000{n}-in.md").write_text(ADR.format(n=n, what=f"Inside{n}"), encoding="utf-8")
    (root / "decisions" / "0003-out.md").symlink_to(outside / "adrs" / "0001-x.md")
    project = resolve_project(root)
    plan = learn(store, project, root)
    assert sorted(source.rel for source in plan.sources) == ["decisions/0001-in.md", "decisions/0002-in.md"]
    assert plan.skipped == [
        "docs/adr: skipped, it links outside the repository",
        "decisions/0003-out.md: skipped, it links outside the repository",
    ]
    assert "Outsideonly" not in _texts(store)


def test_a_given_path_outside_the_repository_is_refused(store: Store, tmp_path: Path) -> None:
    root, outside = _repo(tmp_path), _outside(tmp_path)
    (root / "adr").symlink_to(outside / "adrs", target_is_directory=True)
    found = find(root, [outside / "adrs", Path("adr"), outside / "shadow"])
    assert found.sources == []
    assert found.skipped == [
        f"{outside / 'adrs'}: skipped, it is outside the repository (learn reads only its files)",
        "adr: skipped, it is outside the repository (learn reads only its files)",
        f"{outside / 'shadow'}: skipped, it is outside the repository (learn reads only its files)",
    ]
    with pytest.raises(FileNotFoundError):
        find(root, [Path("missing.md")])


def test_a_link_inside_the_repository_is_read_once_by_its_target(store: Store, tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "AGENTS.md").write_text(RULE, encoding="utf-8")
    (root / "CLAUDE.md").symlink_to("AGENTS.md")
    (root / "docs").mkdir()
    (root / "docs" / "decisions").mkdir()
    for n in (1, 2):
        (root / "docs" / "decisions" / f"000{n}-d.md").write_text(ADR.format(n=n, what=f"D{n}"), encoding="utf-8")
    (root / "decisions").symlink_to("docs/decisions", target_is_directory=True)  # a second probe, same folder
    sources = discover(root)
    assert [(source.rel, source.kind) for source in sources] == [
        ("docs/decisions/0001-d.md", "adr"),
        ("docs/decisions/0002-d.md", "adr"),
        ("AGENTS.md", "rules"),
    ]
    project = resolve_project(root)
    plan = learn(store, project, root)
    assert plan.skipped == [] and plan.summary()["files"] == 3 and plan.summary()["add"] == 3
    paths = sorted(anchors[0].path for _, anchors in anchored_records(store, project))
    assert paths == ["AGENTS.md", "docs/decisions/0001-d.md", "docs/decisions/0002-d.md"]
    assert learn(store, project, root).summary()["add"] == 0  # and a re-run changes nothing


def test_fifos_oversize_and_non_utf8_files_are_skipped_with_one_line_each(store: Store, tmp_path: Path) -> None:
    root = _repo(tmp_path)
    adrs = root / "docs" / "adr"
    adrs.mkdir(parents=True)
    os.mkfifo(adrs / "0001-x.md")  # opening it for reading would block until a writer came
    for n in (2, 3):
        (adrs / f"000{n}-real.md").write_text(ADR.format(n=n, what=f"Real{n}"), encoding="utf-8")
    with (adrs / "0004-big.md").open("wb") as big:
        big.truncate(MAX_REPO_FILE + 1)  # sparse: costs nothing on disk
    (root / "GEMINI.md").write_bytes(b"# Rules\n\n- Caf\xe9 is spelt with an accent.\n")
    (root / "AGENTS.md").write_text(RULE, encoding="utf-8")
    project = resolve_project(root)
    plan = plan_learn(store, project, root)  # returns: the FIFO was never opened blocking
    assert plan.skipped == [
        "docs/adr/0001-x.md: skipped, not a regular file",
        f"docs/adr/0004-big.md: skipped, {MAX_REPO_FILE + 1:,} bytes is over the {MAX_REPO_FILE:,}-byte limit",
        "GEMINI.md: skipped, not UTF-8 text (byte 14 is 0xE9: Windows-1252 or Latin-1, it seems); save it as UTF-8 to use it",
    ]
    assert sorted(source.rel for source in plan.sources) == [
        "AGENTS.md",
        "docs/adr/0002-real.md",
        "docs/adr/0003-real.md",
    ]
    assert plan.summary()["add"] == 3


def test_a_file_skipped_now_keeps_what_was_learned_from_it(store: Store, tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "AGENTS.md").write_text(RULE, encoding="utf-8")
    project = resolve_project(root)
    learn(store, project, root)
    with (root / "AGENTS.md").open("ab") as grown:
        grown.truncate(MAX_REPO_FILE + 10)
    plan = learn(store, project, root)
    assert plan.summary()["retire"] == 0 and len(plan.skipped) == 1
    assert len(store.list_records(project, limit=None)) == 1


def test_auto_memory_is_held_to_its_folder(store: Store, tmp_path: Path) -> None:
    root, outside = _repo(tmp_path), _outside(tmp_path)
    home = Path(os.environ["HOME"])
    folder = home / ".claude" / "projects" / sanitize(str(root.resolve())) / "memory"
    folder.mkdir(parents=True)
    (folder / "deploys.md").write_text("---\ntype: project\n---\n\nDeploys go to staging first.\n", encoding="utf-8")
    (folder / "same.md").symlink_to("deploys.md")
    (folder / "leak.md").symlink_to(outside / "shadow")
    os.mkfifo(folder / "pipe.md")
    project = resolve_project(root)
    plan = learn(store, project, root)
    assert [source.rel for source in plan.sources] == ["claude-memory:deploys.md"]
    assert plan.skipped == [
        "claude-memory:leak.md: skipped, it links outside the memory folder",
        "claude-memory:pipe.md: skipped, not a regular file",
    ]
    assert "Zq8hUnLikelySaltValue" not in _texts(store)


def test_a_settings_file_that_is_a_fifo_does_not_hang_discovery(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    claude = Path(os.environ["HOME"]) / ".claude"
    claude.mkdir()
    os.mkfifo(claude / "settings.json")
    assert discover(root) == []


def test_what_learn_returns_holds_no_secret_and_the_store_holds_the_redacted_form(store: Store, tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "CLAUDE.md").write_text(SECRET_RULES, encoding="utf-8")
    project: Project = resolve_project(root)
    plan = plan_learn(store, project, root)
    shown = "\n".join(f"{action.item.title}\n{action.item.body}" for action in plan.actions if action.item is not None)
    for kind, secret in SECRETS.items():
        assert secret not in shown, kind
    assert shown.count("[REDACTED:") >= 5
    learn(store, project, root)
    texts = _texts(store)
    assert all(secret not in texts for secret in SECRETS.values())
    bodies = "\n".join(record.body for record in store.list_records(project, limit=None))
    assert bodies.count("[REDACTED:") == 5 and "aws configure set aws_access_key_id [REDACTED:" in bodies
