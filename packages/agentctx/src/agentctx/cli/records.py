"""Seeing and correcting records: record, search, show, edit, pin, unpin, supersede, delete, history.

These are the developer's hands on the store: whatever an agent or the extractor wrote can be
found, read in full (with its bi-temporal fields and where it came from), fixed, retired or
removed from here.
"""

from __future__ import annotations

import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from agentctx_store import NewRecord, Record, search
from agentctx_store.errors import RecordNotFound, ValidationError
from agentctx_store.records import CONFIDENCES, RECORD_TYPES, SCOPES, as_of_moment, parse_time
from agentctx_store.retrieval import RELEVANCE_FLOOR
from agentctx_store.store import MIN_ID_PART

from agentctx.cli._common import JsonOption, ProjectOption, check_filters, open_store, print_json, project_for
from agentctx.cli._secrets import warn_redacted

TYPES_HELP = f"Record type: {', '.join(RECORD_TYPES)}."
TypesFilterOption = typer.Option(None, "--type", "-t", help="Only these types (repeatable).", show_default=False)
AnchorOption = typer.Option(
    None,
    "--anchor",
    help="PATH, PATH:START-END or PATH:SYMBOL the fact is based on (repeatable): marked stale when that text "
    "changes (docs/freshness.md).",
    show_default=False,
)
ID_HELP = "The record's id, or a unique start or end of it (at least 6 characters)."
NewAnchorOption = typer.Option(
    None,
    "--anchor",
    help="PATH, PATH:START-END or PATH:SYMBOL the new fact is based on (repeatable), instead of the old record's "
    "anchors.",
    show_default=False,
)
QueryArgument = typer.Argument(..., help="What to look for, as you would type it.", show_default=False)


def read_text_arg(value: str | None) -> str | None:
    """`-` means: read the text from stdin (for bodies with quotes, newlines, pasted logs)."""
    if value == "-":
        return sys.stdin.read()
    return value


def age_days(record: Record, now: datetime | None = None) -> float:
    moment = now or datetime.now(UTC)
    try:
        return max(0.0, (moment - parse_time(record.valid_from)).total_seconds() / 86400)
    except ValidationError:
        return 0.0


def age_text(days: float) -> str:
    if days < 1:
        return "today"
    if days < 60:
        return f"{int(days)}d"
    if days < 730:
        return f"{int(days / 30)}mo"
    return f"{int(days / 365)}y"


def flags(record: Record) -> str:
    marks: list[str] = []
    if record.pinned:
        marks.append("pinned")
    if record.scope == "global":
        marks.append("global")
    if record.confidence == "inferred":
        marks.append("inferred")
    if record.superseded_at is not None:
        marks.append(f"superseded by {record.superseded_by}")
    return f"  [{', '.join(marks)}]" if marks else ""


def record_line(record: Record) -> str:
    return f"{record.record_id}  {record.type:<10}  {record.title}{flags(record)}"


def record_json(record: Record) -> dict[str, Any]:
    data = record.to_dict()
    data["current"] = record.is_current
    data["age_days"] = round(age_days(record), 1)
    return data


def echo_record_full(
    record: Record,
    *,
    supersedes: list[str],
    origin: dict[str, str] | None = None,
    anchors: list[dict[str, Any]] | None = None,
) -> None:
    learned = learned_from(record, anchors or [])
    rows = [
        ("id", record.record_id),
        ("type", record.type),
        ("title", record.title),
        ("status", "current" if record.is_current else f"superseded by {record.superseded_by}"),
        ("scope", record.scope),
        ("confidence", f"{record.confidence} (seen {record.reinforce_count}×)"),
        ("pinned", "yes" if record.pinned else "no"),
        ("valid_from", record.valid_from),
        ("recorded_at", record.recorded_at),
        ("superseded_at", record.superseded_at or "-"),
        ("supersedes", ", ".join(supersedes) or "-"),
        ("updated_at", record.updated_at or "-"),
        ("source", f"{record.source}, from {learned['anchor']}" if learned else record.source),
        ("session", record.session_id or "-"),
        ("client", " / ".join(origin.values()) if origin else "-"),
        ("key", record.key or "-"),
        ("accessed", f"{record.access_count}× (last {record.last_accessed or 'never'})"),
    ]
    for name, value in rows:
        typer.echo(f"{name + ':':<15}{value}")
    width = max((len(str(item["anchor"])) for item in anchors or []), default=0)
    for index, item in enumerate(anchors or []):
        typer.echo(f"{'anchors:' if index == 0 else '':<15}{item['anchor']:<{width}}  {item['state']}")
    if not anchors:
        typer.echo(f"{'anchors:':<15}- (not tied to any file; `agentctx stale` cannot see it go out of date)")
    typer.echo("")
    typer.echo(record.body)


