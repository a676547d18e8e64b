"""Acceptance: agentctx inside the real Claude Code CLI, checked on what the model received.

`agentctx init` registers the hooks and the MCP server the way a developer would (with the real
`claude` on PATH, so version detection and `claude mcp add` run for real); then scripted
`claude -p` sessions run against a local Messages API mock (`claude_code_mock.py`) that records
every request body. The assertions read those bodies: the SessionStart digest and the
UserPromptSubmit records must be in them, a superseded record must be nowhere in them.

The CLI is `@anthropic-ai/claude-code` from npm, installed by `.ci/run` into
`.cache/claude-code/` (or named by `AGENTCTX_CLAUDE_BIN`); without it these tests are skipped.
See docs/testing.md.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agentctx_store.inject import HEADER as PROMPT_HEADER

sys.path.insert(0, str(Path(__file__).parent))

from claude_code_mock import (
    Answer,
    MessagesMock,
    Recorded,
    answer_noted,
    hook_context,
    in_conversation,
    offered_tools,
    texts,
    tool_results,
    use_tool_once,
    use_tools_in_turn,
)

REPO = Path(__file__).resolve().parents[1]
AGENTCTX = Path(sys.executable).with_name("agentctx")
CLAUDE_VERSION = "2.1.332"
SESSION_TIMEOUT_S = 120
BACKGROUND_TIMEOUT_S = 90
SEARCH_TOOL = "mcp__agentctx__ctx_search"
OUR_TOOLS = tuple(
    f"mcp__agentctx__{tool}"
    for tool in ("ctx_search", "ctx_get", "ctx_record", "ctx_supersede", "ctx_related", "ctx_project")
)

# The store the sessions run against (shared with the Codex and Gemini tests): the Redis decision
# is superseded by the SQLite one, and its title and distinctive phrase must never reach the model.
from client_rig import (  # noqa: E402
    BUGFIX_BODY,
    BUGFIX_TITLE,
    IRRELEVANT_PROMPT,
    NEW_BODY,
    NEW_TITLE,
    OLD_BODY,
    OLD_TITLE,
    REDIS_PROMPT,
    STRIPE_PROMPT,
)


def claude_binary() -> Path | None:
    override = os.environ.get("AGENTCTX_CLAUDE_BIN")
    candidate = Path(override) if override else REPO / ".cache" / "claude-code" / "node_modules" / ".bin" / "claude"
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


CLAUDE = claude_binary()


@functools.cache
def client_version() -> tuple[int, int, int]:
    """What `claude --version` says (the tests also run against older clients, e.g. 2.0.77)."""
    done = subprocess.run([str(CLAUDE), "--version"], capture_output=True, text=True, timeout=60, check=True)
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", done.stdout)
    assert match, done.stdout
    return (int(match.group(1)), int(match.group(2)), int(match.group(3)))


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CLAUDE is None,
        reason="Claude Code CLI not installed: run `npm install --prefix .cache/claude-code "
        f"@anthropic-ai/claude-code@{CLAUDE_VERSION}` (or set AGENTCTX_CLAUDE_BIN)",
    ),
]


# -- the rig -------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Rig:
    """A git project with agentctx initialised, a mock Messages API, and the environment that
    keeps Claude Code off the network and out of the real ~/.claude."""

    project: Path
    home: Path
    mock: MessagesMock
    env: dict[str, str]

    def agentctx(self, *args: str) -> str:
        done = subprocess.run(
            [str(AGENTCTX), *args], cwd=self.project, env=self.env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"agentctx {' '.join(args)}: {done.stdout}\n{done.stderr}"
        return done.stdout

    def session(self, prompt: str, *extra: str) -> tuple[dict[str, Any], list[Recorded]]:
        """One `claude -p` session: its JSON result and the Messages requests of its conversation
        (those carrying the prompt; `mock.messages_requests()` has every request)."""
        start = len(self.mock.messages_requests())
        done = subprocess.run(
            [str(CLAUDE), "-p", prompt, "--output-format", "json", *extra],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=SESSION_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, (
            f"claude -p failed ({done.returncode}): {done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
        result = json.loads(done.stdout)
        assert result.get("is_error") is False, result
        requests = [
            request for request in self.mock.messages_requests()[start:] if in_conversation(request.body, prompt)
        ]
        assert requests or prompt.startswith("/"), "no Messages request of this conversation reached the mock"
        return result, requests

    def hooks_log(self) -> str:
        path = self.home / ".agentctx" / "logs" / "hooks.log"
        return path.read_text(encoding="utf-8") if path.exists() else ""


@pytest.fixture
def rig(isolated_home: Path, tmp_path: Path) -> Iterator[Rig]:
    with make_rig(isolated_home, tmp_path) as made:
        yield made


@contextmanager
def make_rig(isolated_home: Path, tmp_path: Path) -> Iterator[Rig]:
    """The rig in `tmp_path` (the `rig` fixture; test_compaction.py's Claude Code rig)."""
    project = tmp_path / "shop"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "shop"\nversion = "0.1.0"\ndependencies = ["stripe"]\n', encoding="utf-8"
    )
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=30)
    with MessagesMock(responder=answer_noted) as mock:
        env = {
            # built from scratch: nothing of the outer session (CLAUDE_CONFIG_DIR, keys) leaks in
            "PATH": f"{CLAUDE.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(isolated_home),
            "AGENTCTX_HOME": str(isolated_home / ".agentctx"),
            "TMPDIR": os.environ["TMPDIR"],
            "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": mock.url,
            "ANTHROPIC_API_KEY": "test-key",
            "DISABLE_TELEMETRY": "1",
            # `claude -p` connects MCP servers in the background and may send the first request
            # before a server that starts slowly (a loaded CI machine: `import mcp` takes seconds)
            # is ready; "0" makes it wait for the connection, as its own evaluation mode does.
            "MCP_CONNECTION_NONBLOCKING": "0",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "HF_HUB_OFFLINE": "1",
            # Stop/SessionEnd would start extraction and consolidation that outlive the test;
            # the hooks log the skipped spawn instead, which proves they ran.
            "AGENTCTX_HOOKS_NO_SPAWN": "1",
        }
        yield Rig(project=project, home=isolated_home, mock=mock, env=env)
        mock.dump(tmp_path / "requests")  # kept by pytest for a look after a failure


