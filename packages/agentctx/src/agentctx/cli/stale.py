"""Records whose evidence moved: `agentctx stale` lists them; `confirm`, `supersede`, `delete` act.

A record anchored to project files (`agentctx record --anchor`, `ctx_record`'s `anchors`, `learn`)
is stale when the anchored text changed or the file is gone (docs/freshness.md). A symbol that
left its file is looked for in the project and offered as a re-anchor.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer
from agentctx_store import Project, Store
from agentctx_store.freshness import anchor_record, format_spec, parse_spec
from agentctx_store.stale import StaleRecord, carry_anchors, confirm, scan

from agentctx.cli._common import (
    JsonOption,
    ProjectOption,
    StatusSection,
    ask_choice,
    open_store,
    print_json,
    project_for,
)

stale_app = typer.Typer(
    help="Records whose anchored files changed or are gone: list them, then confirm, supersede or delete each.",
    invoke_without_command=True,
    no_args_is_help=False,
    rich_markup_mode=None,
)
AnchorOption = typer.Option(
    None,
    "--anchor",
    help="PATH, PATH:START-END or PATH:SYMBOL the fact is based on (repeatable; paths relative to the project root "
    "or to the current directory).",
    show_default=False,
)


def cli_specs(specs: list[str] | None, project: Project, given: Path | None) -> list[str]:
    """Anchor specs as typed: a path that exists relative to the current directory (when no
    `--project` points elsewhere) is made absolute, so `--anchor retry.py:retry` works from a
    subfolder; anything else is taken as project-relative."""
    if not specs:
        return []
    found: list[str] = []
    for spec in specs:
        path = parse_spec(spec)[0]
        if given is None and not os.path.isabs(path) and os.path.exists(path):
            absolute = os.path.realpath(path)
            root = os.path.realpath(str(project.root))
            if absolute.startswith(root.rstrip(os.sep) + os.sep):
                spec = absolute + spec.strip()[len(path) :]
        found.append(spec)
    return found


def stale_json(item: StaleRecord) -> dict[str, Any]:
    return {
        "id": item.record.record_id,
        "type": item.record.type,
        "title": item.record.title,
        "changed": item.staleness.changed,
        "missing": item.staleness.missing,
        "all_missing": item.staleness.all_missing,
        "anchors": [format_spec(anchor) for anchor in item.anchors],
        "moved": item.moved,
    }


def _echo(item: StaleRecord) -> None:
    record = item.record
    hidden = "  [not injected: every anchor is gone]" if item.staleness.all_missing else ""
    typer.echo(f"{record.record_id}  {record.type:<10}  {record.title}{hidden}")
    if item.staleness.changed:
        typer.echo(f"    changed: {', '.join(item.staleness.changed)}")
    if item.staleness.missing:
        typer.echo(f"    missing: {', '.join(item.staleness.missing)}")
    for old, places in item.moved.items():
        typer.echo(f"    moved:   {old} -> {', '.join(places)}")
        typer.echo(f"             re-anchor: agentctx stale confirm {record.record_id} --anchor {places[0]}")


@stale_app.callback()
def stale_cmd(ctx: typer.Context, project: Path | None = ProjectOption, json: bool = JsonOption) -> None:
    """List this project's current records whose anchored files changed or are gone.

    Then, per record: `agentctx stale confirm ID` (the fact still holds: re-hash its anchors, or
    re-anchor with --anchor), `agentctx stale supersede ID --body ...`, `agentctx stale delete ID`.
    """
    if ctx.invoked_subcommand is not None:
        return
    target = project_for(project)
    with open_store(read=True) as store:
        found = scan(store, target, follow=True)
    if json:
        print_json([stale_json(item) for item in found])
        return
    if not found:
        typer.echo("No stale records: every anchored record still matches its files.")
        return
    for item in found:
        _echo(item)
    typer.echo("")
    typer.echo(
        f"{len(found)} record{'s' if len(found) != 1 else ''} with changed or missing anchors. "
        "Per record: agentctx stale confirm|supersede|delete ID"
    )


@stale_app.command("confirm")
def confirm_cmd(
    record_id: str = typer.Argument(
        ..., help="The stale record's id, or a unique start or end of it.", show_default=False
    ),
    anchor: list[str] | None = AnchorOption,
    project: Path | None = ProjectOption,
    json: bool = JsonOption,
) -> None:
    """The fact still holds: re-hash its anchors as the files are now (anchors whose file is gone
    are dropped), or re-anchor it with --anchor (e.g. where a symbol moved)."""
    target = project_for(project)
    with open_store() as store:
        record_id = store.resolve_id(target, record_id)
        kept = confirm(store, target, record_id, cli_specs(anchor, target, project))
        record = store.get(target, record_id)
    specs = [format_spec(item) for item in kept]
    if json:
        print_json({"confirmed": record.record_id, "anchors": specs})
        return
    typer.echo(f"Confirmed {record.record_id}: {record.title}")
    typer.echo(f"Anchors: {', '.join(specs) if specs else '(none left)'}")


@stale_app.command("supersede")
def supersede_cmd(
    record_id: str = typer.Argument(
        ..., help="The stale record's id, or a unique start or end of it.", show_default=False
    ),
    body: str = typer.Option(..., "--body", "-b", help="What is true now; `-` reads stdin.", show_default=False),
    title: str | None = typer.Option(None, "--title", help="New title (default: the old one).", show_default=False),
    anchor: list[str] | None = AnchorOption,
    project: Path | None = ProjectOption,
    json: bool = JsonOption,
) -> None:
    """Replace the fact: the new record is anchored to --anchor, or to the old one's anchors as the
    files are now (those whose file or symbol is gone are left out)."""
    from agentctx.cli.records import read_text_arg

    target = project_for(project)
    given = cli_specs(anchor, target, project)
    with open_store() as store, store.transaction():
        record_id = store.resolve_id(target, record_id)
        old, new = store.supersede(target, record_id, body=read_text_arg(body) or "", title=title)
        if given:
            anchored = [format_spec(item) for item in anchor_record(store, target, new.record_id, given)]
        else:
            anchored, _gone = carry_anchors(store, target, old.record_id, new.record_id)
    if json:
        print_json({"old": old.record_id, "new": new.record_id, "anchors": anchored})
        return
    typer.echo(f"Recorded {new.type} {new.record_id}: {new.title}")
    typer.echo(f"It supersedes {old.record_id}, which no longer surfaces (see `agentctx history`).")


@stale_app.command("delete")
def delete_cmd(
    record_id: str = typer.Argument(
        ..., help="The stale record's id, or a unique start or end of it.", show_default=False
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    project: Path | None = ProjectOption,
    json: bool = JsonOption,
) -> None:
    """Delete the record for good (same as `agentctx delete`)."""
    from agentctx.cli.records import delete_cmd as delete_record

    delete_record(record_id=record_id, yes=yes, project=project, json=json)


def stale_status(store: Store, project: Project) -> StatusSection:
    """The `Freshness` block of `agentctx status`: stale records of this project, checked now."""
    found = scan(store, project)
    anchored = store.conn.execute(
        "SELECT count(DISTINCT a.record_id) FROM record_anchors a JOIN records r ON r.id = a.record_id "
        "WHERE a.project_id = ? AND r.superseded_at IS NULL",
        (project.project_id,),
    ).fetchone()[0]
    gone = sum(1 for item in found if item.staleness.all_missing)
    data = {"anchored": anchored, "stale": len(found), "all_anchors_gone": gone}
    lines = [f"{anchored} anchored records, {len(found)} stale ({gone} with every anchor gone)"]
    if found:
        lines.append("see `agentctx stale`")
    return StatusSection(key="freshness", title="Freshness", lines=lines, data=data)


def register(app: typer.Typer) -> None:
    app.add_typer(stale_app, name="stale")


# -- re-verification (consolidation) and its proposals (review) ---------------------------


def reverify_projects(targets: list[Project], settings: dict[str, Any]) -> dict[str, Any]:
    """Consolidation's re-verification: per project, stale records re-checked and (with an API
    key, `llm` on and the monthly cap not reached) proposals from Haiku into the review inbox."""
    from agentctx_store import spend
    from agentctx_store.stale import reverify

    verifier = None
    note = ""
    with open_store() as store:
        cap = float(settings.get("monthly_cap_usd", 5.0))
        used = spend.month_spent(store) + reverify.spent(store, since=spend.month_start())
    if used >= cap:
        note = f"monthly cap ${cap:.2f} reached: stale records are marked, not re-verified"
    else:
        try:
            from agentctx_extract.reverify import make_verifier
        except ImportError:
            make_verifier = None
        verifier = make_verifier(settings) if make_verifier else None
    auto = bool(settings.get("reverify_auto_apply", False))
    reports: dict[str, Any] = {}
    with open_store() as store:
        for target in targets:
            report = reverify.reverify(store, target, verifier, auto_apply=auto)
            if note and report.stale:
                report.notes.append(note)
            reports[target.project_id] = report.to_dict()
    return reports


def proposal_json(proposal: Any, record: Any) -> dict[str, Any]:
    return proposal.to_dict() | {"record_title": record.title if record else None}


VERDICT_TEXT = {
    "still_true": "still true: accepting re-hashes its anchors",
    "update": "needs an update: accepting supersedes it with the draft below",
    "no_longer_true": "no longer true: accepting deletes it",
}


def walk_proposals(target: Project, read_line: Any) -> dict[str, int] | None:
    """`agentctx review`'s second part: each open proposal, accept / reject / skip / quit.
    Returns the counts, or None when input ended or the person quit."""
    from agentctx_store.stale import reverify

    with open_store() as store:
        pending = reverify.open_proposals(store, target)
    counts = {"accepted": 0, "rejected": 0, "skipped": 0}
    if not pending:
        return counts
    typer.echo(f"\n{len(pending)} re-verification proposal{'s' if len(pending) != 1 else ''} (anchored code changed):")
    for index, (proposal, record) in enumerate(pending, start=1):
        typer.echo(f"\n[{index}/{len(pending)}] {record.type} {record.record_id}: {record.title}")
        typer.echo(f"  {VERDICT_TEXT.get(proposal.verdict, proposal.verdict)}")
        if proposal.reason:
            typer.echo(f"  why: {proposal.reason}")
        if proposal.verdict == "update":
            typer.echo(f"  draft: {proposal.title}")
            for line in (proposal.body or "").splitlines():
                typer.echo(f"  | {line}")
        choice = ask_choice(read_line, "[a]ccept  [r]eject  [s]kip  [q]uit", "arsq")
        if choice is None or choice == "q":
            return None
        if choice == "s":
            counts["skipped"] += 1
            continue
        with open_store() as store:
            if choice == "a":
                reverify.accept(store, target, proposal.proposal_id)
                counts["accepted"] += 1
                typer.echo("  accepted")
            else:
                reverify.reject(store, target, proposal.proposal_id)
                counts["rejected"] += 1
                typer.echo("  rejected (nothing changed)")
    return counts