def record_cmd(
    type: str = typer.Option(..., "--type", "-t", help=TYPES_HELP, show_default=False),
    title: str = typer.Option(..., "--title", help="One line, at most 120 characters.", show_default=False),
    body: str = typer.Option(
        ..., "--body", "-b", help="One fact, at most 2,000 characters; `-` reads it from stdin.", show_default=False
    ),
    scope: str = typer.Option(
        "project", "--scope", help=f"{' or '.join(SCOPES)}: global records follow you everywhere."
    ),
    supersedes: str | None = typer.Option(
        None, "--supersedes", help="Id of the current record this one replaces.", show_default=False
    ),
    pin: bool = typer.Option(False, "--pin", help="Pin it: ranked higher, kept in the session digest."),
    confidence: str = typer.Option("explicit", "--confidence", help=f"{', '.join(CONFIDENCES)}."),
    valid_from: str | None = typer.Option(
        None, "--valid-from", help="When it became true (ISO date; default: now).", show_default=False
    ),
    anchor: list[str] | None = AnchorOption,
    project: Path | None = ProjectOption,
    json: bool = JsonOption,
) -> None:
    """Record one fact (a decision, convention, preference, ...) in the project's store."""
    text = read_text_arg(body) or ""
    warn_redacted(title, text)
    new = NewRecord(
        type=type,
        title=title,
        body=text,
        scope=scope,
        confidence=confidence,
        source="cli",
        pinned=pin,
        valid_from=valid_from,
    )
    target = project_for(project)
    specs: list[str] = []
    if anchor:
        from agentctx.cli.stale import cli_specs

        specs = cli_specs(anchor, target, project)
    with open_store() as store, store.transaction():
        if supersedes is not None:
            supersedes = store.resolve_id(target, supersedes)
        first = not store.list_records(target, scope="project", include_superseded=True, limit=1)
        created = store.add(target, new, supersedes=supersedes)
        anchored = _anchor(store, target, created.record_id, specs) if specs else []
    if json:
        print_json(record_json(created) | ({"anchors": anchored} if anchored else {}))
        return
    typer.echo(f"Recorded {created.type} {created.record_id}: {created.title}")
    if first and created.scope != "global":
        from agentctx_store.projects import MARKER, project_root

        if project_root(target.root)[1] == "folder":  # the first record of a folder outside git
            typer.echo(
                f"Note: {target.root} is not in a git repository, so it is a project of its own and each "
                f"subfolder another one; `mkdir {MARKER}` in it makes its subfolders share its records."
            )
    if anchored:
        typer.echo(f"Anchored to {', '.join(anchored)}.")
    if supersedes:
        typer.echo(f"It supersedes {supersedes.upper()}, which no longer surfaces (see `agentctx history`).")


def _anchor(store: Any, project: Any, record_id: str, specs: list[str]) -> list[str]:
    from agentctx_store.freshness import anchor_record, format_spec

    return [format_spec(anchor) for anchor in anchor_record(store, project, record_id, specs)]


