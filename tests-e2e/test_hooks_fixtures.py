"""Every captured Claude Code payload through the installed `agentctx hook` entry point.

First each payload is fed exactly as captured (its cwd `/home/dev/src/demo-app` does not exist
here, like a deleted checkout would not): exit 0 and stdout empty or one valid hook object.
Then the events we handle are replayed with the cwd moved into a real temp project to check
their effect on the store.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentctx_store import NewRecord, Store, resolve_project
from agentctx_store.budget import PROMPT, SESSION_START
from agentctx_store.fence import DIGEST_OPEN

FIXTURES = Path(__file__).parent / "fixtures" / "claude-code"
PAYLOADS = sorted(path for folder in ("hooks", "hooks-2.0.77") for path in (FIXTURES / folder).glob("*.json"))
HANDLED = {
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "PostToolUseFailure",
    "CwdChanged",
    "PreCompact",
    "Stop",
    "SessionEnd",
}
CONTEXT_EVENTS = {"SessionStart", "UserPromptSubmit"}
RunHook = Callable[..., Any]


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _moved(payload: dict[str, Any], project: Path) -> dict[str, Any]:
    """The payload with its paths moved from /home/dev/src/demo-app into `project`."""
    text = json.dumps(payload).replace("/home/dev/src/demo-app", str(project))
    return json.loads(text)


def test_the_fixtures_cover_both_client_versions() -> None:
    assert len(PAYLOADS) >= 50
    events = {_load(path)["hook_event_name"] for path in PAYLOADS}
    assert events >= HANDLED


@pytest.mark.parametrize("path", PAYLOADS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_captured_payload_as_is(path: Path, run_hook: RunHook, hooks_log: Callable[[], str]) -> None:
    payload = _load(path)
    event = payload["hook_event_name"]
    result = run_hook(event, path.read_bytes())
    assert result.code == 0
    output = result.output
    if output is not None:
        assert event in CONTEXT_EVENTS
        assert output["hookSpecificOutput"]["hookEventName"] == event
        text = output["hookSpecificOutput"]["additionalContext"]
        assert isinstance(text, str) and text
        assert (SESSION_START if event == "SessionStart" else PROMPT).allows(text)
    assert " error " not in hooks_log(), hooks_log()
    if event == "SessionStart" and Path(payload["cwd"]).is_dir():
        assert output is not None  # even with an empty store: the profile heading and the MCP hint
    elif event == "SessionStart":  # the captured cwd does not exist here: no phantom project (issue 13)
        assert output is None and "no usable cwd" in hooks_log()
        from agentctx_store import Store

        with Store.open() as store:
            assert store.list_projects() == []


@pytest.fixture
def demo_app(tmp_path: Path) -> Path:
    root = tmp_path / "src" / "demo-app"
    (root / "sub").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "demo-app"\nrequires-python = ">=3.11"\n', encoding="utf-8")
    return root


@pytest.mark.parametrize(
    "path",
    [path for path in PAYLOADS if _load(path)["hook_event_name"] in HANDLED],
    ids=lambda path: f"{path.parent.name}/{path.name}",
)
def test_handled_payload_in_a_real_project(
    path: Path, demo_app: Path, run_hook: RunHook, hooks_log: Callable[[], str]
) -> None:
    payload = _moved(_load(path), demo_app)
    result = run_hook(payload["hook_event_name"], payload)
    assert result.code == 0
    assert result.output is None or payload["hook_event_name"] in CONTEXT_EVENTS
    assert " error " not in hooks_log(), hooks_log()


def test_session_start_composes_the_digest_with_the_profile(demo_app: Path, run_hook: RunHook) -> None:
    for name in (
        "SessionStart.json",
        "SessionStart.resume.json",
        "SessionStart.fork.json",
        "SessionStart.compact.json",
    ):
        text = run_hook("SessionStart", _moved(load := _load(FIXTURES / "hooks" / name), demo_app)).context
        assert text.startswith(f"{DIGEST_OPEN}\n## Project: demo-app"), (name, load)
        assert "Python >=3.11" in text  # detected once, on the first start in this project
    digests = list((Path(os.environ["AGENTCTX_HOME"]) / "digests").glob("*.md"))
    assert len(digests) == 1


def test_user_prompt_submit_injects_the_recorded_decision(demo_app: Path, run_hook: RunHook) -> None:
    project = resolve_project(demo_app)
    with Store.open() as store:
        for index in range(30):
            store.add(project, NewRecord(type="convention", title=f"Unrelated rule {index}", body=f"Topic {index}."))
        decision = store.add(
            project,
            NewRecord(
                type="decision",
                title="The database is SQLite",
                body="We decided on SQLite for the database: one file, WAL.",
            ),
        )
    for folder in ("hooks", "hooks-2.0.77"):
        text = run_hook(
            "UserPromptSubmit",
            _moved(_load(FIXTURES / folder / "UserPromptSubmit.json"), demo_app) | {"session_id": folder},
        ).context
        assert f'id="{decision.record_id}"' in text
    notification = _moved(_load(FIXTURES / "hooks" / "UserPromptSubmit.task-notification.json"), demo_app)
    assert run_hook("UserPromptSubmit", notification).output is None
    with Store.open() as store:
        session = store.get_session("hooks")
        assert session is not None and session["tokens_injected"] > 0 and session["injections"] == 1


def test_post_tool_use_fixtures_capture_nothing_they_should_not(demo_app: Path, run_hook: RunHook) -> None:
    names = [
        "PostToolUse.json",
        "PostToolUse.Read.json",
        "PostToolUse.mcp.json",
        "PostToolUse.Agent-background.json",
        "PostToolUse.Agent-foreground.json",
        "PostToolUse.subagent-Bash.json",
        "PostToolUseFailure.json",
        "PostToolUseFailure.Read.json",
    ]
    for name in names:
        payload = _moved(_load(FIXTURES / "hooks" / name), demo_app)
        assert run_hook(payload["hook_event_name"], payload).output is None
    with Store.open() as store:
        assert store.list_records(resolve_project(demo_app)) == []  # `echo`, a read, exit 3 with no error text
        assert store.conn.execute("SELECT count(*) FROM nodes WHERE kind = 'file'").fetchone()[0] == 0


def test_pre_compact_then_session_start_compact_restores_the_working_state(demo_app: Path, run_hook: RunHook) -> None:
    prompt = _moved(_load(FIXTURES / "hooks" / "UserPromptSubmit.json"), demo_app)
    run_hook("UserPromptSubmit", prompt)
    run_hook("PreCompact", _moved(_load(FIXTURES / "hooks" / "PreCompact.json"), demo_app))
    with Store.open() as store:
        meta = store.get_session(prompt["session_id"])["meta"]
    assert "Look up what we decided about the database" in meta["snapshot"]
    text = run_hook("SessionStart", _moved(_load(FIXTURES / "hooks" / "SessionStart.compact.json"), demo_app)).context
    assert "## Before compaction" in text and "Look up what we decided about the database" in text


def test_cwd_changed_into_another_project_detects_its_profile(
    tmp_path: Path, demo_app: Path, run_hook: RunHook
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "Cargo.toml").write_text('[package]\nname = "other"\nedition = "2021"\n', encoding="utf-8")
    payload = _moved(_load(FIXTURES / "hooks" / "CwdChanged.json"), demo_app) | {
        "new_cwd": str(other),
        "cwd": str(other),
    }
    assert run_hook("CwdChanged", payload).output is None
    with Store.open() as store:
        profile = store.list_records(resolve_project(other), types=["profile"])
    assert [record.body for record in profile if record.key == "stack"] == ["Rust (edition 2021)"]


def test_session_end_asks_for_background_work_and_an_ordinary_stop_does_not(
    demo_app: Path, run_hook: RunHook, hooks_log: Callable[[], str]
) -> None:
    stop = _moved(_load(FIXTURES / "hooks" / "Stop.json"), demo_app)
    run_hook("Stop", stop)
    assert "extract --session-id" not in hooks_log()  # extraction waits for the session's end
    end = _moved(_load(FIXTURES / "hooks" / "SessionEnd.json"), demo_app)
    run_hook("SessionEnd", end)
    assert (
        f"extract --session-id {end['session_id']} --transcript {end['transcript_path']} --trigger end" in hooks_log()
    )
    assert f"consolidate --project {demo_app}" in hooks_log()
    with Store.open() as store:
        assert store.get_session(end["session_id"])["ended_at"]
