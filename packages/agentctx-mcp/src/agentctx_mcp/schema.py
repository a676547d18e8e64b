"""Input schemas as small as they can be: `tools/list` is paid for in every session.

Pydantic's schema for `type: RecordType | None = None` is an `anyOf` of the enum and `null`,
with a `title` on every property and on the model. The model needs none of that: an optional
argument is one that is not `required`. Validation still runs on the full pydantic model.
"""

from __future__ import annotations

from typing import Any


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop titles, collapse `X | None` to `X`, drop `null` defaults. Returns a new dict."""
    properties: dict[str, Any] = {}
    for name, spec in schema.get("properties", {}).items():
        properties[name] = _compact_property(spec)
    compact: dict[str, Any] = {"type": "object", "properties": properties}
    if schema.get("required"):
        compact["required"] = list(schema["required"])
    return compact


# A JSON Schema value: the annotations let `isinstance` narrow to a typed list or object.
_Json = dict[str, Any] | list[dict[str, Any]] | str | int | float | bool | None


def _compact_property(spec: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {key: value for key, value in spec.items() if key != "title"}
    options: _Json = result.get("anyOf")
    if isinstance(options, list):
        kept = [option for option in options if option != {"type": "null"}]
        if len(kept) == 1:
            del result["anyOf"]
            result = {**kept[0], **result}
    if "default" in result and result["default"] is None:
        del result["default"]
    items: _Json = result.get("items")
    if isinstance(items, dict):
        result["items"] = _compact_property(items)
    return result