def record(rig: Rig, *args: str) -> str:
    return json.loads(rig.agentctx("record", *args, "--json"))["id"]


def seed(rig: Rig) -> dict[str, str]:
    """The store: a decision superseded by another, and a bugfix (not in the cheap digest)."""
    old = record(rig, "--type", "decision", "--title", OLD_TITLE, "--body", OLD_BODY)
    replaced = json.loads(rig.agentctx("supersede", old, "--title", NEW_TITLE, "--body", NEW_BODY, "--json"))
    new = replaced["old"]["superseded_by"]
    bugfix = record(rig, "--type", "bugfix", "--title", BUGFIX_TITLE, "--body", BUGFIX_BODY)
    return {"old": old, "new": new, "bugfix": bugfix}


def assert_never_superseded(requests: list[Recorded], old_id: str) -> None:
    for request in requests:
        raw = json.dumps(request.body)
        for leak in (OLD_TITLE, OLD_BODY, "rq workers", old_id):
            assert leak not in raw, f"superseded record text {leak!r} reached the model"


# -- the scenarios -------------------------------------------------------------------------------


def test_real_claude_code_receives_digest_and_prompt_records(rig: Rig) -> None:
    version = client_version()
    out = rig.agentctx("init")  # with the real `claude` on PATH: version detection, `claude mcp add`
    assert f"Claude Code version: {'.'.join(map(str, version))};" in out, out
    assert ("CwdChanged" in out) == (version >= (2, 1, 83)), out  # only events the client knows
    settings = json.loads((rig.home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert str(AGENTCTX) in settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    servers = json.loads((rig.home / ".claude.json").read_text(encoding="utf-8"))["mcpServers"]
    assert servers["agentctx"]["command"] == str(AGENTCTX) and servers["agentctx"]["args"] == ["mcp"]

    ids = seed(rig)
    digests = list((rig.home / ".agentctx" / "digests").glob("*.md"))
    assert len(digests) == 1, digests
    digest = digests[0].read_text(encoding="utf-8")
    assert NEW_TITLE in digest and OLD_TITLE not in digest

    # 1. a relevant prompt: the digest at SessionStart, the matching bugfix at UserPromptSubmit
    result, requests = rig.session(STRIPE_PROMPT)
    assert result["result"] == "Noted."
    first = requests[0]
    session_start = hook_context(first, "SessionStart")
    assert NEW_TITLE in session_start and f"[decision {ids['new']}]" in session_start, texts(first)
    assert "ctx_search" in session_start
    prompt_context = hook_context(first, "UserPromptSubmit")
    assert f'<agentctx-record id="{ids["bugfix"]}" type="bugfix"' in prompt_context, texts(first)
    assert "stripe.Webhook.construct_event" in prompt_context
    assert NEW_TITLE not in prompt_context  # already in the digest: not repeated
    tools = offered_tools(first, OUR_TOOLS)
    assert tools == set(OUR_TOOLS), sorted(tools)
    if version >= (2, 1, 0):
        assert SEARCH_TOOL not in first.tool_names  # 2.1 defers MCP tools without alwaysLoad

    # 1b. the same prompt in the resumed session: the record reaches the model exactly once.
    # 2.1 replays the first injection from the transcript, and the hook (which keeps the
    # session's injected ids on resume) adds none; 2.0 replays nothing, and the hook, finding no
    # hook output in the transcript, starts the list afresh and injects it again.
    _, requests = rig.session(STRIPE_PROMPT, "--resume", result["session_id"])
    assert json.dumps(requests[-1].body).count(f'<agentctx-record id=\\"{ids["bugfix"]}\\"') == 1

    # 2. a prompt that matches the superseded record's words: it must still not come back
    _, requests = rig.session(REDIS_PROMPT)
    assert NEW_TITLE in hook_context(requests[0], "SessionStart")
    assert_never_superseded(rig.mock.messages_requests(), ids["old"])  # every request so far

    # 3. an irrelevant prompt: the digest, and no prompt context at all
    _, requests = rig.session(IRRELEVANT_PROMPT)
    assert NEW_TITLE in hook_context(requests[0], "SessionStart")
    for request in requests:
        assert hook_context(request, "UserPromptSubmit") == "", texts(request)
        assert BUGFIX_TITLE not in json.dumps(request.body)

    # SessionEnd ran in every session and asked for an extraction (background work is switched off here)
    log = rig.hooks_log()
    assert log.count("skipped (AGENTCTX_HOOKS_NO_SPAWN): agentctx extract") >= 4, log
    assert log.count("skipped (AGENTCTX_HOOKS_NO_SPAWN): agentctx consolidate") >= 4, log
    assert " error " not in log, log

    # 4. uninstall: settings clean, MCP server gone, and a session gets nothing of ours
    out = rig.agentctx("uninstall")
    assert "MCP: removed 'agentctx'" in out, out
    assert not (rig.home / ".claude" / "settings.json").exists(), out  # init created it
    claude_json = json.loads((rig.home / ".claude.json").read_text(encoding="utf-8"))
    assert "agentctx" not in (claude_json.get("mcpServers") or {})
    _, requests = rig.session(STRIPE_PROMPT)
    for request in requests:
        assert hook_context(request, "SessionStart") == "" and hook_context(request, "UserPromptSubmit") == ""
        assert offered_tools(request, OUR_TOOLS) == set()
        assert "mcp__agentctx__" not in json.dumps(request.body)
        assert NEW_TITLE not in json.dumps(request.body)


def test_real_claude_code_calls_ctx_search_and_gets_our_result(rig: Rig) -> None:
    rig.agentctx("init", "--mcp-always-load")
    servers = json.loads((rig.home / ".claude.json").read_text(encoding="utf-8"))["mcpServers"]
    assert servers["agentctx"].get("alwaysLoad") is True
    ids = seed(rig)

    rig.mock.responder = use_tool_once(SEARCH_TOOL, {"query": "job queue redis sqlite"}, during=IRRELEVANT_PROMPT)
    result, requests = rig.session(IRRELEVANT_PROMPT, "--allowedTools", SEARCH_TOOL)
    assert result["result"] == "Noted."
    assert SEARCH_TOOL in requests[0].tool_names  # loaded, not deferred
    answered = [request for request in requests if tool_results(request)]
    assert answered, "no request carried a tool_result"
    (block,) = tool_results(answered[0])
    assert block.get("is_error") is not True, block
    result_text = json.dumps(block["content"])
    assert ids["new"] in result_text and NEW_TITLE in result_text, result_text
    assert_never_superseded(rig.mock.messages_requests(), ids["old"])
    assert result.get("permission_denials") == []


def test_real_claude_code_tool_failures_are_captured_and_come_back(rig: Rig) -> None:
    """PostToolUse(Failure) through the real client: a failed Bash command becomes a bugfix stub
    (spooled, applied when SessionEnd opens the store) that a later prompt about it gets back."""
    if client_version() < (2, 1, 33):
        pytest.skip("before 2.1.33 Claude Code has no PostToolUseFailure and runs no PostToolUse for a failed tool")
    rig.agentctx("init")
    command = "python3 -c 'import stripe_sdk_missing'"
    prompt = "Check that the payment SDK imports."
    rig.mock.responder = use_tool_once("Bash", {"command": command, "description": "Import the SDK"}, during=prompt)
    _, requests = rig.session(prompt, "--allowedTools", "Bash")
    answered = [request for request in requests if tool_results(request)]
    assert answered, "no request carried the Bash result"
    assert "No module named 'stripe_sdk_missing'" in json.dumps(tool_results(answered[0]))

    found = json.loads(rig.agentctx("search", "stripe_sdk_missing", "--json"))
    stubs = [hit for hit in found if hit["type"] == "bugfix"]
    assert stubs and "ModuleNotFoundError" in stubs[0]["title"], found

    rig.mock.responder = answer_noted
    _, requests = rig.session("How do I fix the ModuleNotFoundError for stripe_sdk_missing?")
    prompt_context = hook_context(requests[0], "UserPromptSubmit")
    assert f'<agentctx-record id="{stubs[0]["id"]}" type="bugfix" confidence="inferred"' in prompt_context, texts(
        requests[0]
    )


def test_real_claude_code_compaction_brings_the_work_back(rig: Rig) -> None:
    """`/compact` through the real client: PreCompact snapshots the session, and the SessionStart
    that follows (source `compact`) puts it back into what the model receives."""
    if client_version() < (2, 1, 0):
        pytest.skip(
            "Claude Code 2.0 runs no SessionStart `compact` hook for `claude -p /compact` (only `resume` after it)"
        )
    rig.agentctx("init")
    ids = seed(rig)
    result, _ = rig.session(STRIPE_PROMPT)
    rig.session("/compact", "--resume", result["session_id"])
    _, requests = rig.session("Where were we?", "--resume", result["session_id"])
    session_start = hook_context(requests[0], "SessionStart")
    assert "## Before compaction" in session_start, texts(requests[0])
    before = session_start.split("## Before compaction", 1)[1]
    assert STRIPE_PROMPT in before and NEW_TITLE in session_start
    assert_never_superseded(rig.mock.messages_requests(), ids["old"])


def test_real_claude_code_tool_captures_reach_the_store(rig: Rig, tmp_path: Path) -> None:
    """PostToolUse and CwdChanged with the real client's payloads: a Write becomes a file node of
    the session, a `git commit` lands in the session's commits, and a `cd` into another project
    gives that project its profile."""
    from agentctx_store import Store, resolve_project

    other = tmp_path / "web"
    other.mkdir()
    (other / "package.json").write_text('{"name": "web", "scripts": {"test": "vitest"}}', encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(other)], check=True, timeout=30)
    rig.agentctx("init")
    commit = "git add -A && git -c user.email=dev@example.com -c user.name=Dev commit -m 'Add the app entry point'"
    prompt = "Add an entry point and commit it."
    rig.mock.responder = use_tools_in_turn(
        {"name": "Write", "input": {"file_path": str(rig.project / "src" / "app.py"), "content": "print('hi')\n"}},
        {"name": "Bash", "input": {"command": commit, "description": "Commit"}},
        {"name": "Bash", "input": {"command": f"cd {other} && ls", "description": "Look around"}},
        during=prompt,
    )
    _, requests = rig.session(prompt, "--allowedTools", "Write", "Bash")
    assert len(tool_results(requests[-1])) == 3, [request.body.get("messages") for request in requests[-1:]]

    with Store.open() as store:
        (session,) = store.list_sessions(resolve_project(rig.project))
        assert session["meta"]["files"] == ["src/app.py"], session
        assert [entry["message"] for entry in session["meta"]["commits"]] == ["Add the app entry point"], session
        profile = store.list_records(resolve_project(other), types=["profile"])
    if client_version() >= (2, 1, 83):  # CwdChanged
        assert {record.title for record in profile} >= {"Stack", "Commands"}, profile
    assert " error " not in rig.hooks_log()


def wait_for_background(rig: Rig, *commands: str) -> str:
    """hooks.log once every named background run (`extract`, `consolidate`) has logged its exit."""
    deadline = time.monotonic() + BACKGROUND_TIMEOUT_S
    while True:
        log = rig.hooks_log()
        finished = [line for line in log.splitlines() if " background " in line and ": exit " in line]
        if all(any(f"agentctx {command} " in line for line in finished) for command in commands):
            return log
        assert time.monotonic() < deadline, f"background {commands} did not finish:\n{log}"
        time.sleep(0.2)


def test_real_claude_code_session_is_extracted_and_the_next_one_gets_it(rig: Rig) -> None:
    """The whole loop with background work on: SessionEnd starts `agentctx extract` on the transcript
    the real client wrote (once: the Stop before it starts none), the extraction call goes to the mock, its decision supersedes the
    stored one, and the next session's digest carries the new decision and not the old."""
    rig.env.pop("AGENTCTX_HOOKS_NO_SPAWN")
    rig.agentctx("init")
    ids = seed(rig)
    postgres = "Use PostgreSQL with SKIP LOCKED for the job queue"
    extraction = {
        "decisions": [
            {"what": postgres, "rationale": "SQLite locks.", "supersedes": ids["new"], "confidence": "explicit"}
        ],
        "preferences": [],
        "conventions": [],
        "active_work": {"current_task": "", "blockers": [], "next_steps": [], "open_questions": []},
        "gotchas": [],
        "flush_ok": False,
    }

    def respond(body: dict[str, Any]) -> Answer:
        if "record_session_context" in [tool.get("name") for tool in body.get("tools") or []]:
            return Answer(tool_uses=[{"name": "record_session_context", "input": extraction}])
        return Answer(text="Agreed: PostgreSQL replaces the SQLite job table.")

    rig.mock.responder = respond
    prompt = "Workers keep hitting 'database is locked'. Decision: move the job queue to PostgreSQL with SKIP LOCKED."
    rig.session(prompt)
    wait_for_background(rig, "extract", "consolidate")
    rig.env["AGENTCTX_HOOKS_NO_SPAWN"] = "1"  # nothing may outlive the test (or the mock)

    (call,) = [request for request in rig.mock.messages_requests() if "record_session_context" in request.tool_names]
    sent = call.text
    assert f"[DEVELOPER] {prompt}" in sent and "[CLAUDE] Agreed: PostgreSQL" in sent, sent[:2000]
    assert NEW_TITLE in sent  # the current decisions, so the model can supersede them
    assert PROMPT_HEADER not in sent  # our own injections are not re-extracted
    assert "exit 0" in rig.hooks_log().split("agentctx extract", 1)[1].splitlines()[0]

    _, requests = rig.session("What is the plan for the job queue?")
    session_start = hook_context(requests[0], "SessionStart")
    assert postgres in session_start, session_start
    for request in requests:
        assert NEW_TITLE not in json.dumps(request.body)  # superseded by the extraction now
    assert_never_superseded(rig.mock.messages_requests(), ids["old"])


def test_real_claude_code_gets_a_full_injection_verbatim(rig: Rig) -> None:
    """Claude Code passes up to 10,000 characters of hook output verbatim (more becomes a file
    preview): with a store full of long records, the digest and the prompt injection arrive
    whole, inside their character budgets (6,000 and 8,000)."""
    from agentctx_store import NewRecord, Store, resolve_project
    from agentctx_store.digest import refreshing

    rig.agentctx("init")
    project = resolve_project(rig.project)
    with refreshing(Store.open()) as store:  # 60 long records; the cheap digest is written on the way out
        for number in range(25):
            store.add(project, NewRecord(type="discovery", title=f"Note {number} on topic{number}", body="Short."))
        for number in range(30):
            body = ("The ledger service keeps this rule because the audits need it. " * 40)[:1990]
            store.add(project, NewRecord(type="decision", title=f"Ledger rule {number}", body=body))
        for number in range(4):  # one unbroken run (no sentence to cut at): shown whole, not as an excerpt
            body = (f"Walrus pelican exporter timeout {number} the exporter waits on the walrus queue " * 30)[:1990]
            store.add(project, NewRecord(type="bugfix", title=f"Walrus pelican exporter timeout {number}", body=body))

    _, requests = rig.session("Why does the walrus pelican exporter timeout happen?")
    session_start = hook_context(requests[0], "SessionStart")
    assert "## Current decisions and conventions" in session_start and len(session_start) <= 6_000
    assert session_start.rstrip().endswith("replace outdated ones with `ctx_supersede`.")  # the end arrived
    injected = hook_context(requests[0], "UserPromptSubmit")
    assert injected.count("<agentctx-record ") == 3 == injected.count("</agentctx-record>"), injected[:500]
    assert len(injected[: injected.rindex("</agentctx-record>")]) <= 8_000
    assert len(injected) > 5_000  # a near-budget injection, the case this test is about
    assert "Walrus pelican exporter timeout" in injected and "Ledger rule" not in injected


def test_real_claude_code_with_claude_config_dir(rig: Rig) -> None:
    """`CLAUDE_CONFIG_DIR` moves Claude Code's settings and `.claude.json`: init and uninstall
    must follow it to the same files the real client reads (and `claude mcp add` writes)."""
    config_dir = rig.home / "claude-config"
    rig.env["CLAUDE_CONFIG_DIR"] = str(config_dir)
    rig.agentctx("init", "--mcp-always-load")
    assert (config_dir / "settings.json").is_file() and not (rig.home / ".claude" / "settings.json").exists()
    seed(rig)
    _, requests = rig.session(STRIPE_PROMPT)
    assert NEW_TITLE in hook_context(requests[0], "SessionStart")
    assert BUGFIX_TITLE in hook_context(requests[0], "UserPromptSubmit")
    assert SEARCH_TOOL in requests[0].tool_names  # alwaysLoad landed in the file the client reads

    rig.agentctx("uninstall")
    assert not (config_dir / "settings.json").exists()
    assert "agentctx" not in (config_dir / ".claude.json").read_text(encoding="utf-8")


def test_real_claude_code_with_project_scope_hooks(rig: Rig) -> None:
    """`init --project` puts the hooks into the repository's `.claude/settings.json`; the real
    client runs them from there, and `uninstall --project` takes them out again."""
    rig.agentctx("init", "--project", "--no-mcp")
    assert (rig.project / ".claude" / "settings.json").is_file()
    assert not (rig.home / ".claude" / "settings.json").exists()
    seed(rig)
    _, requests = rig.session(STRIPE_PROMPT)
    assert NEW_TITLE in hook_context(requests[0], "SessionStart")
    assert BUGFIX_TITLE in hook_context(requests[0], "UserPromptSubmit")
    assert offered_tools(requests[0], OUR_TOOLS) == set()  # --no-mcp

    rig.agentctx("uninstall", "--project")
    assert not (rig.project / ".claude" / "settings.json").exists()
    _, requests = rig.session(STRIPE_PROMPT)
    assert hook_context(requests[0], "SessionStart") == ""
