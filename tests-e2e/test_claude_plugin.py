"""Acceptance (issue 34): agentctx as a Claude Code plugin, installed the way Claude Code users
install plugins, in the real Claude Code CLI (pinned) offline against the Messages API mock.

`claude plugin marketplace add <this repository>` and `claude plugin install agentctx@agentctx`
run non-interactively (no TTY is needed: neither asks anything for a plugin without a
marketplace-declared command). The CLI is installed the way `uv tool` leaves it: in
`~/.local/bin`, which is NOT on the PATH Claude Code runs hooks with, so the plugin's launcher
has to find it. Then scripted sessions check what the model received: the digest, a recorded
decision for a prompt about it, `ctx_search` through the plugin's MCP server, a subagent's
injected context in its first request, the digest again after `/compact`; the plugin with no CLI
anywhere; init and the plugin together refused.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from claude_code_mock import (
    Answer,
    MessagesMock,
    Recorded,
    answer_noted,
    hook_context,
    in_conversation,
    texts,
    tool_results,
    use_tools_in_turn,
)
from client_rig import (
    BUGFIX_BODY,
    BUGFIX_TITLE,
    IRRELEVANT_PROMPT,
    NEW_TITLE,
    OLD_BODY,
    OLD_TITLE,
    STRIPE_PROMPT,
)

REPO = Path(__file__).resolve().parents[1]
AGENTCTX = Path(sys.executable).with_name("agentctx")
CLAUDE = REPO / ".cache" / "claude-code" / "node_modules" / ".bin" / "claude"
if os.environ.get("AGENTCTX_CLAUDE_BIN"):
    CLAUDE = Path(os.environ["AGENTCTX_CLAUDE_BIN"])
PLUGIN_ID = "agentctx@agentctx"
SEARCH_TOOL = "mcp__plugin_agentctx_agentctx__ctx_search"  # a plugin's server is named plugin:<plugin>:<server>
SUBAGENT_TASK = "Find where the stripe webhook signature is verified and why it failed"
DELEGATE_PROMPT = "Delegate the payments investigation to a subagent."
TIMEOUT_S = 120

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CLAUDE.is_file(), reason="Claude Code CLI not installed (docs/testing.md)"),
]


@dataclass(frozen=True, kw_only=True)
class Rig:
    project: Path
    home: Path
    mock: MessagesMock
    env: dict[str, str]

    def run(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            list(args), cwd=self.project, env=self.env, capture_output=True, text=True, timeout=TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        if ok:
            assert done.returncode == 0, f"{' '.join(args)}: {done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        return done

    def claude(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run(str(CLAUDE), *args, ok=ok)

    def agentctx(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run(str(AGENTCTX), *args, ok=ok)

    def install_plugin(self, *, one_command: bool = False) -> None:
        """The two commands of install.md, or the one that adds the marketplace too (2.1.275+)."""
        if one_command:
            installed = self.claude("plugin", "install", "agentctx", "--marketplace", str(REPO))
        else:
            added = self.claude("plugin", "marketplace", "add", str(REPO))
            assert "agentctx" in added.stdout, added.stdout
            installed = self.claude("plugin", "install", PLUGIN_ID)
        assert "Successfully installed" in installed.stdout, installed.stdout

    def session(self, prompt: str, *extra: str) -> tuple[dict[str, Any], list[Recorded]]:
        start = len(self.mock.messages_requests())
        done = self.claude("-p", prompt, "--output-format", "json", *extra)
        result = json.loads(done.stdout)
        assert result.get("is_error") is False, result
        requests = [r for r in self.mock.messages_requests()[start:] if in_conversation(r.body, prompt)]
        return result, requests

    def hooks_log(self) -> str:
        path = self.home / ".agentctx" / "logs" / "hooks.log"
        return path.read_text(encoding="utf-8") if path.exists() else ""


@pytest.fixture
def rig(isolated_home: Path, tmp_path: Path) -> Iterator[Rig]:
    project = tmp_path / "shop"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "shop"\nversion = "0.1.0"\n', encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=30)
    with MessagesMock(responder=answer_noted) as mock:
        env = {
            # node and git, not the venv: the plugin must find the CLI itself
            "PATH": f"{CLAUDE.parent}{os.pathsep}/usr/local/bin{os.pathsep}/usr/bin{os.pathsep}/bin",
            "HOME": str(isolated_home),
            "AGENTCTX_HOME": str(isolated_home / ".agentctx"),
            "TMPDIR": os.environ["TMPDIR"],
            "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": mock.url,
            "ANTHROPIC_API_KEY": "test-key",
            "DISABLE_TELEMETRY": "1",
            "MCP_CONNECTION_NONBLOCKING": "0",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "HF_HUB_OFFLINE": "1",
            "AGENTCTX_HOOKS_NO_SPAWN": "1",
        }
        assert subprocess.run(["sh", "-c", "command -v agentctx"], env=env, capture_output=True).returncode != 0
        yield Rig(project=project, home=isolated_home, mock=mock, env=env)
        mock.dump(tmp_path / "requests")


def install_cli_like_uv_tool(rig: Rig) -> Path:
    """`uv tool install` leaves the command in ~/.local/bin: here a link to this checkout's."""
    folder = rig.home / ".local" / "bin"
    folder.mkdir(parents=True)
    (folder / "agentctx").symlink_to(AGENTCTX)
    return folder / "agentctx"


def seed(rig: Rig) -> dict[str, str]:
    def record(*args: str) -> str:
        return json.loads(rig.agentctx("record", *args, "--json").stdout)["id"]

    old = record("--type", "decision", "--title", OLD_TITLE, "--body", OLD_BODY)
    replaced = json.loads(
        rig.agentctx("supersede", old, "--title", NEW_TITLE, "--body", "Jobs live in SQLite.", "--json").stdout
    )
    bugfix = record("--type", "bugfix", "--title", BUGFIX_TITLE, "--body", BUGFIX_BODY)
    return {"old": old, "new": replaced["old"]["superseded_by"], "bugfix": bugfix}


def never_superseded(rig: Rig, old_id: str) -> None:
    for request in rig.mock.messages_requests():
        raw = json.dumps(request.body)
        assert OLD_TITLE not in raw and old_id not in raw


def delegate(body: dict[str, Any]) -> Answer:
    """The parent calls the Agent tool once; the subagent (and everything after) answers."""
    request = Recorded(method="POST", path="", body=body, headers={})
    offered = [tool.get("name") for tool in body.get("tools") or []]
    if in_conversation(body, DELEGATE_PROMPT) and "Agent" in offered and not tool_results(request):
        task = {"description": "payments investigation", "prompt": SUBAGENT_TASK, "subagent_type": "general-purpose"}
        return Answer(tool_uses=[{"name": "Agent", "input": task}])
    return answer_noted(body)


def test_the_plugin_and_the_marketplace_pass_strict_validation(rig: Rig) -> None:
    for target in (REPO / "plugins" / "claude-code", REPO):
        done = rig.claude("plugin", "validate", "--strict", str(target))
        assert "Validation passed" in done.stdout, done.stdout


# -- the scenarios ----------------------------------------------------------------------------------


