"""Acceptance (issue 34): context survives automatic compaction in the real clients (pinned),
offline against their model API mocks. Nobody types `/compact` here: the session compacts itself,
and the request after the compaction must carry the digest again (the current decisions, the
last handover) with the PreCompact snapshot ("## Before compaction").

Codex: `codex exec` has no `/compact`; `model_auto_compact_token_limit=50` under the mock's
110-token usage makes it compact after the first turn (PreCompact, PostCompact, then
SessionStart `compact`); `codex exec resume --last` sends the next prompt of the session.

Claude Code 2.1.332 in `claude -p`: the mock reports, for one answer in the middle of a tool
loop, input tokens above the auto-compact threshold: 970,000 under the default model's window
(1,000,000; threshold 967,000), or 75,000 under `CLAUDE_CODE_AUTO_COMPACT_WINDOW=100000`, the
smallest window it accepts (threshold 67,000). Before the next model call it runs PreCompact
(`trigger: auto`), sends the summary request and SessionStart `compact`, and goes on with the
summary. With too little to summarise it gives up after PreCompact ("fewer than 2 groups" before
the first answer, "no assistant messages in summarize set" after one), hence the large usage on
the third answer. The next prompt of the resumed session must get the prompt's record again: the
dedup list starts afresh after a compaction (on `resume` alone it is kept).

Claude Code's `/compact` is checked in test_claude_plugin.py and test_claude_code.py; Gemini CLI
0.61.0 has no SessionStart after compression (docs/clients.md).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from agent_api_mock import Answer as CodexAnswer
from agent_api_mock import Recorded as CodexRecorded
from agent_api_mock import codex_developer_texts
from claude_code_mock import Answer, answer_noted, hook_context, is_compaction, texts
from client_rig import BUGFIX_TITLE, NEW_TITLE, OLD_TITLE, STRIPE_PROMPT, assert_never, record, seed
from test_claude_code import CLAUDE, assert_never_superseded, client_version, make_rig
from test_claude_code import Rig as ClaudeRig
from test_claude_code import seed as seed_claude
from test_codex_cli import CODEX, Rig, after_prompt, rig  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.slow]

PROMPT = "Check how the job queue workers are configured."
HANDOVER_TITLE = "Webhook investigation half done"
HANDOVER_BODY = "Next: compare the raw request body with what construct_event receives in src/payments/webhooks.py."
SUMMARY = "The user asked why the webhook check fails; three shell commands ran, nothing was changed yet."


def after_last(request: CodexRecorded, prompt: str) -> list[str]:
    """The developer messages right after the last user message with `prompt` (its
    UserPromptSubmit context; a resumed session has the earlier prompt too)."""
    items = [
        item for item in request.body.get("input") or [] if isinstance(item, dict) and item.get("type") == "message"
    ]
    texts_of = [
        [part.get("text", "") for part in item.get("content") or [] if isinstance(part, dict)] for item in items
    ]
    last = max(
        n for n, item in enumerate(items) if item.get("role") == "user" and any(prompt in t for t in texts_of[n])
    )
    found: list[str] = []
    for item, parts in zip(items[last + 1 :], texts_of[last + 1 :], strict=True):
        if item.get("role") != "developer":
            break
        found.extend(parts)
    return found


@pytest.mark.skipif(CODEX is None, reason="Codex CLI not installed (docs/testing.md)")
def test_real_codex_after_auto_compaction_gets_the_digest_and_snapshot_again(rig: Rig) -> None:  # noqa: F811
    rig.agentctx("init", "--client", "codex")
    ids = seed(rig.env, rig.project, rig.other)
    record(rig.env, rig.project, "--type", "handover", "--title", HANDOVER_TITLE, "--body", HANDOVER_BODY)
    turns: list[bool] = []

    def respond(body: dict) -> CodexAnswer:
        turns.append(True)
        if len(turns) <= 3:  # a few tool turns, so there is a turn after the compaction
            return CodexAnswer(call={"name": "exec_command", "arguments": {"cmd": "echo checking"}})
        return CodexAnswer(text="Noted.")

    rig.mock.responder = respond
    requests = rig.session(
        STRIPE_PROMPT, "-c", "model_auto_compact_token_limit=50", "--dangerously-bypass-approvals-and-sandbox"
    )
    bugfix_tag = f'<agentctx-record id="{ids["bugfix"]}"'
    assert bugfix_tag in "\n".join(after_prompt(requests[0], STRIPE_PROMPT))
    log = rig.hooks_log()
    assert "--trigger precompact --client codex" in log, log  # PreCompact ran
    after = [
        request
        for request in requests
        if any("## Before compaction" in text for text in codex_developer_texts(request))
    ]
    assert after, [codex_developer_texts(request)[-1:] for request in requests]
    restored = next(text for text in codex_developer_texts(after[0]) if "## Before compaction" in text)
    assert NEW_TITLE in restored and ids["new"] in restored and STRIPE_PROMPT in restored, restored
    assert "## Last handover" in restored and HANDOVER_BODY in restored, restored
    assert requests.index(after[0]) > 0  # not the first request: brought back after the compaction

    # the next prompt of the same session gets the prompt's record again: the dedup list starts
    # afresh after the compaction (on `resume` alone it is kept: Codex replays the rollout)
    resumed = rig.session(STRIPE_PROMPT, "resume", "--last")
    assert bugfix_tag in "\n".join(after_last(resumed[0], STRIPE_PROMPT)), codex_developer_texts(resumed[0])
    assert_never([request.raw for request in rig.mock.model_requests()], OLD_TITLE, ids["old"])
    assert " error " not in log, log


# -- Claude Code --------------------------------------------------------------------------------


@pytest.fixture
def claude(isolated_home: Path, tmp_path: Path) -> Iterator[ClaudeRig]:
    with make_rig(isolated_home, tmp_path) as made:
        yield made


def filling_the_context(tool_turns: int, *, full_at: int, tokens: int) -> Any:
    """A model that runs `tool_turns` shell commands one after another, reporting a context of
    `tokens` with answer number `full_at` (1-based) and a small one otherwise; it answers Claude
    Code's summary request with SUMMARY."""
    answered: list[int] = []

    def respond(body: dict[str, Any]) -> Answer:
        if is_compaction(body):
            return Answer(text=f"<analysis>The session so far.</analysis>\n<summary>{SUMMARY}</summary>")
        offered = [tool.get("name") for tool in body.get("tools") or []]
        if "Bash" in offered and len(answered) < tool_turns:
            answered.append(1)
            command = {"command": f"echo step {len(answered)}", "description": "Look at the workers"}
            size = tokens if len(answered) == full_at else 100
            return Answer(tool_uses=[{"name": "Bash", "input": command}], input_tokens=size)
        return answer_noted(body)

    return respond


