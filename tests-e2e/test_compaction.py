"""Acceptance (issue 34): context survives compaction in the real Codex CLI (pinned), offline
against its Responses API mock. `codex exec` has no `/compact`, so the session compacts itself:
`model_auto_compact_token_limit=50` under the mock's 110-token usage makes Codex compact after
the first turn (PreCompact, PostCompact, then SessionStart `compact`), and the request after it
must carry the digest again with the PreCompact snapshot ("## Before compaction").

Claude Code's `/compact` is checked in test_claude_plugin.py and test_claude_code.py; Gemini CLI
0.61.0 has no SessionStart after compression (docs/clients.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from agent_api_mock import Answer, codex_developer_texts
from client_rig import NEW_TITLE, OLD_TITLE, assert_never, seed
from test_codex_cli import Rig, pytestmark, rig  # noqa: F401  (the fixture)

PROMPT = "Check how the job queue workers are configured."


def test_real_codex_after_auto_compaction_gets_the_digest_and_snapshot_again(rig: Rig) -> None:  # noqa: F811
    rig.agentctx("init", "--client", "codex")
    ids = seed(rig.env, rig.project, rig.other)
    turns: list[bool] = []

    def respond(body: dict) -> Answer:
        turns.append(True)
        if len(turns) <= 3:  # a few tool turns, so there is a turn after the compaction
            return Answer(call={"name": "exec_command", "arguments": {"cmd": "echo checking"}})
        return Answer(text="Noted.")

    rig.mock.responder = respond
    requests = rig.session(
        PROMPT, "-c", "model_auto_compact_token_limit=50", "--dangerously-bypass-approvals-and-sandbox"
    )
    log = rig.hooks_log()
    assert "--trigger precompact --client codex" in log, log  # PreCompact ran
    after = [
        request
        for request in requests
        if any("## Before compaction" in text for text in codex_developer_texts(request))
    ]
    assert after, [codex_developer_texts(request)[-1:] for request in requests]
    restored = next(text for text in codex_developer_texts(after[0]) if "## Before compaction" in text)
    assert NEW_TITLE in restored and ids["new"] in restored and PROMPT in restored, restored
    assert requests.index(after[0]) > 0  # not the first request: brought back after the compaction
    assert_never([request.raw for request in rig.mock.model_requests()], OLD_TITLE, ids["old"])
    assert " error " not in log, log
