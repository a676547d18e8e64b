"""The MCP server keeps answering while other processes write to the same store (WAL).

Writers are separate processes using the store the way hooks do (a record, then an entity
link, each in its own short transaction), started while a stdio session is open; the session
searches, records and fetches throughout. No call may fail, and nothing may be lost.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import anyio
import pytest
from agentctx_store import NewRecord, Project, Store, resolve_project


def _stdio_helpers() -> ModuleType:
    """The client helpers of test_mcp_stdio.py (tests-e2e is not a package, so load by path)."""
    spec = importlib.util.spec_from_file_location("mcp_stdio_helpers", Path(__file__).with_name("test_mcp_stdio.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


helpers = _stdio_helpers()
error_of, index_ids, ok_json = helpers.error_of, helpers.index_ids, helpers.ok_json
run_session, server_env = helpers.run_session, helpers.server_env

WRITERS = 3
RECORDS_PER_WRITER = 150

WRITER = """
import sys
from agentctx_store import NewRecord, Store, resolve_project

project = resolve_project(sys.argv[1])
writer = sys.argv[2]
with Store.open() as store:
    node = store.upsert_node(project, "file", f"src/writer_{writer}.py")
    for number in range(int(sys.argv[3])):
        record = store.add(project, NewRecord(
            type="discovery", title=f"Quokka writer {writer} finding {number}",
            body=f"Observed by writer {writer}.", source="hook_observation", confidence="inferred"))
        store.link_entity(record.record_id, node)
"""


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return resolve_project(root)


def test_server_answers_while_writer_processes_write(project: Project) -> None:
    with Store.open():  # create the store (and its WAL mode) before anyone races for it
        pass
    made: list[str] = []
    seen_while_writing: list[int] = []

    async def scenario(client: helpers.Session) -> None:
        writers = [
            subprocess.Popen(
                [sys.executable, "-c", WRITER, str(project.root), str(number), str(RECORDS_PER_WRITER)],
                env=server_env(),
                stderr=subprocess.PIPE,
                text=True,
            )
            for number in range(WRITERS)
        ]
        try:
            while any(writer.poll() is None for writer in writers) or len(made) < 5:
                running = any(writer.poll() is None for writer in writers)
                recorded = ok_json(
                    await client.call(
                        "ctx_record",
                        {"type": "decision", "title": f"Quokka decision {len(made)}", "body": "Made during writes."},
                    )
                )
                made.append(recorded["id"])
                found = index_ids(await client.call("ctx_search", {"query": "quokka finding", "limit": 15}))
                fetched = ok_json(await client.call("ctx_get", {"ids": [recorded["id"], *found[:3]]}))
                assert fetched["missing"] == []
                related = await client.call("ctx_related", {"file": "src/writer_0.py"})
                assert not related.is_error
                if running:
                    seen_while_writing.append(len(found))
                await anyio.lowlevel.checkpoint()
        finally:
            errors = [writer.communicate()[1] for writer in writers]  # waits, and closes the pipes
        for writer, error in zip(writers, errors, strict=True):
            assert writer.returncode == 0, error
        assert len(index_ids(await client.call("ctx_search", {"query": "quokka finding", "limit": 15}))) == 15
        assert "at most 15" in error_of(await client.call("ctx_search", {"query": "quokka", "limit": 99}))["error"]

    assert run_session(project.root, scenario) == []
    assert seen_while_writing, "the writers finished before the server was asked anything"
    with Store.open() as store:
        counts = store.counts_by_type(project)
        assert counts["discovery"] == WRITERS * RECORDS_PER_WRITER
        assert counts["decision"] == len(made)
        assert all(store.get(project, record_id).source == "mcp_tool" for record_id in made)


HOOK_ROUNDS = 8
TRACEBACK = """Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
ModuleNotFoundError: No module named 'quokka{number}'
"""


def hook_payloads(root: Path, number: int) -> list[tuple[str, dict[str, object]]]:
    """One round of what a session's hooks see: an edit, a failing command, a prompt."""
    base = {"session_id": f"session-{number % 3}", "cwd": str(root), "transcript_path": str(root / "t.jsonl")}
    return [
        (
            "PostToolUse",
            {
                **base,
                "hook_event_name": "PostToolUse",
                "tool_name": "Write",
                "tool_input": {"file_path": str(root / "src" / "parser.py"), "content": "x = 1\n"},
                "tool_response": {"filePath": str(root / "src" / "parser.py")},
            },
        ),
        (
            "PostToolUse",
            {
                **base,
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "python -m quokka"},
                "tool_response": {"stdout": "", "stderr": TRACEBACK.format(number=number)},
            },
        ),
        ("UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit", "prompt": "why does the parser cache"}),
    ]


