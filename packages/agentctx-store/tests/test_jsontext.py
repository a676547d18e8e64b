"""`agentctx_store.jsontext` gives what `json` gives: values, text and errors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctx_store.jsontext import dumps, loads

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(values)
def test_dumps_writes_what_json_writes(value: object) -> None:
    assert dumps(value) == json.dumps(value)


@settings(max_examples=300, deadline=None)
@given(values)
def test_loads_reads_back_what_json_reads(value: object) -> None:
    text = json.dumps(value)
    assert repr(loads(text)) == repr(json.loads(text))  # repr: NaN is not equal to itself
    assert repr(loads(f" \n{text}\t ")) == repr(json.loads(f" \n{text}\t "))


@pytest.mark.parametrize("text", ["", "{", '{"a": 1} x', "\ufeff{}", "[1,]", "nul", '"\x01"', "{'a': 1}"])
def test_invalid_text_raises_the_error_json_raises(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as got:
        loads(text)
    assert str(got.value) == str(expected.value)


def test_unserializable_values_raise_as_json_does() -> None:
    for value in (object(), {1: {2, 3}}, [b"bytes"]):
        with pytest.raises(TypeError) as expected:
            json.dumps(value)
        with pytest.raises(TypeError) as got:
            dumps(value)
        assert str(got.value) == str(expected.value)
    assert dumps({1: "int keys", None: 0, 2.5: True}) == json.dumps({1: "int keys", None: 0, 2.5: True})


@settings(max_examples=200, deadline=None)
@given(values)
def test_loads_reads_utf8_bytes_as_json_does(value: object) -> None:
    raw = json.dumps(value, ensure_ascii=False).encode("utf-8")
    assert repr(loads(raw)) == repr(json.loads(raw))


@pytest.mark.parametrize("raw", [b"", b"\xff\xfe{", b"\xef\xbb\xbf{}", '{"a": 1}'.encode("utf-16"), b'{"a": 1} x'])
def test_odd_bytes_behave_as_json_does(raw: bytes) -> None:
    try:
        expected: object = json.loads(raw)
    except ValueError as error:
        with pytest.raises(ValueError) as got:
            loads(raw)
        assert type(got.value) is type(error)
    else:
        assert loads(raw) == expected
