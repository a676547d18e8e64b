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


def _ascii_classes() -> bytes:
    """A `bytes.translate` table: each ASCII byte to its piece class: `a` letter, `0` digit,
    `s` space, `n` newline, `!` symbol (one piece), `.` any other control character (none)."""
    table = bytearray(b"." * 256)
    for code in range(128):
        char = chr(code)
        if char in _LETTERS:
            table[code] = ord("a")
        elif char in _DIGITS:
            table[code] = ord("0")
        elif char.isspace():
            table[code] = ord("n" if char == "\n" else "s")
        elif 0x21 <= code <= 0x7E:
            table[code] = ord("!")
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


def _runs_of(kept: bytes) -> bytes:
    """A table keeping the classes in `kept` and making every other byte a space, so that
    `bytes.split()` returns the runs of those classes."""
    table = bytearray(b" " * 256)
    for byte in kept:
        table[byte] = byte
    return bytes(table)


_ASCII_CLASSES = _ascii_classes()
_CLASSES = _Classes(enumerate(_ASCII_CLASSES[:128]))
_LETTER_RUNS, _DIGIT_RUNS, _SPACE_RUNS = _runs_of(b"a"), _runs_of(b"0"), _runs_of(b"sn")


def estimate_tokens(text: str) -> int:
    """A conservative token count: never below the true count for prose or code.

    The text is cut into pieces, `[A-Za-z]+|[0-9]+|\\s+|[\\x21-\\x7e]|[^\\x00-\\x7f]` as a regular
    expression would cut it, and counted without `re` (tests/test_without_re.py holds the two
    equal): each character becomes its class, and the pieces are counted in the class string
    by C loops (`translate`, `count`, `split`), about 30 µs for a 6,000-character digest.
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
