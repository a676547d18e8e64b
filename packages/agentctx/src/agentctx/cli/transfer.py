"""Records in and out of the store as files: `export` (Markdown) and `import` (Markdown or JSONL).

The logic lives in `agentctx_store.sharing.transfer` so the dashboard can offer the same export.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import typer
from agentctx_store.calibration import refresh_prompt_floor
from agentctx_store.errors import ValidationError
from agentctx_store.sharing import transfer

from agentctx.cli._common import JsonOption, ProjectOption, check_filters, open_store, print_json, project_for
from agentctx.cli._secrets import warn_redacted
from agentctx.cli.records import TypesFilterOption

OutputOption = typer.Option(None, "--output", "-o", help="Write to this file (default: stdout).", show_default=False)
FileArgument = typer.Argument(
    ...,
    help="An `agentctx export` Markdown file, or JSONL (one record per line); `-` reads stdin.",
    show_default=False,
)


def export_cmd(
    output: Path | None = OutputOption,
    history: bool = typer.Option(False, "--history", help="Include superseded records, each naming its successor."),
    types: list[str] | None = TypesFilterOption,
    scope: str | None = typer.Option(
        None,
        "--scope",
        help="`project`: leave out your global records (for a file the team commits); `global`: only them.",
        show_default=False,
    ),
    project: Path | None = ProjectOption,
) -> None:
    """Export the project's records as Markdown grouped by type; `agentctx import` reads it back unchanged."""
    check_filters(types, scope)
    target = project_for(project)
    with open_store(read=True) as store:
        text = transfer.render_markdown(store, target, include_history=history, types=types or None, scope=scope)
    if output is None:
        typer.echo(text, nl=False)
        return
    _write_atomically(output, text)
    typer.echo(f"Wrote {output}", err=True)


def _write_atomically(path: Path, text: str) -> None:
    """Write via a temp file in the same folder: a failed export never leaves half a file."""
    if path.is_dir():
        raise ValidationError(f"{str(path)!r} is a directory; give --output a file name.")
    folder = path.expanduser().resolve().parent
    if not folder.is_dir():
        raise ValidationError(f"No such directory {str(folder)!r}; create it or choose another --output.")
    try:
        handle, temp_name = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise ValidationError(f"Cannot write to {str(folder)!r} ({exc.strerror}); choose another --output.") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as temp:
            temp.write(text)
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


def import_cmd(
    file: Path = FileArgument,
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Check the file and report what would change; write nothing."
    ),
    new_ids: bool = typer.Option(
        False,
        "--new-ids",
        help="Give every record a fresh id (to import another project's export); links in the file follow.",
    ),
    project: Path | None = ProjectOption,
    json: bool = JsonOption,
) -> None:
    """Import records from Markdown (an export, hand edits included) or JSONL. All or nothing."""
    text = _read(file)
    items = transfer.parse_file_text(text, name=str(file))
    if not items:
        source = "stdin" if str(file) == "-" else repr(str(file))
        raise ValidationError(
            f"No records found in {source}; expected an `agentctx export` Markdown file "
            "(`### title` headings with agentctx-record comments) or JSONL (one JSON record per line)."
        )
    warn_redacted(*(part for item in items for part in (item.title, item.body)))
    target = project_for(project)
    with open_store() as store:
        if dry_run:
            store.conn.execute("BEGIN IMMEDIATE")
            try:
                report = transfer.import_items(store, target, items, new_ids=new_ids)
            finally:
                store.conn.execute("ROLLBACK")
                store.dirty.clear()
        else:
            report = transfer.import_items(store, target, items, new_ids=new_ids)
            refresh_prompt_floor(store, target)
    summary = {"created": len(report.created), "updated": len(report.updated), "unchanged": len(report.unchanged)}
    if json:
        print_json(summary | {"dry_run": dry_run, "created_ids": report.created, "updated_ids": report.updated})
        return
    verb = "Would import" if dry_run else "Imported"
    typer.echo(
        f"{verb} {len(items)} record{'' if len(items) == 1 else 's'} into {target.name}: {summary['created']} new, "
        f"{summary['updated']} updated, {summary['unchanged']} unchanged."
    )


MAX_IMPORT_BYTES = 50_000_000  # an export of ~25,000 full records; a larger file is refused unread


def _read(file: Path) -> str:
    """The text of the file to import, read bounded: a FIFO, a device or a file over
    `MAX_IMPORT_BYTES` is refused in one line before it is read (docs/threat-model.md)."""
    from agentctx_store import bounded

    if str(file) == "-":
        stdin = sys.stdin
        data = stdin.buffer.read(MAX_IMPORT_BYTES + 1) if hasattr(stdin, "buffer") else stdin.read().encode("utf-8")
    else:
        try:
            data = bounded.read_file(file.expanduser(), limit=MAX_IMPORT_BYTES)
        except bounded.Unreadable as exc:
            name = repr(str(file))
            size = f"{exc.size:,} bytes, " if exc.size else ""
            reason = {
                "missing": f"No such file {name}; pass an `agentctx export` file or a JSONL file.",
                "folder": f"{name} is a directory; pass a Markdown or JSONL file.",
                "special": f"{name} is not a regular file (a FIFO, socket or device); pass a file.",
                "too large": f"{name} is {size}over the {MAX_IMPORT_BYTES:,}-byte limit of one import; split it.",
            }.get(exc.why, f"Cannot read {name} ({exc.detail}).")
            raise ValidationError(reason) from None
    if len(data) > MAX_IMPORT_BYTES:
        raise ValidationError(f"{str(file)!r} is over the {MAX_IMPORT_BYTES:,}-byte limit of one import; split it.")
    try:
        return data.decode("utf-8-sig")  # bytes, not text mode: bodies keep their exact line endings
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ValidationError(f"Line {line}: {str(file)!r} is not UTF-8 text; save it as UTF-8.") from None


def register(app: typer.Typer) -> None:
    app.command("export")(export_cmd)
    app.command("import")(import_cmd)