def search_cmd(
    query: list[str] = QueryArgument,
    types: list[str] | None = TypesFilterOption,
    limit: int = typer.Option(10, "--limit", "-n", min=1, max=200, help="At most this many results."),
    history: bool = typer.Option(False, "--history", help="Include superseded records."),
    as_of: str | None = typer.Option(
        None, "--as-of", help="What was true at this date or time (ISO 8601).", show_default=False
    ),
    scope: str | None = typer.Option(
        None, "--scope", help="`project`: only this project's own records; `global`: only yours.", show_default=False
    ),
    show_all: bool = typer.Option(
        False,
        "--all",
        "-a",
        help="Also list weak matches below the relevance floor (by default, nothing when nothing is clearly relevant).",
    ),
    project: Path | None = ProjectOption,
    json: bool = JsonOption,
) -> None:
    """Search this project's records (and global ones), best match first. Superseded ones only with --history.

    The same search and relevance floor as the prompt hook: a query about something the store
    does not know prints nothing. `--all` lists weaker matches too.
    """
    check_filters(types, scope)
    target = project_for(project)
    text = " ".join(query)
    moment = as_of_moment(as_of) if as_of is not None else None
    weak: list[Record] = []
    with open_store(read=True) as store:
        result, mode, hits = _ranked(store, target, text, limit, types, scope, history, moment, floor=not show_all)
        if not hits and not show_all and moment is None and result.terms:  # what the floor kept out
            below = _ranked(store, target, text, 3, types, scope, history, None, floor=False)[2]
            weak = [hit.record for hit in below]
    if json:
        print_json([hit_json(hit, result.terms, text) | {"degraded": result.degraded, "mode": mode} for hit in hits])
        return
    if result.degraded:
        typer.echo(f"(degraded search: {result.degraded}; `agentctx doctor` says why)", err=True)
    if not hits:
        _echo_nothing(text, result.terms, weak, show_all=show_all or moment is not None)
        return
    # With --history the superseded matches come after the current ones, under their own heading,
    # each list best first with its top match at 100%: a line never ranks above one printed before it.
    groups = [("", [hit for hit in hits if hit.record.is_current])]
    groups.append(("Superseded (kept as history, never injected):", [hit for hit in hits if not hit.record.is_current]))
    for heading, group in groups:
        if not group:
            continue
        if heading:
            typer.echo(heading)
        best = max(hit.score for hit in group) or 1.0
        for hit in group:
            record = hit.record
            match = f"{round(100 * hit.score / best):3d}%"  # relative to the best match: 100% is the top one
            typer.echo(f"{match}  {record_line(record)}  ({age_text(age_days(record))}, {record.confidence})")
            typer.echo(f"      {snippet(record.body, text, result.terms)}")
    typer.echo(
        f"\n`agentctx show ID` reads one in full; the first or last {MIN_ID_PART} or more characters of its id do."
    )


def _ranked(
    store: Any,
    target: Any,
    text: str,
    limit: int,
    types: list[str] | None,
    scope: str | None,
    history: bool,
    moment: str | None,
    *,
    floor: bool,
) -> tuple[Any, str, list[Any]]:
    """(the search result, its mode, its hits as shown): the warm service's hybrid ranking when
    it is up, else the keyword search; with `floor`, only what clears the relevance floor."""
    served = None
    if not history and moment is None:  # the warm search service ranks hybrid when it is up
        from agentctx_store.service_link import service_search

        served = service_search(store, target, text, limit=limit, types=types or None, scope=scope, floor=floor)
    if served is not None:
        result, mode = served
    else:
        mode = "keyword"
        result = search(
            store,
            target,
            text,
            limit=200 if moment else limit,
            types=types or None,
            scope=scope,
            include_superseded=history or moment is not None,
            floor=RELEVANCE_FLOOR if floor and moment is None else None,  # --as-of: the floor would weigh later facts
        )
    hits = result.hits
    if moment is not None:
        true_then = {record.record_id for record in store.as_of(target, moment, types=types or None)}
        hits = [hit for hit in hits if hit.record.record_id in true_then][:limit]
    elif history:  # the current version first: a superseded match never ranks above its head
        hits = sorted(hits, key=lambda hit: not hit.record.is_current)
    return result, mode, hits


