"""SessionEnd and PreCompact start real detached work: the same installed agentctx, through the
time-bounded runner, one extraction per session at a time. Each test waits (polling with a
deadline) until the background run has logged its outcome, so nothing outlives the test."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentctx_hooks import state

RunHook = Callable[..., Any]
FIXTURES = Path(__file__).parent / "fixtures" / "claude-code"


def _wait_for(condition: Callable[[], bool], *, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("background work did not finish in time")
        time.sleep(0.1)


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    target = tmp_path / "session.jsonl"
    shutil.copy(FIXTURES / "transcripts" / "2.0.77-main-session.jsonl", target)
    return target


def _payload(tmp_path: Path, transcript: Path, session: str, **fields: Any) -> dict[str, Any]:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    return {"session_id": session, "transcript_path": str(transcript), "cwd": str(project), **fields}


@pytest.mark.slow
def test_session_end_runs_extract_detached_and_releases_the_lock(
    tmp_path: Path, transcript: Path, run_hook: RunHook, hooks_log: Callable[[], str]
) -> None:
    result = run_hook(
        "SessionEnd",
        _payload(tmp_path, transcript, "bg-1", hook_event_name="SessionEnd", reason="other"),
        AGENTCTX_HOOKS_NO_SPAWN="0",
    )
    assert result.code == 0 and result.out == ""
    _wait_for(lambda: "agentctx extract --session-id bg-1" in hooks_log() and " exit " in hooks_log())
    _wait_for(lambda: "--trigger end: exit" in hooks_log())
    assert f"agentctx extract --session-id bg-1 --transcript {transcript} --trigger end: exit 0" in hooks_log()
    lock = Path(state.state_dir()) / "extract-bg-1.lock"
    assert not lock.exists()


def test_a_running_extraction_blocks_a_second_one(
    tmp_path: Path, transcript: Path, run_hook: RunHook, hooks_log: Callable[[], str]
) -> None:
    held = state.try_lock("extract-bg-2", max_age_seconds=600)  # as if an extraction were running
    assert held is not None
    payload = _payload(tmp_path, transcript, "bg-2", hook_event_name="PreCompact", trigger="auto")
    run_hook("PreCompact", payload, AGENTCTX_HOOKS_NO_SPAWN="0")  # would start a checkpoint
    assert Path(held).read_text(encoding="utf-8") == str(os.getpid())  # no runner took it over
    assert not (Path(os.environ["AGENTCTX_HOME"]) / "logs" / "background.log").exists()
    os.unlink(held)


@pytest.mark.slow
def test_session_end_returns_and_consolidates_in_the_background(
    tmp_path: Path, transcript: Path, run_hook: RunHook, hooks_log: Callable[[], str]
) -> None:
    payload = _payload(tmp_path, transcript, "bg-3", hook_event_name="SessionEnd", reason="other")
    result = run_hook("SessionEnd", payload, AGENTCTX_HOOKS_NO_SPAWN="0")
    assert result.code == 0 and result.out == ""
    _wait_for(lambda: f"agentctx consolidate --project {payload['cwd']}:" in hooks_log())
    assert f"agentctx consolidate --project {payload['cwd']}: exit 0" in hooks_log(), hooks_log()
    assert not list(Path(state.state_dir()).glob("consolidate-*.lock"))


def test_a_prompt_in_a_project_with_no_floor_measures_it_in_the_background(
    tmp_path: Path, run_hook: RunHook, hooks_log: Callable[[], str]
) -> None:
    """A store filled through the API (no `learn`, import or consolidation): the first prompt on
    the keyword path starts `agentctx calibrate` detached, which writes the project's floor."""
    import json

    from agentctx_store import NewRecord, Store, paths, resolve_project

    root = tmp_path / "filled"
    (root / ".git").mkdir(parents=True)
    project = resolve_project(root)
    with Store.open() as store:
        for number in range(24):
            store.add(project, NewRecord(type="convention", title=f"Rule {number}", body=f"Body of rule {number}."))
    path = Path(paths.keyword_calibration_path(project.project_id))
    assert not path.exists()
    payload = {"session_id": "floor-1", "cwd": str(root), "prompt": "which rule covers the body?"}
    result = run_hook("UserPromptSubmit", payload, AGENTCTX_HOOKS_NO_SPAWN="0", AGENTCTX_NO_SERVICE="1")
    assert result.code == 0
    _wait_for(lambda: "agentctx calibrate --project" in hooks_log() and " exit " in hooks_log())
    assert json.loads(path.read_text(encoding="utf-8"))["records"] == 24
    assert not (Path(state.state_dir()) / f"calibrate-{project.project_id}.lock").exists()
