"""Every string a tool takes is bounded, and bad input is never echoed back in full.

The model (or a prompt injection steering it) can pass anything: a 50 KB file path made
SQLite's LIKE give up ("pattern too complex"), and a 1 MB id came back whole in `missing`,
costing the context a megabyte. Each argument has a limit well above any honest use; past
it the call fails with one sentence that names the argument, its length and the limit, and
quotes at most a short prefix.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentctx_store.errors import ValidationError
from agentctx_store.records import MAX_BODY_CHARS, MAX_TITLE_CHARS

PREFIX_CHARS = 40
LIMITS = {
    "query": 2_000,
    "file": 1_024,
    "id": 64,  # a record id is a 26-character ULID
    "title": MAX_TITLE_CHARS * 4,  # the store's own check then says how far over it is
    "body": MAX_BODY_CHARS * 2,
    "rationale": MAX_BODY_CHARS,
    "type": 64,
    "scope": 64,
}


def prefix(value: object) -> str:
    """A short, printable prefix of untrusted input for an error message."""
    text = " ".join(str(value).split())
    return repr(text if len(text) <= PREFIX_CHARS else text[:PREFIX_CHARS] + "…")


def check(name: str, value: str | None, kind: str | None = None) -> None:
    """Raise `ValidationError` when `value` is longer than the limit of `kind` (default: `name`)."""
    if value is None:
        return
    limit = LIMITS[kind or name]
    if len(value) > limit:
        raise ValidationError(
            f"`{name}` is {len(value):,} characters; the limit is {limit:,}. Pass a shorter {name} "
            f"(it starts {prefix(value)})."
        )


def check_ids(name: str, ids: Sequence[str]) -> None:
    """Each id within the id limit (ids are echoed back in `missing`)."""
    for value in ids:
        check(name, value, "id")
