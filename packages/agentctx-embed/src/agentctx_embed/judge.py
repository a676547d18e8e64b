"""Confirming near-duplicates with a model (docs/consolidation.md#near-duplicates): a Claude Haiku
call says whether two records state the same fact. The SDK we use (anthropic 2.x) no longer takes a
`temperature`; the answer is held down instead by structured output: a JSON object whose one field
is the enum DUPLICATE | DIFFERENT, and anything else counts as "could not tell". Without an API key
(or with `llm` off) there is no judge, and candidates wait in `agentctx status` for a person (rung 3
of docs/contracts.md#degradation).

Honours `ANTHROPIC_BASE_URL` (the SDK reads it), which is how tests point it at a local server.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from agentctx_store.config import llm_enabled
from agentctx_store.consolidate.merges import MergeJudge
from agentctx_store.jsontext import is_object
from agentctx_store.records import Record

if TYPE_CHECKING:
    from anthropic.types import JSONOutputFormatParam

SYSTEM = (
    "You deduplicate a software project's knowledge base. Two records are DUPLICATES only when "
    "they state the same fact, decision or rule, so that keeping one loses nothing that matters. "
    "Records on the same topic that differ in substance (a different choice, a different value, "
    "a narrower scope) are DIFFERENT. Answer with the verdict DUPLICATE or DIFFERENT."
)
MAX_TOKENS = 20
VERDICT_FORMAT: JSONOutputFormatParam = {
    "type": "json_schema",
    "schema": {
        "type": "object",
        "properties": {"verdict": {"type": "string", "enum": ["DUPLICATE", "DIFFERENT"]}},
        "required": ["verdict"],
        "additionalProperties": False,
    },
}


def _describe(label: str, record: Record) -> str:
    return f"Record {label} ({record.type}, {record.valid_from[:10]}):\nTitle: {record.title}\n{record.body}"


def parse_verdict(text: str) -> bool | None:
    """True for DUPLICATE, False for DIFFERENT (as JSON or a bare word), None otherwise."""
    try:
        value = json.loads(text)
        word = str(value.get("verdict", "")) if is_object(value) else ""
    except ValueError:
        word = text
    word = word.strip().upper()
    if word.startswith("DUPLICATE"):
        return True
    if word.startswith("DIFFERENT"):
        return False
    return None


def make_judge(settings: dict[str, Any]) -> MergeJudge | None:
    """A judge when an API key is set and LLM use is on; else None."""
    if not llm_enabled(settings) or not os.environ.get("ANTHROPIC_API_KEY", "").strip():
        return None
    try:
        import anthropic
    except ImportError:
        return None
    client = anthropic.Anthropic(max_retries=1, timeout=30.0)
    model = str(settings.get("extraction_model") or "claude-haiku-4-5")

    def judge(keep: Record, drop: Record) -> bool | None:
        try:
            message = client.messages.create(
                model=model,
                max_tokens=MAX_TOKENS,
                system=SYSTEM,
                output_config={"format": VERDICT_FORMAT},
                messages=[{"role": "user", "content": f"{_describe('A', keep)}\n\n{_describe('B', drop)}"}],
            )
        except anthropic.APIError:
            return None  # asked again next run
        text = "".join(getattr(block, "text", "") for block in message.content).strip()
        return parse_verdict(text)

    return judge
