"""Token budgets (SPEC §9), enforced in tokens *and* characters.

There is no local Claude tokenizer, so `estimate_tokens` over-counts on purpose: every word
piece, number group, symbol and non-ASCII character is charged at least what Claude's
tokenizer charges for it, then 10% is added. Claude Code passes at most 10,000 characters of
`additionalContext` verbatim, so every budget also caps characters.
"""

from __future__ import annotations

import math

from agentctx_store._frozen import frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

SESSION_START_TOKENS = 1500
SESSION_START_CHARS = 6000
PROMPT_TOKENS = 2000
PROMPT_CHARS = 8000
PROMPT_RECORDS = 3
SEARCH_RESULT_TOKENS = 50
SEARCH_RESULTS_MAX = 15
DRIFT_HINT_TOKENS = 60

_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_DIGITS = frozenset("0123456789")
TRUNCATION_MARK = " …[truncated]"


def estimate_tokens(text: str) -> int:
    """A conservative token count: never below the true count for prose or code.

    The text is cut into pieces, `[A-Za-z]+|[0-9]+|\\s+|[\\x21-\\x7e]|[^\\x00-\\x7f]` as a regular
    expression would cut it, walked by hand (tests/test_without_re.py holds the two equal).
    """
    if not text:
        return 0
    total = 0
    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if char in _LETTERS or char in _DIGITS:
            kind = _LETTERS if char in _LETTERS else _DIGITS
            end = index + 1
            while end < size and text[end] in kind:
                end += 1
            run = end - index
            # long identifiers split into several pieces; digits go in twos
            total += math.ceil(run / 4) if kind is _LETTERS else math.ceil(run / 2)
            index = end
        elif char.isspace():
            end = index + 1
            while end < size and text[end].isspace():
                end += 1
            total += 1 if (end - index > 1 or "\n" in text[index:end]) else 0  # a single space joins the next word
            index = end
        else:
            code = ord(char)
            if 0x21 <= code <= 0x7E:
                total += 1
            elif code > 0x7F:  # one piece per character; a digit (Unicode) counts as digits do
                total += 1 if char.isdigit() else (2 if code > 0xFFFF else 1)  # outside the BMP: two
            index += 1  # other ASCII control characters are not a piece
    return math.ceil(total * 1.1) + 1


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
