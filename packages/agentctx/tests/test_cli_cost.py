"""`agentctx status` shows what extraction cost (issue 14): per session its runs, tokens in,
cached and out, and cost; this month's spend next to the cap."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentctx_store import Store, config, resolve_project


def test_status_shows_each_sessions_extraction_and_the_months_spend_against_the_cap(
    cli: Callable[..., Any], project_dir: Path
) -> None:
    project = resolve_project(project_dir)
    config.save({"monthly_cap_usd": "2.5"})
    with Store.open() as store:
        store.add_extraction_cost("s-costly", project, 0.0123)
        store.update_session_meta(
            project,
            "s-costly",
            extraction={
                "runs": 2,
                "calls": 2,
                "input_tokens": 11_000,
                "cache_read_tokens": 1_500,
                "cache_write_tokens": 0,
                "output_tokens": 640,
                "runs_log": [{"trigger": "stop"}, {"trigger": "end"}],
            },
        )
        store.record_injection(project, "s-idle", [], 40)
    result = cli("status", "--project", str(project_dir))
    assert result.code == 0, result.err
    assert "extraction $0.0123 (2 runs: 11,000 in, 1,500 cached, 640 out)" in result.out
    assert "extraction none" in result.out
    assert "extraction spend $0.0123 of the $2.50 cap" in result.out

    data = cli("status", "--json", "--project", str(project_dir)).json()["sessions"]
    costly = next(session for session in data["recent"] if session["session_id"] == "s-costly")
    assert costly["extraction"] == {
        "runs": 2,
        "calls": 2,
        "input_tokens": 11_000,
        "cached_tokens": 1_500,
        "cache_write_tokens": 0,
        "output_tokens": 640,
        "cost_usd": 0.0123,
        "last_trigger": "end",
        "client_tokens": 0,
        "backend": "api",
    }
    assert data["month_extraction_cost_usd"] == 0.0123 and data["monthly_cap_usd"] == 2.5
