"""`agentctx learn --llm` as a subprocess of the installed entry point, talking to the local
Messages API server: Haiku's valid answers type and title the rules, anything else keeps
learn's own, and no request goes out without a key, over the cap, or for unchanged rules."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agentctx_store import Store, config, resolve_project
from agentctx_store.spend import month_spent
from extract_testkit import MessagesServer, Reply, tool_reply, usage

from agentctx_extract.learn_llm import BATCH_RULES, TOOL_NAME, SentRule, batches, valid_answers

AGENTCTX = str(Path(sys.executable).parent / "agentctx")
SECRET = "sk-ant-api03-Zq8xT2vLmN4pR7sK1wY6bH3cF9gJ0dE5aQ2uI8oP"
AGENTS_MD = f"""# Agent guide

## Unit tests

Run the unit tests with `uv run pytest -q` before every commit.

## Online tests

Tests that touch the network are marked `online` and skipped in CI.

## Deploy previews

Deploy previews read the token from `DEPLOY_TOKEN={SECRET}` in the CI settings.

## Pushing

Ask before pushing to the main branch; open a pull request instead.
"""


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([AGENTCTX, *args], capture_output=True, text=True, timeout=120, env=env or dict(os.environ))


@pytest.fixture
def repo(project_dir: Path) -> Path:
    (project_dir / ".git").mkdir()
    (project_dir / "AGENTS.md").write_text(AGENTS_MD, encoding="utf-8")
    return project_dir


def rules_sent(body: dict[str, Any]) -> dict[int, str]:
    """Rule id → the text sent for it, from one request."""
    text = body["messages"][0]["content"]
    return {int(number): rule for number, rule in re.findall(r'<rule id="(\d+)"[^>]*>\n(.*?)\n</rule>', text, re.S)}


def answer_all(body: dict[str, Any]) -> Reply:
    """Every rule typed `discovery` and titled `Haiku title N`."""
    rules = [{"id": number, "type": "discovery", "title": f"Haiku title {number}"} for number in rules_sent(body)]
    return tool_reply({"rules": rules}, name=TOOL_NAME, use=usage(2_000, 200))


def learned(project_dir: Path) -> dict[str, tuple[str, str]]:
    """Current learned records: first words of the body → (type, title)."""
    with Store.open() as store:
        records = store.list_records(resolve_project(project_dir), limit=None)
    return {" ".join(record.body.split()[:3]): (record.type, record.title) for record in records}


def deterministic(project_dir: Path) -> dict[str, tuple[str, str]]:
    result = run("learn", "--dry-run", "--json", "-p", str(project_dir))
    assert result.returncode == 0, result.stderr
    actions = json.loads(result.stdout)["actions"]
    text = (project_dir / "AGENTS.md").read_text(encoding="utf-8").splitlines()
    out = {}
    for action in actions:
        first = text[action["lines"][0] - 1].lstrip("- ")
        out[" ".join(first.split()[:3])] = (action["type"], action["title"])
    return out


def test_haiku_types_and_titles_the_rules_once_and_the_cost_is_recorded(api: MessagesServer, repo: Path) -> None:
    before = deterministic(repo)
    assert len(before) == 4
    api.responder = answer_all
    result = run("learn", "--llm", "-p", str(repo))
    assert result.returncode == 0, result.stderr
    (request,) = api.requests  # all rules in one request
    body = request["body"]
    assert body["model"] == "claude-haiku-4-5"
    assert body["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    assert [tool["name"] for tool in body["tools"]] == [TOOL_NAME]
    assert len(rules_sent(body)) == 4
    assert SECRET not in api.everything_received() and "[REDACTED" in body["messages"][0]["content"]
    records = learned(repo)
    assert sorted(records.values()) == [("discovery", f"Haiku title {n}") for n in range(1, 5)]
    assert records.keys() == before.keys()
    assert "--llm: Haiku answered for 4 of 4 rules (1 request, $0.0030)" in result.stdout
    project = resolve_project(repo)
    with Store.open() as store:
        assert month_spent(store) == pytest.approx((2_000 * 1.0 + 200 * 5.0) / 1e6)
        (session,) = [s for s in store.list_sessions(project) if s["session_id"].startswith("learn-")]
    assert session["meta"]["extraction"]["runs_log"][0]["trigger"] == "learn"

    again = run("learn", "--llm", "-p", str(repo))  # unchanged rules: nothing to send
    assert again.returncode == 0, again.stderr
    assert len(api.requests) == 1
    assert "--llm: no new or changed rules; nothing sent." in again.stdout
    assert learned(repo) == records

    agents = repo / "AGENTS.md"
    agents.write_text(agents.read_text().replace("skipped in CI", "skipped in CI and on laptops"))
    edited = run("learn", "--llm", "-p", str(repo))
    assert edited.returncode == 0, edited.stderr
    assert len(api.requests) == 2
    (sent,) = rules_sent(api.requests[1]["body"]).values()  # only the changed rule
    assert "skipped in CI and on laptops" in sent
    assert "1 updated (superseded)" in edited.stdout


def test_invalid_answers_are_ignored_rule_by_rule(api: MessagesServer, repo: Path) -> None:
    before = deterministic(repo)

    def answer(body: dict[str, Any]) -> Reply:
        assert sorted(rules_sent(body)) == [1, 2, 3, 4]
        rules = [
            {"id": 1, "type": "bogus", "title": ""},  # neither is valid
            {"id": 2, "type": "decision", "title": "x" * 200},  # type valid, title too long
            {"id": 2, "type": "preference", "title": "A second answer for rule 2"},  # the first answer counts
            {"id": 99, "type": "decision", "title": "No such rule"},
            "not an entry",
            # rule 3 not answered; rule 4 answered with a valid title only
            {"id": "4", "type": 7, "title": "  Ask   before pushing to main  "},
        ]
        return tool_reply({"rules": rules}, name=TOOL_NAME)

    api.responder = answer
    result = run("learn", "--llm", "-p", str(repo))
    assert result.returncode == 0, result.stderr
    records = learned(repo)
    keys = list(before)
    assert records[keys[0]] == before[keys[0]]
    assert records[keys[1]] == ("decision", before[keys[1]][1])
    assert records[keys[2]] == before[keys[2]]
    assert records[keys[3]] == (before[keys[3]][0], "Ask before pushing to main")
    assert "--llm: Haiku answered for 2 of 4 rules" in result.stdout


def test_a_failing_api_gives_the_deterministic_records_and_one_line(api: MessagesServer, repo: Path) -> None:
    before = deterministic(repo)  # the server answers 500 to everything (nothing scripted)
    result = run("learn", "--llm", "-p", str(repo))
    assert result.returncode == 0, result.stderr
    assert len(api.requests) == 3  # extraction's retry settings: 3 attempts
    assert learned(repo) == before
    notes = [line for line in result.stdout.splitlines() if line.startswith("--llm:")]
    assert notes == [
        "--llm: Haiku failed (learn 1/1: HTTP 500 after 3 attempt(s)); rules keep learn's own types and titles."
    ]
    with Store.open() as store:
        assert month_spent(store) == 0  # errors are not paid


def test_without_a_key_nothing_is_sent(api: MessagesServer, repo: Path) -> None:
    before = deterministic(repo)
    env = dict(os.environ)
    env.pop("ANTHROPIC_API_KEY")
    result = run("learn", "--llm", "-p", str(repo), env=env)
    assert result.returncode == 0, result.stderr
    assert api.requests == []
    assert learned(repo) == before
    assert "--llm: no ANTHROPIC_API_KEY" in result.stdout and "; nothing sent" in result.stdout


def test_llm_off_in_config_sends_nothing(api: MessagesServer, repo: Path) -> None:
    config.save({"llm": "false"})
    result = run("learn", "--llm", "--json", "-p", str(repo))
    assert result.returncode == 0, result.stderr
    assert api.requests == []
    assert json.loads(result.stdout)["llm"]["status"] == "disabled"
    assert len(learned(repo)) == 4


def test_over_the_cap_nothing_is_sent_and_learn_still_works(api: MessagesServer, repo: Path) -> None:
    before = deterministic(repo)
    project = resolve_project(repo)
    with Store.open() as store:
        store.add_extraction_cost("an-earlier-session", project, 4.999)  # the default cap is $5
    api.responder = answer_all
    result = run("learn", "--llm", "-p", str(repo))
    assert result.returncode == 0, result.stderr
    assert api.requests == []
    assert learned(repo) == before
    (note,) = [line for line in result.stdout.splitlines() if line.startswith("--llm:")]
    assert note.startswith("--llm: monthly LLM cap reached ($4.9990 spent") and "nothing sent" in note


def test_dry_run_sends_nothing(api: MessagesServer, repo: Path) -> None:
    api.responder = answer_all
    result = run("learn", "--llm", "--dry-run", "-p", str(repo))
    assert result.returncode == 0, result.stderr
    assert api.requests == []
    assert "--llm: 4 rules would go to Haiku; nothing sent on --dry-run." in result.stdout
    assert learned(repo) == {}


def test_many_rules_go_in_few_requests() -> None:
    rules = [SentRule(number=n, index=n, text="a rule " * 20) for n in range(1, 2 * BATCH_RULES + 11)]
    assert [len(group) for group in batches(rules)] == [BATCH_RULES, BATCH_RULES, 10]
    long_rules = [SentRule(number=n, index=n, text="x" * 20_000) for n in range(5)]
    assert [len(group) for group in batches(long_rules)] == [2, 2, 1]


def test_valid_answers_keep_only_known_ids_types_and_fitting_titles() -> None:
    answer = {
        "rules": [
            {"id": 1, "type": "Convention", "title": "Use uv."},
            {"id": 2, "type": "handover", "title": "[REDACTED:anthropic-key] in CI"},
            {"id": True, "type": "decision", "title": "A boolean is not an id"},
        ]
    }
    assert valid_answers(answer, {1, 2}) == {1: ("convention", "Use uv")}
    assert valid_answers({"rules": "nope"}, {1}) == {}
    assert valid_answers(["not", "a", "dict"], {1}) == {}
