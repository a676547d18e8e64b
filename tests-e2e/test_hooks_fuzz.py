"""Whatever arrives on stdin, a hook exits 0, prints nothing or one valid hook object, and writes
nothing outside the data dir and its per-user state folder."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

RunHook = Callable[..., Any]
EVENTS = [
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "PostToolUseFailure",
    "CwdChanged",
    "PreCompact",
    "Stop",
    "SessionEnd",
]


def _cases(project: Path) -> dict[str, bytes]:
    valid = {
        "session_id": "fuzz",
        "transcript_path": str(project / "t.jsonl"),
        "cwd": str(project),
        "hook_event_name": "X",
    }
    return {
        "empty": b"",
        "not-json": b"this is not json {",
        "binary": bytes(range(256)) * 64,
        "array": b"[1, 2, 3]",
        "nested": b"[" * 50_000 + b"]" * 50_000,
        "wrong-types": json.dumps(
            {
                "session_id": 7,
                "cwd": ["x"],
                "prompt": {"a": 1},
                "source": 3,
                "tool_name": None,
                "tool_input": "cmd",
                "tool_response": 5,
                "error": [1],
            }
        ).encode(),
        "wrong-nested-types": json.dumps(
            {**valid, "tool_name": "Bash", "tool_input": {"command": ["ls"]}, "tool_response": ["x"], "prompt": 12}
        ).encode(),
        "10MB": json.dumps(
            {
                **valid,
                "prompt": "database " * 1_200_000,
                "tool_name": "Bash",
                "tool_input": {"command": "pytest"},
                "tool_response": {"stdout": "E   ValueError: x\n" * 500_000},
            }
        ).encode(),
        "missing-cwd": json.dumps({k: v for k, v in valid.items() if k != "cwd"} | {"prompt": "database"}).encode(),
        "relative-cwd": json.dumps({**valid, "cwd": "../../.."}).encode(),
        "hostile-session": json.dumps(
            {**valid, "session_id": "../../etc/x", "prompt": "database", "source": "startup"}
        ).encode(),
        "absolute-session": json.dumps({**valid, "session_id": "/tmp/../etc/passwd", "prompt": "database"}).encode(),
        "nul-in-strings": json.dumps({**valid, "cwd": str(project) + "\x00/evil", "session_id": "a\x00b"}).encode(),
        "lone-surrogate": b'{"session_id": "\\ud800", "cwd": "'
        + str(project).encode()
        + b'", "prompt": "\\udfff database"}',
        "cwd-is-a-file": json.dumps(
            {**valid, "cwd": str(project / "file.txt"), "new_cwd": str(project / "file.txt")}
        ).encode(),
    }


def _tree(root: Path, skip: tuple[Path, ...]) -> dict[str, tuple[int, int]]:
    found = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = [name for name in dirs if Path(directory, name) not in skip]
        for name in files:
            path = Path(directory, name)
            stat = path.stat()
            found[str(path)] = (stat.st_size, stat.st_mtime_ns)
    return found


@pytest.mark.slow
def test_fuzzed_stdin(tmp_path: Path, run_hook: RunHook) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "file.txt").write_text("x", encoding="utf-8")
    data_dir = Path(os.environ["AGENTCTX_HOME"])
    state_dir = data_dir / "state"  # session state lives in the data dir (issue 13)
    before = _tree(tmp_path, (data_dir, state_dir))
    for name, raw in _cases(project).items():
        for event in EVENTS:
            result = run_hook(event, raw)
            assert result.code == 0, (name, event, result.err)
            output = result.output  # empty or exactly one hook object
            if output is not None:
                assert output["hookSpecificOutput"]["hookEventName"] == event, (name, event)
    assert _tree(tmp_path, (data_dir, state_dir)) == before
    assert not (tmp_path / "etc").exists()
    for name in os.listdir(state_dir):
        assert (state_dir / name).parent == state_dir and ".." not in name.replace(".._", "")
