"""The input policy (docs/extraction.md#size-policy): whole ≤ 15K tokens, head 3K + tail 17K up
to 50K, map-reduce beyond."""

from __future__ import annotations

from agentctx_store.budget import estimate_tokens

from agentctx_extract.sizing import (
    CHUNK_TOKENS,
    HEAD_TAIL_MAX_TOKENS,
    HEAD_TOKENS,
    MAX_CHUNKS,
    TAIL_TOKENS,
    WHOLE_MAX_TOKENS,
    plan_input,
)


def session(lines: int) -> str:
    return "\n".join(
        f"[DEVELOPER] line {index:05d} we talk about the database schema and the cache" for index in range(lines)
    )


def test_a_short_session_goes_whole() -> None:
    text = session(100)
    plan = plan_input(text)
    assert plan.mode == "whole" and plan.parts == (text,) and plan.tokens <= WHOLE_MAX_TOKENS


def test_a_session_that_head_and_tail_would_hold_whole_is_sent_whole() -> None:
    text = "\n".join(f"line {index:05d} " + "word " * 20 for index in range(600))
    plan = plan_input(text)
    assert WHOLE_MAX_TOKENS < plan.tokens <= HEAD_TOKENS + TAIL_TOKENS
    assert plan.mode == "whole" and plan.parts == (text,)  # no "(0 lines … omitted)" marker


def test_a_medium_session_keeps_its_head_and_tail() -> None:
    text = session(1500)
    plan = plan_input(text)
    assert plan.mode == "head_tail"
    assert WHOLE_MAX_TOKENS < plan.tokens <= HEAD_TAIL_MAX_TOKENS
    (part,) = plan.parts
    assert "line 00000 " in part and "line 01499 " in part  # first and last lines survive
    assert "line 00700 " not in part  # the middle goes
    assert "lines from the middle of the session omitted" in part
    assert estimate_tokens(part) <= 20_000 * 1.1 + 50


def test_a_long_session_is_chunked_in_order_for_map_reduce() -> None:
    text = session(5000)
    plan = plan_input(text)
    assert plan.mode == "map_reduce" and plan.tokens > HEAD_TAIL_MAX_TOKENS
    assert len(plan.parts) >= 6
    assert "\n".join(plan.parts) == text  # nothing lost, nothing reordered
    for part in plan.parts:
        assert sum(estimate_tokens(line) + 1 for line in part.split("\n")) <= CHUNK_TOKENS


def test_one_huge_line_is_split_not_sent_whole() -> None:
    text = "[TOOL OUTPUT] " + "x" * 400_000
    plan = plan_input(text)
    assert plan.mode == "map_reduce"
    assert all(len(part) < 60_000 for part in plan.parts)


def test_a_huge_session_is_capped_at_max_chunks_keeping_head_and_recent_work() -> None:
    text = session(40_000)
    plan = plan_input(text)
    assert plan.mode == "map_reduce" and len(plan.parts) == MAX_CHUNKS and plan.chunks_dropped > 0
    assert plan.parts[0].startswith("[DEVELOPER] line 00000 ")
    assert plan.parts[-1].endswith("line 39999 we talk about the database schema and the cache")
