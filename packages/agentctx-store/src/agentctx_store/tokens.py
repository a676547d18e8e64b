"""Token estimates and the sizes of the budgets (SPEC §9).

There is no local Claude tokenizer, so `estimate_tokens` over-counts on purpose: every word
piece, number group, symbol and non-ASCII character is charged at least what Claude's
tokenizer charges for it, then 10% is added. Claude Code passes at most 10,000 characters of
`additionalContext` verbatim, so every budget also caps characters. `budget` fits text into
these sizes.
"""

from __future__ import annotations

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
            total += -(-run // 4) if kind is _LETTERS else -(-run // 2)
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
    return int(-(-(total * 1.1) // 1)) + 1  # math.ceil(total * 1.1): SessionStart does not import math
