"""Composing a prompt's injection from ranked hits: in proportion to the evidence, in budget."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentctx_store import Record, SearchHit
from agentctx_store.budget import PROMPT, PROMPT_RECORDS, Budget, estimate_tokens
from agentctx_store.inject import FULL_RATIO, HEADER, LONG_RECORD_CHARS, TITLE_RATIO, compose_injection

ADR_BODY = (
    "Context: Our services send mail through three different providers and each one bounces differently. "
    "Support cannot tell which provider sent a message, and the templates live in four repositories. "
    "Two providers bill per message, the third per month, and nobody owns the contracts. "
    "Incidents with bounced mail took days to trace in the last quarter because logs differ per provider.\n"
    "Decision: We will send all mail through Amazon SES from the notifications service.\n"
    "Consequences: Templates move into the notifications service repository. "
    "Bounce and complaint events arrive on one SNS topic that the support dashboard reads. "
    "The old provider accounts are closed once traffic has moved, which ends three contracts. "
    "Sending limits are raised with AWS support before each large campaign, two weeks ahead. "
    "Local development uses the SES mailbox simulator instead of real addresses."
)


def record(index: int, title: str = "", body: str = "", **fields: object) -> Record:
    values: dict[str, object] = {
        "record_id": f"01TESTRECORD{index:014d}",
        "project_id": "p",
        "type": "decision",
        "title": title or f"Record {index}",
        "body": body or f"Body of record {index}.",
        "valid_from": "2026-01-02T00:00:00.000Z",
        "recorded_at": "2026-01-02T00:00:00.000Z",
        "source": "manual",
        "confidence": "explicit",
    }
    values.update(fields)
    return Record(**values)  # type: ignore[arg-type]


def hits(*scores: float, **fields: object) -> list[SearchHit]:
    return [
        SearchHit(record=record(index, **fields), score=score, relevance=score) for index, score in enumerate(scores)
    ]


def blocks(text: str) -> list[str]:
    return [part for part in text.split("\n\n") if part.startswith("<agentctx-record ")]


def test_one_clear_best_hit_is_shown_in_full_and_the_weaker_ones_by_title() -> None:
    injection = compose_injection(hits(10.0, 6.0, 10.0 * TITLE_RATIO), "anything")
    assert injection.full_ids == ["01TESTRECORD00000000000000"]
    assert injection.title_ids == ["01TESTRECORD00000000000001", "01TESTRECORD00000000000002"]
    shown = blocks(injection.text)
    assert "Body of record 0." in shown[0] and 'detail="title"' not in shown[0]
    assert (
        shown[1]
        == '<agentctx-record id="01TESTRECORD00000000000001" type="decision" detail="title">\nRecord 1\n</agentctx-record>'
    )
    assert "Body of record 1." not in injection.text and "Body of record 2." not in injection.text


def test_hits_close_to_the_best_are_shown_in_full() -> None:
    close = 10.0 * FULL_RATIO
    injection = compose_injection(hits(10.0, close, close - 0.01), "anything")
    assert injection.full_ids == ["01TESTRECORD00000000000000", "01TESTRECORD00000000000001"]
    assert injection.title_ids == ["01TESTRECORD00000000000002"]


def test_a_runner_up_far_below_the_best_is_left_out_unless_its_title_names_the_prompt() -> None:
    weak = 10.0 * TITLE_RATIO - 0.01
    prompt = "which queue do background workers read from?"
    found = [
        SearchHit(record=record(0, "Jobs run on the Redis queue"), score=10.0, relevance=10.0),
        SearchHit(record=record(1, "Release notes are written for users"), score=weak, relevance=weak),
        SearchHit(record=record(2, "Background workers read the jobs queue"), score=weak, relevance=weak),
    ]
    injection = compose_injection(found, prompt)
    assert injection.full_ids == [found[0].record.record_id]
    # record 1 shares no word with the prompt; record 2's title names three ("background",
    # "workers", "queue"), so its title line says what it is about
    assert injection.title_ids == [found[2].record.record_id]
    assert "Release notes" not in injection.text
    # one shared word is not enough: "queue" alone
    lone = SearchHit(record=record(3, "Queue names are lowercase"), score=weak, relevance=weak)
    assert compose_injection([found[0], lone], prompt).title_ids == []
    # the best hit is always shown, however the others score
    assert compose_injection(found[1:2], prompt).full_ids == [found[1].record.record_id]


def test_title_words_are_compared_by_their_stem() -> None:
    prompt = "who reviews the deployed migrations?"
    best = SearchHit(record=record(0, "Reviews happen on GitHub"), score=10.0, relevance=10.0)
    weak = 10.0 * TITLE_RATIO - 0.01
    stemmed = SearchHit(record=record(1, "Deploying a migration needs a second reviewer"), score=weak, relevance=weak)
    assert compose_injection([best, stemmed], prompt).title_ids == [stemmed.record.record_id]


def test_the_text_starts_with_one_short_header_sentence() -> None:
    text = compose_injection(hits(1.0), "x").text
    assert text.startswith(HEADER + "\n\n<agentctx-record ")
    assert "\n" not in HEADER and len(HEADER) <= 60 and "not instructions" in HEADER


def test_already_injected_records_are_skipped_and_nothing_left_injects_nothing() -> None:
    found = hits(10.0, 9.9)
    injection = compose_injection(found, "x", already_injected=[found[0].record.record_id])
    assert injection.full_ids == [found[1].record.record_id] and not injection.title_ids
    assert compose_injection(found, "x", already_injected=[hit.record.record_id for hit in found]).text == ""
    assert compose_injection([], "x").ids == []


def test_accounting_is_the_text_it_returns() -> None:
    injection = compose_injection(hits(10.0, 9.8, 2.0), "x")
    assert injection.tokens == estimate_tokens(injection.text)
    assert injection.ids == injection.full_ids + injection.title_ids
    assert injection.text.count("<agentctx-record ") == len(injection.ids)


def test_a_long_adr_is_cut_to_the_matching_passage_with_its_decision() -> None:
    body = ADR_BODY + "\n" + ADR_BODY.split("\n")[0].replace("Context:", "Background:")
    assert LONG_RECORD_CHARS < len(body) <= 2000
    injection = compose_injection(
        [SearchHit(record=record(1, "Send mail through Amazon SES", body), score=9.0, relevance=9.0)],
        "where do SES bounce and complaint events show up for support?",
    )
    (shown,) = blocks(injection.text)
    assert 'detail="excerpt"' in shown.splitlines()[0]
    assert "Bounce and complaint events arrive on one SNS topic that the support dashboard reads." in shown
    assert "Decision: We will send all mail through Amazon SES from the notifications service." in shown
    assert "Two providers bill per message" not in shown
    assert "…" in shown and "`ctx_get` has the rest" in shown
    assert len(shown) < 1000 < len(body)


def test_a_short_record_is_shown_whole() -> None:
    injection = compose_injection(hits(3.0), "x")
    assert "Body of record 0." in injection.text and 'detail="excerpt"' not in injection.text


TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=2000)
PROSE = st.lists(
    st.sampled_from(["Deploys use the pipeline.", "```\ncode = 1\n```", "- item one", "🦀 漢字 text", "Why? Because."]),
    max_size=80,
).map("\n".join)


@settings(max_examples=150, deadline=None)
@given(
    bodies=st.lists(st.one_of(TEXT, PROSE), min_size=1, max_size=5),
    titles=st.lists(st.text(max_size=120), min_size=5, max_size=5),
    scores=st.lists(st.floats(min_value=0.01, max_value=50), min_size=5, max_size=5),
    tokens=st.integers(min_value=0, max_value=PROMPT.tokens),
    chars=st.integers(min_value=0, max_value=PROMPT.chars),
    prompt=st.text(max_size=200),
)
def test_the_injection_always_fits_its_budget_and_keeps_the_fence(
    bodies: list[str], titles: list[str], scores: list[float], tokens: int, chars: int, prompt: str
) -> None:
    ranked = sorted(scores, reverse=True)
    found = [
        SearchHit(record=record(index, title or "t", body or "b"), score=ranked[index], relevance=ranked[index])
        for index, (body, title) in enumerate(zip(bodies, titles, strict=False))
    ]
    for budget in (PROMPT, Budget(tokens=tokens, chars=chars)):
        injection = compose_injection(found, prompt, budget=budget)
        assert budget.allows(injection.text)
        assert len(injection.ids) <= PROMPT_RECORDS
        assert injection.text.count("<agentctx-record ") == injection.text.count("</agentctx-record>")
        assert bool(injection.text) == bool(injection.ids)


def test_a_record_over_the_token_budget_is_cut_between_sentences_not_inside_one() -> None:
    sentences = [f"Sentence {index} says 🦀 漢字 {'🦀' * 40} and ends here." for index in range(12)]
    body = " ".join(sentences)
    assert len(body) < LONG_RECORD_CHARS * 2 and estimate_tokens(body) > PROMPT.tokens / 2
    tight = Budget(tokens=PROMPT.tokens // 2, chars=PROMPT.chars)
    injection = compose_injection(
        [SearchHit(record=record(1, "Crabs", body), score=5.0, relevance=5.0)], "", budget=tight
    )
    assert tight.allows(injection.text) and injection.full_ids
    (shown,) = blocks(injection.text)
    kept = [line for line in shown.splitlines()[2:-2] if line != "…"]
    assert kept and all(part in sentences for line in kept for part in _sentences_of(line))


def _sentences_of(line: str) -> list[str]:
    return [part if part.endswith(".") else part + "." for part in line.split(". ") if part]
