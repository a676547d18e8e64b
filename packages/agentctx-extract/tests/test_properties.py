"""Properties over arbitrary input: redaction is idempotent and total; validation only ever
refuses with `MalformedOutput`; the size policy never loses or reorders text."""

from __future__ import annotations

from typing import Any

from agentctx_store.redact import redact_text
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctx_extract.schema import MalformedOutput, parse_extraction
from agentctx_extract.sizing import plan_input

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=20,
)
keys = st.sampled_from(["decisions", "preferences", "conventions", "active_work", "gotchas", "flush_ok"])


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_redaction_is_total_and_idempotent(text: str) -> None:
    once = redact_text(text)
    assert redact_text(once) == once


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(keys, json_values, max_size=6) | json_values)
def test_validation_refuses_only_with_malformed_output(data: Any) -> None:
    try:
        parsed = parse_extraction(data)
    except MalformedOutput:
        return
    assert isinstance(parsed.flush_ok, bool)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=300), max_size=60))
def test_map_reduce_chunks_join_back_to_the_text(lines: list[str]) -> None:
    text = "\n".join(lines)
    plan = plan_input(text)
    if plan.mode in ("whole", "map_reduce") and plan.chunks_dropped == 0:
        assert "\n".join(plan.parts) == text
