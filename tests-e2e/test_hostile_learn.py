"""`agentctx learn` on a hostile repository, through the installed entry point: instruction files
linked to secret files outside the repository, an ADR folder linked outside, a FIFO and a file
over the size cap among real ADRs, a `CLAUDE.md → AGENTS.md` link inside, and an instruction
file full of secrets. Not one byte from outside the repository reaches the store (every text
column, and the raw database, WAL and logs), the output or the team file; nothing blocks; every
file passed over gets one line; and nothing `learn` prints holds what the store redacts."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

AGENTCTX = Path(sys.executable).with_name("agentctx")
MAX_REPO_FILE = 1_000_000  # agentctx_store.bounded.MAX_REPO_FILE

SHADOW = "root:$6$Zq8hUnLikelySaltValue$WqXvHashOfTheRootPasswordThatMustNeverLeak0:19000:0:99999:7:::\n"
ID_RSA = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDxk3Jq8mQ4UniqueKeyMaterialThatMustNeverLeakAnywhere0000\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)
CREDENTIALS = (
    "[default]\naws_access_key_id=AKIAQYLPMN5HHHFPZAM2\naws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzOutside\n"
)
OUTSIDE_ADR = "# {n}. Use Outsidekafka{n}\n\n## Status\n\nAccepted\n\n## Context\n\nOutsidecontext{n}.\n\n## Decision\n\nOutsidedecision{n}.\n"
ADR = "# {n}. Use {what}\n\n## Status\n\nAccepted\n\n## Context\n\nWe needed {what}.\n\n## Decision\n\nWe use {what} for it.\n"
RULES = "# Rules\n\n- Run the unit tests with pytest before every commit.\n- Format the code with ruff format.\n"

# The five kinds of secret the issue found printed in clear, in shapes the redactor knows
# (the same fakes as packages/agentctx-store/tests/secrets_corpus.py).
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


def agentctx(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `agentctx` with the data dir `home`; the timeout is the guard against a hang."""
    env = {**os.environ, "AGENTCTX_HOME": str(home), "AGENTCTX_HOOKS_NO_SPAWN": "1"}
    done = subprocess.run(
        [str(AGENTCTX), *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 0, f"agentctx {' '.join(args)}: {done.stdout}{done.stderr}"
    return done


def git_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True, timeout=60)
    return root


def hostile(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The repository, and the outside files its links point to (name → content)."""
    outside = tmp_path / "outside"
    (outside / "adrs").mkdir(parents=True)
    files = {"shadow": SHADOW, "id_rsa": ID_RSA, "credentials": CREDENTIALS}
    for n in (1, 2):
        files[f"adrs/000{n}-outside.md"] = OUTSIDE_ADR.format(n=n)
    for name, text in files.items():
        (outside / name).write_text(text, encoding="utf-8")
    root = git_repo(tmp_path / "repo")
    (root / "CLAUDE.md").symlink_to(outside / "shadow")
    (root / "AGENTS.md").symlink_to(outside / "id_rsa")
    (root / "GEMINI.md").symlink_to("../outside/credentials")
    (root / "adr").symlink_to(outside / "adrs", target_is_directory=True)
    adrs = root / "docs" / "adr"
    adrs.mkdir(parents=True)
    os.mkfifo(adrs / "0001-x.md")
    for n, what in ((2, "Postgres"), (3, "Redis")):
        (adrs / f"000{n}-{what.lower()}.md").write_text(ADR.format(n=n, what=what), encoding="utf-8")
    with (adrs / "0004-big.md").open("wb") as big:
        big.truncate(MAX_REPO_FILE + 1)  # sparse: just over the cap, costs nothing
    (root / "pkg").mkdir()
    (root / "pkg" / "AGENTS.md").write_text(RULES, encoding="utf-8")
    (root / "pkg" / "CLAUDE.md").symlink_to("AGENTS.md")  # the common pattern: read once
    return root, files


SKIPPED = [
    "CLAUDE.md: skipped, it links outside the repository",
    "AGENTS.md: skipped, it links outside the repository",
    "GEMINI.md: skipped, it links outside the repository",
    "adr: skipped, it links outside the repository",
    "docs/adr/0001-x.md: skipped, not a regular file",
    f"docs/adr/0004-big.md: skipped, {MAX_REPO_FILE + 1:,} bytes is over the {MAX_REPO_FILE:,}-byte limit",
]


def pieces(text: str) -> list[str]:
    """What must not appear anywhere: every line of an outside file that says something of its
    own (an ADR's section headings are every ADR's)."""
    generic = {"## Status", "## Context", "## Decision", "Accepted"}
    return [line.strip() for line in text.splitlines() if len(line.strip()) >= 8 and line.strip() not in generic]


def store_texts(db: Path) -> str:
    """Every text value in every table of the store."""
    found: list[str] = []
    with closing(sqlite3.connect(db)) as conn:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                found += [value for value in row if isinstance(value, str)]
    return "\n".join(found)


def every_byte(folder: Path) -> bytes:
    """The bytes of every file under `folder` (database, WAL, logs, digests)."""
    return b"\n".join(path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file())


def test_nothing_from_outside_the_repository_is_read_and_each_refusal_is_one_line(
    tmp_path: Path, isolated_home: Path
) -> None:
    root, outside = hostile(tmp_path)
    home = isolated_home / ".agentctx"
    dry = agentctx(root, home, "learn", "--dry-run")
    dry_json = agentctx(root, home, "learn", "--dry-run", "--json")
    run = agentctx(root, home, "learn")
    again = agentctx(root, home, "learn", "--json")
    export = agentctx(root, home, "team", "export")

    for done in (dry, run):
        lines = done.stdout.splitlines()
        for line in SKIPPED:
            assert lines.count(line) == 1, (line, done.stdout)
        assert sum("skipped," in line for line in lines) == len(SKIPPED), done.stdout
    assert "Would learn from 3 files" in dry.stdout and "Learned from 3 files" in run.stdout
    plans: list[dict[str, Any]] = [json.loads(dry_json.stdout), json.loads(again.stdout)]
    for plan in plans:
        assert sorted(plan["skipped"]) == sorted(SKIPPED)
        paths = [action["path"] for action in plan["actions"]]
        assert sorted(set(paths)) == ["docs/adr/0002-postgres.md", "docs/adr/0003-redis.md", "pkg/AGENTS.md"]
    assert paths.count("pkg/AGENTS.md") == 1  # its one rule (a run of short bullets), once: the link is not read again
    assert {action["action"] for action in plans[1]["actions"]} == {"keep"}

    with closing(sqlite3.connect(home / "agentctx.db")) as conn:
        anchors = sorted(row[0] for row in conn.execute("SELECT path FROM record_anchors"))
    assert anchors == ["docs/adr/0002-postgres.md", "docs/adr/0003-redis.md", "pkg/AGENTS.md"]

    team_file = (root / ".agentctx" / "context.md").read_text(encoding="utf-8")
    assert "We use Postgres" in team_file
    printed = "\n".join(done.stdout + done.stderr for done in (dry, dry_json, run, again, export))
    texts, raw = store_texts(home / "agentctx.db"), every_byte(isolated_home)
    for name, content in outside.items():
        for piece in pieces(content):
            assert piece not in printed, (name, piece)
            assert piece not in texts, (name, piece)
            assert piece.encode() not in raw, (name, piece)
            assert piece not in team_file, (name, piece)
    assert b"Outsidekafka" not in raw and b"Zq8hUnLikelySaltValue" not in raw


def test_nothing_learn_prints_or_logs_holds_a_secret_the_store_redacts(tmp_path: Path, isolated_home: Path) -> None:
    root = git_repo(tmp_path / "repo")
    (root / "CLAUDE.md").write_text(SECRET_RULES, encoding="utf-8")
    home = isolated_home / ".agentctx"
    runs = [
        agentctx(root, home, "learn", "--dry-run"),
        agentctx(root, home, "learn", "--dry-run", "--json"),
        agentctx(root, home, "learn", "--json"),
        agentctx(root, home, "learn", "--verbose"),
    ]
    learned = json.loads(runs[2].stdout)
    assert learned["summary"]["add"] >= 1 and "[REDACTED:" in json.dumps(learned)
    printed = "\n".join(done.stdout + done.stderr for done in runs)
    assert "[REDACTED:" in runs[0].stdout
    texts, raw = store_texts(home / "agentctx.db"), every_byte(isolated_home)
    for kind, secret in SECRETS.items():
        assert secret not in printed, kind
        assert secret not in texts, kind
        assert secret.encode() not in raw, kind
    with closing(sqlite3.connect(home / "agentctx.db")) as conn:
        bodies = "\n".join(row[0] for row in conn.execute("SELECT body FROM records"))
    assert bodies.count("[REDACTED:") == 5  # the store holds the redacted form of each rule


def test_when_every_file_is_passed_over_learn_says_so_and_exits_0(tmp_path: Path, isolated_home: Path) -> None:
    root = git_repo(tmp_path / "repo")
    (tmp_path / "shadow").write_text(SHADOW, encoding="utf-8")
    (root / "CLAUDE.md").symlink_to(tmp_path / "shadow")
    done = agentctx(root, isolated_home / ".agentctx", "learn", str(tmp_path))
    assert done.stdout.splitlines() == [
        f"{tmp_path}: skipped, it is outside the repository (learn reads only its files)",
        "Nothing to learn from: every file found was skipped (above).",
    ]
    done = agentctx(root, isolated_home / ".agentctx", "learn")
    assert done.stdout.splitlines() == [
        "CLAUDE.md: skipped, it links outside the repository",
        "Nothing to learn from: every file found was skipped (above).",
    ]
    assert "Zq8hUnLikelySaltValue" not in done.stdout + done.stderr
