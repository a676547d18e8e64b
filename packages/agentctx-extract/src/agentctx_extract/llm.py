"""One extraction call to the Messages API: forced tool use, bounded retries, usage and cost.

The SDK's own retries are off (`max_retries=0`) so this module decides: connection errors,
timeouts, 408/409/429 and 5xx are retried a bounded number of times with exponential backoff
and jitter (honouring `retry-after`); anything else fails at once. Every response's usage is
counted, including the ones whose content turned out to be unusable: that money was spent.
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentctx_extract.prices import PRICES, Price, price_for
from agentctx_extract.prompt import TOOL, TOOL_NAME, system_blocks
from agentctx_extract.schema import MalformedOutput

log = logging.getLogger("agentctx.extract")

# The default model's rates, from the one price table (`prices.PRICES`)
PRICE_INPUT = PRICES["claude-haiku-4-5"].input
PRICE_OUTPUT = PRICES["claude-haiku-4-5"].output
PRICE_CACHE_WRITE = PRICES["claude-haiku-4-5"].cache_write
PRICE_CACHE_READ = PRICES["claude-haiku-4-5"].cache_read

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


@dataclass(frozen=True, kw_only=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    calls: int = 0
    cost_usd: float = 0.0  # each response priced at its model's rates (`prices.price_for`)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            calls=self.calls + other.calls,
            cost_usd=self.cost_usd + other.cost_usd,
        )

    def to_json(self) -> dict[str, int | float]:
        """Token counts and cost as stored on the session (`cached_tokens` = cache reads)."""
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "cached_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": round(self.cost_usd, 6),
        }


class CallFailed(Exception):
    """The call did not produce a usable answer (after retries, where retrying made sense)."""


@dataclass(frozen=True, kw_only=True)
class CallSettings:
    model: str
    max_tokens: int = 8192  # 25 entries in each of 5 categories fit; a cut-off answer is unusable
    timeout_s: float = 60.0
    attempts: int = 3  # first try included
    backoff_s: float = 1.0  # first retry delay; doubles each time, capped at 8 s

    @classmethod
    def from_env(cls, model: str) -> CallSettings:
        """Timeouts and retry pacing can be tuned (tests keep them tiny) through the environment."""

        def number(name: str, default: float) -> float:
            try:
                return float(os.environ.get(name, default))
            except ValueError:
                return default

        return cls(
            model=model,
            timeout_s=number("AGENTCTX_EXTRACT_TIMEOUT", 60.0),
            attempts=max(1, int(number("AGENTCTX_EXTRACT_ATTEMPTS", 3))),
            backoff_s=max(0.0, number("AGENTCTX_EXTRACT_BACKOFF", 1.0)),
        )


def make_client(settings: CallSettings) -> Any:
    """An SDK client; the key and `ANTHROPIC_BASE_URL` come from the environment."""
    import anthropic

    return anthropic.Anthropic(
        base_url=os.environ.get("ANTHROPIC_BASE_URL") or None,
        timeout=settings.timeout_s,
        max_retries=0,
    )


def _usage_of(response: Any, price: Price) -> Usage:
    usage = getattr(response, "usage", None)
    if usage is None:
        return Usage(calls=1)
    counts = {
        "input_tokens": int(getattr(usage, "input_tokens", 0) or 0),
        "output_tokens": int(getattr(usage, "output_tokens", 0) or 0),
        "cache_write_tokens": int(getattr(usage, "cache_creation_input_tokens", 0) or 0),
        "cache_read_tokens": int(getattr(usage, "cache_read_input_tokens", 0) or 0),
    }
    return Usage(**counts, calls=1, cost_usd=price.cost(**counts))


def answer_of(response: Any, tool_name: str = TOOL_NAME) -> Any:
    """The tool input of the forced tool call (or, failing that, JSON in a text block).

    Raises:
        MalformedOutput: truncated, no tool call, or text that is not JSON.
    """
    if getattr(response, "stop_reason", None) == "max_tokens":
        raise MalformedOutput("the answer was cut off at max_tokens")
    blocks = list(getattr(response, "content", None) or [])
    for block in blocks:
        if getattr(block, "type", None) == "tool_use" and getattr(block, "name", None) == tool_name:
            return block.input
    text = "".join(getattr(block, "text", "") for block in blocks if getattr(block, "type", None) == "text").strip()
    return json_in_text(text, f"no `{tool_name}` call and no JSON in the answer")


def json_in_text(text: str, missing: str) -> Any:
    """The JSON value a model's text answer holds (a code fence around it is tolerated).

    Raises:
        MalformedOutput: `missing`, with the answer's length, when the text is no JSON.
    """
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.strip("`").removeprefix("json").strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        raise MalformedOutput(f"{missing} ({len(stripped)} chars)") from None


class Caller:
    """Makes extraction calls; safe to share between threads (usage is summed under a lock)."""

    def __init__(self, client: Any, settings: CallSettings, *, cache: bool = False) -> None:
        self.client = client
        self.settings = settings
        self.cache = cache  # a prompt-cache breakpoint after the system prompt (map-reduce runs only)
        self.price = price_for(settings.model)
        self._lock = threading.Lock()
        self.usage = Usage()

    def _count(self, usage: Usage) -> None:
        with self._lock:
            self.usage = self.usage + usage

    def _delay(self, attempt: int, exc: Exception) -> float:
        base = min(8.0, self.settings.backoff_s * (2 ** (attempt - 1)))
        delay = base * (0.75 + random.random() * 0.5)
        response = getattr(exc, "response", None)
        headers: Mapping[str, str] = getattr(response, "headers", None) or {}
        try:
            if "retry-after-ms" in headers:
                delay = max(delay, float(headers["retry-after-ms"]) / 1000)
            elif "retry-after" in headers:
                delay = max(delay, float(headers["retry-after"]))
        except ValueError:
            pass
        return min(delay, 30.0)

    def call(self, user_text: str, *, label: str, system: Any = None, tool: dict[str, Any] | None = None) -> Any:
        """One forced-tool call; returns the raw answer object (validated by the caller).

        `system` and `tool` default to extraction's; re-verification and `learn --llm` pass their own.

        Raises:
            CallFailed: every attempt failed, a non-retryable error, or an unusable answer.
        """
        import anthropic

        tool = tool or TOOL
        for attempt in range(1, self.settings.attempts + 1):
            try:
                response = self.client.messages.create(
                    model=self.settings.model,
                    max_tokens=self.settings.max_tokens,
                    system=system if system is not None else system_blocks(cache=self.cache),
                    tools=[tool],
                    tool_choice={"type": "tool", "name": tool["name"]},
                    messages=[{"role": "user", "content": user_text}],
                )
            except anthropic.APIStatusError as exc:
                error, retry, reason = exc, exc.status_code in RETRYABLE_STATUS, f"HTTP {exc.status_code}"
            except anthropic.APIConnectionError as exc:  # includes timeouts
                error, retry, reason = exc, True, type(exc).__name__
            except anthropic.APIError as exc:  # e.g. a response the SDK cannot validate
                error, retry, reason = exc, False, type(exc).__name__
            except ValueError as exc:  # a torn response body: the SDK's JSON decoding fails
                error, retry, reason = exc, False, f"unreadable response ({type(exc).__name__})"
            else:
                used = _usage_of(response, self.price)
                self._count(used)
                log.info(
                    "%s: %d input, %d cache read, %d cache write, %d output tokens ($%.5f)",
                    label,
                    used.input_tokens,
                    used.cache_read_tokens,
                    used.cache_write_tokens,
                    used.output_tokens,
                    used.cost_usd,
                )
                try:
                    return answer_of(response, tool["name"])
                except MalformedOutput as exc:
                    raise CallFailed(f"{label}: malformed answer: {exc}") from None
            if not retry or attempt == self.settings.attempts:
                raise CallFailed(f"{label}: {reason} after {attempt} attempt(s)")
            delay = self._delay(attempt, error)
            log.info(
                "%s: %s, retrying in %.2fs (attempt %d of %d)",
                label,
                reason,
                delay,
                attempt + 1,
                self.settings.attempts,
            )
            time.sleep(delay)
        raise CallFailed(f"{label}: no attempt made")  # attempts >= 1, so never reached