@pytest.mark.skipif(CLAUDE is None, reason="Claude Code CLI not installed (docs/testing.md)")
@pytest.mark.parametrize(
    ("window", "tokens"),
    [pytest.param(None, 970_000, id="default-window"), pytest.param("100000", 75_000, id="window-100k")],
)
def test_real_claude_code_after_auto_compaction_gets_digest_snapshot_and_records_again(
    claude: ClaudeRig, tmp_path: Path, window: str | None, tokens: int
) -> None:
    if client_version() < (2, 1, 0):
        pytest.skip("automatic compaction is checked on Claude Code 2.1 only (the pinned client)")
    if window:
        claude.env["CLAUDE_CODE_AUTO_COMPACT_WINDOW"] = window
    claude.agentctx("init")
    ids = seed_claude(claude)
    claude.agentctx("record", "--type", "handover", "--title", HANDOVER_TITLE, "--body", HANDOVER_BODY)
    bugfix_tag = f'<agentctx-record id="{ids["bugfix"]}"'
    claude.mock.responder = filling_the_context(4, full_at=3, tokens=tokens)
    debug = tmp_path / "claude-debug.log"
    result, _ = claude.session(STRIPE_PROMPT, "--allowedTools", "Bash", "--debug-file", str(debug))
    requests = claude.mock.messages_requests()

    # before: the digest and the prompt's record
    assert bugfix_tag in hook_context(requests[0], "UserPromptSubmit"), texts(requests[0])

    # the client compacted by itself, with our hooks: PreCompact (auto), then SessionStart (compact)
    summaries = [number for number, request in enumerate(requests) if is_compaction(request.body)]
    assert len(summaries) == 1, [texts(request)[-1][:80] for request in requests]
    client_log = debug.read_text(encoding="utf-8")
    assert "PreCompact:auto [" in client_log and "SessionStart:compact [" in client_log, client_log[-3000:]
    assert "--trigger precompact" in claude.hooks_log()

    # after: the summary, the digest and the snapshot of the work before it, in the next request
    after = requests[summaries[0] + 1]
    assert SUMMARY in json.dumps(after.body), texts(after)
    restored = hook_context(after, "SessionStart")
    assert NEW_TITLE in restored and f"[decision {ids['new']}]" in restored, restored
    assert "## Before compaction" in restored, restored
    assert "## Last handover" in restored and HANDOVER_BODY in restored, restored
    assert STRIPE_PROMPT in restored.split("## Before compaction", 1)[1], restored

    # the next prompt of the same session: the record the summary lost is injected again (the
    # per-prompt dedup list starts afresh after the compaction; on `resume` alone it is kept)
    claude.mock.responder = answer_noted
    _, resumed = claude.session(STRIPE_PROMPT, "--resume", result["session_id"])
    assert SUMMARY in json.dumps(resumed[0].body)  # the compacted conversation went on
    assert bugfix_tag in hook_context(resumed[0], "UserPromptSubmit"), texts(resumed[0])
    assert BUGFIX_TITLE in hook_context(resumed[0], "UserPromptSubmit")
    assert_never_superseded(claude.mock.messages_requests(), ids["old"])
    log = claude.hooks_log()
    assert " error " not in log, log
