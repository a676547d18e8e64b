"""`json.loads` / `json.dumps` through CPython's C codec (`_json`, what `json` uses underneath).

`import json` brings `re` and `enum` with it; the hooks read and write JSON on every event
(the payload, session state, the spool, the answer). Anything `_json` does not settle alone
(invalid text, a BOM or UTF-16, another interpreter) goes to `json` itself, so values and
errors are the same as `json`'s.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeAlias, TypeGuard

    # A decoded JSON value. Declared with it, a value read from a payload narrows by `isinstance`
    # to a typed `dict`/`list` (the hooks that must not import the store use it so).
    JsonValue: TypeAlias = "dict[str, Any] | list[Any] | str | int | float | bool | None"

try:
    from _json import encode_basestring_ascii as _quote
    from _json import make_encoder as _make_encoder
    from _json import make_scanner as _make_scanner
except ImportError:  # not CPython: the json module does it all
    _quote = _make_encoder = _make_scanner = None

_WHITESPACE = " \t\n\r"


class _Decoding:
    """The attributes the C scanner reads from a default `json.JSONDecoder`."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


# typeshed's `_json` stub wants a `make_scanner` as the context; the C scanner reads the attributes
# of any object (`json` itself passes a `JSONDecoder`).
_scan = _make_scanner(_Decoding()) if _make_scanner is not None else None  # pyright: ignore[reportArgumentType]


def loads(text: str | bytes) -> Any:
    """Same as `json.loads(text)`: same value, same exception (a `ValueError`)."""
    if isinstance(text, bytes) and not text.startswith(b"\xef\xbb\xbf") and b"\x00" not in text[:4]:
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            pass  # json raises its own error below
    if _scan is not None and isinstance(text, str) and not text.startswith("\ufeff"):
        start = len(text) - len(text.lstrip(_WHITESPACE))
        try:
            value, end = _scan(text, start)
        except (StopIteration, SystemError):
            # StopIteration: not a value. SystemError: CPython 3.11's scanner finds
            # `json.decoder.JSONDecodeError` in `sys.modules` only, so in a process that never
            # imported `json` an error like `{"a": 1` leaves it with no exception to raise. Either
            # way json raises its own error below (and is imported from then on).
            pass
        else:
            if not text[end:].strip(_WHITESPACE):
                return value
    import json

    return json.loads(text)


def _unserializable(value: object) -> object:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def dumps(value: Any) -> str:
    """Same text as `json.dumps(value)` with default settings."""
    if _make_encoder is None or _quote is None:
        import json

        return json.dumps(value)
    if isinstance(value, str):
        return _quote(value)
    encode = _make_encoder({}, _unserializable, _quote, None, ": ", ", ", False, False, True)
    return "".join(encode(value, 0))


def is_object(value: object) -> TypeGuard[dict[str, Any]]:
    """Whether a decoded JSON value is an object (a `dict`): narrows `value` for type checkers."""
    return isinstance(value, dict)


def is_array(value: object) -> TypeGuard[list[Any]]:
    """Whether a decoded JSON value is an array (a `list`): narrows `value` for type checkers."""
    return isinstance(value, list)


def strings(value: object) -> list[str]:
    """The strings of a decoded JSON array (ids, prompts), in order; [] for anything else."""
    return [item for item in value if isinstance(item, str)] if is_array(value) else []
