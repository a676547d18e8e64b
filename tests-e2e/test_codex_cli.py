"""Acceptance: agentctx inside the real Codex CLI, checked on what the model received.

`agentctx init --client codex` registers the hooks in `$CODEX_HOME/hooks.json`, the MCP server
and the hooks' trust in `$CODEX_HOME/config.toml`; then scripted `codex exec` sessions run,
**without** `--dangerously-bypass-hook-trust`, against a local Responses API mock
(`agent_api_mock.ResponsesMock`) that records every request body. Codex skips untrusted hooks
silently, so every injection seen here also proves the trust init recorded is the one Codex
computes.

The CLI is `@openai/codex` from npm, installed by `.ci/run` into `.cache/codex/` (or named by
`AGENTCTX_CODEX_BIN`); without it these tests are skipped. See docs/testing.md.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from agentctx_store.inject import HEADER as INJECTION_HEADER

sys.path.insert(0, str(Path(__file__).parent))

from agent_api_mock import (
    Answer,
    Recorded,
    ResponsesMock,
    answer_noted,
    codex_call_outputs,
    codex_developer_texts,
    codex_tool_outputs,
    codex_user_texts,
)
from client_rig import (
    BUGFIX_TITLE,
    CLAUDE_ERROR_PROMPT,
    IRRELEVANT_PROMPT,
    NEW_TITLE,
    OLD_BODY,
    OLD_TITLE,
    OTHER_PROMPT,
    OTHER_TITLE,
    REDIS_PROMPT,
    REPO,
    STRIPE_PROMPT,
    agentctx,
    assert_never,
    base_env,
    claude_code_failure,
    make_repo,
    seed,
)

CODEX_VERSION = "0.171.0"
HEADER = INJECTION_HEADER  # what opens every prompt injection


def codex_binary() -> Path | None:
    override = os.environ.get("AGENTCTX_CODEX_BIN")
    candidate = Path(override) if override else REPO / ".cache" / "codex" / "node_modules" / ".bin" / "codex"
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


CODEX = codex_binary()

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CODEX is None,
        reason=f"Codex CLI not installed: run `npm install --prefix .cache/codex @openai/codex@{CODEX_VERSION}` "
        "(or set AGENTCTX_CODEX_BIN)",
    ),
]

USER_CONFIG = """# the developer's own Codex config, before agentctx
model = "gpt-5.1-codex"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "{base_url}"
wire_api = "responses"
env_key = "MOCK_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
plugins = false
"""


@dataclass(frozen=True, kw_only=True)
class Rig:
    project: Path
    other: Path
    home: Path
    codex_home: Path
    mock: ResponsesMock
    env: dict[str, str]
    config_before: str

    def agentctx(self, *args: str) -> str:
        return agentctx(self.env, self.project, *args).stdout

    def session(self, prompt: str, *extra: str) -> list[Recorded]:
        """One `codex exec` session; the Responses requests it made."""
        start = len(self.mock.model_requests())
        done = subprocess.run(
            [str(CODEX), "exec", "--json", *extra, prompt],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, (
            f"codex exec failed ({done.returncode}): {done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
        requests = self.mock.model_requests()[start:]
        assert requests, f"no model request reached the mock: {done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        return requests

    def hooks_log(self) -> str:
        path = self.home / ".agentctx" / "logs" / "hooks.log"
        return path.read_text(encoding="utf-8") if path.exists() else ""


@pytest.fixture
def rig(isolated_home: Path, tmp_path: Path) -> Iterator[Rig]:
    project = make_repo(tmp_path / "shop", "pyproject.toml", '[project]\nname = "shop"\nversion = "0.1.0"\n')
    other = make_repo(tmp_path / "web", "package.json", '{"name": "web"}')
    codex_home = isolated_home / ".codex"
    codex_home.mkdir()
    with ResponsesMock(responder=answer_noted) as mock:
        config = USER_CONFIG.format(base_url=mock.base_url)
        (codex_home / "config.toml").write_text(config, encoding="utf-8")
        env = {**base_env(isolated_home, CODEX.parent), "CODEX_HOME": str(codex_home), "MOCK_OPENAI_KEY": "sk-mock"}
        yield Rig(
            project=project,
            other=other,
            home=isolated_home,
            codex_home=codex_home,
            mock=mock,
            env=env,
            config_before=config,
        )
        mock.dump(tmp_path / "requests")


def after_prompt(request: Recorded, prompt: str) -> list[str]:
    """The developer messages that follow the user's prompt (UserPromptSubmit context)."""
    found, seen = [], False
    for item in request.body.get("input") or []:
        if not isinstance(item, dict) or item.get("type") != "message":
            continue
        texts = [part.get("text", "") for part in item.get("content") or [] if isinstance(part, dict)]
        if item.get("role") == "user" and any(prompt in text for text in texts):
            seen, found = True, []
        elif seen and item.get("role") == "developer":
            found.extend(texts)
        elif seen:
            break
    return found


