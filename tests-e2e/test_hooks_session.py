"""A session through the installed hook entry point: dedup across prompts, and two projects in
one store that never see each other's records."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentctx_store import NewRecord, Store, resolve_project
from agentctx_store.fence import DIGEST_OPEN

RunHook = Callable[..., Any]
TOPICS = ["logging", "docker", "release", "review", "flags", "timezones", "budgets", "hashing", "css", "paging"]


def _prompt(root: Path, session: str, text: str) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": str(root / "t.jsonl"),
        "cwd": str(root),
        "hook_event_name": "UserPromptSubmit",
        "prompt": text,
    }


def test_ten_prompts_never_repeat_a_record_and_other_projects_never_show(tmp_path: Path, run_hook: RunHook) -> None:
    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    alpha.mkdir()
    beta.mkdir()
    with Store.open() as store:
        for root in (alpha, beta):
            project = resolve_project(root)
            for round_index in range(3):
                for topic in TOPICS:
                    store.add(
                        project,
                        NewRecord(
                            type="convention",
                            title=f"{root.name} rule {round_index} for {topic}",
                            body=f"How {root.name} handles {topic}.",
                        ),
                    )
        mine = [
            store.add(
                resolve_project(alpha),
                NewRecord(
                    type="decision",
                    title=f"Payment webhook retries, case {index}",
                    body=f"Stripe webhook retries back off exponentially ({index}).",
                ),
            )
            for index in range(8)
        ]
        theirs = [
            store.add(
                resolve_project(beta),
                NewRecord(
                    type="decision",
                    title=f"Payment webhook retries, case {index}",
                    body=f"Beta's Stripe webhook retries ({index}).",
                ),
            )
            for index in range(8)
        ]
    seen: list[str] = []
    for _ in range(10):
        text = run_hook("UserPromptSubmit", _prompt(alpha, "s-alpha", "stripe payment webhook retries")).context
        ids = [record.record_id for record in mine if record.record_id in text]
        assert not set(ids) & set(seen)
        seen += ids
        assert not any(record.record_id in text for record in theirs)
        assert "Beta's" not in text
    assert sorted(seen) == sorted(record.record_id for record in mine)
    beta_text = run_hook("UserPromptSubmit", _prompt(beta, "s-beta", "stripe payment webhook retries")).context
    assert beta_text and not any(record.record_id in beta_text for record in mine)
    start = run_hook("SessionStart", {"session_id": "s-beta", "cwd": str(beta), "source": "startup"}).context
    assert start.startswith(f"{DIGEST_OPEN}\n## Project: beta") and not any(
        record.record_id in start for record in mine
    )


def test_a_locked_store_still_injects_and_logs(tmp_path: Path, run_hook: RunHook, hooks_log: Callable[[], str]) -> None:
    import sqlite3

    from agentctx_store import paths

    root = tmp_path / "locked"
    root.mkdir()
    with Store.open() as store:
        project = resolve_project(root)
        for index in range(40):
            store.add(
                project, NewRecord(type="convention", title=f"Rule {index} for {TOPICS[index % 10]}", body="x y z.")
            )
        wanted = store.add(
            project,
            NewRecord(
                type="decision",
                title="Kafka partitions by tenant id",
                body="Kafka topics are partitioned by tenant id.",
            ),
        )
    writer = sqlite3.connect(Path(paths.db_path()), isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # a long consolidation write holds the lock
    try:
        result = run_hook("UserPromptSubmit", _prompt(root, "locked", "how are kafka partitions keyed by tenant?"))
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert result.code == 0
    assert wanted.record_id in result.context  # reading works under WAL; only the accounting waited
    assert "locked" in hooks_log()


def test_a_write_in_a_hook_process_marks_the_full_digest_stale(tmp_path: Path, run_hook: RunHook) -> None:
    """Hook processes end with os._exit instead of Store.close(); the digest refresh close()
    does must still happen."""
    from agentctx_store import digest

    root = tmp_path / "stale"
    root.mkdir()
    project = resolve_project(root)
    from agentctx_store.fence import DIGEST_CLOSE, DIGEST_OPEN

    text = f"{DIGEST_OPEN}\n## Project: stale\n- written by consolidation\n{DIGEST_CLOSE}"
    digest.write(project.project_id, text, kind="full")
    common = {"session_id": "w", "transcript_path": str(root / "t.jsonl"), "cwd": str(root)}
    failure = {
        **common,
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": "python app.py"},
        "error": "Exit code 1\nTraceback (most recent call last):\nKeyError: 'tenant'",
    }
    assert run_hook("PostToolUseFailure", failure).code == 0
    read = digest.read(project.project_id)
    assert read is not None and not read[1].stale  # spooled: nothing written yet
    assert (
        run_hook(
            "UserPromptSubmit", {**common, "hook_event_name": "UserPromptSubmit", "prompt": "tenant key error"}
        ).code
        == 0
    )
    read = digest.read(project.project_id)
    assert read is not None and read[1].stale  # the stub was written, so consolidation must redo it
    with Store.open() as store:
        assert [record.title for record in store.list_records(project, types=["bugfix"])] == [
            "Error: KeyError: 'tenant'"
        ]


def test_status_shows_waiting_captures_and_recent_hook_errors(tmp_path: Path, run_hook: RunHook) -> None:
    import json
    import subprocess
    import sys

    root = tmp_path / "status"
    root.mkdir()
    edit = {"session_id": "st", "cwd": str(root), "tool_name": "Write", "tool_input": {"file_path": str(root / "a.py")}}
    run_hook("PostToolUse", edit)
    run_hook("UserPromptSubmit", b"this is not json")
    with Store.open():
        pass  # status reads an existing store
    agentctx = Path(sys.executable).with_name("agentctx")
    done = subprocess.run(
        [str(agentctx), "status", "--json", "-p", str(root)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    hooks = json.loads(done.stdout)["hooks"]
    assert hooks["spool_waiting"] == 1
    assert hooks["errors_24h"] == 1 and "PayloadError" in hooks["last_error"]