SNIPPET_CHARS = 220  # one passage of a search result, about two lines of a terminal


def snippet(body: str, query: str, terms: list[str]) -> str:
    """The passage of `body` that matches `query` best, on one line, at most about SNIPPET_CHARS."""
    from agentctx_store.passages import excerpt

    text = excerpt(body, query, limit=SNIPPET_CHARS, terms=terms) or body
    flat = " ".join(text.split())
    if len(flat) > SNIPPET_CHARS + 20:  # one piece longer than the limit: cut at a word
        flat = flat[:SNIPPET_CHARS].rsplit(" ", 1)[0] + " …"
    return flat


def hit_json(hit: Any, terms: list[str], query: str) -> dict[str, Any]:
    record = hit.record
    return {
        "id": record.record_id,
        "type": record.type,
        "title": record.title,
        "snippet": snippet(record.body, query, terms),
        "body": record.body,
        "score": float(f"{hit.score:.6g}"),
        "relevance": float(f"{hit.relevance:.6g}"),
        "confidence": record.confidence,
        "pinned": record.pinned,
        "scope": record.scope,
        "valid_from": record.valid_from,
        "age_days": round(age_days(record), 1),
        "current": record.is_current,
        "superseded_by": record.superseded_by,
    }


def _echo_nothing(text: str, terms: list[str], weak: list[Record], *, show_all: bool) -> None:
    """Why a search printed nothing, and what to try."""
    if not terms:
        typer.echo(f"No matching records: {text!r} has no searchable words (only common words or symbols).")
        typer.echo("Try the words a record would contain: a file, tool, library or error name.")
        return
    if show_all or not weak:
        typer.echo(f"No matching records: no record contains any of the words searched ({', '.join(terms)}).")
        typer.echo("Try other words (a file, tool, library or error name), or `agentctx ui` to browse every record.")
        return
    typer.echo(
        f"No matching records: some share a word with {text!r}, but none clears the relevance floor "
        "(the prompt hook's), which keeps out records that share only a common word or two."
    )
    typer.echo("Closest weak matches:")
    for record in weak:
        typer.echo(f"  {record_line(record)}")
    typer.echo(
        f"Try other or more specific words, or `agentctx search --all {shlex.join(text.split())}` to list weak matches."
    )


def show_cmd(
    record_id: str = typer.Argument(..., help=ID_HELP, show_default=False),
    as_of: str | None = typer.Option(
        None, "--as-of", help="Show the version of this fact that was current at this date.", show_default=False
    ),
    project: Path | None = ProjectOption,
    json: bool = JsonOption,
) -> None:
    """Show one record in full: body, bi-temporal fields, provenance, supersession."""
    target = project_for(project)
    moment = as_of_moment(as_of) if as_of is not None else None
    with open_store(read=True) as store:
        record = store.get(target, store.resolve_id(target, record_id))
        chain = store.history(target, record.record_id)
        if moment is not None:
            true_then = {found.record_id for found in store.as_of(target, moment, types=[record.type])}
            versions = [link for link in chain if link.record_id in true_then]
            if not versions:
                raise RecordNotFound(
                    f"No version of {record.record_id} was current at {moment}; see `agentctx history`."
                )
            record = versions[-1]
        from agentctx_store.origin import of_record  # which client (and hook) produced it

        origin = of_record(store.get_session(record.session_id) if record.session_id else None, record.record_id)
        from agentctx_store.freshness import anchor_report

        anchors = anchor_report(store, target, [record.record_id]).get(record.record_id, [])
    position = [link.record_id for link in chain].index(record.record_id)
    supersedes = [chain[position - 1].record_id] if position > 0 else []
    if json:
        extra = {
            "supersedes": supersedes,
            "chain": [link.record_id for link in chain],
            "origin": origin,
            "source_file": learned_from(record, anchors),
            "anchors": anchors,
        }
        print_json(record_json(record) | extra)
        return
    echo_record_full(record, supersedes=supersedes, origin=origin, anchors=anchors)


