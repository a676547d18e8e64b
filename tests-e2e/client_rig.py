"""What the Codex CLI and Gemini CLI acceptance tests share: the seeded store, the other
repository whose records must never leak in, and a record written through Claude Code's hook.

The store is the one `test_claude_code.py` uses: a decision superseded by another (the old
one's words must reach no request) and a bugfix record.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

AGENTCTX = Path(sys.executable).with_name("agentctx")
REPO = Path(__file__).resolve().parents[1]

OLD_TITLE = "Use Redis for the job queue"
OLD_BODY = "Jobs go through Redis lists consumed by rq workers on the cache box."
NEW_TITLE = "Use SQLite for the job queue"
NEW_BODY = "Jobs live in a SQLite table that the worker polls every second; no extra service to run."
BUGFIX_TITLE = "Stripe webhook signatures fail on re-serialised JSON"
BUGFIX_BODY = (
    "src/payments/webhooks.py verified the signature against json.dumps(payload); "
    "Stripe signs the raw bytes, so pass request.body unchanged to stripe.Webhook.construct_event."
)
STRIPE_PROMPT = "The stripe webhook signature check is failing again, what do we know about it?"
REDIS_PROMPT = "Should the job queue workers keep using redis lists and rq?"
IRRELEVANT_PROMPT = "Write a haiku about autumn leaves."
# Another repository's record: a prompt in its words must get nothing in our project.
OTHER_TITLE = "Kafka carries the clickstream events"
OTHER_BODY = "The web repository publishes clickstream events to Kafka topic web.clicks."
OTHER_PROMPT = "How do we publish the clickstream events, kafka topic?"
# Written through Claude Code's PostToolUseFailure hook (the command Claude Code runs).
CLAUDE_ERROR_COMMAND = "python3 -c 'import ledger_sdk_missing'"
CLAUDE_ERROR_PROMPT = "How do I fix the ModuleNotFoundError for ledger_sdk_missing?"


def make_repo(path: Path, manifest: str, text: str) -> Path:
    path.mkdir(parents=True)
    (path / manifest).write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=30)
    return path


def agentctx(env: dict[str, str], cwd: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(AGENTCTX), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    if ok:
        assert done.returncode == 0, f"agentctx {' '.join(args)}: {done.stdout}\n{done.stderr}"
    return done


def record(env: dict[str, str], cwd: Path, *args: str) -> str:
    return json.loads(agentctx(env, cwd, "record", *args, "--json").stdout)["id"]


def seed(env: dict[str, str], project: Path, other: Path) -> dict[str, str]:
    old = record(env, project, "--type", "decision", "--title", OLD_TITLE, "--body", OLD_BODY)
    replaced = json.loads(
        agentctx(env, project, "supersede", old, "--title", NEW_TITLE, "--body", NEW_BODY, "--json").stdout
    )
    bugfix = record(env, project, "--type", "bugfix", "--title", BUGFIX_TITLE, "--body", BUGFIX_BODY)
    foreign = record(env, other, "--type", "decision", "--title", OTHER_TITLE, "--body", OTHER_BODY)
    return {"old": old, "new": replaced["old"]["superseded_by"], "bugfix": bugfix, "other": foreign}


def claude_code_failure(env: dict[str, str], project: Path, session: str = "claude-session-1") -> None:
    """A failed Bash command reported by Claude Code's PostToolUseFailure hook (the payload shape
    of tests-e2e/fixtures/claude-code/), then its SessionEnd, which applies the capture."""
    common = {"session_id": session, "transcript_path": str(project / "t.jsonl"), "cwd": str(project)}
    failure = {
        **common,
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": CLAUDE_ERROR_COMMAND, "description": "Import the SDK"},
        "tool_use_id": "toolu_01",
        "error": 'Exit code 1\nTraceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
        "ModuleNotFoundError: No module named 'ledger_sdk_missing'",
    }
    end = {**common, "hook_event_name": "SessionEnd", "reason": "other"}
    for event, payload in (("PostToolUseFailure", failure), ("SessionEnd", end)):
        done = subprocess.run(
            [str(AGENTCTX), "hook", event],
            cwd=project,
            env=env,
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0 and done.stdout == "", done


def base_env(home: Path, tool_dir: Path) -> dict[str, str]:
    return {
        "PATH": f"{tool_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "AGENTCTX_HOME": str(home / ".agentctx"),
        "TMPDIR": os.environ["TMPDIR"],
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
        "TERM": "dumb",
        "HF_HUB_OFFLINE": "1",
        "AGENTCTX_HOOKS_NO_SPAWN": "1",
    }


def assert_never(raw_requests: list[str], *leaks: str) -> None:
    for raw in raw_requests:
        for leak in leaks:
            assert leak not in raw, f"{leak!r} reached the model"


BACKGROUND_TIMEOUT_S = 120
POSTGRES = "Use PostgreSQL with SKIP LOCKED for the job queue"
DECISION_PROMPT = (
    "Workers keep hitting 'database is locked'. Decision: move the job queue to PostgreSQL with SKIP LOCKED."
)


def extraction_answer(supersedes: str) -> dict[str, Any]:
    """What the mocked Claude Haiku answers `record_session_context` with: a decision that
    supersedes the current job-queue decision."""
    return {
        "decisions": [
            {"what": POSTGRES, "rationale": "SQLite locks.", "supersedes": supersedes, "confidence": "explicit"}
        ],
        "preferences": [],
        "conventions": [],
        "active_work": {"current_task": "", "blockers": [], "next_steps": [], "open_questions": []},
        "gotchas": [],
        "flush_ok": False,
    }


def wait_for_background(log_path: Path, *commands: str, runs: int = 1) -> str:
    """hooks.log once every named background run (`extract`, `consolidate`) has logged its exit
    (`runs` times each)."""
    import time

    deadline = time.monotonic() + BACKGROUND_TIMEOUT_S
    while True:
        log = log_path.read_text(encoding="utf-8") if log_path.exists() else ""
        finished = [line for line in log.splitlines() if " background " in line and ": exit " in line]
        if all(sum(f"agentctx {command} " in line for line in finished) >= runs for command in commands):
            return log
        assert time.monotonic() < deadline, f"background {commands} did not finish:\n{log}"
        time.sleep(0.3)
