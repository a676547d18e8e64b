"""What counts as the same fact when an extraction meets the store, and how records are shaped."""

from __future__ import annotations

import pytest

from agentctx_extract.ingest import make_title, similarity


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("Prefers early returns over nested ifs", "prefers early-returns over nested ifs!"),
        ("Use uv to run Python tools in every repository", "Use uv to run the Python tools in every repository"),
    ],
)
def test_rewordings_count_as_the_same_fact(left: str, right: str) -> None:
    assert similarity(left, right) >= 0.85


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (
            "Always run the integration tests against a real database before merging to main",
            "Never run the integration tests against a real database before merging to main",
        ),
        (
            "Retry failed webhook deliveries 3 times with exponential backoff and jitter on the worker",
            "Retry failed webhook deliveries 5 times with exponential backoff and jitter on the worker",
        ),
        ("Use tabs", "Use spaces"),
        ("Use PostgreSQL for the queue", "Use Redis for the queue"),
    ],
)
def test_opposites_and_different_numbers_are_different_facts(left: str, right: str) -> None:
    assert similarity(left, right) < 0.85


def test_titles_are_one_line_and_at_most_120_chars() -> None:
    title = make_title("Use PostgreSQL\nfor the queue " + "because of locking " * 20)
    assert "\n" not in title and len(title) <= 120 and title.endswith("…")
    assert make_title("  Short   one ") == "Short one"