def learned_from(record: Record, anchors: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The file and lines a learned record was read from (its one anchor, `agentctx learn`)."""
    if record.source != "learn" or not anchors:
        return None
    first = anchors[0]
    return {key: first[key] for key in ("path", "line_start", "line_end", "anchor", "state")}


def edit_cmd(
    record_id: str = typer.Argument(..., help=ID_HELP, show_default=False),
    title: str | None = typer.Option(None, "--title", help="New title.", show_default=False),
    body: str | None = typer.Option(
        None, "--body", "-b", help="New body; `-` reads it from stdin.", show_default=False
    ),
    type: str | None = typer.Option(None, "--type", "-t", help=TYPES_HELP, show_default=False),
    confidence: str | None = typer.Option(None, "--confidence", help=f"{', '.join(CONFIDENCES)}.", show_default=False),
    scope: str | None = typer.Option(None, "--scope", help=f"{' or '.join(SCOPES)}.", show_default=False),
    valid_from: str | None = typer.Option(None, "--valid-from", help="ISO date.", show_default=False),
    project: Path | None = ProjectOption,
    json: bool = JsonOption,
) -> None:
    """Correct a record in place (a typo, a wrong type). To replace a fact that changed, use `supersede`."""
    if all(value is None for value in (title, body, type, confidence, scope, valid_from)):
        raise ValidationError("Nothing to change; pass --title, --body, --type, --confidence, --scope or --valid-from.")
    target = project_for(project)
    new_body = read_text_arg(body)
    warn_redacted(title, new_body)
    with open_store() as store:
        record = store.edit(
            target,
            store.resolve_id(target, record_id),
            title=title,
            body=new_body,
            type=type,
            confidence=confidence,
            scope=scope,
            valid_from=valid_from,
        )
    if json:
        print_json(record_json(record))
        return
    typer.echo(f"Edited {record_line(record)}")


def _set_pin(record_id: str, project: Path | None, json: bool, pinned: bool) -> None:
    target = project_for(project)
    with open_store() as store:
        record = store.pin(target, store.resolve_id(target, record_id), pinned)
    if json:
        print_json(record_json(record))
        return
    typer.echo(f"{'Pinned' if pinned else 'Unpinned'} {record_line(record)}")


def pin_cmd(
    record_id: str = typer.Argument(..., help=ID_HELP, show_default=False),
    project: Path | None = ProjectOption,
    json: bool = JsonOption,
) -> None:
    """Pin a record: ranked higher, kept in the session digest, served even when search degrades."""
    _set_pin(record_id, project, json, True)


def unpin_cmd(
    record_id: str = typer.Argument(..., help=ID_HELP, show_default=False),
    project: Path | None = ProjectOption,
    json: bool = JsonOption,
) -> None:
    """Unpin a record."""
    _set_pin(record_id, project, json, False)


def supersede_cmd(
    record_id: str = typer.Argument(
        ...,
        help="The current record that is no longer true (its id, or a unique start or end of it).",
        show_default=False,
    ),
    body: str = typer.Option(
        ..., "--body", "-b", help="What is true now; `-` reads it from stdin.", show_default=False
    ),
    title: str | None = typer.Option(None, "--title", help="New title (default: the old one).", show_default=False),
    why: str | None = typer.Option(None, "--why", help="Why it changed (appended to the body).", show_default=False),
    confidence: str = typer.Option("explicit", "--confidence", help=f"{', '.join(CONFIDENCES)}."),
    record_type: str | None = typer.Option(
        None, "--type", "-t", help="The new record's type (default: the old one's).", show_default=False
    ),
    anchor: list[str] | None = NewAnchorOption,
    no_anchor: bool = typer.Option(False, "--no-anchor", help="Do not carry the old record's anchors over."),
    project: Path | None = ProjectOption,
    json: bool = JsonOption,
) -> None:
    """Replace a fact that changed: the old record is kept as history and never surfaces again.

    The new record keeps the old one's anchors, hashed as the files are now (those whose file is
    gone are left out), unless --anchor names others or --no-anchor drops them.
    """
    if anchor and no_anchor:
        raise ValidationError("Pass --anchor or --no-anchor, not both.")
    from agentctx_store.anchors import anchors_of
    from agentctx_store.freshness import format_spec
    from agentctx_store.stale import carry_anchors

    from agentctx.cli.stale import cli_specs

    target = project_for(project)
    new_body = read_text_arg(body) or ""
    warn_redacted(new_body, title, why)
    given = cli_specs(anchor, target, project)
    with open_store() as store, store.transaction():
        full_id = store.resolve_id(target, record_id)
        kept = [format_spec(item) for item in anchors_of(store, target, full_id)]
        old, new = store.supersede(
            target,
            full_id,
            body=new_body,
            title=title,
            rationale=why,
            confidence=confidence,
            record_type=record_type,
        )
        anchored: list[str] = []
        dropped: list[str] = []
        if given:
            anchored = _anchor(store, target, new.record_id, given)
        elif not no_anchor:
            anchored, dropped = carry_anchors(store, target, full_id, new.record_id)
    if json:
        print_json({"old": record_json(old), "new": record_json(new), "anchors": anchored, "dropped": dropped})
        return
    typer.echo(f"Recorded {new.type} {new.record_id}: {new.title}")
    typer.echo(f"It supersedes {old.record_id}, which no longer surfaces (see `agentctx history`).")
    if anchored:
        typer.echo(f"Anchored to {', '.join(anchored)}{'' if given else ' (as the old record was)'}.")
    if dropped:
        typer.echo(f"Left out the old record's anchors that are gone: {', '.join(dropped)}.")
    if no_anchor and kept:
        typer.echo(f"Not anchored (--no-anchor); the old record was anchored to {', '.join(kept)}.")


def delete_cmd(
    record_id: str = typer.Argument(..., help=ID_HELP, show_default=False),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    project: Path | None = ProjectOption,
    json: bool = JsonOption,
) -> None:
    """Delete one record for good (its search entry, links and edges too). To retire a fact, use `supersede`."""
    target = project_for(project)
    with open_store() as store:
        record = store.get(target, store.resolve_id(target, record_id))
        if not yes:
            typer.confirm(f"Delete {record.type} {record.record_id} {record.title!r} for good?", abort=True, err=True)
        store.delete(target, record.record_id)
    if json:
        print_json({"deleted": record.record_id})
        return
    typer.echo(f"Deleted {record.type} {record.record_id}: {record.title}")


def history_cmd(
    record_id: str = typer.Argument(
        ..., help="Any record of the chain (its id, or a unique start or end of it).", show_default=False
    ),
    project: Path | None = ProjectOption,
    json: bool = JsonOption,
) -> None:
    """Show a record's supersession chain, oldest first, and which one is current."""
    target = project_for(project)
    with open_store(read=True) as store:
        chain = store.history(target, store.resolve_id(target, record_id))
    if json:
        print_json([record_json(record) for record in chain])
        return
    for record in chain:
        state = "current" if record.is_current else f"until {record.superseded_at}"
        typer.echo(f"{record.record_id}  {record.valid_from[:10]}  {state:<30}  {record.title}")


def register(app: typer.Typer) -> None:
    app.command("record")(record_cmd)
    app.command("search")(search_cmd)
    app.command("show")(show_cmd)
    app.command("edit")(edit_cmd)
    app.command("pin")(pin_cmd)
    app.command("unpin")(unpin_cmd)
    app.command("supersede")(supersede_cmd)
    app.command("delete")(delete_cmd)
    app.command("history")(history_cmd)