def test_plugin_installed_from_this_repository_serves_a_whole_session(rig: Rig) -> None:
    cli = install_cli_like_uv_tool(rig)
    rig.install_plugin()
    ids = seed(rig)

    # the digest and the prompt's record in the first request
    result, requests = rig.session(STRIPE_PROMPT)
    first = requests[0]
    digest = hook_context(first, "SessionStart")
    assert NEW_TITLE in digest and f"[decision {ids['new']}]" in digest, texts(first)
    assert f'<agentctx-record id="{ids["bugfix"]}" type="bugfix"' in hook_context(first, "UserPromptSubmit")
    recorded = rig.home / ".agentctx" / "cli-path"
    assert recorded.read_text(encoding="utf-8").strip() == str(cli)  # found off PATH, and remembered

    # after /compact, the next request carries the digest again and the record can come back
    rig.session("/compact", "--resume", result["session_id"])
    _, requests = rig.session(STRIPE_PROMPT, "--resume", result["session_id"])
    after = hook_context(requests[0], "SessionStart")
    assert NEW_TITLE in after and "## Before compaction" in after, texts(requests[0])
    assert f'<agentctx-record id="{ids["bugfix"]}"' in hook_context(requests[0], "UserPromptSubmit")

    # ctx_search through the plugin's MCP server (2.1 defers MCP tools: ToolSearch loads it first)
    rig.mock.responder = use_tools_in_turn(
        {"name": "ToolSearch", "input": {"query": f"select:{SEARCH_TOOL}"}},
        {"name": SEARCH_TOOL, "input": {"query": "job queue sqlite"}},
        during=IRRELEVANT_PROMPT,
    )
    _, requests = rig.session(IRRELEVANT_PROMPT, "--allowedTools", SEARCH_TOOL)
    results = tool_results(requests[-1])
    assert len(results) == 2, f"{SEARCH_TOOL} was never called: {texts(requests[-1])[-3:]}"
    block = results[-1]
    assert block.get("is_error") is not True and ids["new"] in json.dumps(block["content"]), block

    # a subagent's first request carries its injected context
    rig.mock.responder = delegate
    start = len(rig.mock.messages_requests())
    rig.claude("-p", DELEGATE_PROMPT, "--output-format", "json")
    sub = [r for r in rig.mock.messages_requests()[start:] if in_conversation(r.body, SUBAGENT_TASK)]
    first_of_subagent = min(sub, key=lambda r: len(r.body.get("messages") or []))
    injected = "\n".join(text for text in texts(first_of_subagent) if "SubagentStart hook additional context" in text)
    assert ids["bugfix"] in injected and NEW_TITLE in injected, texts(first_of_subagent)
    assert injected.count(ids["bugfix"]) == 1

    never_superseded(rig, ids["old"])
    log = rig.hooks_log()
    assert " error " not in log, log
    assert "task from the parent's Agent call" in log, log


def test_plugin_without_the_cli_says_so_in_one_line_and_no_hook_fails(rig: Rig) -> None:
    rig.install_plugin()
    done = rig.claude("-p", STRIPE_PROMPT, "--output-format", "stream-json", "--verbose")
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    result = events[-1]
    assert result.get("is_error") is False, result
    raw = done.stdout + done.stderr
    assert "hook error" not in raw.lower() and "non-blocking" not in raw.lower(), raw[-3000:]
    assert raw.count("the agentctx CLI was not found") >= 1
    request = next(r for r in rig.mock.messages_requests() if in_conversation(r.body, STRIPE_PROMPT))
    assert hook_context(request, "SessionStart") == "" and hook_context(request, "UserPromptSubmit") == ""


def test_init_and_the_plugin_refuse_to_register_twice(rig: Rig) -> None:
    install_cli_like_uv_tool(rig)
    rig.install_plugin(one_command=True)
    refused = rig.agentctx("init", "--no-learn", ok=False)
    assert refused.returncode != 0 and f"already runs agentctx through the plugin {PLUGIN_ID}" in refused.stderr
    assert not (rig.home / ".agentctx" / "install.json").exists()

    # the other way round: init first (the plugin disabled), then the plugin enabled again
    rig.claude("plugin", "disable", PLUGIN_ID)
    rig.agentctx("init", "--no-learn")
    rig.claude("plugin", "enable", PLUGIN_ID)
    ids = seed(rig)
    _, requests = rig.session(STRIPE_PROMPT)
    raw = json.dumps(requests[0].body)
    assert raw.count(f"[decision {ids['new']}]") == 1  # the digest once: the plugin's hooks stayed idle
    assert raw.count(f'<agentctx-record id=\\"{ids["bugfix"]}\\"') == 1