def test_real_codex_gets_digest_records_and_never_the_superseded(rig: Rig) -> None:
    out = rig.agentctx("init", "--client", "codex")
    assert "6 of 6 agentctx hooks trusted" in out, out
    hooks = json.loads((rig.codex_home / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    assert "--client codex UserPromptSubmit" in hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    config = (rig.codex_home / "config.toml").read_text(encoding="utf-8")
    assert config.startswith(rig.config_before) and "[mcp_servers.agentctx]" in config and "trusted_hash" in config
    ids = seed(rig.env, rig.project, rig.other)

    # (a) + (b): the digest at SessionStart, the bugfix for a Stripe prompt
    requests = rig.session(STRIPE_PROMPT)
    first = requests[0]
    assert STRIPE_PROMPT in "\n".join(codex_user_texts(first))
    developer = "\n".join(codex_developer_texts(first))
    assert "## Project: shop" in developer and NEW_TITLE in developer and ids["new"] in developer
    prompt_context = "\n".join(after_prompt(first, STRIPE_PROMPT))
    assert f'<agentctx-record id="{ids["bugfix"]}" type="bugfix"' in prompt_context, prompt_context
    assert NEW_TITLE not in prompt_context  # already in the digest: not repeated
    assert len(prompt_context) < 10_000  # Codex passes ~10,000 characters verbatim

    # the superseded record's own words: still never
    requests = rig.session(REDIS_PROMPT)
    assert NEW_TITLE in "\n".join(codex_developer_texts(requests[0]))
    # off-topic: the digest, and nothing for the prompt
    requests = rig.session(IRRELEVANT_PROMPT)
    for request in requests:
        assert not any(HEADER in text for text in after_prompt(request, IRRELEVANT_PROMPT))
        assert BUGFIX_TITLE not in request.raw
    assert_never([request.raw for request in rig.mock.model_requests()], OLD_TITLE, OLD_BODY, "rq workers", ids["old"])

    # Stop and SessionEnd ran (their background work is switched off here), no hook error
    log = rig.hooks_log()
    assert log.count("skipped (AGENTCTX_HOOKS_NO_SPAWN): agentctx extract") >= 3, log
    assert log.count("skipped (AGENTCTX_HOOKS_NO_SPAWN): agentctx consolidate") >= 3, log
    assert " error " not in log, log

    # (e) uninstall puts config.toml back byte for byte and removes the hooks.json init created
    out = rig.agentctx("uninstall", "--client", "codex")
    assert (rig.codex_home / "config.toml").read_text(encoding="utf-8") == rig.config_before, out
    assert not (rig.codex_home / "hooks.json").exists(), out
    requests = rig.session(STRIPE_PROMPT)
    for request in requests:
        assert NEW_TITLE not in request.raw and HEADER not in request.raw and "mcp__agentctx" not in request.raw


def test_real_codex_calls_ctx_search_through_mcp(rig: Rig) -> None:
    """(c) The model calls our MCP server's `ctx_search` (a Responses namespace tool); the next
    request carries its result: the current decision, not the superseded one."""
    rig.agentctx("init", "--client", "codex")
    ids = seed(rig.env, rig.project, rig.other)
    searched: list[bool] = []
    waits: list[bool] = []

    def respond(body: dict) -> Answer:
        if searched:
            return Answer(text="Found it.")
        namespaces = [tool.get("name") for tool in body.get("tools") or [] if tool.get("type") == "namespace"]
        if "mcp__agentctx" in namespaces:
            searched.append(True)
            return Answer(
                call={
                    "namespace": "mcp__agentctx",
                    "name": "ctx_search",
                    "arguments": {"query": "job queue redis sqlite"},
                }
            )
        if len(waits) < 15:
            # `codex exec` sends its first request before a slow MCP server has started (ours
            # imports the MCP SDK, ~1-2 s); the tools come with a later request, as for a model
            # that first looks around. So the scripted model runs a short command meanwhile.
            waits.append(True)
            return Answer(call={"name": "exec_command", "arguments": {"cmd": "sleep 1"}})
        return Answer(text="No ctx_search offered.")

    rig.mock.responder = respond
    requests = rig.session(IRRELEVANT_PROMPT)
    offering = [request for request in requests if "mcp__agentctx" in request.raw]
    assert offering, "the agentctx MCP tools never reached the model"
    namespace = [tool for tool in offering[0].body.get("tools") or [] if tool.get("name") == "mcp__agentctx"]
    assert namespace and "ctx_search" in {tool["name"] for tool in namespace[0]["tools"]}, offering[0].body["tools"]
    outputs = codex_call_outputs(requests[-1], "ctx_search")
    assert outputs, [codex_tool_outputs(request) for request in requests]
    assert ids["new"] in outputs[0] and NEW_TITLE in outputs[0], outputs[0]
    assert_never([request.raw for request in rig.mock.model_requests()], OLD_TITLE, OLD_BODY, ids["old"])


def test_real_codex_records_through_mcp_as_codex(rig: Rig) -> None:
    """A record the model makes with `ctx_record` through Codex's MCP says it came from Codex, hook
    `MCP`: init registered the server with `AGENTCTX_CLIENT = "codex"` and Codex passed it on."""
    rig.agentctx("init", "--client", "codex")
    assert 'env = { AGENTCTX_CLIENT = "codex"' in (rig.codex_home / "config.toml").read_text(encoding="utf-8")
    made: list[bool] = []
    waits: list[bool] = []
    arguments = {"type": "decision", "title": "Invoices are PDFs", "body": "Invoices are rendered as PDF files."}

    def respond(body: dict) -> Answer:
        if made:
            return Answer(text="Recorded.")
        namespaces = [tool.get("name") for tool in body.get("tools") or [] if tool.get("type") == "namespace"]
        if "mcp__agentctx" in namespaces:
            made.append(True)
            return Answer(call={"namespace": "mcp__agentctx", "name": "ctx_record", "arguments": arguments})
        if len(waits) < 15:  # the MCP server starts after the first request (see the ctx_search test)
            waits.append(True)
            return Answer(call={"name": "exec_command", "arguments": {"cmd": "sleep 1"}})
        return Answer(text="No ctx_record offered.")

    rig.mock.responder = respond
    # a tool that writes needs the user's approval in Codex (exec never asks): approve tool calls,
    # as `--approval-mode yolo` does in the Gemini test; hook trust is still what init recorded
    requests = rig.session(IRRELEVANT_PROMPT, "--dangerously-bypass-approvals-and-sandbox")
    outputs = codex_call_outputs(requests[-1], "ctx_record")
    assert outputs, [codex_tool_outputs(request) for request in requests]
    # our JSON result, inside Codex's list of content parts
    found = re.search(r'\\?"id\\?":\s*\\?"([0-9A-HJKMNP-TV-Z]{26})', outputs[0])
    assert found, outputs[0]
    record_id = found.group(1)
    shown = json.loads(rig.agentctx("show", record_id, "--json"))
    assert shown["title"] == "Invoices are PDFs" and shown["origin"] == {"client": "codex", "hook": "MCP"}


def test_real_codex_gets_what_claude_code_recorded_and_nothing_of_another_repo(rig: Rig) -> None:
    """(d) One store: an error captured through Claude Code's hook comes back in Codex; a record
    of another repository never does."""
    rig.agentctx("init", "--client", "codex")
    ids = seed(rig.env, rig.project, rig.other)
    claude_code_failure(rig.env, rig.project)

    requests = rig.session(CLAUDE_ERROR_PROMPT)
    context = "\n".join(after_prompt(requests[0], CLAUDE_ERROR_PROMPT))
    assert "ledger_sdk_missing" in context and 'type="bugfix" confidence="inferred"' in context, context

    requests = rig.session(OTHER_PROMPT)
    assert_never([request.raw for request in requests], OTHER_TITLE, ids["other"])
    assert " error " not in rig.hooks_log()


def test_init_refuses_a_malformed_codex_config(rig: Rig) -> None:
    broken = rig.config_before + "\n[features\nplugins = false\n"
    (rig.codex_home / "config.toml").write_text(broken, encoding="utf-8")
    done = agentctx(rig.env, rig.project, "init", "--client", "codex", ok=False)
    assert done.returncode != 0
    assert "config.toml" in done.stderr + done.stdout and "line" in done.stderr + done.stdout, done
    assert (rig.codex_home / "config.toml").read_text(encoding="utf-8") == broken
    assert not (rig.codex_home / "hooks.json").exists()


def test_real_codex_resumed_session_carries_a_record_once(rig: Rig) -> None:
    """`codex exec resume` replays the rollout, the hooks' developer messages included: the same
    prompt again must not inject the record a second time."""
    rig.agentctx("init", "--client", "codex")
    ids = seed(rig.env, rig.project, rig.other)
    rig.session(STRIPE_PROMPT)
    resumed = rig.session(STRIPE_PROMPT, "resume", "--last")
    raw = json.dumps(resumed[0].body)
    assert raw.count(f'<agentctx-record id=\\"{ids["bugfix"]}\\"') == 1, codex_developer_texts(resumed[0])


def codex_hooks(rig: Rig) -> list[dict]:
    """The hooks as Codex's app server reports them (`hooks/list`): what the interactive TUI's
    `/hooks` and the IDE extension show, with each hook's trust status."""
    process = subprocess.Popen(
        [str(CODEX), "app-server"],
        cwd=rig.project,
        env=rig.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:

        def send(message: dict) -> None:
            process.stdin.write(json.dumps(message) + "\n")
            process.stdin.flush()

        send({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "agentctx-test", "version": "0"}}})
        send({"method": "initialized"})
        send({"id": 2, "method": "hooks/list", "params": {"cwds": [str(rig.project)]}})
        for line in process.stdout:
            message = json.loads(line)
            if message.get("id") == 2:
                return [hook for entry in message["result"]["data"] for hook in entry["hooks"]]
        raise AssertionError("codex app-server answered no hooks/list")
    finally:
        process.kill()
        process.wait(timeout=30)
        for pipe in (process.stdin, process.stdout):
            pipe.close()  # type: ignore[union-attr]  # open pipes are ResourceWarnings, errors in tests


def test_real_codex_interactive_sees_our_hooks_trusted(rig: Rig) -> None:
    """Interactive Codex (TUI, IDE) reads trust through the same app server: after init every
    agentctx hook is `trusted`; one edited by hand is `modified` (and skipped), and doctor says so."""
    rig.agentctx("init", "--client", "codex")
    hooks = [hook for hook in codex_hooks(rig) if "--client codex" in hook.get("command", "")]
    assert sorted(hook["eventName"] for hook in hooks) == sorted(
        ["sessionStart", "userPromptSubmit", "postToolUse", "preCompact", "stop", "sessionEnd"]
    )
    assert {hook["trustStatus"] for hook in hooks} == {"trusted"}, hooks

    path = rig.codex_home / "hooks.json"
    path.write_text(path.read_text(encoding="utf-8").replace("--client codex Stop", "--client codex Stop "))
    status = {
        hook["eventName"]: hook["trustStatus"] for hook in codex_hooks(rig) if "agentctx" in hook.get("command", "")
    }
    assert status["stop"] == "modified" and status["sessionStart"] == "trusted", status
    doctor = json.loads(agentctx(rig.env, rig.project, "doctor", "--json", ok=False).stdout)
    assert {check["name"]: check["state"] for check in doctor}["codex cli hooks"] == "fail"
    rig.agentctx("init", "--client", "codex")  # what doctor says to do
    assert {hook["trustStatus"] for hook in codex_hooks(rig) if "agentctx" in hook.get("command", "")} == {"trusted"}


def test_real_codex_session_is_extracted_from_its_rollout(rig: Rig) -> None:
    """Background work on: Stop starts `agentctx extract --client codex` on the rollout the real
    client wrote; the extraction call (to a Messages API mock) carries the developer's words and
    not our injected context; its decision supersedes the stored one and the next Codex session's
    digest has it."""
    from claude_code_mock import Answer as MessagesAnswer
    from claude_code_mock import MessagesMock
    from client_rig import DECISION_PROMPT, POSTGRES, extraction_answer, wait_for_background

    rig.agentctx("init", "--client", "codex")
    ids = seed(rig.env, rig.project, rig.other)
    answer = MessagesAnswer(tool_uses=[{"name": "record_session_context", "input": extraction_answer(ids["new"])}])
    with MessagesMock(responder=lambda _body: answer) as haiku:
        rig.env.pop("AGENTCTX_HOOKS_NO_SPAWN")
        rig.env.update(ANTHROPIC_BASE_URL=haiku.url, ANTHROPIC_API_KEY="test-key")
        try:
            rig.session(DECISION_PROMPT)
            log = wait_for_background(rig.home / ".agentctx" / "logs" / "hooks.log", "extract", "consolidate")
        finally:
            rig.env["AGENTCTX_HOOKS_NO_SPAWN"] = "1"  # nothing may outlive the test
        (call,) = [request for request in haiku.messages_requests() if "record_session_context" in request.tool_names]
    extract_line = [line for line in log.splitlines() if "agentctx extract" in line and "--client codex" in line]
    assert extract_line and "exit 0" in log.split("agentctx extract", 1)[1].splitlines()[0], log
    sent = call.text
    assert f"[DEVELOPER] {DECISION_PROMPT}" in sent and "[CLAUDE] Noted." in sent, sent[:3000]
    assert HEADER not in sent and "## Project: shop" not in sent
    requests = rig.session("What is the plan for the job queue?")
    developer = "\n".join(codex_developer_texts(requests[0]))
    assert POSTGRES in developer and NEW_TITLE not in developer
