"""What session-end extraction sends and what it would cost, on the captured Claude Code transcripts.

For each transcript: rendering time, the estimated tokens of the rendered session, the input
policy chosen (SPEC §6), and the estimated tokens of the whole request (system prompt + tool
schema + message) with its cost at Claude Haiku 4.5 prices for an assumed 500-token answer.
A synthetic long session shows the map-reduce path (chunk count, calls, cost). Redaction
throughput is measured on a 1 MB mix of prose, logs and secrets. Estimates use the store's
conservative token estimate, so real counts are lower.

usage: .venv/bin/python bench/bench_extract.py [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from agentctx_extract.llm import PRICE_CACHE_READ, PRICE_INPUT, PRICE_OUTPUT
from agentctx_extract.prompt import SYSTEM_PROMPT, TOOL, session_message, synthesis_message
from agentctx_extract.sizing import plan_input
from agentctx_extract.transcript import read_transcript, render
from agentctx_store.budget import estimate_tokens
from agentctx_store.redact import redact

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPTS = ROOT / "tests-e2e" / "fixtures" / "claude-code" / "transcripts"
ANSWER_TOKENS = 500
FIXED_TOKENS = estimate_tokens(SYSTEM_PROMPT) + estimate_tokens(json.dumps(TOOL))


def cost(input_tokens: int, output_tokens: int, cached: int = 0) -> float:
    return (input_tokens * PRICE_INPUT + cached * PRICE_CACHE_READ + output_tokens * PRICE_OUTPUT) / 1_000_000


def measure(path: Path) -> dict[str, Any]:
    started = time.perf_counter()
    transcript = read_transcript(path)
    text = redact(render(transcript)).text
    elapsed = time.perf_counter() - started
    plan = plan_input(text)
    calls = len(plan.parts) + (1 if plan.mode == "map_reduce" else 0)
    request_tokens = sum(FIXED_TOKENS + estimate_tokens(session_message(part, [])) for part in plan.parts)
    if plan.mode == "map_reduce":  # the synthesis call reads one small answer per part
        request_tokens += FIXED_TOKENS + estimate_tokens(synthesis_message([{"gotchas": []}] * len(plan.parts), []))
    return {
        "transcript": path.name,
        "file_kb": round(path.stat().st_size / 1024, 1),
        "render_ms": round(elapsed * 1000, 1),
        "rendered_chars": len(text),
        "rendered_tokens": plan.tokens,
        "mode": plan.mode,
        "calls": calls,
        "request_tokens": request_tokens,
        "cost_usd": round(cost(request_tokens, ANSWER_TOKENS * calls), 5),
    }


def synthetic_long_session(tmp: Path) -> Path:
    rng = random.Random(7)
    words = [
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
    ]
    lines = []
    for index in range(900):
        text = " ".join(rng.choice(words) for _ in range(60))
        role = "user" if index % 2 == 0 else "assistant"
        content: Any = text if role == "user" else [{"type": "text", "text": text}]
        lines.append(json.dumps({"type": role, "cwd": "/src/app", "message": {"role": role, "content": content}}))
    path = tmp / "synthetic-long.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def redaction_throughput() -> dict[str, Any]:
    chunk = (
        "We decided to keep the queue in Postgres. export GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a\n"
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 passed 12 tests in 0.3s; NODE_ENV=production\n"
        "curl -H 'Authorization: Bearer 7f3kQ9zLm2Xv8Rt1Wp4Ys6Bn0Cd5Ef' https://api.example.com/v1/items?id=42\n"
    )
    text = chunk * (1_000_000 // len(chunk))
    started = time.perf_counter()
    result = redact(text)
    elapsed = time.perf_counter() - started
    return {
        "mb": round(len(text) / 1e6, 2),
        "seconds": round(elapsed, 3),
        "mb_per_s": round(len(text) / 1e6 / elapsed, 2),
        "redactions": result.count,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    import tempfile

    rows = [measure(path) for path in sorted(TRANSCRIPTS.glob("*.jsonl"))]
    with tempfile.TemporaryDirectory() as tmp:
        rows.append(measure(synthetic_long_session(Path(tmp))))
    result = {
        "fixed_request_tokens": FIXED_TOKENS,
        "answer_tokens_assumed": ANSWER_TOKENS,
        "transcripts": rows,
        "redaction": redaction_throughput(),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"system prompt + tool schema: ~{FIXED_TOKENS} tokens per call (estimate); answer assumed {ANSWER_TOKENS} tokens"
    )
    print(f"{'transcript':32} {'KB':>7} {'ms':>6} {'tokens':>7} {'mode':>10} {'calls':>5} {'sent':>7} {'$':>8}")
    for row in rows:
        print(
            f"{row['transcript']:32} {row['file_kb']:>7} {row['render_ms']:>6} {row['rendered_tokens']:>7} "
            f"{row['mode']:>10} {row['calls']:>5} {row['request_tokens']:>7} {row['cost_usd']:>8.5f}"
        )
    red = result["redaction"]
    print(f"redaction: {red['mb']} MB in {red['seconds']} s = {red['mb_per_s']} MB/s, {red['redactions']} secrets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
