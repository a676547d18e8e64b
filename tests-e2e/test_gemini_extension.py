"""Acceptance (issue 34): agentctx as a Gemini CLI extension (`plugins/gemini-cli/`, generated
from what `agentctx init --client gemini` writes), installed with `gemini extensions install
<folder> --consent` in the real Gemini CLI (pinned) offline against its model-API mock: the digest
and the prompt's records reach the model, and `ctx_search` works through the extension's MCP
server. The CLI is found by the extension's launcher, off the PATH Gemini runs with."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from agent_api_mock import Answer, gemini_function_responses, gemini_tool_names
from client_rig import BUGFIX_TITLE, IRRELEVANT_PROMPT, NEW_TITLE, OLD_TITLE, STRIPE_PROMPT, assert_never, seed
from test_gemini_cli import GEMINI, HEADER, Rig, hook_contexts, pytestmark, rig  # noqa: F401  (the fixture)

REPO = Path(__file__).resolve().parents[1]
EXTENSION = REPO / "plugins" / "gemini-cli"


def install(rig: Rig) -> None:  # noqa: F811
    """What a user does: answer yes to "trust this folder" (Gemini asks even with --consent)."""
    trusted = rig.home / ".gemini" / "trustedFolders.json"
    folders = json.loads(trusted.read_text(encoding="utf-8"))
    trusted.write_text(json.dumps({**folders, str(EXTENSION): "TRUST_FOLDER"}), encoding="utf-8")
    done = subprocess.run(
        [str(GEMINI), "extensions", "install", str(EXTENSION), "--consent", "--skip-settings"],
        cwd=rig.project, env=rig.env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


def test_real_gemini_with_the_extension_gets_digest_records_and_ctx_search(rig: Rig) -> None:  # noqa: F811
    # the CLI where `uv tool` puts it, and a PATH without it: the launcher finds it
    folder = rig.home / ".local" / "bin"
    folder.mkdir(parents=True)
    (folder / "agentctx").symlink_to(Path(sys.executable).with_name("agentctx"))
    ids = seed(rig.env, rig.project, rig.other)  # through the venv's CLI, before PATH loses it
    rig.env["PATH"] = f"{GEMINI.parent}:/usr/local/bin:/usr/bin:/bin"
    install(rig)
    assert "hooks" not in json.loads(rig.settings.read_text(encoding="utf-8"))  # nothing written there

    _, requests = rig.session(STRIPE_PROMPT)
    contexts = hook_contexts(requests[0])
    assert len(contexts) == 2, contexts  # SessionStart and BeforeAgent, through the extension
    digest, prompt_context = contexts
    assert NEW_TITLE in digest and ids["new"] in digest
    assert HEADER in prompt_context and BUGFIX_TITLE in prompt_context
    assert (rig.home / ".agentctx" / "cli-path").read_text(encoding="utf-8").strip() == str(folder / "agentctx")

    searched: list[bool] = []

    def respond(body: dict) -> Answer:
        names = [d.get("name") for tool in body.get("tools") or [] for d in tool.get("functionDeclarations") or []]
        if "mcp_agentctx_ctx_search" in names and not searched:
            searched.append(True)
            return Answer(call={"name": "mcp_agentctx_ctx_search", "arguments": {"query": "job queue sqlite"}})
        return Answer(text="Found it.")

    rig.mock.responder = respond
    _, requests = rig.session(IRRELEVANT_PROMPT, "--approval-mode", "yolo")
    assert "mcp_agentctx_ctx_search" in gemini_tool_names(requests[0]), gemini_tool_names(requests[0])
    results = [result for request in requests for result in gemini_function_responses(request)]
    assert results and ids["new"] in results[0], results
    assert_never([request.raw for request in rig.mock.recorded()], OLD_TITLE, ids["old"])
    assert " error " not in rig.hooks_log(), rig.hooks_log()
