"""Acceptance: agentctx inside the real Gemini CLI, checked on what the model received.

`agentctx init --client gemini` registers the hooks (SessionStart, BeforeAgent, AfterTool,
AfterAgent, SessionEnd) and the MCP server in `~/.gemini/settings.json`; then scripted
`gemini -p` sessions run against a local Gemini API mock (`agent_api_mock.GeminiMock`) that
records every request body. The project folder is trusted the way a developer trusts it
(`~/.gemini/trustedFolders.json`, what Gemini's trust dialog writes): Gemini registers no hooks
in an untrusted folder and refuses to run headless there.

Gemini escapes `<` and `>` in hook context, so these tests read records as the model gets
them: `[agentctx-record id="…" …]` fences (see agentctx_hooks/clients/gemini.py).

The CLI is `@google/gemini-cli` from npm, installed by `.ci/run` into `.cache/gemini-cli/` (or
named by `AGENTCTX_GEMINI_BIN`); without it these tests are skipped. See docs/testing.md.
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
    GeminiMock,
    Recorded,
    answer_noted,
    gemini_function_responses,
    gemini_tool_names,
    gemini_user_texts,
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

GEMINI_VERSION = "0.61.0"
HEADER = INJECTION_HEADER  # what opens every prompt injection
USER_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False, "checkpointing": {"enabled": False}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "ide": {"enabled": False},
}


def gemini_binary() -> Path | None:
    override = os.environ.get("AGENTCTX_GEMINI_BIN")
    candidate = Path(override) if override else REPO / ".cache" / "gemini-cli" / "node_modules" / ".bin" / "gemini"
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


GEMINI = gemini_binary()

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        GEMINI is None,
        reason="Gemini CLI not installed: run `npm install --prefix .cache/gemini-cli "
        f"@google/gemini-cli@{GEMINI_VERSION}` (or set AGENTCTX_GEMINI_BIN)",
    ),
]


@dataclass(frozen=True, kw_only=True)
class Rig:
    project: Path
    other: Path
    home: Path
    mock: GeminiMock
    env: dict[str, str]
    settings_before: str

    @property
    def settings(self) -> Path:
        return self.home / ".gemini" / "settings.json"

    def agentctx(self, *args: str) -> str:
        return agentctx(self.env, self.project, *args).stdout

    def session(self, prompt: str, *extra: str) -> tuple[dict, list[Recorded]]:
        """One `gemini -p` session: its JSON result and the main-loop model requests it made."""
        start = len(self.mock.model_requests())
        done = subprocess.run(
            [str(GEMINI), "-p", prompt, "--output-format", "json", *extra],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, (
            f"gemini -p failed ({done.returncode}): {done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        )
        requests = self.mock.model_requests()[start:]
        assert requests, f"no model request reached the mock: {done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        return json.loads(done.stdout[done.stdout.index("{") :]), requests

    def hooks_log(self) -> str:
        path = self.home / ".agentctx" / "logs" / "hooks.log"
        return path.read_text(encoding="utf-8") if path.exists() else ""


@pytest.fixture
def rig(isolated_home: Path, tmp_path: Path) -> Iterator[Rig]:
    project = make_repo(tmp_path / "shop", "pyproject.toml", '[project]\nname = "shop"\nversion = "0.1.0"\n')
    other = make_repo(tmp_path / "web", "package.json", '{"name": "web"}')
    gemini_dir = isolated_home / ".gemini"
    gemini_dir.mkdir()
    settings = json.dumps(USER_SETTINGS, indent=2) + "\n"
    (gemini_dir / "settings.json").write_text(settings, encoding="utf-8")
    trusted = {str(project): "TRUST_FOLDER", str(other): "TRUST_FOLDER"}
    (gemini_dir / "trustedFolders.json").write_text(json.dumps(trusted), encoding="utf-8")
    with GeminiMock(responder=answer_noted) as mock:
        env = {
            **base_env(isolated_home, GEMINI.parent),
            "GOOGLE_GEMINI_BASE_URL": mock.base_url,
            "GEMINI_API_KEY": "test-key-not-real",
            "GEMINI_TELEMETRY_ENABLED": "false",
        }
        yield Rig(project=project, other=other, home=isolated_home, mock=mock, env=env, settings_before=settings)
        mock.dump(tmp_path / "requests")


def hook_contexts(request: Recorded) -> list[str]:
    """The `<hook_context>` texts of the last user turn, as the model reads them."""
    contents = [content for content in request.body.get("contents") or [] if content.get("role") == "user"]
    found = []
    for content in contents[-1:]:
        for part in content.get("parts") or []:
            text = part.get("text") if isinstance(part, dict) else None
            if isinstance(text, str) and "<hook_context>" in text:
                found.extend(chunk.split("</hook_context>", 1)[0] for chunk in text.split("<hook_context>")[1:])
    return found


def test_real_gemini_gets_digest_records_and_never_the_superseded(rig: Rig) -> None:
    out = rig.agentctx("init", "--client", "gemini")
    settings = json.loads(rig.settings.read_text(encoding="utf-8"))
    assert "--client gemini BeforeAgent" in settings["hooks"]["BeforeAgent"][0]["hooks"][0]["command"], out
    assert settings["mcpServers"]["agentctx"]["args"] == ["mcp"]
    assert "PreCompress" not in settings["hooks"]  # it fires before every model call
    ids = seed(rig.env, rig.project, rig.other)

    # (a) the digest at SessionStart; (b) the bugfix record for the Stripe prompt
    _, requests = rig.session(STRIPE_PROMPT)
    first = requests[0]
    contexts = hook_contexts(first)
    assert len(contexts) == 2, gemini_user_texts(first)  # SessionStart (prefix) and BeforeAgent (own part)
    digest, prompt_context = contexts
    assert "## Project: shop" in digest and NEW_TITLE in digest and ids["new"] in digest
    assert HEADER in prompt_context and BUGFIX_TITLE in prompt_context, prompt_context
    # the fences read as fences after Gemini's escaping: no `&lt;agentctx-record`
    assert f'[agentctx-record id="{ids["bugfix"]}" type="bugfix"' in prompt_context, prompt_context
    assert "[/agentctx-record]" in prompt_context and "&lt;agentctx-record" not in json.dumps(first.body)
    assert NEW_TITLE not in prompt_context  # in the digest already

    # the superseded record's own words: still never; the digest is not searched as the prompt
    _, requests = rig.session(REDIS_PROMPT)
    assert NEW_TITLE in hook_contexts(requests[0])[0]
    # off-topic: the digest and nothing else (BeforeAgent's prompt carries the digest in front of
    # what was typed; only the typed text is searched)
    _, requests = rig.session(IRRELEVANT_PROMPT)
    for request in requests:
        assert not any(HEADER in context for context in hook_contexts(request)), hook_contexts(request)
        assert BUGFIX_TITLE not in request.raw
    assert_never([request.raw for request in rig.mock.recorded()], OLD_TITLE, OLD_BODY, "rq workers", ids["old"])

    log = rig.hooks_log()
    assert log.count("skipped (AGENTCTX_HOOKS_NO_SPAWN): agentctx extract") >= 3, log  # AfterAgent -> extract
    assert log.count("skipped (AGENTCTX_HOOKS_NO_SPAWN): agentctx consolidate") >= 3, log  # SessionEnd
    assert " error " not in log, log

    # (e) uninstall: settings.json is what it was before init, and a session gets nothing of ours
    rig.agentctx("uninstall", "--client", "gemini")
    assert rig.settings.read_text(encoding="utf-8") == rig.settings_before
    _, requests = rig.session(STRIPE_PROMPT)
    for request in requests:
        assert hook_contexts(request) == [] and "mcp_agentctx" not in request.raw and NEW_TITLE not in request.raw


def test_real_gemini_calls_ctx_search_through_mcp(rig: Rig) -> None:
    """(c) The model calls `mcp_agentctx_ctx_search`; the next request carries our server's
    result: the current decision, never the superseded one."""
    rig.agentctx("init", "--client", "gemini")
    ids = seed(rig.env, rig.project, rig.other)
    searched: list[bool] = []

    def respond(body: dict) -> Answer:
        names = [
            decl.get("name") for tool in body.get("tools") or [] for decl in tool.get("functionDeclarations") or []
        ]
        if "mcp_agentctx_ctx_search" in names and not searched:
            searched.append(True)
            return Answer(call={"name": "mcp_agentctx_ctx_search", "arguments": {"query": "job queue redis sqlite"}})
        return Answer(text="Found it.")

    rig.mock.responder = respond
    _, requests = rig.session(IRRELEVANT_PROMPT, "--approval-mode", "yolo")
    assert "mcp_agentctx_ctx_search" in gemini_tool_names(requests[0]), gemini_tool_names(requests[0])
    results = [result for request in requests for result in gemini_function_responses(request)]
    assert results, "no request carried the tool's result"
    assert ids["new"] in results[0] and NEW_TITLE in results[0], results[0]
    assert_never([request.raw for request in rig.mock.recorded()], OLD_TITLE, OLD_BODY, ids["old"])


def test_real_gemini_records_through_mcp_as_gemini(rig: Rig) -> None:
    """A record the model makes with `mcp_agentctx_ctx_record` says it came from Gemini, hook `MCP`:
    init registered the server with `AGENTCTX_CLIENT: gemini` and Gemini passed it on."""
    rig.agentctx("init", "--client", "gemini")
    made: list[bool] = []
    arguments = {"type": "decision", "title": "Invoices are PDFs", "body": "Invoices are rendered as PDF files."}

    def respond(body: dict) -> Answer:
        names = [
            decl.get("name") for tool in body.get("tools") or [] for decl in tool.get("functionDeclarations") or []
        ]
        if "mcp_agentctx_ctx_record" in names and not made:
            made.append(True)
            return Answer(call={"name": "mcp_agentctx_ctx_record", "arguments": arguments})
        return Answer(text="Recorded.")

    rig.mock.responder = respond
    _, requests = rig.session(IRRELEVANT_PROMPT, "--approval-mode", "yolo")
    results = [result for request in requests for result in gemini_function_responses(request)]
    assert results, "no request carried the tool's result"
    record_id = re.search(r"[0-9A-HJKMNP-TV-Z]{26}", results[0]).group(0)
    shown = json.loads(rig.agentctx("show", record_id, "--json"))
    assert shown["title"] == "Invoices are PDFs" and shown["origin"] == {"client": "gemini", "hook": "MCP"}


def test_real_gemini_gets_what_claude_code_recorded_and_nothing_of_another_repo(rig: Rig) -> None:
    """(d) One store: an error captured through Claude Code's hook comes back in Gemini; a
    record of another repository never does. And the other way round: a failed shell command in
    Gemini (AfterTool) becomes a record Claude Code's prompt hook injects."""
    rig.agentctx("init", "--client", "gemini")
    ids = seed(rig.env, rig.project, rig.other)
    claude_code_failure(rig.env, rig.project)

    _, requests = rig.session(CLAUDE_ERROR_PROMPT)
    prompt_context = hook_contexts(requests[0])[-1]
    assert "ledger_sdk_missing" in prompt_context and 'type="bugfix" confidence="inferred"' in prompt_context

    _, requests = rig.session(OTHER_PROMPT)
    assert_never([request.raw for request in requests], OTHER_TITLE, ids["other"])

    # Gemini -> Claude Code: a failing command through run_shell_command
    command = "python3 -c 'import gemini_only_sdk_missing'"
    ran: list[bool] = []

    def respond(body: dict) -> Answer:
        if not ran:
            ran.append(True)
            return Answer(
                call={"name": "run_shell_command", "arguments": {"command": command, "description": "import"}}
            )
        return Answer(text="It failed.")

    rig.mock.responder = respond
    _, requests = rig.session("Check that the gemini SDK imports.", "--approval-mode", "yolo")
    assert any("gemini_only_sdk_missing" in result for result in gemini_function_responses(requests[-1]))
    payload = {
        "session_id": "claude-after-gemini",
        "cwd": str(rig.project),
        "prompt": "Why is gemini_only_sdk_missing not found?",
    }
    done = subprocess.run(
        [str(Path(sys.executable).with_name("agentctx")), "hook", "UserPromptSubmit"],
        cwd=rig.project,
        env=rig.env,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
    )
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "<agentctx-record" in context and "gemini_only_sdk_missing" in context, context
    assert " error " not in rig.hooks_log()


