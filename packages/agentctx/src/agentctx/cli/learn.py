"""`agentctx learn`: records from what the project already wrote (ADRs, CLAUDE.md/AGENTS.md,
Copilot and Cursor rules, GEMINI.md, Claude Code's auto-memory). The logic lives in
`agentctx_store.learn`; see docs/learn.md."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import typer
from agentctx_store import Project
from agentctx_store.errors import ValidationError
from agentctx_store.learn import Action, LearnPlan, apply_plan, discover, plan_learn
from agentctx_store.redact import redact_text, redact_value

from agentctx.cli._common import JsonOption, ProjectOption, open_store, print_json, project_for

PathsArgument = typer.Argument(
    None,
    help="Files or folders to learn from (default: discover them in the project).",
    show_default=False,
)
_VERBS = {
    "add": "new",
    "supersede": "updated (superseded)",
    "retire": "retired",
    "keep": "unchanged",
    "move": "unchanged (moved)",
    "duplicate": "already known",
    "link": "superseded by a later ADR",
}


def learn_cmd(
    paths: list[Path] | None = PathsArgument,
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be recorded; write nothing."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="List every record, not only the changes."),
    llm: bool = typer.Option(
        False,
        "--llm",
        help="Let a model type and title new or changed rules (Claude Haiku with ANTHROPIC_API_KEY, "
        "else your coding agent headless; `agentctx config llm`).",
    ),
    project: Path | None = ProjectOption,
    json: bool = JsonOption,
) -> None:
    """Learn records from the project's ADRs, agent instruction files and Claude Code auto-memory.

    Re-running updates only what changed in those files; records you made are never touched.
    """
    target = project_for(project)
    root = Path(target.root)
    try:
        plan, llm_outcome = run_learn(target, root, paths or [], dry_run=dry_run, llm=llm)
    except KeyboardInterrupt:
        _interrupted(target)
    if json:
        out: dict[str, object] = {
            "dry_run": dry_run,
            "summary": plan.summary(),
            "skipped": plan.skipped,
            "files": plan.reasons,
            "actions": [_action_json(action) for action in plan.actions],
        }
        if llm_outcome is not None:
            out["llm"] = llm_outcome
        print_json(redact_value(out))
        return
    _print_plan(plan, dry_run=dry_run, verbose=verbose or dry_run)
    if llm_outcome is not None:
        _echo(str(llm_outcome["message"]))


def _interrupted(target: Project) -> NoReturn:
    """Ctrl-C: the records are written in one transaction, so an interrupted run wrote nothing;
    say so, and what the store keeps from earlier runs."""
    try:
        with open_store() as store:
            kept = sum(1 for record in store.list_records(target, limit=None) if record.source == "learn")
        what = f"the {kept} records learned before are kept as they were" if kept else "no learned records"
    except Exception:
        what = "the records learned before are kept as they were"
    typer.echo(f"Interrupted: learn wrote nothing (all or nothing); {what}.", err=True)
    raise typer.Exit(130)


def _echo(line: str) -> None:
    """One line of output, redacted as the store redacts what it keeps: a title learned from a
    file (or a file's name) may hold a secret, and what learn prints must not."""
    typer.echo(redact_text(line))


def run_learn(
    target: Project, root: Path, paths: list[Path], *, dry_run: bool = False, llm: bool = False
) -> tuple[LearnPlan, dict[str, object] | None]:
    """Learn into the store (shared by `learn` and `init --learn`). With `llm`, Claude Haiku
    types and titles the new and changed rules first (`agentctx_extract.learn_llm`); the second
    value is what that did (`None` without `llm`)."""
    with open_store() as store:
        try:
            plan = plan_learn(store, target, root, paths)
        except FileNotFoundError as exc:
            raise ValidationError(f"No such file or folder {str(exc)!r}; give paths inside the project.") from None
        llm_outcome = None
        if llm:
            from agentctx_extract.learn_llm import type_rules

            typed = type_rules(store, target, plan, dry_run=dry_run)
            plan, llm_outcome = typed.plan, typed.to_json()
        if not dry_run:
            apply_plan(store, target, plan)  # measures the project's keyword floor too
        return plan, llm_outcome


def _action_json(action: Action) -> dict[str, object]:
    item, record = action.item, action.record
    out: dict[str, object] = {"action": action.action}
    if item is not None:
        out |= {
            "type": item.type,
            "title": item.title,
            "path": item.anchor.path,
            "lines": [item.anchor.line_start, item.anchor.line_end],
        }
    if record is not None:
        out["record_id"] = record.record_id
    if action.duplicate_of is not None:
        out["duplicate_of"] = action.duplicate_of.record_id
    return out


def _print_plan(plan: LearnPlan, *, dry_run: bool, verbose: bool) -> None:
    if not plan.sources and plan.skipped:
        for line in plan.skipped:
            _echo(line)
        _echo("Nothing to learn from: every file found was skipped (above).")
        return
    if not plan.sources:
        _echo(
            "Nothing to learn from: no ADR folder, CLAUDE.md, AGENTS.md, GEMINI.md, Copilot or Cursor rules, "
            "or Claude Code memory found. Pass files or folders: agentctx learn docs/decisions"
        )
        return
    shown = {"add", "supersede", "retire", "duplicate", "link"} | ({"keep", "move"} if verbose else set[str]())
    for action in plan.actions:
        if action.action not in shown:
            continue
        item, record = action.item, action.record
        if item is not None:
            where = f"{item.anchor.path}:{item.anchor.line_start}-{item.anchor.line_end}"
            _echo(f"{action.action:<9} {item.type:<10} {item.title}  ({where})")
        elif record is not None:
            _echo(f"{action.action:<9} {record.type:<10} {record.title}  ({record.record_id})")
    for line in plan.skipped:
        _echo(line)
    if dry_run:
        _echo("Files looked at:")
        for line in plan.reasons:
            _echo(f"  {line}")
    summary = plan.summary()
    parts = [
        f"{summary[name]} {_VERBS[name]}"
        for name in ("add", "supersede", "retire", "duplicate", "keep")
        if summary[name]
    ]
    verb = "Would learn" if dry_run else "Learned"
    _echo(f"{verb} from {summary['files']} file{'s' * (summary['files'] != 1)}: {', '.join(parts) or 'nothing new'}.")


def offer_learn(target: Project, choice: bool | None, *, dry_run: bool = False) -> None:
    """`init`'s offer: learn now (`--learn`), never (`--no-learn`), or ask when a person is at
    the terminal and there is something to learn from; otherwise say how to do it later."""
    if choice is False:
        return
    root = Path(target.root)
    sources = [source for source in discover(root) if _readable(source.path)]
    if not sources:
        return
    what = f"{len(sources)} file{'s' * (len(sources) != 1)} agentctx can learn from (ADRs, agent instructions, memory)"
    if dry_run:
        typer.echo(f"Learn: found {what}; `agentctx learn --dry-run` shows the records.")
        return
    if choice is None:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            typer.echo(f"Learn: found {what}; run `agentctx learn` to record them.")
            return
        if not typer.confirm(f"Found {what}. Learn from them now?", default=True):
            typer.echo("Learn: skipped; run `agentctx learn` any time.")
            return
    plan, _ = run_learn(target, root, [])
    summary = plan.summary()
    typer.echo(
        f"Learn: {summary['add']} new record{'s' * (summary['add'] != 1)} from {summary['files']} files "
        f"({summary['supersede']} updated, {summary['retire']} retired, {summary['duplicate']} already known)."
    )


def _readable(path: Path) -> bool:
    """Whether `learn` would read the file (a regular file within the size cap): the offer counts
    only those, not the FIFOs or oversize files the read passes over."""
    import stat

    from agentctx_store.bounded import MAX_REPO_FILE

    try:
        info = path.stat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size <= MAX_REPO_FILE


def register(app: typer.Typer) -> None:
    app.command("learn")(learn_cmd)
