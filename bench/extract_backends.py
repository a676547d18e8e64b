"""What one session's extraction sends through each backend (issue 32): the Anthropic API, and the
headless Claude Code, Codex CLI and Gemini CLI, on the same replayed session.

The session is `extract_replay`'s 10K-dialogue one (31 turns, each: the developer stating a rule, a
Bash call with 40 lines of output, Claude's reply), written once as a Claude Code transcript. Each
backend extracts it once (`agentctx extract`, a fresh store each), pointed at a local server that
records every request: the Messages API server of the extraction tests for the API path, the
project's mocks of each client's model API (tests-e2e/) for the clients, whose real CLIs
(`.cache/`, `.ci/run`) run headless with a sign-in of their own kind and no ANTHROPIC_API_KEY.
Every server answers with the same empty extraction.

Figures per backend: model requests, characters of the request bodies, and tokens by the store's
conservative estimate of the whole body (system prompt, messages, tool or schema definitions, and
whatever the client adds: its own environment notes, tool lists, reasoning settings). The API
path's figure is also given as `extract_replay` counts it (text parts plus the API's tool-use
prompt) for comparison with docs/extraction.md's table.

Run it: `uv run --frozen pytest bench/test_bench_extract.py -k backends -s`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests-e2e"))

import extract_replay  # noqa: E402
from agentctx_store.budget import estimate_tokens  # noqa: E402
from extract_testkit import MessagesServer, empty_answer, tool_reply, transcript_lines  # noqa: E402

BINARIES = {
    "claude": ROOT / ".cache" / "claude-code" / "node_modules" / ".bin" / "claude",
    "codex": ROOT / ".cache" / "codex" / "node_modules" / ".bin" / "codex",
    "gemini": ROOT / ".cache" / "gemini-cli" / "node_modules" / ".bin" / "gemini",
}
SESSION = "10k-dialogue"


def installed(name: str) -> bool:
    return BINARIES[name].is_file() and os.access(BINARIES[name], os.X_OK)


def _transcript(base: Path, project: Path) -> Path:
    turns, paragraphs = extract_replay.SIZES[SESSION]
    lines = [
        line
        for index in range(turns)
        for line in transcript_lines(project, extract_replay.SESSION_ID, extract_replay.turns_of(index, paragraphs))
    ]
    path = base / f"{extract_replay.SESSION_ID}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _env(base: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANTHROPIC_", "AGENTCTX_", "CLAUDE", "CODEX_", "GEMINI_", "GOOGLE_"))
        and key not in ("TMPDIR", "TEMP", "TMP", "HOME")
    }
    (base / "tmp").mkdir(parents=True, exist_ok=True)
    env.update(
        AGENTCTX_HOME=str(base / ".agentctx"),
        HOME=str(base),
        TMPDIR=str(base / "tmp"),
        AGENTCTX_HOOKS_NO_SPAWN="1",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}",
    )
    env.update(extra)
    return env


def _extract(env: dict[str, str], project: Path, transcript: Path) -> dict[str, Any]:
    args = ["extract", "--session-id", extract_replay.SESSION_ID, "--transcript", str(transcript), "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "agentctx", *args, "--project", str(project)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return json.loads(done.stdout)


def _figures(bodies: list[dict[str, Any]], outcome: dict[str, Any]) -> dict[str, Any]:
    texts = [json.dumps(body, ensure_ascii=False) for body in bodies]
    return {
        "status": outcome["status"],
        "requests": len(bodies),
        "chars": sum(len(text) for text in texts),
        "tokens": sum(estimate_tokens(text) for text in texts),
        "tokens_recorded": outcome["input_tokens"] + outcome["cache_read_tokens"] + outcome["output_tokens"],
    }


def api(base: Path) -> dict[str, Any]:
    server = MessagesServer()
    server.responder = lambda _body: tool_reply(empty_answer())
    try:
        project = base / "demo-app"
        project.mkdir(parents=True)
        env = _env(base, {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant-api03-bench-local-0000"})
        outcome = _extract(env, project, _transcript(base, project))
        figures = _figures(list(server.bodies), outcome)
        figures["tokens_as_extract_replay_counts"] = sum(extract_replay.request_size(b)[1] for b in server.bodies)
        return figures
    finally:
        server.close()


def claude(base: Path) -> dict[str, Any]:
    from claude_code_mock import Answer, MessagesMock

    answer = Answer(tool_uses=[{"name": "StructuredOutput", "input": empty_answer()}])
    with MessagesMock(responder=lambda _body: answer) as mock:
        project = base / "demo-app"
        project.mkdir(parents=True)
        (base / ".claude").mkdir()
        (base / ".claude" / "settings.json").write_text('{"apiKeyHelper": "echo sk-ant-bench"}', encoding="utf-8")
        env = _env(
            base,
            {
                "PATH": f"{BINARIES['claude'].parent}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin",
                "ANTHROPIC_BASE_URL": mock.url,
                "DISABLE_TELEMETRY": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            },
        )
        outcome = _extract(env, project, _transcript(base, project))
        return _figures([request.body for request in mock.messages_requests()], outcome)


def codex(base: Path) -> dict[str, Any]:
    from agent_api_mock import Answer, ResponsesMock

    with ResponsesMock(responder=lambda _body: Answer(text=json.dumps(empty_answer()))) as mock:
        project = base / "demo-app"
        project.mkdir(parents=True)
        home = base / ".codex"
        home.mkdir()
        (home / "config.toml").write_text(
            f'model = "gpt-5.1-codex"\nmodel_provider = "mock"\n\n[model_providers.mock]\nname = "mock"\n'
            f'base_url = "{mock.base_url}"\nwire_api = "responses"\nrequires_openai_auth = true\n',
            encoding="utf-8",
        )
        env = _env(
            base,
            {
                "PATH": f"{BINARIES['codex'].parent}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin",
                "CODEX_HOME": str(home),
            },
        )
        subprocess.run(
            [str(BINARIES["codex"]), "login", "--with-api-key"],
            input="sk-bench",
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        outcome = _extract(env | {"AGENTCTX_HOOKS_NO_SPAWN": "1"}, project, _transcript(base, project))
        return _figures([request.body for request in mock.model_requests()], outcome)


def gemini(base: Path) -> dict[str, Any]:
    from agent_api_mock import Answer, GeminiMock

    with GeminiMock(responder=lambda _body: Answer(text=json.dumps(empty_answer()))) as mock:
        project = base / "demo-app"
        project.mkdir(parents=True)
        folder = base / ".gemini"
        folder.mkdir()
        settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"enableAutoUpdate": False}}
        (folder / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        (folder / ".env").write_text("GEMINI_API_KEY=bench\n", encoding="utf-8")
        env = _env(
            base,
            {
                "PATH": f"{BINARIES['gemini'].parent}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin",
                "GOOGLE_GEMINI_BASE_URL": mock.base_url,
                "GEMINI_TELEMETRY_ENABLED": "false",
            },
        )
        outcome = _extract(env, project, _transcript(base, project))
        return _figures([request.body for request in mock.recorded()], outcome)


def run() -> dict[str, dict[str, Any]]:
    """Every backend whose client is installed (the API path always)."""
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        results["api"] = api(Path(tmp) / "api")
        for name, measure in (("claude", claude), ("codex", codex), ("gemini", gemini)):
            if installed(name):
                results[name] = measure(Path(tmp) / name)
    return results


def report(results: dict[str, dict[str, Any]]) -> str:
    base = results["api"]["tokens"]
    lines = ["backend | requests | chars sent | tokens sent (est.) | vs API | status"]
    for name, figures in results.items():
        lines.append(
            f"{name} | {figures['requests']} | {figures['chars']:,} | {figures['tokens']:,} | "
            f"{figures['tokens'] / max(base, 1):.2f}x | {figures['status']}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
