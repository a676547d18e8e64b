"""Evidence-anchored freshness through real processes on a git repository (issue 16, docs/freshness.md).

Three facts anchored to code; one anchored function is edited, one anchored file deleted, one
left alone. The next prompt hook marks exactly the first two; once every anchor of a record is
gone it is not injected; `stale` lists two; `confirm` clears one; a moved symbol is offered.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

AGENTCTX = Path(sys.executable).parent / "agentctx"
PROMPT = "how does the worker retry jobs, run its tests and name its queues?"

RETRY = """import time


def retry(call, attempts=3):
    for attempt in range(attempts):
        try:
            return call()
        except OSError:
            time.sleep(2**attempt)
    raise RuntimeError("gave up")
"""
QUEUES = """def queue_names():
    return ["default", "mail"]


def unrelated():
    return None
"""


def run(*args: str, home: Path, cwd: Path, input: str | None = None) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"AGENTCTX_HOME": str(home), "AGENTCTX_HOOKS_NO_SPAWN": "1"}
    return subprocess.run(
        [str(AGENTCTX), *args], capture_output=True, text=True, env=env, cwd=cwd, input=input, timeout=60, check=False
    )


def prompt_hook(repo: Path, home: Path, session: str) -> str:
    payload = {"session_id": session, "cwd": str(repo), "prompt": PROMPT, "hook_event_name": "UserPromptSubmit"}
    done = run("hook", "UserPromptSubmit", home=home, cwd=repo, input=json.dumps(payload))
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return ""
    return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def element(text: str, record_id: str) -> str:
    """The opening tag of a record's element in the injected text ("" when it is not there)."""
    for part in text.split("\n\n"):
        if part.startswith(f'<agentctx-record id="{record_id}"'):
            return part.split("\n", 1)[0]
    return ""


def test_three_anchored_facts_one_edited_one_deleted_one_untouched(tmp_path: Path) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    (repo / "worker").mkdir(parents=True)
    (repo / "scripts").mkdir()
    (repo / "worker" / "retry.py").write_text(RETRY)
    (repo / "worker" / "queues.py").write_text(QUEUES)
    (repo / "Makefile").write_text("test:\n\tscripts/test.sh\n")
    (repo / "scripts" / "test.sh").write_text("#!/bin/sh\npytest -q\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "."], cwd=repo, check=True)

    def record(title: str, body: str, *anchors: str) -> str:
        args = [f"--anchor={anchor}" for anchor in anchors]
        done = run("record", "-t", "convention", "--title", title, "--body", body, *args, "--json", home=home, cwd=repo)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["id"]

    edited = record("Worker retry backs off exponentially", "retry() in worker/retry.py sleeps 2**attempt.",
                    "worker/retry.py:retry")  # fmt: skip
    deleted = record("Worker tests run with make test", "make test runs scripts/test.sh (pytest -q).",
                     "Makefile", "scripts/test.sh")  # fmt: skip
    untouched = record("Worker queue names come from queue_names()", "worker/queues.py lists the queues.",
                       "worker/queues.py:queue_names")  # fmt: skip

    before = prompt_hook(repo, home, "s-before")
    assert {element(before, rid) != "" for rid in (edited, deleted, untouched)} == {True}
    assert "anchor-" not in before

    (repo / "worker" / "retry.py").write_text(RETRY.replace("2**attempt", "attempt * 0.5"))
    (repo / "Makefile").unlink()
    after = prompt_hook(repo, home, "s-after")
    assert 'anchor-changed="worker/retry.py"' in element(after, edited)
    assert 'anchor-missing="Makefile"' in element(after, deleted) and "anchor-changed" not in element(after, deleted)
    assert element(after, untouched) != "" and "anchor-" not in element(after, untouched)

    listed = json.loads(run("stale", "--json", home=home, cwd=repo).stdout)
    assert sorted(item["id"] for item in listed) == sorted([edited, deleted])
    by_id = {item["id"]: item for item in listed}
    assert by_id[edited]["changed"] == ["worker/retry.py"] and by_id[deleted]["missing"] == ["Makefile"]

    (repo / "scripts" / "test.sh").unlink()  # every anchor of `deleted` is gone now
    gone = prompt_hook(repo, home, "s-gone")
    assert element(gone, deleted) == ""
    assert element(gone, edited) != "" and element(gone, untouched) != ""
    assert json.loads(run("stale", "--json", home=home, cwd=repo).stdout)[-1]["all_missing"] is True

    confirmed = run("stale", "confirm", edited, home=home, cwd=repo)
    assert confirmed.returncode == 0, confirmed.stderr
    listed = json.loads(run("stale", "--json", home=home, cwd=repo).stdout)
    assert [item["id"] for item in listed] == [deleted]
    assert "anchor-" not in element(prompt_hook(repo, home, "s-confirmed"), edited)

    # queue_names() moves to another file: offered as a re-anchor, and taking it clears the record
    (repo / "worker" / "queues.py").write_text("def unrelated():\n    return None\n")
    (repo / "worker" / "config.py").write_text('def queue_names():\n    return ["default", "mail"]\n')
    listed = {item["id"]: item for item in json.loads(run("stale", "--json", home=home, cwd=repo).stdout)}
    assert listed[untouched]["moved"] == {"worker/queues.py:queue_names": ["worker/config.py:queue_names"]}
    text = run("stale", home=home, cwd=repo).stdout
    assert f"agentctx stale confirm {untouched} --anchor worker/config.py:queue_names" in text
    assert (
        run("stale", "confirm", untouched, "--anchor", "worker/config.py:queue_names", home=home, cwd=repo).returncode
        == 0
    )
    assert untouched not in {item["id"] for item in json.loads(run("stale", "--json", home=home, cwd=repo).stdout)}

    deleted_now = run("stale", "delete", deleted, "--yes", home=home, cwd=repo)
    assert deleted_now.returncode == 0, deleted_now.stderr
    assert json.loads(run("stale", "--json", home=home, cwd=repo).stdout) == []


def test_bad_anchors_are_one_line_errors_and_record_nothing(tmp_path: Path) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    repo.mkdir()
    (repo / "a.py").write_text("def f():\n    return 1\n")
    for spec, says in (
        ("missing.py", "cannot read"),
        ("a.py:g", "symbol 'g' is not defined"),
        ("a.py:9-12", "past the end"),
        ("../x.py", "leaves the project"),
        ("a.py:3-1", "not a range"),
    ):
        done = run("record", "-t", "decision", "--title", "T", "--body", "B", "--anchor", spec, home=home, cwd=repo)
        assert done.returncode == 1 and done.stderr.startswith("Error: ") and says in done.stderr, (spec, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1
    assert "No matching records" in run("search", "T", "--all", home=home, cwd=repo).stdout
