"""PostToolUse / PostToolUseFailure: what lands in the store, and what does not."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentctx_store import Project, Store

from agentctx_hooks.apply_capture import file_name

Hook = Callable[..., dict[str, Any] | None]
Payload = Callable[..., dict[str, Any]]

TRACEBACK = "Exit code 1\nTraceback (most recent call last):\n  File \"main.py\", line 1, in <module>\nModuleNotFoundError: No module named 'redis'"


def _nodes(store: Store, project: Project, kind: str) -> list[str]:
    rows = store.conn.execute("SELECT name FROM nodes WHERE project_id = ? AND kind = ?", (project.project_id, kind))
    return sorted(row[0] for row in rows)


def test_edit_creates_a_file_node_linked_to_the_session_and_to_records_naming_it(
    flush: Callable[[], int],
    hook: Hook,
    payload: Payload,
    store: Store,
    project: Project,
    project_dir: Path,
    add: Callable[..., Any],
) -> None:
    naming = add(project, "Billing rounding lives in src/billing.py", "Round half even in src/billing.py only.")
    other = add(project, "Unrelated", "Nothing about that file.")
    path = str(project_dir / "src" / "billing.py")
    data = payload(
        "PostToolUse",
        project_dir,
        "edit-session",
        tool_name="Edit",
        tool_input={"file_path": path, "old_string": "a", "new_string": "b", "replace_all": False},
        tool_response={
            "filePath": path,
            "oldString": "a",
            "newString": "b",
            "structuredPatch": [],
            "userModified": False,
        },
        tool_use_id="toolu_1",
    )
    assert hook("PostToolUse", data) is None  # capture says nothing to the model
    assert _nodes(store, project, "file") == []  # spooled: the next store-opening hook writes it
    assert flush() == 1
    assert _nodes(store, project, "file") == ["src/billing.py"]
    assert [record.record_id for record in store.related_to_file(project, "src/billing.py")] == [naming.record_id]
    assert other.record_id not in [record.record_id for record in store.related_to_file(project, "billing.py")]
    assert store.get_session("edit-session")["meta"]["files"] == ["src/billing.py"]


def test_write_outside_the_project_keeps_the_absolute_path(tmp_path: Path) -> None:
    assert file_name(str(tmp_path / "proj"), str(tmp_path / "elsewhere" / "x.py")) == str(
        tmp_path / "elsewhere" / "x.py"
    )
    assert file_name(str(tmp_path / "proj"), "src/x.py") == "src/x.py"


def test_failed_edit_captures_nothing(
    flush: Callable[[], int], hook: Hook, payload: Payload, store: Store, project: Project, project_dir: Path
) -> None:
    data = payload(
        "PostToolUseFailure",
        project_dir,
        tool_name="Edit",
        tool_input={"file_path": str(project_dir / "a.py"), "old_string": "x", "new_string": "y"},
        error="String to replace not found in file.",
    )
    hook("PostToolUseFailure", data)
    assert flush() == 0
    assert _nodes(store, project, "file") == []


def test_bash_failure_makes_one_inferred_bugfix_stub_however_often_it_recurs(
    flush: Callable[[], int], hook: Hook, payload: Payload, store: Store, project: Project, project_dir: Path
) -> None:
    for session in ("s1", "s1", "s2"):
        data = payload(
            "PostToolUseFailure",
            project_dir,
            session,
            tool_name="Bash",
            tool_input={"command": "python main.py"},
            error=TRACEBACK,
        )
        hook("PostToolUseFailure", data)
    assert flush() == 3
    stubs = store.list_records(project, types=["bugfix"])
    assert len(stubs) == 1
    stub = stubs[0]
    assert stub.confidence == "inferred" and stub.source == "hook_observation"
    assert stub.title == "Error: ModuleNotFoundError: No module named 'redis'"
    assert stub.key and stub.key.startswith("error:")


def test_plain_failures_and_successes_make_no_stub(
    flush: Callable[[], int], hook: Hook, payload: Payload, store: Store, project: Project, project_dir: Path
) -> None:
    hook(
        "PostToolUseFailure",
        payload(
            "PostToolUseFailure",
            project_dir,
            tool_name="Bash",
            tool_input={"command": "exit 3"},
            error="Exit code 3\nfailing",
        ),
    )
    hook(
        "PostToolUse",
        payload(
            "PostToolUse",
            project_dir,
            tool_name="Bash",
            tool_input={"command": "echo hi"},
            tool_response={"stdout": "Error: just a word", "stderr": ""},
        ),
    )
    hook(
        "PostToolUseFailure",
        payload(
            "PostToolUseFailure",
            project_dir,
            tool_name="Read",
            tool_input={"file_path": "/nonexistent"},
            error="File does not exist.",
        ),
    )
    assert flush() == 0  # nothing worth a capture was even spooled
    assert store.list_records(project) == []


def test_test_runs_go_to_the_session_and_link_the_test_file(
    flush: Callable[[], int], hook: Hook, payload: Payload, store: Store, project: Project, project_dir: Path
) -> None:
    output = "tests/test_billing.py .F\nE       AssertionError: assert 1 == 2\n1 failed, 1 passed in 0.1s"
    hook(
        "PostToolUseFailure",
        payload(
            "PostToolUseFailure",
            project_dir,
            "t",
            tool_name="Bash",
            tool_input={"command": "uv run pytest tests/test_billing.py"},
            error="Exit code 1\n" + output,
        ),
    )
    hook(
        "PostToolUse",
        payload(
            "PostToolUse",
            project_dir,
            "t",
            tool_name="Bash",
            tool_input={"command": "uv run pytest tests/test_billing.py"},
            tool_response={"stdout": "tests/test_billing.py ..\n2 passed in 0.1s", "stderr": ""},
        ),
    )
    flush()
    tests = store.get_session("t")["meta"]["tests"]
    assert [entry["outcome"] for entry in tests] == ["failed", "passed"]
    assert tests[0]["files"] == ["tests/test_billing.py"]
    assert _nodes(store, project, "file") == ["tests/test_billing.py"]
    rels = {row[0] for row in store.conn.execute("SELECT rel_type FROM edges")}
    assert {"test_failed", "test_passed"} <= rels


def test_git_operations_go_to_the_session_meta(
    flush: Callable[[], int], hook: Hook, payload: Payload, store: Store, project_dir: Path
) -> None:
    hook(
        "PostToolUse",
        payload(
            "PostToolUse",
            project_dir,
            "g",
            tool_name="Bash",
            tool_input={"command": "git switch -c feat/x"},
            tool_response={"stdout": "", "stderr": "Switched to a new branch 'feat/x'"},
        ),
    )
    hook(
        "PostToolUse",
        payload(
            "PostToolUse",
            project_dir,
            "g",
            tool_name="Bash",
            tool_input={"command": "git commit -am 'Add x'"},
            tool_response={"stdout": "[feat/x 9f8e7d6] Add x\n 1 file changed", "stderr": ""},
        ),
    )
    flush()
    meta = store.get_session("g")["meta"]
    assert meta["branch"] == "feat/x"
    assert meta["commits"] == [{"branch": "feat/x", "sha": "9f8e7d6", "message": "Add x"}]


def test_captures_never_open_the_store_in_the_hook(hook: Hook, payload: Payload, project_dir: Path) -> None:
    from agentctx_store import paths

    hook(
        "PostToolUse",
        payload(
            "PostToolUse", project_dir, tool_name="Read", tool_input={"file_path": "x"}, tool_response={"type": "text"}
        ),
    )
    hook(
        "PostToolUse",
        payload(
            "PostToolUse",
            project_dir,
            tool_name="mcp__agentctx__ctx_search",
            tool_input={},
            tool_response=[{"type": "text", "text": "x"}],
        ),
    )
    hook(
        "PostToolUse",
        payload(
            "PostToolUse",
            project_dir,
            tool_name="Bash",
            tool_input={"command": "echo hi"},
            tool_response={"stdout": "hi", "stderr": ""},
        ),
    )
    edit = {"file_path": str(project_dir / "a.py")}
    hook("PostToolUse", payload("PostToolUse", project_dir, tool_name="Write", tool_input=edit, tool_response={}))
    assert not Path(paths.db_path()).exists()


def test_an_edit_of_an_anchored_file_notes_that_its_records_need_a_look(
    flush: Callable[[], int],
    hook: Hook,
    payload: Payload,
    store: Store,
    project: Project,
    project_dir: Path,
    add: Callable[..., Any],
) -> None:
    from agentctx_store.freshness import anchor_record
    from agentctx_store.stale import counts

    source = project_dir / "src" / "retry.py"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text("def retry():\n    return 3\n")
    anchored = add(project, "Retries happen three times", "retry() tries three times.")
    anchor_record(store, project, anchored.record_id, ["src/retry.py:retry"])

    def edit(session: str) -> None:
        data = payload(
            "PostToolUse",
            project_dir,
            session,
            tool_name="Edit",
            tool_input={"file_path": str(source), "old_string": "3", "new_string": "5", "replace_all": False},
            tool_response={"filePath": str(source)},
            tool_use_id="toolu_1",
        )
        assert hook("PostToolUse", data) is None

    source.write_text("def retry():\n    return 3\n\n\ndef helper():\n    return 0\n")  # the anchored text is the same
    edit("edit-1")
    assert flush() == 1 and counts(store, project) == (0, 0)
    source.write_text("def retry():\n    return 5\n")
    edit("edit-2")
    assert flush() == 1 and counts(store, project) == (1, 0)
