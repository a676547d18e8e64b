"""Records written through MCP know their client (issue 20): `agentctx init --client X` registers
the server with `AGENTCTX_CLIENT=X`, and the server, spawned here through the MCP SDK's stdio
client with that environment, writes its records as that client's, hook `MCP`; `agentctx show`
prints it. Without the variable (or with a client agentctx does not know) a record has no origin.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from agentctx_store import Project, Store

sys.path.insert(0, str(Path(__file__).parent))

from test_mcp_stdio import AGENTCTX, Session, git_project, ok_json, run_session, seed, server_env


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return git_project(tmp_path / "repo")


def show(project: Project, record_id: str) -> dict:
    completed = subprocess.run(
        [str(AGENTCTX), "show", record_id, "--json"],
        cwd=project.root,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def record_and_supersede(project: Project, **env: str) -> tuple[str, str, str]:
    old = seed(project, "Queue jobs in Redis", "Redis holds the job queue.")
    made: dict[str, str] = {}

    async def scenario(client: Session) -> None:
        recorded = ok_json(
            await client.call("ctx_record", {"type": "convention", "title": "Tabs in Makefiles", "body": "Tabs."})
        )
        replaced = ok_json(
            await client.call(
                "ctx_supersede",
                {"old_id": old, "new_body": "SQLite holds the job queue.", "rationale": "One file to back up."},
            )
        )
        made.update(recorded=recorded["id"], new=replaced["new_id"])

    run_session(project.root, scenario, **env)
    return old, made["recorded"], made["new"]


@pytest.mark.parametrize("client", ["claude", "codex", "gemini"])
def test_records_written_through_mcp_carry_the_client_the_env_names(project: Project, client: str) -> None:
    old, recorded, new = record_and_supersede(project, AGENTCTX_CLIENT=client)
    for record_id in (recorded, new):
        shown = show(project, record_id)
        assert shown["source"] == "mcp_tool"
        assert shown["origin"] == {"client": client, "hook": "MCP"}
    assert show(project, old)["origin"] == {}  # seeded by the CLI: no client
    completed = subprocess.run(
        [str(AGENTCTX), "show", recorded], cwd=project.root, env=server_env(), capture_output=True, text=True
    )
    assert f"client: {client} / MCP" in " ".join(completed.stdout.split())
    with Store.open() as store:  # one session per server process, labelled with its client
        sessions = [row for row in store.list_sessions(project) if row["session_id"].startswith("mcp-")]
    assert len(sessions) == 1 and sessions[0]["meta"] == {"client": client, "hook": "MCP"}


@pytest.mark.parametrize("env", [{}, {"AGENTCTX_CLIENT": "vim"}])
def test_without_a_known_client_the_records_have_no_origin(project: Project, env: dict[str, str]) -> None:
    _, recorded, new = record_and_supersede(project, **env)
    assert show(project, recorded)["origin"] == {} and show(project, new)["origin"] == {}
    with Store.open() as store:
        assert store.list_sessions(project) == []  # and no session row is made for it
