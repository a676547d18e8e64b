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


# -- errors in a process that never imported json -------------------------------------------------
# CPython 3.11's `_json` scanner looks `json.decoder.JSONDecodeError` up in `sys.modules` only: in
# a fresh process (the hooks never import `json`) an error like `{"a": 1` became a SystemError.

_FRESH = r"""
import sys
from agentctx_store import jsontext
assert "json" not in sys.modules
text = sys.stdin.buffer.read().decode("utf-8", "surrogatepass")
try:
    jsontext.loads(text)
except ValueError:
    print("ValueError")
except RecursionError:
    print("RecursionError")
else:
    print("value")
"""


def _in_a_fresh_process(text: str) -> str:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _FRESH],
        input=text.encode("utf-8", "surrogatepass"),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-500:]
    return done.stdout.decode().strip()


def _json_outcome(text: str) -> str:
    try:
        json.loads(text)
    except ValueError:
        return "ValueError"
    except RecursionError:
        return "RecursionError"
    return "value"


@pytest.mark.parametrize("text", ['{"a": 1', "[1", '"abc', '{"a"', '{"a": 1 "b": 2}', "[1 2]"])
def test_a_malformed_text_raises_value_error_in_a_fresh_process(text: str) -> None:
    assert _in_a_fresh_process(text) == "ValueError"


@settings(max_examples=15, deadline=None)
@given(values, st.data())
def test_truncated_or_garbled_json_raises_what_json_raises_in_a_fresh_process(
    value: object, data: st.DataObject
) -> None:
    text = json.dumps(value)
    cut = data.draw(st.integers(0, len(text)))
    garbled = data.draw(st.sampled_from(["", ",", "}", "]", '"', ":", "\\", "\ud800", "\x00"]))
    broken = text[:cut] + garbled
    assert _in_a_fresh_process(broken) == _json_outcome(broken)
