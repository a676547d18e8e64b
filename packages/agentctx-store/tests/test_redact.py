"""Redaction against the corpus (`secrets_corpus.py`): realistic secrets must go, look-alikes must stay."""

from __future__ import annotations

import pytest
from secrets_corpus import NEAR_MISSES, SECRETS

from agentctx_store.redact import is_secret_name, redact, redact_text


@pytest.mark.parametrize(("label", "text", "secret"), SECRETS, ids=[item[0] for item in SECRETS])
def test_secret_is_redacted(label: str, text: str, secret: str) -> None:
    result = redact(text)
    assert secret not in result.text, f"{label}: {result.text!r}"
    assert "[REDACTED:" in result.text
    assert result.count >= 1


@pytest.mark.parametrize(("label", "text"), NEAR_MISSES, ids=[item[0] for item in NEAR_MISSES])
def test_near_miss_stays(label: str, text: str) -> None:
    assert redact_text(text) == text


def test_redaction_keeps_the_name_and_the_surrounding_text() -> None:
    text = "before\nexport GITHUB_TOKEN=ghx_notashape_but_secret_by_name\nDB_HOST=db.internal\nafter"
    out = redact_text(text)
    assert "export GITHUB_TOKEN=[REDACTED:secret]" in out
    assert "DB_HOST=db.internal" in out and out.startswith("before\n") and out.endswith("\nafter")


def test_redaction_is_idempotent() -> None:
    corpus = "\n".join(text for _label, text, _secret in SECRETS)
    once = redact_text(corpus)
    assert redact_text(once) == once
    for _label, _text, secret in SECRETS:
        assert secret not in once


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("GITHUB_TOKEN", True),
        ("apiKey", True),
        ("db-password", True),
        ("STRIPE_KEY", True),
        ("clientSecret", True),
        ("NODE_ENV", False),
        ("TOKEN_URL", False),
        ("SORT_KEY", False),
        ("AUTHOR", False),
        ("KEYBOARD_LAYOUT", False),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret
