"""When extraction runs, end to end (issue 14): real `agentctx hook` processes, the real detached
`agentctx extract` they start, the Messages API server on 127.0.0.1 counting requests.

- a session is extracted once, at SessionEnd, however many Stops came before;
- a session killed without SessionEnd is extracted by the next SessionStart of its project,
  once, even when two SessionStarts race;
- each run's tokens and cost are on the session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from agentctx_store import Store, config
from extract_testkit import MessagesServer, empty_answer, tool_reply, transcript_lines, usage

AGENTCTX = str(Path(sys.executable).parent / "agentctx")


@pytest.fixture
def env(api: MessagesServer) -> dict[str, str]:
    """The hooks' environment with spawns on; no embeddings (the consolidation they start stays quick)."""
    config.save({"embeddings": "false"})
    return {key: value for key, value in os.environ.items() if key != "AGENTCTX_HOOKS_NO_SPAWN"}


def hook(event: str, payload: dict[str, Any], env: dict[str, str], *, via_shell: bool = False) -> None:
    command = [AGENTCTX, "hook", event]
    if via_shell:  # the hook's parent is a shell that exits with it, as a killed client's pid would be gone
        command = ["/bin/sh", "-c", f"{AGENTCTX} hook {event}; true"]
    result = subprocess.run(command, input=json.dumps(payload), capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr


def wait_for_background(deadline_s: float = 60.0) -> None:
    """Until no background run holds its spawn lock (the runner removes it when its child ends)."""
    folder = Path(os.environ["AGENTCTX_HOME"]) / "state"  # spawn locks live with the session state
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if not any(folder.glob("*.lock")):
            return
        time.sleep(0.1)
    raise AssertionError(f"background work still running: {list(folder.glob('*.lock'))}")


def add_turns(transcript: Path, project_dir: Path, session: str, start: int, count: int) -> None:
    turns: list[tuple[str, Any]] = []
    for index in range(start, start + count):
        turns += [
            ("developer", f"Rule {index}: always run the linter before committing part {index}."),
            ("tool", ("Bash", {"command": "ruff check"}, "\n".join(f"line {n}" for n in range(40)))),
            ("claude", f"Understood, rule {index} noted."),
        ]
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(line) + "\n" for line in transcript_lines(project_dir, session, turns)))


def payload(event: str, session: str, transcript: Path, project_dir: Path, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": str(transcript),
        "cwd": str(project_dir),
        "hook_event_name": event,
        **fields,
    }


def answer_all(api: MessagesServer) -> None:
    api.responder = lambda body: tool_reply(empty_answer(), use=usage(5000, 300, cache_read=0))


def test_a_session_is_extracted_once_at_its_end(
    api: MessagesServer, env: dict[str, str], project_dir: Path, tmp_path: Path
) -> None:
    answer_all(api)
    transcript = tmp_path / "s-end.jsonl"
    hook("SessionStart", payload("SessionStart", "s-end", transcript, project_dir, source="startup"), env)
    for turn in range(8):
        add_turns(transcript, project_dir, "s-end", turn, 1)
        hook("Stop", payload("Stop", "s-end", transcript, project_dir, stop_hook_active=False), env)
        wait_for_background()
    assert api.requests == []  # no Stop below the threshold sent anything

    hook("SessionEnd", payload("SessionEnd", "s-end", transcript, project_dir, reason="prompt_input_exit"), env)
    wait_for_background()
    (request,) = api.requests
    message = request["body"]["messages"][0]["content"]
    assert "Rule 0:" in message and "Rule 7:" in message
    with Store.open() as store:
        session = store.get_session("s-end")
    assert session is not None
    (run,) = session["meta"]["extraction"]["runs_log"]
    assert run["trigger"] == "end" and run["input_tokens"] == 5000 and run["output_tokens"] == 300
    assert session["extraction_cost_usd"] == pytest.approx(run["cost_usd"])
    assert not (Path(os.environ["AGENTCTX_HOME"]) / "open-sessions" / "s-end.json").exists()


def test_a_killed_session_is_extracted_once_by_the_next_session_starts(
    api: MessagesServer, env: dict[str, str], project_dir: Path, tmp_path: Path
) -> None:
    answer_all(api)
    killed = tmp_path / "killed.jsonl"
    hook("SessionStart", payload("SessionStart", "killed", killed, project_dir, source="startup"), env, via_shell=True)
    add_turns(killed, project_dir, "killed", 0, 3)
    hook("Stop", payload("Stop", "killed", killed, project_dir), env)
    wait_for_background()
    assert api.requests == []  # then the client dies: no SessionEnd

    starts = [
        subprocess.Popen(
            [AGENTCTX, "hook", "SessionStart"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
        )
        for _ in range(2)
    ]
    for index, process in enumerate(starts):
        racing = tmp_path / f"next-{index}.jsonl"
        racing.write_text("", encoding="utf-8")
        process.communicate(json.dumps(payload("SessionStart", f"next-{index}", racing, project_dir, source="startup")))
    wait_for_background()
    (request,) = api.requests
    assert "Rule 2:" in request["body"]["messages"][0]["content"]
    with Store.open() as store:
        session = store.get_session("killed")
    assert session is not None and [run["trigger"] for run in session["meta"]["extraction"]["runs_log"]] == ["sweep"]

    later = tmp_path / "later.jsonl"
    hook("SessionStart", payload("SessionStart", "later", later, project_dir, source="startup"), env)
    wait_for_background()
    assert len(api.requests) == 1  # swept once: the marker is gone
    hooks_log = (Path(os.environ["AGENTCTX_HOME"]) / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert hooks_log.count("sweeping session killed") == 1  # one of the racing starts won the spawn lock


def test_a_long_session_checkpoints_at_a_stop_and_session_end_sends_only_the_rest(
    api: MessagesServer, env: dict[str, str], project_dir: Path, tmp_path: Path
) -> None:
    answer_all(api)
    transcript = tmp_path / "s-long.jsonl"
    hook("SessionStart", payload("SessionStart", "s-long", transcript, project_dir, source="startup"), env)
    long_turns: list[tuple[str, Any]] = [
        ("developer", f"Part {index}: " + " ".join(f"detail{index}x{n}" for n in range(700))) for index in range(9)
    ]
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(line) + "\n" for line in transcript_lines(project_dir, "s-long", long_turns)))
    hook("Stop", payload("Stop", "s-long", transcript, project_dir), env)  # past the threshold
    wait_for_background()
    (checkpoint,) = api.requests
    assert "Part 0:" in checkpoint["body"]["messages"][0]["content"]

    add_turns(transcript, project_dir, "s-long", 100, 2)
    hook("Stop", payload("Stop", "s-long", transcript, project_dir), env)  # counts afresh: no checkpoint
    wait_for_background()
    assert len(api.requests) == 1
    hook("SessionEnd", payload("SessionEnd", "s-long", transcript, project_dir, reason="other"), env)
    wait_for_background()
    rest = api.requests[1]["body"]["messages"][0]["content"]
    assert "Rule 100:" in rest and "Rule 101:" in rest
    new_part = rest.split("New since the last extraction", 1)[1]
    assert "Part " not in new_part  # the checkpointed turns come only as the marked context before it
    with Store.open() as store:
        session = store.get_session("s-long")
    assert session is not None
    assert [run["trigger"] for run in session["meta"]["extraction"]["runs_log"]] == ["stop", "end"]
