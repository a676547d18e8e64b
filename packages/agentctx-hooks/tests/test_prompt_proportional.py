"""UserPromptSubmit injects in proportion to the evidence (issue 17), through the hook entry point:
the best record in full, equally good ones in full, weaker ones by title; long ADRs cut to the
passage that answers; the session counts full and title-only records."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentctx_store import Project, Store

Hook = Callable[..., dict[str, Any] | None]
Add = Callable[..., Any]
Payload = Callable[..., dict[str, Any]]
Context = Callable[[dict[str, Any] | None], str]

CONTEXT = (
    "Context: Our services send mail through three different providers and each one bounces differently. "
    "Support cannot tell which provider sent a message, and the templates live in four repositories. "
    "Two providers bill per message, the third per month, and nobody owns the contracts. "
    "Incidents with bounced mail took days to trace in the last quarter because logs differ per provider. "
    "Marketing wants scheduled campaigns, which none of the providers offers the way they need it. "
    "Finance asked for one invoice per month instead of three, with costs split by team. "
    "The security review last spring flagged API keys that had not been rotated since they were made. "
    "Two of the providers store message bodies for a year, longer than our retention policy allows. "
    "Product teams copy sending code between services, so fixes reach some services and not others. "
    "On-call engineers keep a wiki page of provider quirks that is already out of date. "
    "Options considered were staying as we are, moving to one of the current providers, or moving to SES.\n"
)
DECISION = "Decision: We will send all mail through Amazon SES from the notifications service.\n"
CONSEQUENCES = (
    "Consequences: Templates move into the notifications service repository. "
    "Bounce and complaint events arrive on one SNS topic that the support dashboard reads. "
    "The old provider accounts are closed once traffic has moved, which ends three contracts. "
    "Sending limits are raised with AWS support before each large campaign, two weeks ahead. "
    "Local development uses the SES mailbox simulator instead of real addresses. "
    "The notifications service owns retries; callers never resend a message themselves. "
    "Mail from staging goes to the simulator only, so no real user is ever mailed from there. "
    "Each team gets its own configuration set, so costs and sending reputation are reported per team. "
    "Dedicated IP addresses are not bought until volume passes a million messages a month."
)


def entries(text: str) -> tuple[list[str], list[str]]:
    """(full blocks, title-only blocks) of an injection."""
    shown = [part for part in text.split("\n\n") if part.startswith("<agentctx-record ")]
    titles = [part for part in shown if 'detail="title"' in part.splitlines()[0]]
    return [part for part in shown if part not in titles], titles


def test_one_clearly_relevant_record_is_injected_in_full_and_at_most_two_titles(
    hook: Hook, add: Add, payload: Payload, context: Context, project: Project, project_dir: Path, filler: Any
) -> None:
    filler(project, rounds=2)
    answer = add(
        project,
        "Webhook signatures use HMAC-SHA256 with a rotating secret",
        "Outgoing webhook payloads are signed with HMAC-SHA256; the signing secret rotates every 90 days.",
    )
    weak = [
        add(project, f"Webhook delivery note {index}", f"Webhook deliveries are logged, case {index}.")
        for index in range(3)
    ]
    prompt = "how are outgoing webhook payloads signed, which HMAC and how often does the secret rotate?"
    text = context(hook("UserPromptSubmit", payload("UserPromptSubmit", project_dir, prompt=prompt)))
    full, titles = entries(text)
    assert len(full) == 1 and answer.record_id in full[0] and "rotates every 90 days" in full[0]
    assert len(titles) <= 2
    for block in titles:  # a title line and nothing else
        lines = block.splitlines()
        assert len(lines) == 3 and lines[2] == "</agentctx-record>"
        assert any(record.record_id in lines[0] and lines[1] == record.title for record in weak)


def test_two_equally_relevant_records_are_both_injected_in_full(
    hook: Hook, add: Add, payload: Payload, context: Context, project: Project, project_dir: Path, filler: Any
) -> None:
    filler(project, rounds=2)
    first = add(project, "Invoice PDFs render with WeasyPrint", "Invoice PDFs render with WeasyPrint in the worker.")
    second = add(project, "Receipt PDFs render with WeasyPrint", "Receipt PDFs render with WeasyPrint in the worker.")
    prompt = "which library renders the PDFs with weasyprint in the worker?"
    text = context(hook("UserPromptSubmit", payload("UserPromptSubmit", project_dir, prompt=prompt)))
    full, titles = entries(text)
    assert len(full) == 2 and not titles
    assert first.record_id in text and second.record_id in text
    assert "Invoice PDFs render with WeasyPrint in the worker." in text
    assert "Receipt PDFs render with WeasyPrint in the worker." in text


def test_a_long_adr_is_cut_to_the_passage_that_answers_with_its_decision(
    hook: Hook, add: Add, payload: Payload, context: Context, project: Project, project_dir: Path, filler: Any
) -> None:
    filler(project, rounds=2)
    body = (CONTEXT + DECISION + CONSEQUENCES)[:2000]
    assert 1800 <= len(body) <= 2000
    adr = add(project, "Send all mail through Amazon SES", body)
    prompt = "where do SES bounce and complaint events show up for the support team?"
    text = context(hook("UserPromptSubmit", payload("UserPromptSubmit", project_dir, prompt=prompt)))
    (shown,), _ = entries(text)
    assert adr.record_id in shown and 'detail="excerpt"' in shown.splitlines()[0]
    assert "Bounce and complaint events arrive on one SNS topic that the support dashboard reads." in shown
    assert DECISION.strip() in shown
    assert "Marketing wants scheduled campaigns" not in shown
    assert "…" in shown and "`ctx_get` has the rest" in shown
    assert len(shown) < 1100


def test_the_session_counts_full_and_title_only_records_and_tokens(
    hook: Hook,
    store: Store,
    add: Add,
    payload: Payload,
    context: Context,
    project: Project,
    project_dir: Path,
    filler: Any,
) -> None:
    filler(project, rounds=2)
    answer = add(project, "Use PostgreSQL 16 for the orders database", "The orders database runs PostgreSQL 16.")
    other = add(project, "Orders export runs nightly", "The orders export job runs nightly.")
    text = context(
        hook(
            "UserPromptSubmit",
            payload(
                "UserPromptSubmit", project_dir, "acct17", prompt="which postgresql version runs the orders database?"
            ),
        )
    )
    full, titles = entries(text)
    assert len(full) == 1 and answer.record_id in full[0]
    assert len(titles) == 1 and other.record_id in titles[0]
    session = store.get_session("acct17")
    assert session is not None
    assert session["prompt_injections"] == 1 and session["records_full"] == 1 and session["records_title"] == 1
    assert session["prompt_tokens"] == session["tokens_injected"] > 0
    assert store.get(project, answer.record_id).access_count == 1
    assert store.get(project, other.record_id).access_count == 0  # only its title was shown
    again = context(
        hook(
            "UserPromptSubmit",
            payload(
                "UserPromptSubmit", project_dir, "acct17", prompt="which postgresql version runs the orders database?"
            ),
        )
    )
    assert other.record_id not in again and answer.record_id not in again  # never repeated in a session
