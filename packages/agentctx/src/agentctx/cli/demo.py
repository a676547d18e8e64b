"""`agentctx demo`: the whole loop on a throwaway store, with no network and no account.

It records a few facts about a made-up project, supersedes one, searches, and then plays a
short Claude Code session through the real hook entry point (`python -m agentctx hook <Event>`
in a subprocess, payloads shaped like the ones Claude Code sends): what SessionStart injects,
what each prompt injects (or why nothing), the session dedup, and what a tool call captures.
Everything lives in a temp folder that is deleted at the end (`--keep` keeps it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

BAR = "  │ "
EARLIER_TOPICS = [
    "logging levels",
    "docker compose ports",
    "release checklist",
    "code review etiquette",
    "feature flags",
    "timezone handling",
    "error budgets",
    "password hashing",
    "css naming",
    "api pagination",
    "retry budgets",
    "queue workers",
    "pdf rendering",
    "email templates",
    "search indexing",
    "image resizing",
    "oauth scopes",
    "rate limiting",
    "translation files",
    "webhook signatures",
    "backup rotation",
    "metrics labels",
    "cron schedules",
    "session cookies",
    "dependency pinning",
    "monorepo layout",
    "graphql schema",
    "load balancer health checks",
    "migration naming",
    "staging data refresh",
    "sentry sampling",
    "cache headers",
    "admin permissions",
    "audit trail",
    "locale fallbacks",
    "invoice numbering",
    "tax rounding",
    "shipping labels",
    "warehouse codes",
    "customer merge",
    "coupon stacking",
    "gift cards",
    "return windows",
    "fraud rules",
    "address validation",
    "sms provider",
    "push notifications",
    "dark mode",
    "accessibility audit",
    "onboarding emails",
    "feature toggles cleanup",
    "docs site build",
    "api keys rotation",
    "sso setup",
    "vpn access",
    "pager rota",
    "incident template",
    "postmortem format",
    "sprint planning",
    "design tokens",
]


@dataclass(frozen=True, kw_only=True)
class HookCall:
    event: str
    context: str
    millis: float


@contextmanager
def _throwaway_home(home: Path) -> Generator[None]:
    """Point this process's store at the demo's data dir; restore the caller's afterwards."""
    saved = os.environ.get("AGENTCTX_HOME")
    os.environ["AGENTCTX_HOME"] = str(home)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("AGENTCTX_HOME", None)
        else:
            os.environ["AGENTCTX_HOME"] = saved


def _make_project(root: Path) -> None:
    (root / "src" / "shop").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pyproject.toml").write_text(
        '[project]\nname = "shop-api"\nrequires-python = ">=3.11"\ndependencies = ["fastapi", "grpcio"]\n'
        '[project.scripts]\nshop-api = "shop.main:run"\n[dependency-groups]\ndev = ["pytest"]\n',
        encoding="utf-8",
    )
    (root / "src" / "shop" / "sync_client.py").write_text("def sync_inventory():\n    ...\n", encoding="utf-8")


