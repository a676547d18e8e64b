"""Acceptance (issue 32): with no API key, a session is extracted through the coding agent that ran
it, headless, with the user's own sign-in, and that headless run leaves nothing behind.

For each real client (the pinned versions `.ci/run` installs), offline against the project's own
mock of its model API (`claude_code_mock.MessagesMock`, `agent_api_mock.ResponsesMock` /
`GeminiMock`), with no `ANTHROPIC_API_KEY` anywhere in agentctx's environment:

- the loop: `agentctx init`, a real session, its end hook starts the detached `agentctx extract`,
  which runs the client headless against the same mock; the decision lands in the store, in the
  review inbox (`review = required`), and it is the same record a user with an API key gets from
  the same session and the same mock answer (the API path run on a copy of the store);
- the headless run fired no hook (neither ours, which would open a session in the store, nor a
  hook of the user's, which writes a marker), started no MCP server (a user's server that writes a
  marker), loaded no instruction file or memory (a marker in the user's `CLAUDE.md` / `AGENTS.md` /
  `GEMINI.md` never reaches the model), left no session in the client's history, and was not
  itself extracted (one extraction request in all);
- a malformed answer stores nothing and logs one warning; a client that hangs is killed at the
  timeout, and the next session still extracts.

The user's sign-in: Claude Code through an `apiKeyHelper` in `~/.claude/settings.json`, Codex
through `codex login --with-api-key` (`$CODEX_HOME/auth.json`), Gemini through its key in
`~/.gemini/.env` (Gemini CLI reads it; agentctx does not).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from agent_api_mock import Answer as AgentAnswer
from agent_api_mock import GeminiMock, ResponsesMock
from claude_code_mock import Answer as MessagesAnswer
from claude_code_mock import MessagesMock
from client_rig import (
    AGENTCTX,
    DECISION_PROMPT,
    NEW_TITLE,
    POSTGRES,
    REPO,
    agentctx,
    extraction_answer,
    make_repo,
    seed,
    wait_for_background,
)

BINARIES = {
    "claude": (REPO / ".cache" / "claude-code" / "node_modules" / ".bin" / "claude", "AGENTCTX_CLAUDE_BIN"),
    "codex": (REPO / ".cache" / "codex" / "node_modules" / ".bin" / "codex", "AGENTCTX_CODEX_BIN"),
    "gemini": (REPO / ".cache" / "gemini-cli" / "node_modules" / ".bin" / "gemini", "AGENTCTX_GEMINI_BIN"),
}
MARKER_SYSTEM = "From the transcript of one Claude Code session"  # our extraction prompt's first words
MEMORY_MARKER = "MEMORY-MARKER-7f3a: the user's own instructions"  # in ~/.claude/CLAUDE.md and the like
PROJECT_MARKER = "PROJECT-MARKER-c41e: the project's instructions"  # in the project's CLAUDE.md and the like
CLIENT_TIMEOUT_S = 20


def binary(name: str) -> Path | None:
    default, variable = BINARIES[name]
    candidate = Path(os.environ.get(variable) or default)
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


pytestmark = pytest.mark.slow

CLIENTS = [
    pytest.param(name, marks=pytest.mark.skipif(binary(name) is None, reason=f"{name} CLI not installed (.ci/run)"))
    for name in ("claude", "codex", "gemini")
]


# -- the rig ----------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class Rig:
    name: str
    project: Path
    other: Path
    home: Path
    env: dict[str, str]
    markers: Path
    requests: Callable[[], list[dict[str, Any]]]
    reply: dict[str, Any] = field(
        default_factory=dict[str, Any]
    )  # "answer": the extraction answer, "mode": ok/bad/hang

    @property
    def data(self) -> Path:
        return self.home / ".agentctx"

    def run(self, *args: str) -> str:
        return agentctx(self.env, self.project, *args).stdout

    def session(self, prompt: str) -> None:
        """One real session of the client in the project (its hooks run, as a developer's would)."""
        argv = {
            "claude": [str(binary("claude")), "-p", prompt, "--output-format", "json"],
            "codex": [str(binary("codex")), "exec", "--json", prompt],
            "gemini": [str(binary("gemini")), "-p", prompt, "--output-format", "json"],
        }[self.name]
        done = subprocess.run(
            argv, cwd=self.project, env=self.env, capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL
        )
        assert done.returncode == 0, f"{self.name} session failed: {done.stdout[-2000:]}\n{done.stderr[-2000:]}"

    def extraction_requests(self) -> list[dict[str, Any]]:
        return [body for body in self.requests() if MARKER_SYSTEM in json.dumps(body)]

    def session_requests(self) -> list[dict[str, Any]]:
        return [body for body in self.requests() if MARKER_SYSTEM not in json.dumps(body)]

    def transcripts(self) -> list[Path]:
        """The sessions the client keeps (what its resume list offers)."""
        if self.name == "claude":
            return [
                path for path in (self.home / ".claude" / "projects").rglob("*.jsonl") if "subagents" not in path.parts
            ]
        if self.name == "codex":
            return sorted((self.home / ".codex" / "sessions").rglob("rollout-*.jsonl"))
        return sorted((self.home / ".gemini" / "tmp").glob("*/chats/session-*"))

    def hooks_log(self) -> Path:
        return self.data / "logs" / "hooks.log"

    def extract_log(self) -> list[str]:
        path = self.data / "logs" / "extract.log"
        return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def answer_for(rig: Rig, body: dict[str, Any]) -> tuple[str, Any]:
    """("session", None) for the session's own requests; for an extraction request what the rig's
    mode says: the answer, a malformed one, or a hang."""
    if MARKER_SYSTEM not in json.dumps(body):
        return "session", None
    mode = rig.reply.get("mode", "ok")
    if mode == "hang":
        time.sleep(CLIENT_TIMEOUT_S * 3)
    return mode, rig.reply.get("answer")


def marker_command(markers: Path, what: str) -> str:
    return f"echo {what} >> {markers / what}"


@pytest.fixture
def rig_factory(isolated_home: Path, tmp_path: Path) -> Iterator[Callable[[str], Rig]]:
    made: list[Any] = []

    def make(name: str) -> Rig:
        project = make_repo(tmp_path / "shop", "pyproject.toml", '[project]\nname = "shop"\nversion = "0.1.0"\n')
        other = make_repo(tmp_path / "web", "package.json", '{"name": "web"}')
        markers = tmp_path / "markers"
        markers.mkdir()
        for instructions in ("CLAUDE.md", "AGENTS.md", "GEMINI.md"):
            (project / instructions).write_text(PROJECT_MARKER + "\n", encoding="utf-8")
        tool_dir = binary(name).parent  # type: ignore[union-attr]
        env = {
            "PATH": f"{tool_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(isolated_home),
            "AGENTCTX_HOME": str(isolated_home / ".agentctx"),
            "TMPDIR": os.environ["TMPDIR"],
            "LANG": "C.UTF-8",
            "NO_COLOR": "1",
            "TERM": "dumb",
            "HF_HUB_OFFLINE": "1",
            "AGENTCTX_HOOKS_NO_SPAWN": "1",
            "AGENTCTX_CLIENT_TIMEOUT": str(CLIENT_TIMEOUT_S),
        }
        rig = Rig(
            name=name,
            project=project,
            other=other,
            home=isolated_home,
            env=env,
            markers=markers,
            requests=list,
        )
        # a user's MCP server: our own, behind a marker (a hanging fake would stall the session)
        mcp_marker = ["sh", "-c", f"{marker_command(markers, 'mcp')}; exec {AGENTCTX} mcp"]
        if name == "claude":
            setup_claude(rig, mcp_marker, made)
        elif name == "codex":
            setup_codex(rig, mcp_marker, made)
        else:
            setup_gemini(rig, mcp_marker, made)
        return rig

    yield make
    for mock in made:
        mock.dump(tmp_path / "requests")
        mock.__exit__(None, None, None)


def setup_claude(rig: Rig, mcp_marker: list[str], made: list[Any]) -> None:
    def respond(body: dict[str, Any]) -> MessagesAnswer:
        kind, answer = answer_for(rig, body)
        if kind == "session":
            return MessagesAnswer(text="Noted.")
        if kind == "bad":
            return MessagesAnswer(text="The session decided to move the queue, I think.")
        return MessagesAnswer(tool_uses=[{"name": "StructuredOutput", "input": answer}])

    mock = MessagesMock(responder=respond).__enter__()
    made.append(mock)
    rig.requests = lambda: [request.body for request in mock.messages_requests()]
    claude_dir = rig.home / ".claude"
    claude_dir.mkdir()
    settings = {
        "apiKeyHelper": "echo sk-ant-signed-in-through-the-client",  # the user's sign-in, not agentctx's key
        "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": marker_command(rig.markers, "hook")}]}]},
    }
    (claude_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    (claude_dir / "CLAUDE.md").write_text(MEMORY_MARKER + "\n", encoding="utf-8")
    servers = {"mcpServers": {"marker": {"type": "stdio", "command": mcp_marker[0], "args": mcp_marker[1:]}}}
    (rig.home / ".claude.json").write_text(json.dumps(servers), encoding="utf-8")
    rig.env.update(
        ANTHROPIC_BASE_URL=mock.url,
        DISABLE_TELEMETRY="1",
        MCP_CONNECTION_NONBLOCKING="0",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )


def setup_codex(rig: Rig, mcp_marker: list[str], made: list[Any]) -> None:
    def respond(body: dict[str, Any]) -> AgentAnswer:
        kind, answer = answer_for(rig, body)
        if kind == "session":
            return AgentAnswer(text="Noted.")
        if kind == "bad":
            return AgentAnswer(text="The session decided to move the queue, I think.")
        return AgentAnswer(text=json.dumps(answer))

    mock = ResponsesMock(responder=respond).__enter__()
    made.append(mock)
    rig.requests = lambda: [request.body for request in mock.model_requests()]
    codex_home = rig.home / ".codex"
    codex_home.mkdir()
    config = f"""model = "gpt-5.1-codex"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "{mock.base_url}"
wire_api = "responses"
requires_openai_auth = true
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[mcp_servers.marker]
command = "{mcp_marker[0]}"
args = {json.dumps(mcp_marker[1:])}
"""
    (codex_home / "config.toml").write_text(config, encoding="utf-8")
    (codex_home / "AGENTS.md").write_text(MEMORY_MARKER + "\n", encoding="utf-8")
    rig.env["CODEX_HOME"] = str(codex_home)
    login = subprocess.run(
        [str(binary("codex")), "login", "--with-api-key"],
        input="sk-signed-in-through-the-client",
        env=rig.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert login.returncode == 0 and (codex_home / "auth.json").exists(), login.stderr


def setup_gemini(rig: Rig, mcp_marker: list[str], made: list[Any]) -> None:
    def respond(body: dict[str, Any]) -> AgentAnswer:
        kind, answer = answer_for(rig, body)
        if kind == "session":
            return AgentAnswer(text="Noted.")
        if kind == "bad":
            return AgentAnswer(text="The session decided to move the queue, I think.")
        return AgentAnswer(text=json.dumps(answer))

    mock = GeminiMock(responder=respond).__enter__()
    made.append(mock)
    rig.requests = lambda: [request.body for request in mock.model_requests()]
    gemini_dir = rig.home / ".gemini"
    gemini_dir.mkdir()
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "ide": {"enabled": False},
        "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": marker_command(rig.markers, "hook")}]}]},
        "mcpServers": {"marker": {"command": mcp_marker[0], "args": mcp_marker[1:]}},
    }
    (gemini_dir / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    (gemini_dir / "GEMINI.md").write_text(MEMORY_MARKER + "\n", encoding="utf-8")
    (gemini_dir / ".env").write_text("GEMINI_API_KEY=signed-in-through-the-client\n", encoding="utf-8")
    trusted = {str(rig.project): "TRUST_FOLDER", str(rig.other): "TRUST_FOLDER"}
    (gemini_dir / "trustedFolders.json").write_text(json.dumps(trusted), encoding="utf-8")
    rig.env.update(GOOGLE_GEMINI_BASE_URL=mock.base_url, GEMINI_TELEMETRY_ENABLED="false")


# -- what the store holds ---------------------------------------------------------------------------


def store_rows(data: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    connection = sqlite3.connect(f"file:{data / 'agentctx.db'}?mode=ro", uri=True)
    try:
        return connection.execute(sql, args).fetchall()
    finally:
        connection.close()


def extracted(data: Path) -> list[tuple[Any, ...]]:
    """What extraction wrote, as a user sees it (no ids or times): type, title, body, confidence,
    scope, and whether it is current."""
    return sorted(
        store_rows(
            data,
            "SELECT type, title, body, confidence, scope, superseded_at IS NULL FROM records "
            "WHERE source = 'llm_extraction'",
        )
    )


def session_ids(data: Path) -> set[str]:
    return {row[0] for row in store_rows(data, "SELECT session_id FROM sessions")}


def markers(rig: Rig, what: str) -> int:
    path = rig.markers / what
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


# -- the tests --------------------------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_a_session_is_extracted_through_its_own_client_with_nothing_left_behind(
    rig_factory: Callable[[str], Rig], client: str, tmp_path: Path
) -> None:
    rig = rig_factory(client)
    assert "ANTHROPIC_API_KEY" not in rig.env and "ANTHROPIC_AUTH_TOKEN" not in rig.env
    init = rig.run("init", "--client", client)
    assert (
        "extraction: through" in init
        and {"claude": "claude -p", "codex": "codex exec", "gemini": "gemini -p"}[client] in init
    ), init
    status = rig.run("status")
    assert "extraction: through" in status, status
    rig.run("config", "review", "required")
    ids = seed(rig.env, rig.project, rig.other)
    rig.reply["answer"] = extraction_answer(ids["new"])
    before_session = tmp_path / "before-session"
    shutil.copytree(rig.data, before_session)  # the API path runs on this copy below

    rig.env.pop("AGENTCTX_HOOKS_NO_SPAWN")
    try:
        rig.session(DECISION_PROMPT)
        log = wait_for_background(rig.hooks_log(), "extract", "consolidate")
    finally:
        rig.env["AGENTCTX_HOOKS_NO_SPAWN"] = "1"
    time.sleep(1)  # a late hook of the headless run, if there were one, has time to show

    # the decision landed, through the client, in the review inbox
    (request,) = rig.extraction_requests()  # one headless run for the session
    assert DECISION_PROMPT in json.dumps(request), json.dumps(request)[:3000]
    records = extracted(rig.data)
    assert [row[1] for row in records] == [POSTGRES], (records, rig.extract_log(), log)
    assert records[0][3] == "inferred"  # review = required
    inbox = json.loads(rig.run("review", "--json"))
    assert POSTGRES in json.dumps(inbox), inbox
    current = store_rows(rig.data, "SELECT title FROM records WHERE superseded_at IS NULL AND type = 'decision'")
    assert (NEW_TITLE,) not in current  # superseded by the extracted decision
    summary = [line for line in rig.extract_log() if "records written" in line]
    assert len(summary) == 1 and f"through {client}" in summary[0], rig.extract_log()

    # no side effects: one session in the store and in the client's history, the user's hook and
    # MCP server ran for it alone, no instruction file or memory reached the extraction request
    real_sessions = session_ids(rig.data)
    assert len(real_sessions) == 1, real_sessions
    assert len(rig.transcripts()) == 1, rig.transcripts()
    assert not list(rig.home.rglob("agentctx-headless-*")), list(rig.home.rglob("agentctx-headless-*"))
    if client != "codex":  # Codex runs only hooks trusted in its config (a user's would need `/hooks`)
        assert markers(rig, "hook") == 1
    assert markers(rig, "mcp") == 1
    sessions_saw = json.dumps(rig.session_requests())
    assert MEMORY_MARKER in sessions_saw and PROJECT_MARKER in sessions_saw  # the session itself did load them
    assert PROJECT_MARKER not in json.dumps(request)
    # Codex 0.171 reads $CODEX_HOME/AGENTS.md whatever the flags (--ignore-user-config too), Gemini
    # 0.61 ~/.gemini/GEMINI.md whatever `context.fileName` says; only another CODEX_HOME /
    # GEMINI_CLI_HOME would avoid it, which would split the user's sign-in (docs/extraction.md)
    assert (MEMORY_MARKER in json.dumps(request)) == (client != "claude")
    hook_lines = [
        line for line in rig.hooks_log().read_text(encoding="utf-8").splitlines() if "agentctx extract" in line
    ]
    assert sum(" background " in line and ": exit " in line for line in hook_lines) == 1, hook_lines

    # the same session, the same answer, through the API with a key: the same records
    with MessagesMock(
        responder=lambda _body: MessagesAnswer(
            tool_uses=[{"name": "record_session_context", "input": rig.reply["answer"]}]
        )
    ) as api:
        (session_id,) = real_sessions
        transcript = store_rows(rig.data, "SELECT meta FROM sessions WHERE session_id = ?", session_id)[0][0]
        path = json.loads(transcript).get("transcript_path") or str(rig.transcripts()[0])
        env = {**rig.env, "AGENTCTX_HOME": str(before_session), "ANTHROPIC_API_KEY": "test-key"}
        env["ANTHROPIC_BASE_URL"] = api.url
        args = ["extract", "--session-id", session_id, "--transcript", path, "--client", client, "--json"]
        outcome = json.loads(agentctx(env, rig.project, *args).stdout)
        assert outcome["status"] == "written", outcome
        assert len(api.messages_requests()) == 1
    assert extracted(before_session) == records


@pytest.mark.parametrize("client", CLIENTS)
def test_a_bad_answer_stores_nothing_and_a_hanging_client_is_killed(
    rig_factory: Callable[[str], Rig], client: str
) -> None:
    rig = rig_factory(client)
    ids = seed(rig.env, rig.project, rig.other)
    rig.reply["answer"] = extraction_answer(ids["new"])
    rig.session(DECISION_PROMPT)
    rig.session("Also: retries back off exponentially, capped at one minute.")
    first, second = sorted(rig.transcripts(), key=lambda path: path.stat().st_mtime)

    def extract(path: Path, session_id: str) -> dict[str, Any]:
        args = ["extract", "--session-id", session_id, "--transcript", str(path), "--client", client]
        return json.loads(rig.run(*args, "--project", str(rig.project), "--json"))

    # malformed: nothing stored, one warning
    rig.reply["mode"] = "bad"
    before = len(rig.extract_log())
    outcome = extract(first, "session-one")
    assert outcome["status"] == "failed", outcome
    assert extracted(rig.data) == []
    warnings = [line for line in rig.extract_log()[before:] if " WARNING " in line]
    assert len(warnings) == 1 and ("malformed" in warnings[0] or "failed" in warnings[0]), rig.extract_log()[before:]

    # hanging: killed at the timeout, nothing stored, no process of it left
    rig.reply["mode"] = "hang"
    started = time.monotonic()
    outcome = extract(first, "session-one")
    elapsed = time.monotonic() - started
    assert outcome["status"] == "failed" and "killed" in json.dumps(outcome), outcome
    assert CLIENT_TIMEOUT_S <= elapsed < CLIENT_TIMEOUT_S + 40, elapsed
    assert extracted(rig.data) == []
    cwd_left = [proc for proc in Path("/proc").glob("[0-9]*") if "agentctx-headless-" in _cwd(proc)]
    assert not cwd_left, cwd_left

    # the next session still extracts
    rig.reply["mode"] = "ok"
    outcome = extract(second, "session-two")
    assert outcome["status"] == "written", outcome
    assert [row[1] for row in extracted(rig.data)] == [POSTGRES]
    assert not list(rig.home.rglob("agentctx-headless-*"))


def _cwd(proc: Path) -> str:
    try:
        return os.readlink(proc / "cwd")
    except OSError:
        return ""


def test_the_backend_choice(isolated_home: Path, tmp_path: Path) -> None:
    """`llm = auto` with and without a key, `api`, `client` and `off`: what `status` says and what
    `agentctx extract` does, with a stand-in `claude` on PATH that only says whether it ran."""
    tools = tmp_path / "bin"
    tools.mkdir()
    ran = tmp_path / "ran"
    fake = tools / "claude"
    fake.write_text(f'#!/bin/sh\necho ran >> {ran}\necho \'{{"is_error": true, "result": "boom"}}\'\n')
    fake.chmod(0o755)
    project = make_repo(tmp_path / "shop", "pyproject.toml", '[project]\nname = "shop"\n')
    transcript = tmp_path / "t.jsonl"
    turn = {"type": "user", "message": {"role": "user", "content": "We use uv, never pip."}, "cwd": str(project)}
    transcript.write_text(json.dumps(turn) + "\n", encoding="utf-8")
    base = {
        "PATH": f"{tools}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin",
        "HOME": str(isolated_home),
        "AGENTCTX_HOME": str(isolated_home / ".agentctx"),
        "TMPDIR": os.environ["TMPDIR"],
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",  # closed: the API path fails fast, offline
        "AGENTCTX_EXTRACT_ATTEMPTS": "1",
    }
    cases = [
        ("auto", True, "the Anthropic API", "failed", False),
        ("auto", False, "Claude Code headless", "failed", True),
        ("api", False, "none", "no_key", False),
        ("client", True, "Claude Code headless", "failed", True),
        ("off", True, "none", "disabled", False),
    ]
    for number, (mode, key, says, status, spawned) in enumerate(cases):
        env = {**base, **({"ANTHROPIC_API_KEY": "test-key"} if key else {})}
        agentctx(env, project, "config", "llm", mode)
        line = [text for text in agentctx(env, project, "status").stdout.splitlines() if "extraction:" in text]
        assert len(line) == 1 and says in line[0], (mode, key, line)
        ran.unlink(missing_ok=True)
        args = ["extract", "--session-id", f"s{number}", "--transcript", str(transcript), "--json"]
        outcome = json.loads(agentctx(env, project, *args).stdout)
        assert outcome["status"] == status, (mode, key, outcome)
        assert ran.exists() == spawned, (mode, key)
    agentctx(base, project, "config", "llm", "client")
    env = {**base, "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin"}
    line = [text for text in agentctx(env, project, "status").stdout.splitlines() if "extraction:" in text]
    assert "none" in line[0] and "not on PATH" in line[0], line