def start_hook(event: str, payload: dict[str, object]) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [str(helpers.AGENTCTX), "hook", event],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=server_env(),
        cwd=str(payload["cwd"]),
    )
    assert process.stdin is not None
    process.stdin.write(json.dumps(payload))
    process.stdin.close()
    return process


def test_server_answers_while_hook_processes_write(project: Project) -> None:
    (Path(project.root) / "src").mkdir()
    with Store.open() as store:
        seeded = store.add(
            project,
            NewRecord(type="decision", title="The parser caches tokens", body="src/parser.py keeps a token cache."),
        ).record_id
    seen_while_hooks_ran = 0

    async def scenario(client: helpers.Session) -> None:
        nonlocal seen_while_hooks_ran
        pending = [item for number in range(HOOK_ROUNDS) for item in hook_payloads(Path(project.root), number)]
        running: list[subprocess.Popen[str]] = []
        finished: list[subprocess.Popen[str]] = []
        while pending or running:
            while pending and len(running) < 4:
                running.append(start_hook(*pending.pop(0)))
            assert index_ids(await client.call("ctx_search", {"query": "parser tokens"}))[0] == seeded
            assert not (await client.call("ctx_related", {"file": "src/parser.py"})).is_error
            ok_json(await client.call("ctx_get", {"ids": [seeded]}))
            assert not (await client.call("ctx_search", {"query": "quokka", "type": "bugfix"})).is_error
            still = [process for process in running if process.poll() is None]
            seen_while_hooks_ran += bool(still)
            finished.extend(process for process in running if process.poll() is not None)
            running = still
            await anyio.lowlevel.checkpoint()
        for process in finished:
            assert process.stderr is not None
            with process.stderr:  # its stdin was closed by `start_hook`: read and close what is left
                error = process.stderr.read()
            assert process.wait() == 0, error
        stubs = index_ids(await client.call("ctx_search", {"query": "quokka ModuleNotFoundError", "type": "bugfix"}))
        assert stubs  # the hooks' error stubs arrived, and the server sees them
        related = index_ids(await client.call("ctx_related", {"file": "src/parser.py"}))
        assert related[0] == seeded  # linked to the file itself: first
        assert set(stubs) <= set(related[1:])  # observed in the same sessions: after it

    assert run_session(project.root, scenario) == []
    assert seen_while_hooks_ran
    hooks_log = Path(os.environ["AGENTCTX_HOME"]) / "logs" / "hooks.log"
    assert not hooks_log.exists() or "lock" not in hooks_log.read_text(encoding="utf-8").lower()


def test_parallel_calls_on_one_session_all_succeed(project: Project) -> None:
    """Claude Code may run read-only tools in parallel: each call gets its own worker thread
    and its own store connection."""
    results: dict[str, list[str]] = {"search": [], "record": []}

    async def scenario(client: helpers.Session) -> None:
        async def search(number: int) -> None:
            result = await client.call("ctx_search", {"query": f"parallel quokka {number}"})
            assert not result.is_error, result
            results["search"].append(helpers.text_of(result))

        async def record(number: int) -> None:
            made = ok_json(
                await client.call(
                    "ctx_record", {"type": "discovery", "title": f"Parallel quokka {number}", "body": "Recorded."}
                )
            )
            results["record"].append(made["id"])

        async with anyio.create_task_group() as group:
            for number in range(8):
                group.start_soon(search, number)
            for number in range(4):
                group.start_soon(record, number)
        found = index_ids(await client.call("ctx_search", {"query": "parallel quokka", "limit": 15}))
        assert sorted(found) == sorted(results["record"])

    assert run_session(project.root, scenario) == []
    assert len(results["search"]) == 8 and len(results["record"]) == 4
