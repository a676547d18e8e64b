"""Token budgets (docs/contracts.md#budgets), enforced in tokens *and* characters: fitting text,
items and sections into the sizes `tokens` defines."""

from __future__ import annotations

from agentctx_store._frozen import frozen
from agentctx_store.tokens import (
    DRIFT_HINT_TOKENS as DRIFT_HINT_TOKENS,
)
from agentctx_store.tokens import (
    PROMPT_CHARS as PROMPT_CHARS,
)
from agentctx_store.tokens import (
    PROMPT_RECORDS as PROMPT_RECORDS,
)
from agentctx_store.tokens import (
    PROMPT_TOKENS as PROMPT_TOKENS,
)
from agentctx_store.tokens import (
    SEARCH_RESULT_TOKENS as SEARCH_RESULT_TOKENS,
)
from agentctx_store.tokens import (
    SEARCH_RESULTS_MAX as SEARCH_RESULTS_MAX,
)
from agentctx_store.tokens import (
    SESSION_START_CHARS as SESSION_START_CHARS,
)
from agentctx_store.tokens import (
    SESSION_START_TOKENS as SESSION_START_TOKENS,
)
from agentctx_store.tokens import (
    estimate_tokens as estimate_tokens,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

TRUNCATION_MARK = " …[truncated]"


@frozen
class Budget:
    tokens: int
    chars: int

    def allows(self, text: str) -> bool:
        return len(text) <= self.chars and estimate_tokens(text) <= self.tokens


SESSION_START = Budget(tokens=SESSION_START_TOKENS, chars=SESSION_START_CHARS)
PROMPT = Budget(tokens=PROMPT_TOKENS, chars=PROMPT_CHARS)


def truncate(text: str, budget: Budget) -> str:
    """Cut `text` to fit `budget`, at a line or word boundary where possible, marking the cut."""
    if budget.allows(text):
        return text
    room = Budget(tokens=budget.tokens - estimate_tokens(TRUNCATION_MARK), chars=budget.chars - len(TRUNCATION_MARK))
    if room.tokens <= 0 or room.chars <= 0:
        return ""
    low, high = 0, min(len(text), room.chars)
    while low < high:  # the longest prefix that fits
        middle = (low + high + 1) // 2
        if room.allows(text[:middle]):
            low = middle
        else:
            high = middle - 1
    cut = text[:low]
    boundary = max(cut.rfind("\n"), cut.rfind(" "))
    if boundary > low * 0.6:
        cut = cut[:boundary]
    return cut.rstrip() + TRUNCATION_MARK if cut.strip() else ""


def fit_items(items: Sequence[str], budget: Budget, *, separator: str = "\n\n", header: str = "") -> list[str]:
    """Keep items (ranked best first) whose joined text fits the budget.

    The lowest-ranked items are dropped first; an item is cut inside only when it alone is
    over the budget (and then it is the only one kept).
    """
    kept: list[str] = []
    for item in items:
        candidate = [*kept, item]
        if budget.allows(header + separator.join(candidate)):
            kept = candidate
            continue
        if not kept:  # a single record alone is over: cut inside it
            room = Budget(
                tokens=budget.tokens - estimate_tokens(header) - 1, chars=budget.chars - len(header) - len(separator)
            )
            cut = truncate(item, room)
            if cut:
                kept = [cut]
        break
    return kept


def fit_sections(sections: Sequence[tuple[str, str, int]], budget: Budget, *, separator: str = "\n\n") -> str:
    """Compose ordered sections (name, text, own token cap) within the budget.

    Each section is first held to its own cap; then sections are dropped from the bottom of
    the list until the whole fits (the digest's rule: truncate from the bottom, never overflow).
    """
    texts = [truncate(text, Budget(tokens=cap, chars=budget.chars)) for _name, text, cap in sections if text.strip()]
    texts = [text for text in texts if text]
    while texts and not budget.allows(separator.join(texts)):
        last = texts.pop()
        room_tokens = budget.tokens - estimate_tokens(separator.join(texts)) - 4
        room_chars = budget.chars - len(separator.join(texts)) - len(separator)
        if room_tokens > 40 and room_chars > 100:
            cut = truncate(last, Budget(tokens=room_tokens, chars=room_chars))
            if cut:
                texts.append(cut)
                break
    result = separator.join(texts)
    return result if budget.allows(result) else truncate(result, budget)
