"""Acceptance (issue 34): the same marketplace installed in the real Codex CLI (pinned) offline
against its Responses API mock. Codex 0.171.0 reads `.claude-plugin/marketplace.json` and, in the
plugin folder, `.codex-plugin/plugin.json` first: its hooks run `hook --client codex` and its MCP
server says Codex, as `agentctx init --client codex` would register them.

Codex runs a plugin's hooks only once the user has trusted them (`/hooks` in the TUI), and
skips them silently until then; agentctx does not trust a plugin's hooks for the user. So the
sessions here run with `--dangerously-bypass-hook-trust`, and the app server's hook list shows the
plugin's hooks, from the plugin, untrusted until then.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from agent_api_mock import Answer, codex_call_outputs, codex_developer_texts
from client_rig import (
    BUGFIX_TITLE,
    IRRELEVANT_PROMPT,
    NEW_TITLE,
    OLD_TITLE,
    STRIPE_PROMPT,
    agentctx,
    assert_never,
    seed,
)
from test_codex_cli import CODEX, HEADER, Rig, codex_hooks, pytestmark, rig  # noqa: F401  (the fixture)

REPO = Path(__file__).resolve().parents[1]
PLUGIN_ID = "agentctx@agentctx"


def install(rig: Rig) -> None:  # noqa: F811
    config = rig.codex_home / "config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace("plugins = false", "plugins = true"), encoding="utf-8")
    for args in (["plugin", "marketplace", "add", str(REPO)], ["plugin", "add", PLUGIN_ID]):
        done = subprocess.run(
            [str(CODEX), *args], cwd=rig.project, env=rig.env, capture_output=True, text=True, timeout=120,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert done.returncode == 0, f"codex {' '.join(args)}: {done.stdout[-1500:]}\n{done.stderr[-1500:]}"


def test_real_codex_installs_the_plugin_with_its_own_hooks_and_mcp(rig: Rig) -> None:  # noqa: F811
    ids = seed(rig.env, rig.project, rig.other)
    install(rig)
    listed = [hook for hook in codex_hooks(rig) if hook.get("pluginId") == PLUGIN_ID]
    assert sorted(hook["eventName"] for hook in listed) == sorted(
        ["sessionStart", "userPromptSubmit", "postToolUse", "preCompact", "stop", "sessionEnd"]
    ), listed
    assert all("hook --client codex" in hook["command"] for hook in listed), listed
    assert {hook["trustStatus"] for hook in listed} != {"trusted"}  # the user's call, in /hooks

    requests = rig.session(STRIPE_PROMPT, "--dangerously-bypass-hook-trust")
    developer = "\n".join(codex_developer_texts(requests[0]))
    assert NEW_TITLE in developer and ids["new"] in developer, developer[-2000:]
    assert HEADER in developer and BUGFIX_TITLE in developer

    searched: list[bool] = []
    waits: list[bool] = []

    def respond(body: dict) -> Answer:
        if searched:
            return Answer(text="Found it.")
        namespaces = [tool.get("name") for tool in body.get("tools") or [] if tool.get("type") == "namespace"]
        found = [name for name in namespaces if name and "agentctx" in name]
        if found:
            searched.append(True)
            return Answer(
                call={"namespace": found[0], "name": "ctx_search", "arguments": {"query": "job queue sqlite"}}
            )
        if len(waits) < 15:  # the MCP server starts after the first request (test_codex_cli.py)
            waits.append(True)
            return Answer(call={"name": "exec_command", "arguments": {"cmd": "sleep 1"}})
        return Answer(text="No ctx_search offered.")

    rig.mock.responder = respond
    requests = rig.session(IRRELEVANT_PROMPT, "--dangerously-bypass-hook-trust")
    outputs = codex_call_outputs(requests[-1], "ctx_search")
    assert outputs and ids["new"] in outputs[0], [request.body.get("tools") for request in requests[-1:]]
    assert_never([request.raw for request in rig.mock.model_requests()], OLD_TITLE, ids["old"])
    assert " error " not in rig.hooks_log(), rig.hooks_log()

    refused = agentctx(rig.env, rig.project, "init", "--client", "codex", "--no-learn", ok=False)
    assert refused.returncode != 0 and f"already runs agentctx through the plugin {PLUGIN_ID}" in refused.stderr
