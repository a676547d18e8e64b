"""`agentctx mcp` over stdio, driven by the MCP SDK's own client spawning the installed command.

What these pin down is what Claude Code receives: one text block per result (no structured
content, so nothing is wrapped as `{"result": …}`), errors as `{error, degraded?}` JSON with
`isError`, and only records of the server's own project that are still current.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from agentctx_mcp.index import parse_index
from agentctx_store import NewRecord, Project, Store, resolve_project
from agentctx_store.budget import SEARCH_RESULT_TOKENS, estimate_tokens
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

AGENTCTX = Path(sys.executable).with_name("agentctx")
TOOLS = ["ctx_search", "ctx_get", "ctx_record", "ctx_supersede", "ctx_project", "ctx_related", "ctx_sync_claudemd"]


def git_project(path: Path) -> Project:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return resolve_project(path)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return git_project(tmp_path / "repo")


@pytest.fixture
def other(tmp_path: Path) -> Project:
    return git_project(tmp_path / "other")


def server_env(**extra: str) -> dict[str, str]:
    names = ("AGENTCTX_HOME", "HOME", "TMPDIR", "PATH")
    return {name: os.environ[name] for name in names if name in os.environ} | extra


class Session:
    """A connected client plus what it observed on the side (stray stdout lines)."""

    def __init__(self, session: ClientSession, stray: list[object]) -> None:
        self.session = session
        self.stray = stray

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        return await self.session.call_tool(name, arguments or {})


def run_session(cwd: Path, scenario: Callable[[Session], Awaitable[None]], **env: str) -> list[object]:
    """Spawn `agentctx mcp` in `cwd`, initialize, run `scenario`; returns stray messages."""
    stray: list[object] = []

    async def on_message(message: object) -> None:
        if isinstance(message, Exception):  # a stdout line that is not JSON-RPC
            stray.append(message)

    async def main() -> None:
        parameters = StdioServerParameters(command=str(AGENTCTX), args=["mcp"], env=server_env(**env), cwd=str(cwd))
        with anyio.fail_after(60):
            async with (
                stdio_client(parameters) as (read, write),
                ClientSession(read, write, message_handler=on_message) as session,
            ):
                await session.initialize()
                await scenario(Session(session, stray))

    anyio.run(main)
    return stray


def text_of(result: CallToolResult) -> str:
    """The one text block a result must consist of (what the model reads)."""
    assert result.structured_content is None
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def ok_json(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    return json.loads(text_of(result))


def error_of(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error
    payload = json.loads(text_of(result))
    assert set(payload) <= {"error", "degraded", "head_id"}
    assert "Traceback" not in payload["error"]
    return payload


def index_ids(result: CallToolResult) -> list[str]:
    assert not result.is_error, text_of(result)
    rows, _ = parse_index(text_of(result))
    return [row["id"] for row in rows]


def seed(project: Project, title: str, body: str, **fields: Any) -> str:
    with Store.open() as store:
        new = NewRecord(type=fields.pop("type", "decision"), title=title, body=body, **fields)
        return store.add(project, new).record_id


def test_lists_exactly_the_seven_tools_and_says_how_to_use_them(project: Project) -> None:
    async def scenario(client: Session) -> None:
        info = client.session.initialize_result
        assert (
            info is not None
            and info.server_info.name == "agentctx"
            and info.server_info.version == importlib.metadata.version("agentctx-mcp")
        )
        assert info.instructions and "ctx_search" in info.instructions
        listing = await client.session.list_tools()
        assert [tool.name for tool in listing.tools] == TOOLS
        for tool in listing.tools:
            assert tool.description and len(tool.description) <= 320
            assert tool.output_schema is None
            assert "project" not in tool.input_schema.get("properties", {})

    assert run_session(project.root, scenario) == []


def test_every_tool_round_trip_over_stdio(project: Project) -> None:
    linked = seed(project, "Parser caches tokens per file", "The parser keeps a token cache per file.")
    with Store.open() as store:
        store.link_entity(linked, store.upsert_node(project, "file", "src/parser.py"))
        store.add(
            project, NewRecord(type="profile", title="Stack", body='["python"]', key="stack", confidence="inferred")
        )
    (Path(project.root) / "CLAUDE.md").write_text("# Project\n\n- Parser caches tokens per file.\n", encoding="utf-8")

    async def scenario(client: Session) -> None:
        recorded = ok_json(
            await client.call(
                "ctx_record",
                {"type": "decision", "title": "Use SQLite in WAL mode", "body": "One SQLite file in WAL mode."},
            )
        )
        assert recorded["type"] == "decision"

        search = await client.call("ctx_search", {"query": "sqlite wal"})
        assert index_ids(search) == [recorded["id"]]
        assert "One SQLite file" not in text_of(search)  # never bodies

        fetched = ok_json(await client.call("ctx_get", {"ids": [recorded["id"], "01NOPE0000000000000000000X"]}))
        (record,) = fetched["records"]
        assert (record["source"], record["confidence"], record["access_count"]) == ("mcp_tool", "explicit", 1)
        assert record["body"] == "One SQLite file in WAL mode."
        assert fetched["missing"] == ["01NOPE0000000000000000000X"]

        replaced = ok_json(
            await client.call(
                "ctx_supersede",
                {
                    "old_id": recorded["id"],
                    "new_body": "Use SQLite with WAL and a 10 s busy timeout.",
                    "rationale": "hooks",
                },
            )
        )
        assert replaced["old_id"] == recorded["id"]
        assert index_ids(await client.call("ctx_search", {"query": "sqlite"})) == [replaced["new_id"]]

        profile = ok_json(await client.call("ctx_project"))
        assert profile["name"] == "repo" and profile["stack"] == ["python"]
        assert profile["record_counts_by_type"]["decision"] == 2

        assert index_ids(await client.call("ctx_related", {"file": "src/parser.py"})) == [linked]
        assert index_ids(await client.call("ctx_search", {"query": "parser", "file": "src/parser.py"})) == [linked]

        drift = ok_json(await client.call("ctx_sync_claudemd"))
        assert [entry["id"] for entry in drift["missing"]] == [replaced["new_id"]]
        assert "+- **Use SQLite with WAL" in drift["proposed_diff"]

    assert run_session(project.root, scenario) == []
    assert (Path(project.root) / "CLAUDE.md").read_text(
        encoding="utf-8"
    ) == "# Project\n\n- Parser caches tokens per file.\n"


def test_every_error_path_is_a_structured_error(project: Project) -> None:
    old = seed(project, "Use Postgres", "Postgres is the database.")
    with Store.open() as store:
        _, head = store.supersede(project, old, body="Use SQLite.", rationale="simpler")

    async def scenario(client: Session) -> None:
        errors = {
            "empty query": await client.call("ctx_search", {"query": "  "}),
            "limit": await client.call("ctx_search", {"query": "sqlite", "limit": 16}),
            "type": await client.call("ctx_record", {"type": "opinion", "title": "t", "body": "b"}),
            "search type": await client.call("ctx_search", {"query": "sqlite", "type": "opinion"}),
            "oversize body": await client.call("ctx_record", {"type": "decision", "title": "t", "body": "x" * 2001}),
            "oversize title": await client.call("ctx_record", {"type": "decision", "title": "t" * 121, "body": "b"}),
            "unknown id": await client.call(
                "ctx_supersede", {"old_id": "01NOPE0000000000000000000X", "new_body": "b", "rationale": "r"}
            ),
            "too many ids": await client.call("ctx_get", {"ids": [f"01ID{n:022d}" for n in range(11)]}),
            "missing argument": await client.call("ctx_record", {"type": "decision", "title": "t"}),
            "wrong shape": await client.call("ctx_get", {"ids": 5}),
            "unknown tool": await client.call("ctx_nothing"),
        }
        messages = {name: error_of(result)["error"] for name, result in errors.items()}
        assert "query is empty" in messages["empty query"]
        assert "at most 15" in messages["limit"]
        assert "Unknown record type 'opinion'" in messages["type"]
        assert "Unknown record type 'opinion'" in messages["search type"]
        assert "limit is 2000" in messages["oversize body"]
        assert "limit is 120" in messages["oversize title"]
        assert "No record" in messages["unknown id"]
        assert "at most 10" in messages["too many ids"]
        assert "`body` is required" in messages["missing argument"]
        assert "ids" in messages["wrong shape"]
        assert "ctx_nothing" in messages["unknown tool"]

        non_head = error_of(
            await client.call("ctx_supersede", {"old_id": old, "new_body": "DuckDB.", "rationale": "r"})
        )
        assert non_head["head_id"] == head.record_id and head.record_id in non_head["error"]
        non_head = error_of(
            await client.call("ctx_record", {"type": "decision", "title": "DuckDB", "body": "b", "supersedes": old})
        )
        assert non_head["head_id"] == head.record_id

        # the server is still fine after all of that
        assert index_ids(await client.call("ctx_search", {"query": "sqlite"})) == [head.record_id]

    assert run_session(project.root, scenario) == []
    with Store.open() as store:
        assert store.counts_by_type(project, include_superseded=True) == {"decision": 2}  # nothing written


@pytest.mark.parametrize(
    "query",
    ['"sqlite', "sqlite*", "NEAR(sqlite wal, 2)", "title:sqlite", "sqlite AND OR NOT", "{sqlite}", "^sqlite -x"],
)
def test_fts_syntax_in_the_query_is_searched_as_words(project: Project, query: str) -> None:
    record_id = seed(project, "Use SQLite in WAL mode", "SQLite store.")

    async def scenario(client: Session) -> None:
        assert index_ids(await client.call("ctx_search", {"query": query})) == [record_id]

    run_session(project.root, scenario)


def test_superseded_and_other_projects_records_never_come_back(project: Project, other: Project) -> None:
    old = seed(project, "Use Postgres storage", "Postgres storage engine.")
    with Store.open() as store:
        _, head = store.supersede(project, old, body="Use SQLite storage engine.", rationale="simpler")
        store.link_entity(old, store.upsert_node(project, "file", "db.py"))
        store.link_entity(head.record_id, store.upsert_node(project, "file", "db.py"))
    foreign = seed(other, "Use Postgres storage there", "Postgres storage engine elsewhere.")
    foreign_global_looking = seed(other, "Postgres storage preference", "Postgres.", type="preference")
    with Store.open() as store:
        store.link_entity(foreign, store.upsert_node(other, "file", "db.py"))
    hidden = {old, foreign, foreign_global_looking}

    async def scenario(client: Session) -> None:
        texts: list[str] = []
        for arguments in (
            {"query": "postgres storage engine"},
            {"query": "postgres", "scope": "global"},
            {"query": "postgres storage", "type": "decision"},
            {"query": "storage", "file": "db.py"},
        ):
            texts.append(text_of(await client.call("ctx_search", arguments)))
        texts.append(text_of(await client.call("ctx_related", {"file": "db.py"})))
        fetched = await client.call("ctx_get", {"ids": sorted(hidden)})
        payload = ok_json(fetched)
        assert payload["records"] == []
        assert sorted(payload["missing"]) == sorted(hidden)
        assert payload["superseded"] == {old: head.record_id}
        texts.append(json.dumps(ok_json(await client.call("ctx_project"))))
        texts.append(json.dumps(ok_json(await client.call("ctx_sync_claudemd"))))
        for text in texts:
            for record_id in hidden:
                assert record_id not in text
        assert head.record_id in texts[0]
        error = error_of(await client.call("ctx_supersede", {"old_id": foreign, "new_body": "b", "rationale": "r"}))
        assert foreign in error["error"] and "No record" in error["error"]

    run_session(project.root, scenario)
    with Store.open() as store:
        assert store.get(other, foreign).is_current and store.get(other, foreign).access_count == 0


def test_search_results_stay_within_fifty_tokens_each_and_fifteen_in_all(project: Project) -> None:
    with Store.open() as store:
        for number in range(20):
            title = f"Widget calibration step {number} " + "with-an-unusually-long-hyphenated-description " * 2
            store.add(project, NewRecord(type="discovery", title=title[:120], body="Widget calibration."))

    async def scenario(client: Session) -> None:
        text = text_of(await client.call("ctx_search", {"query": "widget calibration", "limit": 15}))
        lines = text.splitlines()[1:]
        assert len(lines) == 15
        assert max(estimate_tokens(line) for line in lines) <= SEARCH_RESULT_TOKENS
        default = text_of(await client.call("ctx_search", {"query": "widget calibration"}))
        assert len(default.splitlines()) == 11  # header + the default 10

    run_session(project.root, scenario)


def test_scope_global_reaches_global_records_and_ctx_record_writes_them(project: Project) -> None:
    async def scenario(client: Session) -> None:
        made = ok_json(
            await client.call(
                "ctx_record",
                {"type": "preference", "title": "Prefer tabs for indentation", "body": "Tabs.", "scope": "global"},
            )
        )
        assert made["scope"] == "global"
        assert index_ids(await client.call("ctx_search", {"query": "tabs indentation", "scope": "global"})) == [
            made["id"]
        ]

    run_session(project.root, scenario)
    with Store.open() as store:
        other_project = Project(project_id="someone-else", root=Path(project.root).parent, name="x")
        assert store.list_records(other_project, scope="global")[0].title == "Prefer tabs for indentation"


def test_the_project_comes_from_claude_project_dir_over_the_cwd(project: Project, tmp_path: Path) -> None:
    record_id = seed(project, "Use SQLite in WAL mode", "SQLite.")
    elsewhere = tmp_path / "not-a-project"
    elsewhere.mkdir()

    async def found(client: Session) -> None:
        assert index_ids(await client.call("ctx_search", {"query": "sqlite"})) == [record_id]

    async def not_found(client: Session) -> None:
        assert index_ids(await client.call("ctx_search", {"query": "sqlite"})) == []

    run_session(elsewhere, found, CLAUDE_PROJECT_DIR=str(project.root))
    run_session(elsewhere, not_found)
    run_session(Path(project.root) / ".git", found)  # a subdirectory resolves to the repository


def test_stdout_carries_only_json_rpc(project: Project) -> None:
    """Raw pipes, no SDK: every line the server writes to stdout is a JSON-RPC message."""
    seed(project, "Use SQLite in WAL mode", "SQLite.")
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "ctx_search", "arguments": {"query": "sqlite"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "ctx_get", "arguments": {"ids": "not a list"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "ctx_search", "arguments": {"query": ""}},
        },
    ]
    process = subprocess.Popen(
        [str(AGENTCTX), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        cwd=project.root,
        env=server_env(),
    )
    assert process.stdin is not None and process.stdout is not None
    watchdog = threading.Timer(60, process.kill)  # a hung server fails the test instead of hanging it
    watchdog.start()
    try:
        process.stdin.write("".join(json.dumps(request) + "\n" for request in requests))
        process.stdin.flush()
        messages: list[dict[str, Any]] = []
        while {1, 2, 3, 4, 5} - {message.get("id") for message in messages}:
            line = process.stdout.readline()
            if not line:
                break
            messages.append(json.loads(line))  # any non-JSON line on stdout fails here
        rest, stderr = process.communicate()  # closes stdin (the session ends), waits, closes the pipes
    finally:
        watchdog.cancel()
    messages.extend(json.loads(line) for line in rest.splitlines() if line.strip())
    assert all(message.get("jsonrpc") == "2.0" for message in messages)
    replies = {message["id"]: message for message in messages if "id" in message}
    assert set(replies) == {1, 2, 3, 4, 5}
    assert replies[3]["result"]["content"][0]["text"].startswith("id | type | title")
    assert replies[4]["result"]["isError"] and json.loads(replies[4]["result"]["content"][0]["text"])["error"]
    assert replies[5]["result"]["isError"]
    assert "Traceback" not in stderr
    log = Path(os.environ["AGENTCTX_HOME"]) / "logs" / "mcp.log"
    assert log.is_file()


def test_the_server_agentctx_init_registers_serves_the_tools(project: Project) -> None:
    """`agentctx init --mcp-always-load` writes a `~/.claude.json` entry; spawning exactly that
    command (as Claude Code would) gives the seven tools."""
    env = server_env(PATH=str(AGENTCTX.parent) + os.pathsep + "/usr/bin:/bin")  # no `claude` on PATH: direct edit
    completed = subprocess.run(
        [str(AGENTCTX), "init", "--mcp-always-load", "--claude-version", "2.1.0"],
        cwd=project.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    config = json.loads((Path(os.environ["HOME"]) / ".claude.json").read_text(encoding="utf-8"))
    entry = config["mcpServers"]["agentctx"]
    assert entry["type"] == "stdio" and entry["alwaysLoad"] is True and entry["args"] == ["mcp"]
    record_id = seed(project, "Use SQLite in WAL mode", "SQLite.")

    async def main() -> None:
        parameters = StdioServerParameters(
            command=entry["command"], args=entry["args"], env=server_env(**entry["env"]), cwd=str(project.root)
        )
        with anyio.fail_after(60):
            async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                assert [tool.name for tool in (await session.list_tools()).tools] == TOOLS
                assert index_ids(await session.call_tool("ctx_search", {"query": "sqlite"})) == [record_id]

    anyio.run(main)


def test_without_fts5_search_answers_with_the_degraded_marker(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCTX_SIMULATE_NO_FTS5", "1")  # the store is created without FTS5 (rung 4)
    record_id = seed(project, "Use SQLite in WAL mode", "SQLite.")

    async def scenario(client: Session) -> None:
        result = await client.call("ctx_search", {"query": "sqlite wal"})
        rows, degraded = parse_index(text_of(result))
        assert degraded == "like-search" and [row["id"] for row in rows] == [record_id]

    run_session(project.root, scenario, AGENTCTX_SIMULATE_NO_FTS5="1")


def test_an_unusable_store_is_a_structured_error_not_a_crash(project: Project, tmp_path: Path) -> None:
    broken = tmp_path / "broken-home"
    broken.mkdir()
    (broken / "agentctx.db").write_text("this is not a database\n" * 10, encoding="utf-8")

    async def scenario(client: Session) -> None:
        for name, arguments in (("ctx_search", {"query": "sqlite"}), ("ctx_project", {})):
            error = error_of(await client.call(name, arguments))
            assert error["degraded"] == "store-unavailable"
            assert "not an agentctx store" in error["error"]

    assert run_session(project.root, scenario, AGENTCTX_HOME=str(broken)) == []


def test_ctx_supersede_keeps_the_old_records_anchors(project: Project) -> None:
    """Issue 33: a fact superseded by the agent still rests on the code it rested on."""
    root = Path(project.root)
    (root / "retry.py").write_text("def retry():\n    return 3\n", encoding="utf-8")

    async def scenario(client: Session) -> None:
        made = ok_json(await client.call("ctx_record", {"type": "decision", "title": "Three retries",
                                                        "body": "retry() tries three times.",
                                                        "anchors": ["retry.py:retry"]}))  # fmt: skip
        replaced = ok_json(await client.call("ctx_supersede", {"old_id": made["id"], "new_body": "Five retries now.",
                                                               "rationale": "the gateway is flaky"}))  # fmt: skip
        assert replaced["anchors"] == ["retry.py:retry"]

    assert run_session(root, scenario) == []
    (root / "retry.py").write_text("def retry():\n    return 5\n", encoding="utf-8")
    stale = subprocess.run([str(AGENTCTX), "stale", "--json"], capture_output=True, text=True, cwd=root, check=True)
    assert [item["title"] for item in json.loads(stale.stdout)] == ["Five retries now"]
