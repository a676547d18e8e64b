"""`config review = required` (issue 14): extraction results are not injected per prompt until
a person accepts them; explicit records and accepted ones are."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentctx_store import NewRecord, Project, Store, config, review

Hook = Callable[..., dict[str, Any] | None]


def ask(
    hook: Hook, payload: Callable[..., dict[str, Any]], context: Callable[..., str], cwd: Path, session: str
) -> str:
    return context(
        hook(
            "UserPromptSubmit",
            payload("UserPromptSubmit", cwd, session, prompt="which message broker for the billing events?"),
        )
    )


def test_review_required_keeps_unaccepted_extraction_out_of_prompts(
    hook: Hook,
    payload: Callable[..., dict[str, Any]],
    context: Callable[..., str],
    project_dir: Path,
    project: Project,
    store: Store,
    filler: Callable[..., None],
) -> None:
    filler(project)
    inferred = store.add(
        project,
        NewRecord(
            type="decision",
            title="Billing events go through the RabbitMQ message broker",
            body="Extracted from a session.",
            confidence="inferred",
            source="llm_extraction",
            session_id="s0",
        ),
    )
    assert inferred.record_id in ask(hook, payload, context, project_dir, "optional")  # default: shown, marked
    config.save({"review": "required"})
    assert inferred.record_id not in ask(hook, payload, context, project_dir, "required-1")
    review.accept(store, project, inferred.record_id)
    shown = ask(hook, payload, context, project_dir, "required-2")
    assert inferred.record_id in shown and "unconfirmed" not in shown
