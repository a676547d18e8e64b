"""JSON in and out for the SessionStart fast path, without importing `json`.

`import json` pulls in `re`, `enum`, `functools` and `collections`: about half of a bare
interpreter's start-up time, spent before SessionStart has read a byte. CPython's C scanner
and string encoder (`_json`, what `json` itself uses) parse and quote just as well on their
own; `json` is imported only where `_json` is missing or for the rare input it does not cover
(a BOM, UTF-16). `tests/test_json_lite.py` holds both directions equal to `json`.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:
    from _json import encode_basestring_ascii as _quote
    from _json import make_scanner as _make_scanner
except ImportError:  # not CPython: use the json module
    _quote = None
    _make_scanner = None

_WHITESPACE = " \t\n\r"  # what json.loads skips around a value


class _Context:
    """The attributes the C scanner reads from a `json.JSONDecoder` with default settings."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


_scan = _make_scanner(_Context()) if _make_scanner is not None else None


def loads(raw: bytes) -> Any:
    """Same result as `json.loads(raw)`.

    Raises:
        ValueError: not UTF-8 JSON (a `json.JSONDecodeError` or `UnicodeDecodeError`).
    """
    if _scan is None or raw[:3] == b"\xef\xbb\xbf" or b"\x00" in raw[:4]:
        import json

        return json.loads(raw)
    text = raw.decode("utf-8")
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration:
        raise ValueError(f"Expecting value at character {start}") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"Extra data at character {end}")
    return value


def quote(text: str) -> str:
    """A JSON string literal, ASCII only (as `json.dumps` writes it)."""
    if _quote is None:
        import json

        return json.dumps(text)
    return _quote(text)


def dumps(value: Any) -> str:
    """Same text as `json.dumps(value)` for dicts with string keys, lists, strings, ints,
    floats, booleans and None: all the session state holds.

    Raises:
        TypeError: any other type.
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(dumps(item) for item in value) + "]"
    if isinstance(value, dict):
        parts = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"keys must be str, not {type(key).__name__}")
            parts.append(f"{quote(key)}: {dumps(item)}")
        return "{" + ", ".join(parts) + "}"
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
