"""Team context through git: `<repo>/.agentctx/context.md` (docs/team.md).

Derived from the store and committed with the code. It holds the project's current, explicit
`decision`, `convention` and `discovery` records — never preferences, handovers, inferred
records, global ones, or any record the secret check flags. Made to merge: one block per
record with its id, no timestamp that changes on every export, and blocks ordered within a type
by a hash of their id, so two branches that each add a record insert at different places and
git merges them without a conflict.

A hand edit counts only through `import`: a new block becomes a record (its id kept, so every
clone shares it), a changed block supersedes the record it names, a deleted block retires its
record. When two people supersede the same record on two branches, both successors stay
current: two heads (`heads_conflicts`), shown by `agentctx status` and `agentctx team status`
until someone keeps one (`resolve_heads`).

The file is a repository's, so anyone's: an import may change only records that came from the
team file or that this user exported to it (`_may_change`: listed in the last sync, or written
by an import; current, explicit, not pinned, of a team type). A block that names any other
record — a preference, a pinned or inferred record, another project's — changes nothing: it
becomes an unconfirmed record for `agentctx review` (`TeamReport.review`). The file is read
only when neither `.agentctx` nor `context.md` is a symbolic link, as a regular file of at
most `MAX_TEAM_BYTES` holding at most `MAX_TEAM_BLOCKS` blocks, UTF-8 (a byte-order mark is
accepted); a file with text but no block retires nothing. Records, the rewritten file and the
sync are one transaction: a failure (a full disk) leaves the store as it was.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

from agentctx_store._frozen import field, frozen, replace
from agentctx_store.bounded import Refused, read_repo_text, refuse_links
from agentctx_store.errors import ValidationError
from agentctx_store.jsontext import is_array, is_object
from agentctx_store.projects import Project
from agentctx_store.records import Record, check_text, utc_now
from agentctx_store.retire import retire
from agentctx_store.rows import RECORD_COLUMNS, row_to_record
from agentctx_store.sharing.team_state import MAX_TEAM_BYTES, TEAM_FILE, load_state, save_state
from agentctx_store.sharing.transfer import ImportItem, import_items
from agentctx_store.store import Store
from agentctx_store.ulid import is_ulid, new_ulid

__all__ = [
    "MAX_TEAM_BLOCKS",
    "MAX_TEAM_BYTES",
    "TEAM_FILE",
    "TEAM_TYPES",
    "TeamBlock",
    "TeamReport",
    "export_team",
    "heads_conflicts",
    "import_team",
    "parse_team",
    "render_team",
    "resolve_heads",
    "team_records",
]

TEAM_TYPES = ("decision", "convention", "discovery")
MAX_TEAM_BLOCKS = 5_000  # the block count's cap beside the size's (`team_state.MAX_TEAM_BYTES`)
HEADINGS = {"decision": "Decisions", "convention": "Conventions", "discovery": "Discoveries"}
_BY_HEADING = {heading.lower(): kind for kind, heading in HEADINGS.items()}
HEADER = (
    "<!-- agentctx team context v1: derived from the store. Edit a block's title or text, add a block "
    "(a `### title` and its text under a section), or delete one, then run `agentctx team import`. "
    "Keep the agentctx comments. -->"
)
_META = re.compile(r"^(?P<title>.*?)\s*<!-- agentctx (?P<json>\{.*\}) -->$")
_END = re.compile(r"^<!-- /agentctx ([0-9A-Za-z]{26}) -->$")

# Written once beside the team file: git keeps both sides of a clash in it (two people adding
# or superseding next to each other) instead of stopping the merge; `team import` then sees
# both blocks, and two successors of one record become two heads to choose from.
GITATTRIBUTES = (
    "# written by agentctx: merge the team file by keeping both sides (docs/team.md)\ncontext.md merge=union\n"
)

SecretCheck = Callable[[str], bool]


@frozen
class TeamBlock:
    """One record in the file: `record_id` None for a block written by hand."""

    type: str
    title: str
    body: str
    line: int
    record_id: str | None = None
    supersedes: str | None = None
    valid_from: str | None = None


@frozen
class TeamReport:
    created: list[str] = field(default_factory=list[str])
    superseded: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    retired: list[str] = field(default_factory=list[str])
    unchanged: list[str] = field(default_factory=list[str])
    conflicts: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])  # (record, second head)
    # (the record a block would have changed, the unconfirmed record kept for review instead)
    review: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    kept: list[str] = field(default_factory=list[str])  # deleted from the file, but not the team's to retire
    withheld: int = 0


# -- export --------------------------------------------------------------------------------


def team_records(store: Store, project: Project, *, is_secret: SecretCheck | None = None) -> tuple[list[Record], int]:
    """(the records the file holds, how many were withheld by the secret check). A record the
    store redacted on its way in (it holds a `[REDACTED:…]` mark) is withheld too: it was about a
    secret, and the team file is shared."""
    records = store.list_records(project, types=list(TEAM_TYPES), scope="project", order="recorded_at ASC", limit=None)
    kept = [record for record in records if record.confidence == "explicit" and record.superseded_at is None]

    def withheld(record: Record) -> bool:
        text = f"{record.title}\n{record.body}"
        return "[REDACTED:" in text or (is_secret is not None and is_secret(text))

    clean = [record for record in kept if not withheld(record)]
    return clean, len(kept) - len(clean)


def _position(record_id: str) -> str:
    return hashlib.sha256(record_id.encode("ascii")).hexdigest()


def render_team(store: Store, project: Project, records: Sequence[Record]) -> str:
    """The file's text: stable for the same records, whatever the time or the store's order."""
    predecessors = _predecessors(store, [record.record_id for record in records])
    out = ["# Team context", "", HEADER, ""]  # no clone-specific name: every clone writes the same file
    for kind in TEAM_TYPES:
        of_type = sorted((r for r in records if r.type == kind), key=lambda record: _position(record.record_id))
        if not of_type:
            continue
        out += [f"## {HEADINGS[kind]}", ""]
        for record in of_type:
            meta: dict[str, str] = {"id": record.record_id, "type": record.type, "valid_from": record.valid_from[:10]}
            if record.record_id in predecessors:
                meta["supersedes"] = predecessors[record.record_id]
            text = json.dumps(meta, ensure_ascii=False, separators=(", ", ": "))
            text = text.replace("<", "\\u003c").replace(">", "\\u003e")
            # no blank line inside a block and the id on every line but the text's: git cannot
            # align one block's lines with another's, so a union merge keeps blocks whole
            out += [
                f"### {record.title} <!-- agentctx {text} -->",
                record.body,
                f"<!-- /agentctx {record.record_id} -->",
                "",
            ]
    return "\n".join(out)


def _predecessors(store: Store, record_ids: Sequence[str]) -> dict[str, str]:
    """Successor id → the record it superseded (the newest one, when there are several)."""
    found: dict[str, str] = {}
    for start in range(0, len(record_ids), 500):
        chunk = list(record_ids[start : start + 500])
        rows = store.conn.execute(
            f"SELECT superseded_by, id FROM records WHERE superseded_by IN ({', '.join('?' * len(chunk))}) "
            "ORDER BY superseded_at",
            chunk,
        )
        found.update((row[0], row[1]) for row in rows)
        rows = store.conn.execute(  # a second head names the record it superseded through an edge
            f"""SELECT e.from_id, e.to_id FROM edges e WHERE e.rel_type = 'supersedes'
                AND e.from_id IN ({", ".join("?" * len(chunk))})""",
            chunk,
        )
        for from_id, to_id in rows:
            found.setdefault(from_id, to_id)
    return found


def export_team(store: Store, project: Project, root: Path, *, is_secret: SecretCheck | None = None) -> TeamReport:
    """Write `<root>/.agentctx/context.md` from the store (only when its text changes).

    Raises:
        ValidationError: `.agentctx` or the file is a symbolic link (nothing written).
    """
    records, withheld = _write_team(store, project, root, is_secret=is_secret)
    save_state(project.project_id, str(root), [record.record_id for record in records])
    return TeamReport(unchanged=[record.record_id for record in records], withheld=withheld)


def _write_team(
    store: Store, project: Project, root: Path, *, is_secret: SecretCheck | None = None
) -> tuple[list[Record], int]:
    """Render and write the file; (the records it holds, how many were withheld)."""
    from agentctx_store.files import atomic_write

    target = Path(_checked(root, TEAM_FILE))
    attributes = Path(_checked(root, str(Path(TEAM_FILE).parent / ".gitattributes")))
    records, withheld = team_records(store, project, is_secret=is_secret)
    text = render_team(store, project, records)
    try:
        current = read_repo_text(root, TEAM_FILE, limit=MAX_TEAM_BYTES)
    except Refused:
        current = None
    if current != text:
        atomic_write(target, text)
    if not attributes.exists():  # ours, beside the file: never the repository's own
        atomic_write(attributes, GITATTRIBUTES)
    return records, withheld


def _checked(root: Path, path: str) -> str:
    """`root / path` when no part of it is a symbolic link (`bounded.refuse_links`).

    Raises:
        ValidationError: one is.
    """
    try:
        return refuse_links(root, path)
    except Refused as exc:
        raise ValidationError(str(exc)) from None


# -- parsing -------------------------------------------------------------------------------


def parse_team(text: str) -> list[TeamBlock]:
    """The blocks of a team file. Raises `ValidationError("Line N: …")` on a damaged block."""
    lines = text.replace("\r\n", "\n").split("\n")
    blocks: list[TeamBlock] = []
    kind: str | None = None
    index = 0
    seen: dict[str, int] = {}
    while index < len(lines):
        line = lines[index]
        if line.startswith("## "):
            kind = _BY_HEADING.get(line[3:].strip().lower())
            if kind is None:
                raise ValidationError(
                    f"Line {index + 1}: unknown section {line[3:].strip()!r}; use {', '.join(HEADINGS.values())}."
                )
            index += 1
            continue
        if not line.startswith("### "):
            index += 1
            continue
        title, start = line[4:].strip(), index + 1
        meta: dict[str, object] = {}
        if "<!-- agentctx" in title:
            match = _META.match(title)
            if match is None:
                raise ValidationError(f"Line {start}: the agentctx comment is damaged; restore it from git.")
            try:
                loaded = json.loads(match.group("json"))
            except ValueError:
                raise ValidationError(f"Line {start}: the agentctx comment is not valid JSON.") from None
            meta = loaded if is_object(loaded) else {}
            title = match.group("title").strip()
        index += 1
        record_id = meta.get("id")
        if record_id is not None and (not isinstance(record_id, str) or not is_ulid(record_id)):
            raise ValidationError(
                f"Line {start}: id {record_id!r} is not a record id; remove the comment to add a new record."
            )
        body: list[str] = []
        while index < len(lines):
            current = lines[index]
            end = _END.match(current.strip())
            if end is not None and record_id is not None and end.group(1).upper() == record_id.upper():
                index += 1
                break
            if record_id is None and (current.startswith(("### ", "## ")) or _END.match(current.strip())):
                break
            body.append(current)
            index += 1
        else:
            if record_id is not None:
                raise ValidationError(
                    f"Line {start}: the block {record_id} has no closing `<!-- /agentctx … -->` line."
                )
        block_type = str(meta.get("type") or kind or "")
        if block_type not in TEAM_TYPES:
            raise ValidationError(
                f"Line {start}: a block outside the Decisions, Conventions or Discoveries sections; move it under one."
            )
        try:
            clean_title, clean_body = check_text(title, "\n".join(body))
        except ValidationError as exc:
            raise ValidationError(f"Line {start}: {exc}") from None
        if isinstance(record_id, str):
            record_id = record_id.upper()
            if record_id in seen:
                raise ValidationError(
                    f"Line {start}: record {record_id} appears twice (first on line {seen[record_id]}); keep one block."
                )
            seen[record_id] = start
        supersedes = meta.get("supersedes")
        valid_from = meta.get("valid_from")
        blocks.append(
            TeamBlock(
                type=block_type,
                title=clean_title,
                body=clean_body,
                line=start,
                record_id=record_id if isinstance(record_id, str) else None,
                supersedes=supersedes.upper() if isinstance(supersedes, str) and is_ulid(supersedes) else None,
                valid_from=valid_from if isinstance(valid_from, str) else None,
            )
        )
    return blocks


# -- import --------------------------------------------------------------------------------


def _stored(store: Store, record_id: str) -> Record | None:
    row = store.conn.execute(f"SELECT {RECORD_COLUMNS} FROM records WHERE id = ?", (record_id,)).fetchone()
    return row_to_record(row) if row is not None else None


def read_team(root: Path) -> str:
    """The team file's text, when it is one agentctx will read.

    Raises:
        ValidationError: no file; `.agentctx` or the file is a symbolic link, not a regular
            file, over `MAX_TEAM_BYTES`, not UTF-8, or holds more than `MAX_TEAM_BLOCKS` blocks.
    """
    path = Path(_checked(root, TEAM_FILE))
    if not path.exists():
        raise ValidationError(f"No {TEAM_FILE} in {root}; run `agentctx team export` first, or pull it.")
    try:
        text = read_repo_text(root, TEAM_FILE, limit=MAX_TEAM_BYTES)
    except Refused as exc:
        raise ValidationError(str(exc)) from None
    blocks = text.count("\n### ") + text.startswith("### ")
    if blocks > MAX_TEAM_BLOCKS:
        raise ValidationError(
            f"{TEAM_FILE}: refused, {blocks:,} blocks is over the {MAX_TEAM_BLOCKS:,}-block limit; nothing imported."
        )
    return text


def _has_text(text: str) -> bool:
    """Whether the file holds anything but what an export of no records writes (its title, the
    header comment, section headings): text that should have parsed into blocks."""
    for line in text.replace("\r\n", "\n").split("\n"):
        line = line.strip()
        if line and line not in ("# Team context", HEADER) and not line.startswith("## "):
            return True
    return False


def import_team(store: Store, project: Project, root: Path, *, is_secret: SecretCheck | None = None) -> TeamReport:
    """Bring the file's edits into the store, then write the file again from the store so it
    names the new ids (a hand-written block gets its id) and remember it as synced — one
    transaction: when any of it fails, the store is as it was.

    A block may change only a record `_may_change` allows; one that names any other record is
    kept as an unconfirmed record for review, and a deleted block retires only such a record.

    Raises:
        ValidationError: no team file, one agentctx will not read (`read_team`), a damaged
            block, or text but no block at all (nothing written).
    """
    text = read_team(root)
    blocks = parse_team(text)
    if not blocks and _has_text(text):
        raise ValidationError(
            f"{TEAM_FILE}: no agentctx block in it (is it the team file?); nothing imported, nothing retired."
        )
    saved_ids = load_state(project.project_id).get("ids")
    synced = {str(value) for value in saved_ids} if is_array(saved_ids) else set[str]()
    report = TeamReport()
    in_file: set[str] = set()
    with store.transaction() as conn:
        for block in blocks:
            stored = _stored(store, block.record_id) if block.record_id else None
            if block.record_id is not None:
                in_file.add(block.record_id)
            if stored is None:
                new_id = block.record_id or new_ulid()
                _create(store, project, block, new_id, report, synced)
                in_file.add(new_id)
            elif (stored.title, stored.body, stored.type) == (block.title, block.body, block.type):
                report.unchanged.append(stored.record_id)
            elif not _may_change(store, stored, project, synced, current=False):
                _for_review(store, project, block, stored.record_id, report)
            elif stored.superseded_at is None:
                new_id = new_ulid()
                import_items(store, project, [_item(block, new_id, supersedes=stored.record_id)])
                report.superseded.append((stored.record_id, new_id))
                in_file.add(new_id)
            else:  # a hand edit of a version that is no longer current: a second head
                new_id = new_ulid()
                import_items(store, project, [_item(block, new_id)])
                _edge(conn, new_id, stored.record_id)
                report.conflicts.append((stored.record_id, new_id))
                in_file.add(new_id)
        for record_id in sorted(synced - in_file):
            stored = _stored(store, record_id)
            if stored is None or stored.superseded_at is not None:
                continue
            if _may_change(store, stored, project, synced):
                retire(store, project, record_id)
                report.retired.append(record_id)
            else:
                report.kept.append(record_id)
        records, withheld = _write_team(store, project, root, is_secret=is_secret)  # inside: all or nothing
    save_state(project.project_id, str(root), [record.record_id for record in records])
    return replace(report, withheld=withheld)


def _may_change(store: Store, stored: Record, project: Project, synced: set[str], *, current: bool = True) -> bool:
    """Whether the team file may supersede or retire `stored`: a record of this project that
    came from the team file (an import wrote it) or that this user exported to it (the last
    sync listed it, or, for an earlier version, its successor), still explicit, not pinned, of
    a team type, and (with `current`) current. Anything else is private: the user's
    preferences, pinned and inferred records, handovers, other projects' records."""
    if not (
        stored.project_id == project.project_id
        and stored.scope == "project"
        and stored.type in TEAM_TYPES
        and stored.confidence == "explicit"
        and not stored.pinned
        and (not current or stored.superseded_at is None)
    ):
        return False
    record: Record | None = stored
    for _ in range(_CHAIN_STEPS):  # an earlier version: the team had it when its successor was exported
        if record is None:
            return False
        if record.record_id in synced or record.source == "import":
            return True
        record = _stored(store, record.superseded_by) if record.superseded_by else None
    return False