def _hook(event: str, payload: dict[str, Any], env: dict[str, str]) -> HookCall:
    """One hook, the way Claude Code runs it: a fresh process, the payload on stdin."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "agentctx", "hook", event],
        input=json.dumps(payload).encode("utf-8"),
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    millis = (time.perf_counter() - started) * 1000
    text = ""
    if done.stdout.strip():
        text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    return HookCall(event=event, context=text, millis=millis)


def _show(call: HookCall, *, empty: str) -> None:
    from agentctx_store.budget import estimate_tokens

    if not call.context:
        typer.echo(f"  (nothing injected: {empty}; hook took {call.millis:.0f} ms)")
        return
    typer.echo(
        f"  ┌─ injected: {estimate_tokens(call.context)} tokens, {len(call.context)} chars "
        f"(hook took {call.millis:.0f} ms)"
    )
    for line in call.context.splitlines():
        typer.echo(BAR + line)
    typer.echo("  └─")


def demo(
    keep: Annotated[bool, typer.Option("--keep", help="Keep the throwaway data dir and project to look at.")] = False,
) -> None:
    """Show agentctx end to end on a throwaway store (no network, no account).

    Records facts, supersedes one, searches, then plays a scripted Claude Code session through
    the real `agentctx hook` entry point: the SessionStart digest, per-prompt injections with
    their token counts (including a prompt that gets nothing and the dedup on a repeat), and
    what a file edit and a failing test capture.

    \b
    Example:
        agentctx demo
    """
    workdir = Path(tempfile.mkdtemp(prefix="agentctx-demo-"))
    home, project_dir, temp = workdir / "data", workdir / "shop-api", workdir / "tmp"
    temp.mkdir()
    _make_project(project_dir)
    env = {**os.environ, "AGENTCTX_HOME": str(home), "TMPDIR": str(temp), "AGENTCTX_HOOKS_NO_SPAWN": "1"}
    env.pop("CLAUDE_PROJECT_DIR", None)
    try:
        with _throwaway_home(home):
            retired = _record_and_search(project_dir)
            injected = _session(project_dir, env)
        typer.echo("")
        if retired.record_id in injected or retired.body in injected:
            raise AssertionError("the superseded fact was injected")  # the demo doubles as a smoke test
        typer.echo(f"✓ The superseded decision ({retired.record_id}, REST) was never injected.")
    finally:
        if keep:
            typer.echo(f"Kept: {workdir} (AGENTCTX_HOME={home})")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def _record_and_search(project_dir: Path) -> Any:
    from agentctx_store import NewRecord, Store, digest, resolve_project, search

    project = resolve_project(project_dir)
    typer.echo(f"agentctx demo — a throwaway store for the project {project.name!r}\n")
    typer.echo("1. Record what the team decided")
    with digest.refreshing(Store.open()) as store:
        facts = [
            NewRecord(
                type="decision",
                title="Orders live in PostgreSQL 16",
                body="Orders and payments are stored in PostgreSQL 16; SQLite only in tests.",
            ),
            NewRecord(
                type="decision",
                title="The inventory sync client talks REST",
                body="src/shop/sync_client.py calls the inventory service over REST/JSON with requests.",
            ),
            NewRecord(
                type="convention",
                title="Money is integer cents",
                body="Prices, refunds and totals are integer cents, never floats; format only at the edge.",
            ),
            NewRecord(
                type="discovery",
                title="Nightly export is slow on Mondays",
                body="The nightly CSV export takes 3x longer on Mondays (weekend backlog).",
                confidence="inferred",
                source="llm_extraction",
            ),
            NewRecord(
                type="handover",
                title="Next: finish the sync client migration",
                body="Moving the inventory sync client to the new protocol; retries and deadlines still to do.",
            ),
        ]
        records = [store.add(project, fact) for fact in facts]
        for record in records:
            typer.echo(
                f"  + {record.type:<10} {record.record_id}  {record.title}"
                + (" (inferred: shown as unconfirmed)" if record.confidence == "inferred" else "")
            )
        with store.transaction():  # a store of realistic size: relevance is judged against it
            for topic in EARLIER_TOPICS:
                store.add(
                    project,
                    NewRecord(
                        type="discovery",
                        title=f"Note on {topic}",
                        body=f"What we learned about {topic}.",
                        source="import",
                    ),
                )
        typer.echo(f"  + … and {len(EARLIER_TOPICS)} notes from earlier sessions (discoveries)")
        retired = records[1]
        typer.echo("\n2. Supersede one: the sync client moved from REST to gRPC")
        old, new = store.supersede(
            project,
            retired.record_id,
            title="The inventory sync client talks gRPC",
            body="src/shop/sync_client.py calls inventory.v2 over gRPC with a 2 s deadline.",
            rationale="The inventory team retired the JSON API in March.",
        )
        typer.echo(f"  {old.record_id} {old.title}  →  superseded by {new.record_id}")
        typer.echo("\n3. Search: 'how do we call the inventory service?'")
        for hit in search(store, project, "how do we call the inventory service?").hits:
            typer.echo(f"  {hit.record.type:<10} {hit.record.record_id}  {hit.record.title}")
        typer.echo("  (the REST record is history now: search and injection never return it)")
    return retired


def _session(project_dir: Path, env: dict[str, str]) -> str:
    """The scripted session; returns every injected text, joined."""
    from agentctx_store import Store, resolve_project

    session = str(uuid.uuid4())
    common = {
        "session_id": session,
        "transcript_path": str(project_dir / ".claude-transcript.jsonl"),
        "cwd": str(project_dir),
    }
    injected: list[str] = []
    typer.echo("\n4. A Claude Code session, through `python -m agentctx hook <Event>`")

    typer.echo("\nSessionStart (source=startup): the precomputed digest")
    call = _hook("SessionStart", {**common, "hook_event_name": "SessionStart", "source": "startup"}, env)
    _show(call, empty="no digest")
    injected.append(call.context)

    typer.echo("  (records shown in the digest count as injected: prompts will not repeat them)")

    prompts = [
        ("Why is the nightly CSV export so slow?", "nothing cleared the relevance floor"),
        ("Write a haiku about autumn leaves.", "nothing in the store is relevant: zero tokens spent"),
        ("Why is the nightly CSV export so slow?", "already injected in this session (dedup)"),
    ]
    for prompt, empty in prompts:
        typer.echo(f"\nUserPromptSubmit: {prompt!r}")
        call = _hook("UserPromptSubmit", {**common, "hook_event_name": "UserPromptSubmit", "prompt": prompt}, env)
        _show(call, empty=empty)
        injected.append(call.context)

    typer.echo("\nPostToolUse: Claude edits src/shop/sync_client.py")
    path = str(project_dir / "src" / "shop" / "sync_client.py")
    edit = {
        **common,
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": path, "old_string": "...", "new_string": "return stub.Sync(req, timeout=2)"},
        "tool_response": {"filePath": path, "oldString": "...", "newString": "return stub.Sync(req, timeout=2)"},
        "tool_use_id": "toolu_demo_1",
    }
    _hook("PostToolUse", edit, env)
    typer.echo("\nPostToolUseFailure: `uv run pytest tests/test_sync.py` fails")
    failure = {
        **common,
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": "uv run pytest tests/test_sync.py"},
        "tool_use_id": "toolu_demo_2",
        "error": "Exit code 1\ntests/test_sync.py F\nE   TimeoutError: inventory.v2 Sync exceeded its 2 s deadline\n1 failed in 2.31s",
    }
    _hook("PostToolUseFailure", failure, env)
    typer.echo("  (both captures wait in the spool; the next hook that opens the store writes them)")

    typer.echo("\nPreCompact: applies the waiting captures, then snapshots the working state")
    _hook(
        "PreCompact", {**common, "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": None}, env
    )
    with Store.open() as store:
        project = resolve_project(project_dir)
        for record in store.related_to_file(project, "src/shop/sync_client.py"):
            typer.echo(f"  file src/shop/sync_client.py ↔ {record.type} {record.record_id}  {record.title}")
        for stub in store.list_records(project, types=["bugfix"]):
            typer.echo(f"  + bugfix stub {stub.record_id}  {stub.title} ({stub.confidence}, deduplicated by error)")
        opened = store.get_session(session)
        assert opened is not None  # the hooks above opened it
        tests = opened["meta"].get("tests", [])
        for entry in tests:
            typer.echo(f"  test run: {entry['outcome']} — {entry['command']}")

    typer.echo("\nSessionStart (source=compact): the working state comes back")
    call = _hook("SessionStart", {**common, "hook_event_name": "SessionStart", "source": "compact"}, env)
    _show(call, empty="no digest")
    injected.append(call.context)

    _hook("SessionEnd", {**common, "hook_event_name": "SessionEnd", "reason": "other"}, env)
    with Store.open() as store:
        meta = store.get_session(session)
    assert meta is not None  # SessionStart opened it
    typer.echo(
        f"\nSessionEnd: session closed; {meta['tokens_injected']} tokens injected in {meta['injections']} injections "
        "(consolidation would now run detached; the demo skips background work)."
    )
    return "\n".join(injected)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
