"""What extraction sends: a whole session as the hooks run it (issue 14), each captured
transcript, and redaction throughput.

`test_extraction_as_the_hooks_run_it` replays a synthetic session through real `agentctx hook`
processes and the detached extractions they start, against a Messages API server on 127.0.0.1
(`extract_replay.py`), next to one `agentctx extract` of the whole transcript: requests,
characters and tokens sent, estimated cost, in `extra_info` (`report` prints them with `-s`). It
asserts the structural target (the hooks send at most 1.5× the one-shot input, and the 90-turn
session checkpoints on the way); the ~$0.015 cost target for ~10K dialogue tokens is printed, not
asserted (it depends on the token estimate, see docs/extraction.md). Under `--benchmark-disable`
only the 10K-dialogue session runs (each takes tens of seconds).

Per captured Claude Code transcript (`tests-e2e/fixtures/claude-code/transcripts/`, in the repo) and
one synthetic long session (900 turns, the map-reduce path): the time to read, render and redact it,
and as `extra_info` the estimated tokens of the rendered session, the input policy chosen
(docs/extraction.md#size-policy), the calls, the estimated tokens of the whole request (system
prompt + tool schema + message) and its cost at Claude Haiku 4.5 prices for an assumed 500-token
answer per call. Estimates use the store's conservative token estimate, so real counts are lower.

Redaction throughput: `redact()` on a 1 MB mix of prose, logs and secrets (`mb_per_s` from the
median).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import extract_replay
import pytest
from _harness import REPO_ROOT
from agentctx_extract.llm import PRICE_CACHE_READ, PRICE_INPUT, PRICE_OUTPUT
from agentctx_extract.prompt import SYSTEM_PROMPT, TOOL, TOOL_USE_SYSTEM_TOKENS, session_message, synthesis_message
from agentctx_extract.sizing import plan_input
from agentctx_extract.transcript import read_transcript, render
from agentctx_store.budget import estimate_tokens
from agentctx_store.redact import redact

TRANSCRIPTS = REPO_ROOT / "tests-e2e" / "fixtures" / "claude-code" / "transcripts"
ANSWER_TOKENS = 500
# the system prompt, the tool schema, and the tool-use system prompt the API adds (and bills)
FIXED_TOKENS = estimate_tokens(SYSTEM_PROMPT) + estimate_tokens(json.dumps(TOOL)) + TOOL_USE_SYSTEM_TOKENS
SYNTHETIC = "synthetic-long.jsonl"


def cost(input_tokens: int, output_tokens: int, cached: int = 0) -> float:
    return (input_tokens * PRICE_INPUT + cached * PRICE_CACHE_READ + output_tokens * PRICE_OUTPUT) / 1_000_000


def synthetic_long_session(folder: Path) -> Path:
    rng = random.Random(7)
    words = (
        "queue",
        "worker",
        "retry",
        "postgres",
        "migration",
        "schema",
        "cache",
        "index",
        "test",
        "deploy",
        "config",
        "lint",
    )
    lines = []
    for index in range(900):
        text = " ".join(rng.choice(words) for _ in range(60))
        role = "user" if index % 2 == 0 else "assistant"
        content: Any = text if role == "user" else [{"type": "text", "text": text}]
        lines.append(json.dumps({"type": role, "cwd": "/src/app", "message": {"role": role, "content": content}}))
    path = folder / SYNTHETIC
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def rendered(path: Path) -> str:
    return redact(render(read_transcript(path))).text


@pytest.mark.parametrize("transcript", [*sorted(p.name for p in TRANSCRIPTS.glob("*.jsonl")), SYNTHETIC])
def test_extraction_input(benchmark, tmp_path, transcript: str) -> None:
    path = synthetic_long_session(tmp_path) if transcript == SYNTHETIC else TRANSCRIPTS / transcript
    benchmark.group = "extraction input per session"
    text = benchmark(rendered, path)
    plan = plan_input(text)
    calls = len(plan.parts) + (1 if plan.mode == "map_reduce" else 0)
    request_tokens = sum(FIXED_TOKENS + estimate_tokens(session_message(part, [])) for part in plan.parts)
    if plan.mode == "map_reduce":  # the synthesis call reads one small answer per part
        request_tokens += FIXED_TOKENS + estimate_tokens(synthesis_message([{"gotchas": []}] * len(plan.parts), []))
    benchmark.extra_info.update(
        file_kb=round(path.stat().st_size / 1024, 1),
        rendered_chars=len(text),
        rendered_tokens=plan.tokens,
        mode=plan.mode,
        calls=calls,
        request_tokens=request_tokens,
        fixed_request_tokens=FIXED_TOKENS,
        cost_usd=round(cost(request_tokens, ANSWER_TOKENS * calls), 5),
    )


def test_redaction_throughput(benchmark, bench_mode) -> None:
    chunk = (
        "We decided to keep the queue in Postgres. export GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a\n"
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 passed 12 tests in 0.3s; NODE_ENV=production\n"
        "curl -H 'Authorization: Bearer 7f3kQ9zLm2Xv8Rt1Wp4Ys6Bn0Cd5Ef' https://api.example.com/v1/items?id=42\n"
    )
    text = chunk * (bench_mode.scale(1_000_000, 20_000) // len(chunk))
    benchmark.group = "redaction"
    result = benchmark.pedantic(
        redact, args=(text,), rounds=bench_mode.scale(5, 1), warmup_rounds=bench_mode.scale(1, 0)
    )
    assert "ghp_16C7e42F292c6912E7710c838347Ae178B4a" not in result.text
    benchmark.extra_info.update(mb=round(len(text) / 1e6, 2), redactions=result.count)
    if benchmark.enabled:
        benchmark.extra_info["mb_per_s"] = round(len(text) / 1e6 / benchmark.stats.stats.median, 2)


RATIO_TARGET = 1.5
COST_TARGET_USD = 0.015


@pytest.mark.parametrize("session", list(extract_replay.SIZES))
def test_extraction_as_the_hooks_run_it(benchmark, bench_mode, session: str) -> None:
    if bench_mode.disabled and session != "10k-dialogue":
        pytest.skip("--benchmark-disable: the 10K-dialogue session keeps the replay working; the others take minutes")
    benchmark.group = "extraction as the hooks run it"
    result = benchmark.pedantic(extract_replay.run, args=extract_replay.SIZES[session], rounds=1)
    print()
    print(extract_replay.report(session, result))
    benchmark.extra_info.update(result)
    if session == "10k-dialogue":
        print(
            f"target: hooks <= {RATIO_TARGET}x one-shot input; <= ${COST_TARGET_USD} for 10K dialogue tokens "
            f"(measured ${result['hooks']['estimated_cost_usd']:.4f} by our estimate, "
            f"${result['hooks_cost_at_4_chars_usd']:.4f} at 4 chars a token)"
        )
    assert result["hooks"]["requests"] >= 1, result  # the hooks extracted at all (else the ratio says nothing)
    assert result["input_ratio"] <= RATIO_TARGET, result
    if session == "long-90-turns":
        assert result["hooks"]["requests"] > 1  # the long one checkpointed on the way


def test_extraction_input_through_each_backend(benchmark) -> None:
    """Issue 32: the same replayed session extracted once through the Anthropic API and once
    through each installed client's headless mode (`extract_backends.py`): requests and tokens
    sent. At most one request per session through Claude Code and Codex (structured output); Gemini
    CLI adds its own router's small calls."""
    import extract_backends

    benchmark.group = "extraction input per backend"
    results = benchmark.pedantic(extract_backends.run, rounds=1)
    print()
    print(extract_backends.report(results))
    benchmark.extra_info.update(results)
    for name, figures in results.items():  # the same empty answer through every backend
        assert figures["status"] == results["api"]["status"] == "nothing_new", (name, figures)
    for name in ("claude", "codex"):
        if name in results:
            assert results[name]["requests"] == 1, results[name]
