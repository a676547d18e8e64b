"""Re-verification of records whose anchored code changed (issue 16, item 4), through real
`agentctx` processes against the Messages API server on 127.0.0.1: a changed anchor yields a
proposal in the review inbox, and nothing is superseded or deleted until a person accepts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from extract_testkit import MessagesServer, Reply, usage

from agentctx_extract.reverify import TOOL_NAME, answer_from, prompt_text

AGENTCTX = Path(sys.executable).parent / "agentctx"
RETRY = "def retry(call):\n    for attempt in range(3):\n        call()\n"


def verdict_reply(answer: dict[str, Any]) -> Reply:
    return Reply(
        body={
            "id": f"msg_{uuid.uuid4().hex[:10]}",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-4-5",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": TOOL_NAME, "input": answer}],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": usage(input_tokens=400, output_tokens=60),
        }
    )


def run(*args: str, home: Path, cwd: Path, env: dict[str, str] | None = None, input: str | None = None) -> Any:
    full = os.environ | {"AGENTCTX_HOME": str(home)} | (env or {})
    done = subprocess.run(
        [str(AGENTCTX), *args], capture_output=True, text=True, env=full, cwd=cwd, input=input, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done


def setup(tmp_path: Path) -> tuple[Path, Path, str, str]:
    repo, home = tmp_path / "repo", tmp_path / "home"
    (repo / "worker").mkdir(parents=True)
    (repo / "worker" / "retry.py").write_text(RETRY)
    (repo / "worker" / "queues.py").write_text("def queue_names():\n    return ['default']\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    run("config", "--no-embeddings", home=home, cwd=repo)
    retry = run("record", "-t", "convention", "--title", "Retries: three attempts", "--body",
                "worker.retry() calls three times.", "--anchor", "worker/retry.py:retry", "--json",
                home=home, cwd=repo)  # fmt: skip
    queues = run("record", "-t", "convention", "--title", "One queue", "--body", "queue_names() lists default.",
                 "--anchor", "worker/queues.py:queue_names", "--json", home=home, cwd=repo)  # fmt: skip
    (repo / "worker" / "retry.py").write_text(RETRY.replace("range(3)", "range(5)"))
    (repo / "worker" / "queues.py").write_text("def queue_names():\n    return ['default', 'mail']\n")
    return repo, home, json.loads(retry.stdout)["id"], json.loads(queues.stdout)["id"]


def test_changed_anchors_become_proposals_and_nothing_changes_until_accepted(tmp_path: Path) -> None:
    repo, home, retry_id, queues_id = setup(tmp_path)
    server = MessagesServer()
    answers = {
        "Retries: three attempts": {
            "verdict": "update",
            "title": "Retries: five attempts",
            "body": "worker.retry() calls five times.",
            "reason": "range(3) became range(5).",
        },
        "One queue": {"verdict": "no_longer_true", "reason": "There are two queues now."},
    }
    server.responder = lambda body: verdict_reply(
        next(answer for title, answer in answers.items() if title in body["messages"][0]["content"])
    )
    env = {
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "sk-ant-test-local-only",
        "AGENTCTX_EXTRACT_BACKOFF": "0",
    }
    try:
        done = run("consolidate", "--force", "--json", home=home, cwd=repo, env=env)
    finally:
        server.close()
    [report] = json.loads(done.stdout)["reverify"].values()
    assert (report["stale"], report["asked"], report["proposed"], report["applied"]) == (2, 2, 2, 0)
    assert report["cost_usd"] > 0
    sent = [body["messages"][0]["content"] for body in server.bodies]
    assert any("range(5)" in text and "Retries: three attempts" in text for text in sent)
    assert all(body["tool_choice"] == {"type": "tool", "name": TOOL_NAME} for body in server.bodies)

    inbox = json.loads(run("review", "--json", home=home, cwd=repo).stdout)
    by_record = {proposal["record_id"]: proposal for proposal in inbox["proposals"]}
    assert (
        by_record[retry_id]["verdict"] == "update" and by_record[retry_id]["body"] == "worker.retry() calls five times."
    )
    assert by_record[queues_id]["verdict"] == "no_longer_true"
    # nothing superseded or deleted yet
    for record_id in (retry_id, queues_id):
        shown = json.loads(run("show", record_id, "--json", home=home, cwd=repo).stdout)
        assert shown["current"] is True
    # a second run asks nothing again while the proposals are open
    again = json.loads(
        run(
            "consolidate",
            "--force",
            "--json",
            home=home,
            cwd=repo,
            env={"ANTHROPIC_API_KEY": "sk-x", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"},
        ).stdout
    )
    assert next(iter(again["reverify"].values()))["asked"] == 0

    # accept the update, reject the other: the first is superseded by the draft, the second stays
    walked = run("review", home=home, cwd=repo, input="a\nr\n")
    assert "accepted" in walked.stdout and "rejected (nothing changed)" in walked.stdout
    old = json.loads(run("show", retry_id, "--json", home=home, cwd=repo).stdout)
    assert old["current"] is False
    new = json.loads(run("show", old["superseded_by"], "--json", home=home, cwd=repo).stdout)
    assert new["title"] == "Retries: five attempts" and new["current"] is True
    assert json.loads(run("show", queues_id, "--json", home=home, cwd=repo).stdout)["current"] is True
    stale = json.loads(run("stale", "--json", home=home, cwd=repo).stdout)
    assert [item["id"] for item in stale] == [queues_id]  # the new record is anchored to the code as it is
    assert json.loads(run("review", "--json", home=home, cwd=repo).stdout)["proposals"] == []


def test_without_a_key_the_marks_alone(tmp_path: Path) -> None:
    repo, home, retry_id, _ = setup(tmp_path)
    env = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": ""}
    done = run("consolidate", "--force", "--json", home=home, cwd=repo, env=env)
    [report] = json.loads(done.stdout)["reverify"].values()
    assert (report["stale"], report["asked"], report["proposed"]) == (2, 0, 0)
    assert any("no-llm" in note for note in report["notes"])
    assert json.loads(run("review", "--json", home=home, cwd=repo).stdout)["proposals"] == []
    assert retry_id in {item["id"] for item in json.loads(run("stale", "--json", home=home, cwd=repo).stdout)}


def test_answers_that_are_not_proposals_are_dropped() -> None:
    assert answer_from({"verdict": "update", "reason": "x"}, 0.1) is None  # an update needs a body
    assert answer_from({"verdict": "maybe"}, 0.1) is None
    assert answer_from("still_true", 0.1) is None
    kept = answer_from({"verdict": "still_true", "reason": "same"}, 0.25)
    assert kept is not None and kept.verdict == "still_true" and kept.cost_usd == 0.25


def test_the_prompt_shows_the_record_and_the_code_now_or_that_it_is_gone() -> None:
    from agentctx_store import Record
    from agentctx_store.anchors import Anchor
    from agentctx_store.stale.reverify import Evidence

    record = Record(record_id="01X", project_id="p", type="decision", title="T", body="B", valid_from="2026-01-01",
                    recorded_at="2026-01-01", source="cli")  # fmt: skip
    text = prompt_text(
        record,
        [
            Evidence(anchor=Anchor(path="a.py", content_hash="h", symbol="f"), text="def f():\n    pass"),
            Evidence(anchor=Anchor(path="b.py", content_hash="h"), text=None),
        ],
    )
    assert "Title: T\nB" in text and "a.py symbol f" in text and "def f():" in text and "(gone:" in text
