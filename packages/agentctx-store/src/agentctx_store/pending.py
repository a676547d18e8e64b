"""SessionStart injections the fast path (which does not open the store) could not record: one
shape in the session's state file (`agentctx_hooks.state`), the warm request, and the prompt
line that records them (`agentctx_store.prompt_answer.account`). Standard library only, nothing
imported: SessionStart's fast path parks them on every start."""

from __future__ import annotations

# Read from the state file or a warm request, they are held to these: each pending injection is
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
        if not isinstance(value, dict):
            return cls()
        ids = value.get("ids")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        try:
            tokens, count = int(value.get("tokens") or 0), int(value.get("count") or 0)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
        except (TypeError, ValueError, OverflowError):
            return cls()
        kept = [item for item in ids if isinstance(item, str)] if isinstance(ids, list) else []  # pyright: ignore[reportUnknownVariableType]
        tokens, count = min(max(0, tokens), MAX_PENDING_TOKENS), min(max(0, count), MAX_PENDING_COUNT)
        return cls(tokens=tokens, ids=kept[-MAX_PENDING_COUNT:], count=count)
