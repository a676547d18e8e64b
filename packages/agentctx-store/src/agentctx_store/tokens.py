"""Token estimates and the sizes of the budgets (docs/contracts.md#budgets).

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


_ASCII_RANGES = (  # (first, last, class), a later range over an earlier one: \n, digits and letters
    (0x09, 0x0D, b"s"),  # \t \n \v \f \r
    (0x0A, 0x0A, b"n"),
    (0x1C, 0x1F, b"s"),  # the information separators are spaces to `str.isspace`
    (0x20, 0x20, b"s"),
    (0x21, 0x7E, b"!"),
    (0x30, 0x39, b"0"),
    (0x41, 0x5A, b"a"),
    (0x61, 0x7A, b"a"),
)


def _ascii_classes() -> bytes:
    """A `bytes.translate` table: each ASCII byte to its piece class: `a` letter, `0` digit,
    `s` space, `n` newline, `!` symbol (one piece), `.` any other control character (none)."""
    table = bytearray(b"." * 256)
    for first, last, kind in _ASCII_RANGES:
        table[first : last + 1] = kind * (last + 1 - first)
    return bytes(table)


class _Classes(dict[int, int]):
    """The same classes as a `str.translate` table that also knows every other character: a
    space (`s`), a piece (`!`), or two pieces (`W`: outside the BMP, except a digit). Each one
    is worked out once per process, then looked up at C speed."""

    def __missing__(self, code: int) -> int:
        char = chr(code)
        kind = "s" if char.isspace() else ("W" if code > 0xFFFF and not char.isdigit() else "!")
        self[code] = ord(kind)
        return self[code]


_ASCII_CLASSES = _ascii_classes()
_CLASSES = _Classes(enumerate(_ASCII_CLASSES[:128]))
# the runs of one kind in a class string (every other class a space, for `bytes.split`)
_LETTER_RUNS = bytes.maketrans(b"a0sn!.W", b"a      ")
_DIGIT_RUNS = bytes.maketrans(b"a0sn!.W", b" 0     ")
_SPACE_RUNS = bytes.maketrans(b"a0sn!.W", b"  sn   ")


def estimate_tokens(text: str) -> int:
    """A conservative token count: never below the true count for prose or code.

    The text is cut into pieces, `[A-Za-z]+|[0-9]+|\\s+|[\\x21-\\x7e]|[^\\x00-\\x7f]` as a regular
    expression would cut it, and counted without `re` (tests/test_without_re.py holds the two
    equal): each character becomes its class, and the pieces are counted in the class string
    by C loops (`translate`, `count`, `split`), about twice as fast as walking the characters
    (bench/README.md#the-hook-path).
    """
    if not text:
        return 0
    if text.isascii():
        classes = text.encode("ascii").translate(_ASCII_CLASSES)
    else:
        classes = text.translate(_CLASSES).encode("ascii")
    # A letter run is ceil(length / 4) pieces: its whole fours, plus one for a remainder (fours
    # are taken out within each run, so the runs left are exactly the remainders); digits by twos.
    letters = classes.count(b"aaaa") + len(classes.replace(b"aaaa", b"").translate(_LETTER_RUNS).split())
    digits = classes.count(b"00") + len(classes.replace(b"00", b"").translate(_DIGIT_RUNS).split())
    gaps = classes.translate(_SPACE_RUNS).split()
    spaces = len(gaps) - gaps.count(b"s")  # a single space joins the next word
    total = letters + digits + spaces + classes.count(b"!") + 2 * classes.count(b"W")
    return int(-(-(total * 1.1) // 1)) + 1  # math.ceil(total * 1.1): SessionStart does not import math
