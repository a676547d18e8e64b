"""The fast path's JSON reader and writer give exactly what the `json` module gives."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctx_hooks import _json_lite
from agentctx_hooks.output import hook_json
from agentctx_hooks.session_start import record_ids

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(values)
def test_dumps_is_json_dumps(value: object) -> None:
    assert _json_lite.dumps(value) == json.dumps(value)


@settings(max_examples=300, deadline=None)
@given(values, st.sampled_from(["", " ", "\n\t ", "\r\n"]))
def test_loads_is_json_loads(value: object, padding: str) -> None:
    raw = (padding + json.dumps(value, ensure_ascii=False) + padding).encode("utf-8")
    assert _json_lite.loads(raw) == json.loads(raw)


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"   ",
        b"{",
        b'{"a": 1} x',
        b"[1,]",
        b"\xff\xfe",
        b"nul",
        b'{"a": "\x01"}',
        b"{} {}",
        b"\xef\xbb\xbf{}",
        b'"\\ud800"',
        b"NaN",
        b"-Infinity",
    ],
)
def test_bad_and_odd_input_behaves_like_json(raw: bytes) -> None:
    try:
        expected: object = json.loads(raw)
    except ValueError:
        with pytest.raises(ValueError):
            _json_lite.loads(raw)
        return
    got = _json_lite.loads(raw)
    assert got == expected or (got != got and expected != expected)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_hook_json_is_what_json_dumps_writes(text: str) -> None:
    if not text.strip():
        assert hook_json("SessionStart", text) == ""
        return
    out = hook_json("UserPromptSubmit", text)
    assert out == json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}})
    assert out.isascii()


def test_record_ids_read_the_digest_lines() -> None:
    text = "## Current decisions\n- [decision 01ARZ3NDEKTSV4RRFFQ69G5FAV] Use X\n- [convention 01ARZ3NDEKTSV4RRFFQ69G5FAW] Y [not an id]\n[Decision 01ARZ3NDEKTSV4RRFFQ69G5FAX] z [decision 01ARZ3NDEKTSV4RRFFQ69G5FAU]"
    assert record_ids(text) == ["01ARZ3NDEKTSV4RRFFQ69G5FAV", "01ARZ3NDEKTSV4RRFFQ69G5FAW"]