def test_init_refuses_a_malformed_gemini_settings(rig: Rig) -> None:
    broken = rig.settings_before.replace('"ide"', '"ide",', 1)
    rig.settings.write_text(broken, encoding="utf-8")
    done = agentctx(rig.env, rig.project, "init", "--client", "gemini", ok=False)
    message = done.stderr + done.stdout
    assert done.returncode != 0 and "settings.json, line " in message, message
    assert rig.settings.read_text(encoding="utf-8") == broken


def test_real_gemini_session_is_extracted_from_its_chat_recording(rig: Rig) -> None:
    """Background work on: AfterAgent starts `agentctx extract --client gemini` on the chat
    recording the real client wrote; the extraction call carries what the developer typed (not the
    SessionStart context Gemini put in front of it); its decision reaches the next session."""
    from claude_code_mock import Answer as MessagesAnswer
    from claude_code_mock import MessagesMock
    from client_rig import DECISION_PROMPT, POSTGRES, extraction_answer, wait_for_background

    rig.agentctx("init", "--client", "gemini")
    ids = seed(rig.env, rig.project, rig.other)
    answer = MessagesAnswer(tool_uses=[{"name": "record_session_context", "input": extraction_answer(ids["new"])}])
    with MessagesMock(responder=lambda _body: answer) as haiku:
        rig.env.pop("AGENTCTX_HOOKS_NO_SPAWN")
        rig.env.update(ANTHROPIC_BASE_URL=haiku.url, ANTHROPIC_API_KEY="test-key")
        log_path = rig.home / ".agentctx" / "logs" / "hooks.log"
        try:
            rig.session(DECISION_PROMPT)
            wait_for_background(log_path, "extract", "consolidate")
            # Resumed, Gemini 0.61.0 points transcript_path at a new, nearly empty recording and
            # appends the conversation to the old one: the extraction must find the new turn there.
            rig.session("Also: retries back off exponentially, capped at one minute.", "--resume", "latest")
            log = wait_for_background(log_path, "extract", "consolidate", runs=2)
        finally:
            rig.env["AGENTCTX_HOOKS_NO_SPAWN"] = "1"
        calls = [request for request in haiku.messages_requests() if "record_session_context" in request.tool_names]
    assert len(calls) == 2, log
    sent = calls[0].text
    assert f"[DEVELOPER] {DECISION_PROMPT}" in sent and "[CLAUDE] Noted." in sent, sent[:3000]
    assert "hook_context" not in sent and HEADER not in sent
    assert "[DEVELOPER] Also: retries back off exponentially" in calls[1].text, calls[1].text[:3000]
    _, requests = rig.session("What is the plan for the job queue?")
    digest = hook_contexts(requests[0])[0]
    assert POSTGRES in digest and NEW_TITLE not in digest
