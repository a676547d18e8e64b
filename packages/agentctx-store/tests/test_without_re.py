"""Hand-written equivalents of regular expressions on the prompt hook's path (`re` costs the
hook ~3 ms to import): each must give exactly what its expression gives."""

from __future__ import annotations

import math
import re
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from agentctx_store.budget import estimate_tokens
from agentctx_store.retrieval import words

_WORD = re.compile(r"[^\W_]+")
_PIECE = re.compile(r"[A-Za-z]+|[0-9]+|\s+|[\x21-\x7e]|[^\x00-\x7f]")
SAMPLES = "abc XYZ_-.,!?\n\t  日本語 émigré ①²³١٢٣\u00a0\u2028\u0301\u200b😀𝟘İK\ud800"


def _pieces_estimate(text: str) -> int:
    """`estimate_tokens` as it was written with the expression."""
    if not text:
        return 0
    total = 0
    for match in _PIECE.finditer(text):
        piece = match.group()
        first = piece[0]
        if first.isascii() and first.isalpha():
            total += max(1, math.ceil(len(piece) / 4))
        elif first.isdigit():
            total += math.ceil(len(piece) / 2)
        elif first.isspace():
            total += 1 if ("\n" in piece or len(piece) > 1) else 0
        elif first.isascii():
            total += 1
        else:
            total += 2 if ord(first) > 0xFFFF else 1
    return math.ceil(total * 1.1) + 1


texts = st.text(alphabet=st.one_of(st.characters(), st.sampled_from(SAMPLES)), max_size=60)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_words_are_the_runs_the_expression_finds(text: str) -> None:
    assert list(words(text)) == _WORD.findall(text)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_estimate_tokens_counts_the_pieces_of_the_expression(text: str) -> None:
    assert estimate_tokens(text) == _pieces_estimate(text)


def test_every_character_splits_or_joins_words_and_counts_as_the_expressions_say() -> None:
    for code in range(0, sys.maxunicode + 1, 7):  # a seventh of Unicode, every block touched
        char = chr(code)
        text = f"ab{char}{char}1 {char}"
        assert list(words(text)) == _WORD.findall(text), hex(code)
        assert estimate_tokens(text) == _pieces_estimate(text), hex(code)


ascii_texts = st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=200)


@settings(max_examples=600, deadline=None)
@given(ascii_texts)
def test_ascii_text_is_counted_as_the_expression_counts_it(text: str) -> None:
    """ASCII text takes its own path (class counts over bytes): every run length, control
    character and mix of spaces and newlines."""
    assert estimate_tokens(text) == _pieces_estimate(text)
