"""`agentctx review`: walk the records nobody has confirmed yet, one at a time (issue 14).

Accept makes a record `explicit`, edit corrects its title or body and accepts it, reject
deletes it, skip leaves it as it is. End of input (Ctrl-D, or a closed pipe) stops the walk
with nothing more changed. The functions behind it are `agentctx_store.review`, which the
dashboard's Inbox view calls too.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from agentctx_store import Project, Record, Store, review
from agentctx_store.sharing import team

from agentctx.cli._common import JsonOption, ProjectOption, ask_choice, open_store, print_json, project_for
from agentctx.cli.records import record_json

CHOICES = "[a]ccept  [e]dit  [r]eject  [s]kip  [q]uit"


def _read_line(prompt: str) -> str | None:
    """One line of input without its newline; None at end of input."""
    typer.echo(prompt, nl=False)
    line = sys.stdin.readline()
    if not line:
        typer.echo("")
        return None
    return line.rstrip("\r\n")


def _show(record: Record, index: int, total: int) -> None:
    where = "global" if record.scope == "global" else "project"
    seen = f", seen in {record.reinforce_count} sessions" if record.reinforce_count > 1 else ""
    typer.echo(
        f"\n[{index}/{total}] {record.type} {record.record_id} ({where}, {record.source}{seen}, {record.recorded_at[:10]})"
    )
    typer.echo(f"  {record.title}")
    body = record.body.strip()
    if body and body != record.title:
        for line in body.splitlines():
            typer.echo(f"  | {line}")


def review_cmd(
    everything: bool = typer.Option(
        False,
        "--all",
        help="Every unconfirmed record, not only what session-end extraction wrote and team blocks kept for review.",
    ),
    limit: int | None = typer.Option(
        None, "--limit", "-n", min=1, help="At most this many records.", show_default=False
    ),
    project: Path | None = ProjectOption,
    json: bool = JsonOption,
) -> None:
    """Confirm, correct or reject what extraction inferred, newest first, one at a time.

    For each record: `a` accepts it (it becomes explicit and reaches the session digest), `e`
    edits its title and body then accepts it, `r` deletes it, `s` skips it, `q` stops. End of
    input stops too. Then the re-verification proposals for records whose anchored code changed
    (`a` does what the proposal says, `r` dismisses it). With --json, lists the inbox without
    changing anything.

    \b
    Example:
        agentctx review
        agentctx review --json
    """
    from agentctx_store.stale.reverify import open_proposals

    from agentctx.cli.stale import proposal_json, walk_proposals

    target = project_for(project)
    with open_store() as store:
        pending = review.inbox(store, target, everything=everything, limit=limit)
        conflicts = team.heads_conflicts(store, target)
        proposals = open_proposals(store, target)
    if json:
        heads = [{"record": old.record_id, "heads": [head.record_id for head in now]} for old, now in conflicts]
        print_json(
            {
                "project_id": target.project_id,
                "count": len(pending),
                "records": [record_json(r) for r in pending],
                "proposals": [proposal_json(proposal, record) for proposal, record in proposals],
            }
            | ({"two_heads": heads} if heads else {})
        )
        return
    if conflicts and not _review_conflicts(target, conflicts):
        return
    if not pending:
        if proposals:
            walk_proposals(target, _read_line)
            return
        typer.echo(f"Nothing to review in {target.name}: no unconfirmed records.")
        return
    typer.echo(f"{len(pending)} unconfirmed record{'s' if len(pending) != 1 else ''} in {target.name}, newest first.")
    counts = {"accepted": 0, "edited": 0, "rejected": 0, "skipped": 0}
    # Same shape as the loop of `stale.walk_proposals`, kept apart: other items (records, not
    # proposals), other answers (edit exists only here, and can end the walk), another ending
    # (the proposals follow); a shared walker would need a callback per difference.
    for index, record in enumerate(pending, start=1):
        _show(record, index, len(pending))
        answer = ask_choice(_read_line, CHOICES, "aersq")
        if answer is None or answer == "q":
            break
        if answer == "s":
            counts["skipped"] += 1
            continue
        with open_store() as store:
            if answer == "a":
                review.accept(store, target, record.record_id)
                counts["accepted"] += 1
                typer.echo("  accepted (explicit)")
            elif answer == "r":
                review.reject(store, target, record.record_id)
                counts["rejected"] += 1
                typer.echo("  rejected (deleted)")
            else:
                edited = _edit(store, target, record)
                if edited is None:
                    break
                counts["edited"] += 1
                typer.echo(f"  edited and accepted: {edited.title}")
    else:  # the records are done: then the re-verification proposals
        walk_proposals(target, _read_line)
    with open_store() as store:
        left = len(review.inbox(store, target, everything=everything))
    done = ", ".join(f"{count} {name}" for name, count in counts.items() if count) or "nothing changed"
    typer.echo(f"\n{done}; {left} left to review.")


def _review_conflicts(target: Project, conflicts: list[tuple[Record, list[Record]]]) -> bool:
    """Two heads first (a record two people superseded differently, docs/team.md): pick the one
    to keep, or skip. False when input ended (stop the review)."""
    typer.echo(f"{len(conflicts)} record{'s' if len(conflicts) != 1 else ''} superseded twice (two heads):")
    for old, heads in conflicts:
        typer.echo(f"\n{old.type} {old.record_id} was: {old.title}")
        for number, head in enumerate(heads, start=1):
            typer.echo(f"  [{number}] {head.record_id}  {head.title}")
            typer.echo(f"      | {head.body.strip().splitlines()[0] if head.body.strip() else ''}")
        while True:
            line = _read_line(f"  keep which (1-{len(heads)}), or [s]kip? ")
            if line is None:
                return False
            choice = line.strip().lower()
            if choice.startswith("s"):
                break
            if choice.isdigit() and 1 <= int(choice) <= len(heads):
                with open_store() as store:
                    team.resolve_heads(store, target, heads[int(choice) - 1].record_id)
                typer.echo(f"  kept {heads[int(choice) - 1].record_id}")
                break
            typer.echo(f"  Type a number from 1 to {len(heads)}, or s.")
    return True


def _edit(store: Store, target: Project, record: Record) -> Record | None:
    """Ask for a new title and body (Enter keeps each); None at end of input (nothing changed)."""
    title = _read_line("  title (Enter keeps it): ")
    if title is None:
        return None
    body = _read_line("  body, one line (Enter keeps it): ")
    if body is None:
        return None
    return review.accept(store, target, record.record_id, title=title.strip() or None, body=body.strip() or None)


def register(app: typer.Typer) -> None:
    app.command("review")(review_cmd)
