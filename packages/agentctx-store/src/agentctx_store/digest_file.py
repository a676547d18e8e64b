"""A project's digest files as SessionStart reads them: the text, its metadata, their age; and
`Pending`, what a SessionStart showed from them but could not record (its fast path does not
open the store).

`digest` composes and writes them; every session start reads them, so this is the
whole of what that read needs. `Pending` has one shape in the session's state file
(`agentctx_hooks.state`), the warm request, and the prompt line that records it
(`agentctx_store.prompt_answer.account`).
"""

from __future__ import annotations

import os
import time

from agentctx_store import paths
from agentctx_store.fence import DIGEST_CLOSE, DIGEST_OPEN
from agentctx_store.jsontext import is_object, loads, strings
from agentctx_store.projects import hash_id
from agentctx_store.tokens import estimate_tokens

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_ULID_CHARS = frozenset("0123456789ABCDEFGHJKMNPQRSTVWXYZ")


def read(project_id: str) -> tuple[str, dict[str, Any], float] | None:
    """(text, metadata, age of the text in seconds), or None when either file is missing,
    unreadable or malformed, or the text was written before record sections were fenced (its
    records reached the model unescaped: it is composed again)."""
    text_path = paths.digest_path(project_id)
    try:
        with open(text_path, encoding="utf-8") as handle:
            text = handle.read()
        with open(paths.digest_meta_path(project_id), "rb") as handle:
            meta = loads(handle.read())
        age = time.time() - os.path.getmtime(text_path)
    except (OSError, ValueError):
        return None
    return (text, meta, age) if is_object(meta) and text.startswith(DIGEST_OPEN) else None


def token_count(text: str, meta: dict[str, Any]) -> int:
    """The digest's token estimate: the one its writer saved beside it, while the text is the
    one it was saved for (`sha256` in the metadata), else estimated now."""
    saved = meta.get("tokens")
    if isinstance(saved, int) and meta.get("sha256") == hash_id(text):
        return saved
    return estimate_tokens(text)


def record_ids(text: str) -> list[str]:
    """The ids of the `[type ULID]` record lines of a digest (`digest.record_line`)."""
    found: list[str] = []
    for part in text.split("[")[1:]:
        label, closed, _ = part.partition("]")
        kind, _, record_id = label.partition(" ")
        well_formed = closed and kind.isascii() and kind.isalpha() and kind.islower()
        if well_formed and len(record_id) == 26 and set(record_id) <= _ULID_CHARS:
            found.append(record_id)
    return found


def split_fence(text: str) -> tuple[str, str]:
    """(the record sections inside a digest's fence, the lines after it); a digest written
    before the fence existed is all records. (`digest` re-exports it; a subagent's start reads
    the sections without loading the digest feature.)"""
    if not text.startswith(DIGEST_OPEN):
        return text, ""
    inner, _, rest = text[len(DIGEST_OPEN) :].partition(DIGEST_CLOSE)
    return inner.strip("\n"), rest.strip("\n")


# Pending accounting read from the state file or a warm request is held to these: each pending injection is
# a row write, and neither source is trusted with an unbounded count.
MAX_PENDING_COUNT = 1000
MAX_PENDING_TOKENS = 10**9


class Pending:
    """SessionStart injections the fast path (which does not open the store) could not record:
    kept in the session's state file, recorded by the next prompt on either path."""

    __slots__ = ("count", "ids", "tokens")

    def __init__(self, *, tokens: int = 0, ids: list[str] | None = None, count: int = 0) -> None:
        self.tokens, self.ids, self.count = tokens, ids if ids is not None else [], count

    def to_json(self) -> dict[str, object]:
        return {"tokens": self.tokens, "ids": list(self.ids), "count": self.count}

    @classmethod
    def from_json(cls, value: object) -> Pending:
        """From the state file or the warm request; anything malformed is nothing pending."""
        if not is_object(value):
            return cls()
        try:
            tokens, count = int(value.get("tokens") or 0), int(value.get("count") or 0)
        except (TypeError, ValueError, OverflowError):
            return cls()
        kept = strings(value.get("ids"))
        tokens, count = min(max(0, tokens), MAX_PENDING_TOKENS), min(max(0, count), MAX_PENDING_COUNT)
        return cls(tokens=tokens, ids=kept[-MAX_PENDING_COUNT:], count=count)