_CHAIN_STEPS = 50


def _for_review(store: Store, project: Project, block: TeamBlock, target: str, report: TeamReport) -> None:
    """A block that would change a private record: its text kept as a new unconfirmed record
    (`agentctx review` lists it), the record itself untouched; once, however often the same
    file is imported."""
    row = store.conn.execute(
        """SELECT id FROM records WHERE project_id = ? AND type = ? AND title = ? AND body = ?
           AND source = 'import' AND confidence = 'inferred' AND superseded_at IS NULL LIMIT 1""",
        (project.project_id, block.type, block.title, block.body),
    ).fetchone()
    if row is not None:
        report.review.append((target, row[0]))
        return
    new_id = new_ulid()
    import_items(store, project, [_item(block, new_id, confidence="inferred", valid_from=False)])
    report.review.append((target, new_id))


def _create(
    store: Store, project: Project, block: TeamBlock, new_id: str, report: TeamReport, synced: set[str]
) -> None:
    """A block the store does not know: a teammate's record, or one written by hand."""
    old = _stored(store, block.supersedes) if block.supersedes else None
    if old is not None and not _may_change(store, old, project, synced, current=False):
        _for_review(store, project, block, old.record_id, report)
        return
    if old is not None and old.superseded_at is None:
        import_items(store, project, [_item(block, new_id, supersedes=old.record_id)])
        report.superseded.append((old.record_id, new_id))
        return
    import_items(store, project, [_item(block, new_id)])
    report.created.append(new_id)
    if old is not None and old.superseded_by != new_id:
        _edge(store.conn, new_id, old.record_id)  # it was already superseded by another: two heads
        report.conflicts.append((old.record_id, new_id))


