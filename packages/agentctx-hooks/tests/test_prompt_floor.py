"""The prompt hook's keyword floor is the project's calibrated one (issue 31), read from the small
file the calibration leaves (`agentctx_store.calibration`), never computed at prompt time; a
missing, damaged or oversized file means the constant floor, one log line and a normal exit."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentctx_store import Project, Store, paths
from agentctx_store.calibration import KEYWORD_BOUNDS, MAX_FILE_BYTES, keyword_level, refresh_keyword
from agentctx_store.jsontext import dumps
from agentctx_store.prompt_answer import PROMPT_TYPES

from agentctx_hooks import log

Hook = Callable[..., dict[str, Any] | None]
PROMPT = "what about the signing keys for the webhook payloads?"


@pytest.fixture
def level(store: Store, project: Project, add: Callable[..., Any], filler: Callable[..., None]) -> float:
    """A store where PROMPT clears the constant floor (1.4) and not the highest calibrated one."""
    filler(project)
    add(project, "Rotate webhook signing secrets", "Webhook signature secrets rotate every 90 days.")
    found = keyword_level(store, project, PROMPT, types=PROMPT_TYPES)
    low, high = KEYWORD_BOUNDS
    assert 1.4 < found < high, found  # the premise of these tests
    return found


def write_floor(project: Project, text: str) -> Path:
    path = Path(paths.keyword_calibration_path(project.project_id))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def ask(hook: Hook, payload: Callable[..., dict[str, Any]], project_dir: Path) -> dict[str, Any] | None:
    return hook("UserPromptSubmit", payload("UserPromptSubmit", project_dir, prompt=PROMPT))


def log_lines() -> list[str]:
    try:
        return Path(log.log_path()).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []


def test_the_hook_applies_the_persisted_keyword_floor(
    hook: Hook, project: Project, project_dir: Path, payload: Callable[..., dict[str, Any]], level: float
) -> None:
    assert ask(hook, payload, project_dir) is not None  # no calibration: the constant floor answers
    write_floor(project, dumps({"records": 31, "floor": min(KEYWORD_BOUNDS[1], level + 0.05)}))
    assert ask(hook, payload, project_dir) is None  # the calibrated floor is above this prompt
    write_floor(project, dumps({"records": 31, "floor": level - 0.05}))
    assert ask(hook, payload, project_dir) is not None


def test_the_subagent_hook_applies_it_too(
    hook: Hook, project: Project, project_dir: Path, payload: Callable[..., dict[str, Any]], level: float
) -> None:
    write_floor(project, dumps({"records": 31, "floor": min(KEYWORD_BOUNDS[1], level + 0.05)}))
    result = hook("SubagentStart", payload("SubagentStart", project_dir, agent_type="general-purpose", prompt=PROMPT))
    assert "Rotate webhook signing secrets" not in str(result)


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        dumps({"records": 31, "floor": "2.0"}),
        dumps({"records": 31, "floor": 9.0}),  # outside the bounds a calibration can set
        dumps({"records": 31, "floor": True}),
        dumps({"floor": 2.0}),
        dumps([2.0]),
        "\udcff",
        " " * (MAX_FILE_BYTES + 1) + dumps({"records": 31, "floor": 2.2}),
    ],
    ids=["broken", "string", "out-of-bounds", "bool", "no-records", "array", "not-utf8", "oversized"],
)
def test_a_hostile_calibration_falls_back_to_the_constant_floor_with_one_log_line(
    hook: Hook, project: Project, project_dir: Path, payload: Callable[..., dict[str, Any]], level: float, text: str
) -> None:
    path = Path(paths.keyword_calibration_path(project.project_id))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    before = len(log_lines())
    assert ask(hook, payload, project_dir) is not None  # the constant floor: the prompt is answered
    added = log_lines()[before:]
    assert len(added) == 1 and "keyword calibration" in added[0] and "constant floor" in added[0]


def test_a_calibration_written_off_the_prompt_path_is_what_the_hook_reads(
    hook: Hook,
    store: Store,
    project: Project,
    project_dir: Path,
    payload: Callable[..., dict[str, Any]],
    level: float,
) -> None:
    measured = refresh_keyword(store, project, types=PROMPT_TYPES)
    low, high = KEYWORD_BOUNDS
    assert low <= measured["floor"] <= high
    assert (ask(hook, payload, project_dir) is not None) == (level >= measured["floor"])
    assert not log_lines() or "keyword calibration" not in "\n".join(log_lines())


def test_a_project_with_no_floor_of_its_own_has_it_measured_detached(
    hook: Hook, project: Project, project_dir: Path, payload: Callable[..., dict[str, Any]], level: float
) -> None:
    """No calibration (a store filled without `learn`, an import, a consolidation or the warm
    service): the prompt answers on the constant floor and starts `agentctx calibrate` detached
    (skipped here, and logged, by `AGENTCTX_HOOKS_NO_SPAWN`); once the file is there, nothing is
    started."""
    started = f"skipped (AGENTCTX_HOOKS_NO_SPAWN): agentctx calibrate --project {project_dir}"
    assert ask(hook, payload, project_dir) is not None
    assert sum(started in line for line in log_lines()) == 1
    write_floor(project, dumps({"records": 31, "floor": 1.4}))
    assert ask(hook, payload, project_dir) is not None
    assert sum(started in line for line in log_lines()) == 1
