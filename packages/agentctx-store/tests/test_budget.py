"""Budgets (docs/contracts.md#budgets): a token estimate that never under-counts, and fitting that
respects tokens *and* chars.

Why these lower bounds (docs/retrieval.md, "Budgets"): Claude's tokenizer, like other BPE
tokenizers, spends about 4 characters per token on English prose and never less than one token
per word; on code it spends fewer characters per token (about 3–3.5: symbols and short
identifier pieces). An estimate below any of these would let an injection overflow its budget.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentctx_store
from agentctx_store.budget import (
    PROMPT,
    SESSION_START,
    TRUNCATION_MARK,
    Budget,
    estimate_tokens,
    fit_items,
    fit_sections,
    truncate,
)

PROSE = [
    "We decided to keep every record in a single SQLite file because many short-lived processes write to it "
    "and a server would be one more thing for developers to run.",
    "The migration failed on staging last night: the users table had a duplicate e-mail address, so the "
    "unique index could not be built. We cleaned the duplicates by hand and re-ran it.",
    "Don't push directly to main. Open a pull request, wait for CI to pass, and squash-merge it; the release "
    "notes are generated from the squashed commit messages.",
]
CODE_FILES = sorted(Path(agentctx_store.__file__).parent.glob("*.py"))

WORDS = st.sampled_from(
    [
        "the",
        "a",
        "decision",
        "record",
        "store",
        "because",
        "developer",
        "session",
        "search",
        "budget",
        "token",
        "migration",
        "database",
        "index",
        "we",
        "it",
        "is",
        "was",
        "should",
        "never",
        "always",
        "retry",
        "deployment",
        "configuration",
    ]
)
PROSE_TEXT = st.lists(WORDS, min_size=1, max_size=300).map(lambda words: " ".join(words).capitalize() + ".")
ANY_TEXT = st.text(max_size=3000)


def _words(text: str) -> int:
    return len(text.split())


@pytest.mark.parametrize("text", PROSE)
def test_prose_estimates_are_at_least_chars_over_4_and_one_per_word(text: str) -> None:
    assert estimate_tokens(text) >= math.ceil(len(text) / 4)
    assert estimate_tokens(text) >= _words(text)


@pytest.mark.parametrize("path", CODE_FILES, ids=[path.name for path in CODE_FILES])
def test_code_estimates_are_at_least_chars_over_3_5(path: Path) -> None:
    code = path.read_text(encoding="utf-8")
    assert estimate_tokens(code) >= math.ceil(len(code) / 3.5)


@settings(max_examples=200, deadline=None)
@given(text=PROSE_TEXT)
def test_generated_prose_is_never_under_counted(text: str) -> None:
    assert estimate_tokens(text) >= max(math.ceil(len(text) / 4), _words(text))


def test_non_ascii_and_emoji_cost_at_least_a_token_each() -> None:
    assert estimate_tokens("🚀" * 10) >= 10
    assert estimate_tokens("日本語のテキスト") >= len("日本語のテキスト")
    assert estimate_tokens("") == 0


def test_lone_surrogates_are_counted_not_raised() -> None:
    # Text decoded with `surrogateescape` (bytes from a transcript or a pipe) holds lone surrogates.
    assert estimate_tokens("\ud800 abc \udcff") >= 2
    assert fit_items(["\ud800" * 50], PROMPT)


def _ranked(count: int, size: int) -> list[str]:
    return [f"[{index}] " + "word " * size for index in range(count)]


def test_fit_items_drops_the_lowest_ranked_items_first() -> None:
    items = _ranked(5, 60)
    budget = Budget(tokens=estimate_tokens("\n\n".join(items[:3])) + 5, chars=100_000)
    assert fit_items(items, budget) == items[:3]


def test_fit_items_keeps_everything_that_fits() -> None:
    items = _ranked(3, 5)
    assert fit_items(items, PROMPT) == items


def test_fit_items_cuts_inside_a_record_only_when_it_alone_is_over() -> None:
    huge, small = "start " + "detail " * 2000, "a small record"
    kept = fit_items([huge, small], Budget(tokens=200, chars=2000))
    assert len(kept) == 1 and kept[0].startswith("start") and kept[0].endswith(TRUNCATION_MARK)
    fine, oversize = "a first record that fits", "x " * 5000
    assert fit_items([fine, oversize], Budget(tokens=200, chars=2000)) == [fine]  # the second is dropped, not cut


def test_fit_items_enforces_characters_as_well_as_tokens() -> None:
    items = ["é" * 300, "ü" * 300, "ß" * 300]
    kept = fit_items(items, Budget(tokens=100_000, chars=700))
    assert kept == items[:2]


def test_fit_sections_truncates_from_the_bottom() -> None:
    sections = [
        ("profile", "## Profile\n" + "python " * 30, 200),
        ("decisions", "## Decisions\n" + "decision " * 100, 500),
        ("handover", "## Handover\n" + "handover " * 400, 400),
    ]
    text = fit_sections(sections, Budget(tokens=400, chars=6000))
    assert text.startswith(sections[0][1])
    assert sections[1][1] in text
    assert text.endswith(TRUNCATION_MARK) and "## Handover" in text  # the bottom section was cut, not the top
    assert estimate_tokens(text) <= 400


def test_fit_sections_holds_each_section_to_its_own_cap() -> None:
    text = fit_sections([("a", "alpha " * 500, 50), ("b", "beta", 50)], SESSION_START)
    first = text.split("\n\n")[0]
    assert estimate_tokens(first) <= 50 and text.endswith("beta")


@settings(max_examples=200, deadline=None)
@given(
    items=st.lists(ANY_TEXT, max_size=8),
    tokens=st.integers(min_value=0, max_value=3000),
    chars=st.integers(min_value=0, max_value=9000),
)
def test_fit_items_output_always_fits_the_budget(items: list[str], tokens: int, chars: int) -> None:
    budget = Budget(tokens=tokens, chars=chars)
    kept = fit_items(items, budget, header="## Context\n")
    assert budget.allows("## Context\n" + "\n\n".join(kept)) or not kept
    if len(kept) > 1 or (kept and kept[0] in items):
        assert kept == items[: len(kept)]  # a prefix: nothing better ranked was dropped for something worse


@settings(max_examples=200, deadline=None)
@given(text=ANY_TEXT, tokens=st.integers(min_value=0, max_value=2000), chars=st.integers(min_value=0, max_value=5000))
def test_truncate_output_always_fits_the_budget(text: str, tokens: int, chars: int) -> None:
    budget = Budget(tokens=tokens, chars=chars)
    assert budget.allows(truncate(text, budget))


@settings(max_examples=150, deadline=None)
@given(
    texts=st.lists(ANY_TEXT, min_size=1, max_size=6),
    caps=st.lists(st.integers(min_value=1, max_value=800), min_size=6, max_size=6),
    tokens=st.integers(min_value=0, max_value=2000),
    chars=st.integers(min_value=0, max_value=6000),
)
def test_fit_sections_output_always_fits_the_budget(texts: list[str], caps: list[int], tokens: int, chars: int) -> None:
    budget = Budget(tokens=tokens, chars=chars)
    sections = [(f"s{index}", text, caps[index]) for index, text in enumerate(texts)]
    assert budget.allows(fit_sections(sections, budget))