def _edge(conn: sqlite3.Connection, from_id: str, to_id: str) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO edges(id, from_id, to_id, rel_type) VALUES (?, ?, ?, 'supersedes')",
        (new_ulid(), from_id, to_id),
    )


def _item(
    block: TeamBlock,
    record_id: str,
    *,
    supersedes: str | None = None,
    confidence: str = "explicit",
    valid_from: bool = True,
) -> ImportItem:
    return ImportItem(
        line=block.line,
        ref=record_id,
        record_id=record_id,
        type=block.type,
        title=block.title,
        body=block.body,
        confidence=confidence,
        valid_from=block.valid_from if supersedes is None and valid_from else None,
        supersedes=(supersedes,) if supersedes else (),
        source="import",
    )


# -- two heads -----------------------------------------------------------------------------


def heads_conflicts(store: Store, project: Project) -> list[tuple[Record, list[Record]]]:
    """Records superseded twice: (the record, its current heads), when more than one is current."""
    rows = store.conn.execute(
        """SELECT e.to_id, e.from_id FROM edges e
           JOIN records old ON old.id = e.to_id
           JOIN records new ON new.id = e.from_id
           WHERE e.rel_type = 'supersedes' AND old.project_id = ? AND new.superseded_at IS NULL""",
        (project.project_id,),
    ).fetchall()
    heads: dict[str, set[str]] = {}
    for old_id, new_id in rows:
        heads.setdefault(old_id, set()).add(new_id)
    out: list[tuple[Record, list[Record]]] = []
    for old_id, new_ids in sorted(heads.items()):
        if len(new_ids) < 2:
            continue
        old = store.get(project, old_id)
        out.append((old, [store.get(project, new_id) for new_id in sorted(new_ids)]))
    return out


def resolve_heads(store: Store, project: Project, keep_id: str) -> list[str]:
    """Keep `keep_id` as the one current head of its conflict; the other heads are superseded
    by it. Returns the ids retired.

    Raises:
        ValidationError: `keep_id` is not a head of a two-heads conflict.
    """
    keep = store.get(project, keep_id)
    for _, heads in heads_conflicts(store, project):
        ids = [head.record_id for head in heads]
        if keep.record_id in ids:
            others = [record_id for record_id in ids if record_id != keep.record_id]
            with store.transaction():
                for other in others:
                    retire(store, project, other, successor_id=keep.record_id, when=utc_now())
            return others
    raise ValidationError(
        f"Record {keep.record_id} is not one of two heads; `agentctx team status` lists the conflicts."
    )
