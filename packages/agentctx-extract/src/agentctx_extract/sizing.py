"""How much of a session the model sees (docs/extraction.md#size-policy): whole, head + tail, or
map-reduce over chunks.

Sizes use the store's conservative token estimate (it never under-counts), measured line by
line, so every cut falls between lines of the rendered transcript.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentctx_store.budget import estimate_tokens

WHOLE_MAX_TOKENS = 15_000
HEAD_TAIL_MAX_TOKENS = 50_000
HEAD_TOKENS = 3_000
TAIL_TOKENS = 17_000
CHUNK_TOKENS = 10_000
PIECE_CHARS = 2_000  # over-long lines are split so no single line can blow a budget
MAX_CHUNKS = 24  # bounds one run's cost (~$0.35 at Haiku prices); beyond it the middle goes
HEAD_CHUNKS = 2

Mode = Literal["whole", "head_tail", "map_reduce"]


@dataclass(frozen=True, kw_only=True)
class InputPlan:
    mode: Mode
    parts: tuple[str, ...]
    tokens: int  # estimated tokens of the whole rendered session
    chunks_dropped: int = 0  # map-reduce chunks left out from the middle of a huge session


def _lines(text: str) -> list[tuple[str, int]]:
    """(line, token estimate) pairs, long lines split into pieces."""
    pieces: list[tuple[str, int]] = []
    for line in text.split("\n"):
        for start in range(0, max(len(line), 1), PIECE_CHARS):
            piece = line[start : start + PIECE_CHARS]
            pieces.append((piece, estimate_tokens(piece) + 1))
    return pieces


def _chunks(lines: list[tuple[str, int]], limit: int) -> list[str]:
    chunks: list[str] = []
    current: list[str] = []
    used = 0
    for line, tokens in lines:
        if current and used + tokens > limit:
            chunks.append("\n".join(current))
            current, used = [], 0
        current.append(line)
        used += tokens
    if current:
        chunks.append("\n".join(current))
    return chunks


def plan_input(text: str) -> InputPlan:
    """Choose the input policy (docs/extraction.md#size-policy) for a rendered transcript."""
    lines = _lines(text)
    total = sum(tokens for _line, tokens in lines)
    if total <= WHOLE_MAX_TOKENS:
        return InputPlan(mode="whole", parts=(text,), tokens=total)
    if total <= HEAD_TAIL_MAX_TOKENS:
        head: list[str] = []
        used = 0
        for line, tokens in lines:
            if used + tokens > HEAD_TOKENS:
                break
            head.append(line)
            used += tokens
        tail: list[str] = []
        used = 0
        for line, tokens in reversed(lines[len(head) :]):
            if used + tokens > TAIL_TOKENS:
                break
            tail.append(line)
            used += tokens
        tail.reverse()
        omitted = len(lines) - len(head) - len(tail)
        if omitted == 0:  # head and tail hold it all: send it whole, with no marker of a cut
            return InputPlan(mode="whole", parts=(text,), tokens=total)
        joined = "\n".join([*head, f"[META] …({omitted} lines from the middle of the session omitted)…", *tail])
        return InputPlan(mode="head_tail", parts=(joined,), tokens=total)
    chunks = _chunks(lines, CHUNK_TOKENS)
    dropped = max(0, len(chunks) - MAX_CHUNKS)
    if dropped:  # keep the session's setup and its most recent work, like head + tail
        chunks = chunks[:HEAD_CHUNKS] + chunks[HEAD_CHUNKS + dropped :]
    return InputPlan(mode="map_reduce", parts=tuple(chunks), tokens=total, chunks_dropped=dropped)
