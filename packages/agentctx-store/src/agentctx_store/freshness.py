"""Freshness: does the evidence a record was based on (its anchors) still say what it said?

A record's anchors (`agentctx_store.upkeep.anchors`) name a project file, optionally a line range or a
symbol, and the hash of what that covered when the record was made. Here:
  - `capture` turns `PATH`, `PATH:START-END` or `PATH:SYMBOL` into an anchor by reading the file
    (the whole file when small, else the range or the symbol's block), with the file's size and
    mtime, so later checks can `stat` instead of hashing;
  - `check` is what the injecting paths call (`agentctx_store.inject.compose_injection` through a
    `Checker`): per record, which anchors changed or are gone. It stats at most MAX_FILES files
    per call and hashes a file only when its size or mtime moved since it last matched; it
    writes nothing, so it costs a prompt no write;
  - `scan` checks every anchored current record of a project (the `stale` command, status,
    consolidation, the digest), stores each anchor's state and refreshes the stat of anchors
    whose text still matches;
  - `confirm` re-hashes a record's anchors (the fact still holds) or re-anchors it; `moved`
    looks for a symbol that left its file.

Standard library only and nothing heavy at import (no `re`, `hashlib`, `pathlib`, `json`): the
prompt hook imports it. `hashlib` is imported only when a file must be hashed.
"""

from __future__ import annotations

import os

from agentctx_store._frozen import field, frozen
from agentctx_store.errors import ValidationError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Sequence

    from agentctx_store.projects import Project
    from agentctx_store.records import Record
    from agentctx_store.store import Store
    from agentctx_store.upkeep.anchors import Anchor

CHANGED = "changed"
MISSING = "missing"
# Files a single check stats (a prompt shows at most three records; each may name a few files).
MAX_FILES = 8
# A file up to this size is anchored whole when no range or symbol is given; a larger one needs
# a range or a symbol (hashing it on every change would cost the prompt hook too much).
WHOLE_FILE_BYTES = 256 * 1024
# A record with a changed anchor keeps this share of its score: a fresh record wins a tie.
STALE_FACTOR = 0.8
# `moved` looks at most at this many files, skipping these folders and anything bigger.
FOLLOW_MAX_FILES = 5000
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", "dist", "build", ".tox", "target"})
_DEF_KEYWORDS = (
    "def ",
    "async def ",
    "class ",
    "function ",
    "async function ",
    "export function ",
    "export async function ",
    "export class ",
    "export default function ",
    "func ",
    "fn ",
    "pub fn ",
    "pub async fn ",
    "async fn ",
    "struct ",
    "pub struct ",
    "enum ",
    "pub enum ",
    "trait ",
    "pub trait ",
    "interface ",
    "export interface ",
    "type ",
    "export type ",
    "const ",
    "export const ",
    "let ",
    "var ",
    "module ",
    "sub ",
)
_IDENT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$")


@frozen
class Staleness:
    """Why a record's evidence no longer matches: the paths whose anchored text changed and the
    paths that are gone. `all_missing`: every anchor is gone (the record is not injected)."""

    record_id: str
    changed: list[str] = field(default_factory=list[str])
    missing: list[str] = field(default_factory=list[str])
    all_missing: bool = False

    @property
    def attributes(self) -> str:
        """What the agent sees on the record's element: ` anchor-changed="a.py"` and/or
        ` anchor-missing="b.py"` (paths comma-separated)."""
        text = ""
        if self.changed:
            text += f' anchor-changed="{_attr(",".join(self.changed))}"'
        if self.missing:
            text += f' anchor-missing="{_attr(",".join(self.missing))}"'
        return text


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def parse_spec(spec: str) -> tuple[str, int | None, int | None, str | None]:
    """`PATH`, `PATH:START-END` (1-based, inclusive) or `PATH:SYMBOL` → (path, start, end, symbol).

    Raises:
        ValidationError: an empty spec, a range that is not one, or a symbol that is not a name.
    """
    text = spec.strip()
    if not text:
        raise ValidationError("An anchor is empty; give PATH, PATH:START-END or PATH:SYMBOL.")
    path, colon, tail = text.rpartition(":")
    if not colon or not path or "/" in tail or "\\" in tail:
        return text, None, None, None
    start_text, dash, end_text = tail.partition("-")
    if start_text.isdigit() and (not dash or end_text.isdigit()):
        start = int(start_text)
        end = int(end_text) if dash else start
        if not 1 <= start <= end:
            raise ValidationError(
                f"Anchor {spec!r}: lines {tail} are not a range; give START-END, 1-based, START ≤ END."
            )
        return path, start, end, None
    name = tail.strip()
    if not name or any(char not in _IDENT and char != "." for char in name):
        raise ValidationError(f"Anchor {spec!r}: {tail!r} is neither a line range (10-20) nor a symbol name.")
    return path, None, None, name


def format_spec(anchor: Anchor) -> str:
    """The anchor as `PATH`, `PATH:START-END` or `PATH:SYMBOL` (what `parse_spec` reads)."""
    if anchor.symbol:
        return f"{anchor.path}:{anchor.symbol}"
    if anchor.line_start is not None:
        return f"{anchor.path}:{anchor.line_start}-{anchor.line_end}"
    return anchor.path


def symbol_block(text: str, symbol: str) -> str | None:
    """The definition of `symbol` in `text`: its first line (`def NAME`, `class NAME`, `function
    NAME`, `fn NAME`, `const NAME =`, … after any indentation) and every following line indented
    deeper, blank, or a closing bracket at its own indentation; None when it is not defined there.
    The block is dedented, so a symbol moved to another file (or nesting level) hashes the same."""
    name = symbol.rpartition(".")[2]
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for index, line in enumerate(lines):
        stripped = line.lstrip()
        if not _defines(stripped, name):
            continue
        indent = len(line) - len(stripped)
        block = [stripped]
        for following in lines[index + 1 :]:
            inner = following.lstrip()
            depth = len(following) - len(inner)
            if not inner or depth > indent:
                block.append(following[indent:] if depth >= indent else inner)
                continue
            if inner[0] in ")]}":
                block.append(inner)
            break
        while block and not block[-1].strip():
            block.pop()
        return "\n".join(block)
    return None


def _defines(stripped: str, name: str) -> bool:
    for keyword in _DEF_KEYWORDS:
        if stripped.startswith(keyword):
            rest = stripped[len(keyword) :].lstrip()
            if rest.startswith("(") and keyword == "func ":  # Go method: func (r *T) Name(
                rest = rest.partition(")")[2].lstrip()
            if rest.startswith(name) and (len(rest) == len(name) or rest[len(name)] not in _IDENT):
                return True
    return False


def anchored_text(text: str, line_start: int | None, line_end: int | None, symbol: str | None) -> str | None:
    """What an anchor covers in a file's `text`: the symbol's block, the line range, or the
    whole text. None when the symbol is not there or the range is past the end of the file."""
    if symbol:
        return symbol_block(text, symbol)
    if line_start is not None and line_end is not None:
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if line_start > len(lines):
            return None
        return "\n".join(lines[line_start - 1 : line_end])
    return text


def _read(full: str) -> str:
    with open(full, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def _digest(full: str, line_start: int | None, line_end: int | None, symbol: str | None) -> str | None:
    from agentctx_store.upkeep.anchors import content_hash

    covered = anchored_text(_read(full), line_start, line_end, symbol)
    return None if covered is None else content_hash(covered)


def root_text(project: Project) -> str:
    """The project root as text, without making it a `Path` (the prompt path avoids pathlib)."""
    root = getattr(project, "_root", None)
    return root if isinstance(root, str) else str(project.root)


def _checkable(root: str) -> bool:
    """Anchors are checked only against a real project folder: a root the store does not know
    (`.`) or a checkout that is gone must not make every anchor look missing."""
    return os.path.isabs(root) and os.path.isdir(root)


def capture(root: str, spec: str) -> tuple[Anchor, int, int]:
    """Read the file a spec names under `root` and make its anchor; returns (anchor, size, mtime_ns).

    Raises:
        ValidationError: the path leaves the project, the file is missing or unreadable, the
            range is past its end, the symbol is not defined in it, or a whole-file anchor is
            over WHOLE_FILE_BYTES.
    """
    from agentctx_store.upkeep.anchors import Anchor, content_hash, normalize_anchor_path

    raw_path, start, end, symbol = parse_spec(spec)
    path = _relative(root, raw_path)
    path = normalize_anchor_path(path)
    full = os.path.join(root, path)
    try:
        info = os.stat(full)
        text = _read(full)
    except OSError as exc:
        raise ValidationError(
            f"Anchor {spec!r}: cannot read {path!r} under {root} ({exc.strerror or exc}); give a file of the project."
        ) from None
    if start is None and symbol is None and info.st_size > WHOLE_FILE_BYTES:
        raise ValidationError(
            f"Anchor {spec!r}: the file is over {WHOLE_FILE_BYTES // 1024} KB; anchor a range (PATH:10-40) or a symbol (PATH:name)."
        )
    covered = anchored_text(text, start, end, symbol)
    if covered is None:
        what = f"symbol {symbol!r} is not defined" if symbol else f"lines {start}-{end} are past the end"
        raise ValidationError(f"Anchor {spec!r}: {what} in {path}; check the name or the range.")
    anchor = Anchor(path=path, content_hash=content_hash(covered), line_start=start, line_end=end, symbol=symbol)
    return anchor, info.st_size, info.st_mtime_ns


def _relative(root: str, path: str) -> str:
    """An absolute path inside the project becomes project-relative; others are left as given."""
    text = path.replace("\\", "/")
    if os.path.isabs(text):
        base = os.path.realpath(root)
        full = os.path.realpath(text)
        if full == base or not full.startswith(base.rstrip(os.sep) + os.sep):
            raise ValidationError(f"Anchor path {path!r} is outside the project at {root}; give a file inside it.")
        return os.path.relpath(full, base).replace(os.sep, "/")
    return text


def anchor_record(
    store: Store, project: Project, record_id: str, specs: Iterable[str], *, replace: bool = False
) -> list[Anchor]:
    """Anchor a record to `specs` read now from the project's files (added, or instead of its
    anchors when `replace`); all are checked before any is stored.

    Raises:
        ValidationError: a spec cannot be anchored (see `capture`).
        RecordNotFound: no such record in this project.
    """
    from agentctx_store.upkeep.anchors import add_anchors, replace_anchors

    root = root_text(project)
    captured = [capture(root, spec) for spec in specs]
    anchors = [anchor for anchor, _, _ in captured]
    with store.transaction() as conn:
        stored = (replace_anchors if replace else add_anchors)(store, project, record_id, anchors)
        record = store.get(project, record_id)
        for anchor, size, mtime in captured:
            _set_seen(conn, record.record_id, anchor, size, mtime)
    return stored


def _set_seen(conn: sqlite3.Connection, record_id: str, anchor: Anchor, size: int, mtime_ns: int) -> None:
    conn.execute(
        """UPDATE record_anchors SET size = ?, mtime_ns = ?, state = NULL, checked_at = ?
           WHERE record_id = ? AND path = ? AND line_start IS ? AND line_end IS ? AND symbol IS ?""",
        (size, mtime_ns, _now(), record_id, anchor.path, anchor.line_start, anchor.line_end, anchor.symbol),
    )


def _now() -> str:
    from agentctx_store.records import utc_now

    return utc_now()


_ROW_COLUMNS = "anchor_id, record_id, path, line_start, line_end, symbol, content_hash, size, mtime_ns"


class _Row:
    __slots__ = (
        "anchor_id",
        "record_id",
        "path",
        "line_start",
        "line_end",
        "symbol",
        "content_hash",
        "size",
        "mtime_ns",
    )

    def __init__(self, row: Sequence[object]) -> None:
        for name, value in zip(self.__slots__, row, strict=True):
            setattr(self, name, value)


def _state(root: str, row: _Row, stats: dict[str, os.stat_result | None]) -> tuple[str | None, os.stat_result | None]:
    """(None | CHANGED | MISSING, the file's stat) for one anchor row. Only a file that is not
    there is missing; one this user cannot read counts as unchecked (None, no stat)."""
    info = stats.get(row.path, False)
    if info is False:
        try:
            info = os.stat(os.path.join(root, row.path))
        except (FileNotFoundError, NotADirectoryError):
            info = None
        except OSError:
            return None, None
        stats[row.path] = info
    if info is None:
        return MISSING, None
    if row.size == info.st_size and row.mtime_ns == info.st_mtime_ns:
        return None, info
    try:
        digest = _digest(os.path.join(root, row.path), row.line_start, row.line_end, row.symbol)  # type: ignore[arg-type]
    except (FileNotFoundError, NotADirectoryError):
        return MISSING, None
    except (OSError, UnicodeError):
        return None, None
    return (None if digest == row.content_hash else CHANGED), info


def _rows(store: Store, record_ids: Sequence[str]) -> list[_Row]:
    rows: list[_Row] = []
    for start in range(0, len(record_ids), 500):
        chunk = list(record_ids[start : start + 500])
        sql = (
            f"SELECT {_ROW_COLUMNS} FROM record_anchors WHERE record_id IN ({', '.join('?' * len(chunk))}) "
            "ORDER BY anchor_id"
        )
        rows += [_Row(row) for row in store.conn.execute(sql, chunk)]
    return rows


def _group(rows: Iterable[_Row], states: dict[int, str | None]) -> dict[str, Staleness]:
    by_record: dict[str, list[tuple[_Row, str | None]]] = {}
    for index, row in enumerate(rows):
        if index in states:
            by_record.setdefault(row.record_id, []).append((row, states[index]))
    found: dict[str, Staleness] = {}
    for record_id, pairs in by_record.items():
        changed = _unique(row.path for row, state in pairs if state == CHANGED)
        missing = _unique(row.path for row, state in pairs if state == MISSING)
        if changed or missing:
            every_gone = all(state == MISSING for _, state in pairs)
            found[record_id] = Staleness(record_id=record_id, changed=changed, missing=missing, all_missing=every_gone)
    return found


def _unique(paths: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(paths))


def check(
    store: Store, project: Project, record_ids: Sequence[str], *, max_files: int = MAX_FILES
) -> dict[str, Staleness]:
    """The records among `record_ids` whose evidence moved, checked against the files now.

    Stats at most `max_files` distinct files (anchors beyond them count as unchecked, i.e.
    fresh, and a record with an unchecked anchor is never `all_missing`); hashes only files whose
    size or mtime differ from when they last matched. Reads the store, writes nothing."""
    if not record_ids:
        return {}
    rows = _rows(store, record_ids)
    if not rows:
        return {}
    root = root_text(project)
    if not _checkable(root):
        return {}
    stats: dict[str, os.stat_result | None] = {}
    states: dict[int, str | None] = {}
    for index, row in enumerate(rows):
        if row.path not in stats and len(stats) >= max_files:
            continue
        states[index] = _state(root, row, stats)[0]
    found = _group(rows, states)
    unchecked = {row.record_id for index, row in enumerate(rows) if index not in states}
    for record_id in unchecked & found.keys():
        old = found[record_id]
        found[record_id] = Staleness(record_id=record_id, changed=old.changed, missing=old.missing, all_missing=False)
    return found


class Checker:
    """`check` bound to a store and project: what an injecting path hands to `compose_injection`."""

    __slots__ = ("max_files", "project", "store")

    def __init__(self, store: Store, project: Project, *, max_files: int = MAX_FILES) -> None:
        self.store, self.project, self.max_files = store, project, max_files

    def __call__(self, record_ids: Sequence[str]) -> dict[str, Staleness]:
        return check(self.store, self.project, record_ids, max_files=self.max_files)


@frozen
class StaleRecord:
    """A current record whose anchors moved, for `agentctx stale`: the record, what moved, and
    for each symbol that left its file, the files that define it now (offered as re-anchors)."""

    record: Record
    staleness: Staleness
    anchors: list[Anchor] = field(default_factory=list)
    moved: dict[str, list[str]] = field(default_factory=dict)  # `PATH:SYMBOL` → [`NEWPATH:SYMBOL`, …]


def scan(store: Store, project: Project, *, follow: bool = False, write: bool = True) -> list[StaleRecord]:
    """Check every anchored current record of the project, oldest first; the stale ones.

    With `write`, each anchor's state is stored (`changed`, `missing`, or NULL) and anchors whose
    text still matches get the file's current size and mtime, so the next prompt only stats.
    With `follow`, a symbol no longer defined where it was is looked for in the project (`moved`).
    """
    from agentctx_store.upkeep.anchors import anchored_records

    root = root_text(project)
    if not _checkable(root):
        return []
    stats: dict[str, os.stat_result | None] = {}
    result: list[StaleRecord] = []
    updates: list[tuple[int, str | None, os.stat_result | None]] = []
    for record, anchors in anchored_records(store, project):
        if record.project_id != project.project_id:
            continue
        rows = _rows(store, [record.record_id])
        states = {index: _state(root, row, stats) for index, row in enumerate(rows)}
        updates += [(row.anchor_id, *states[index]) for index, row in enumerate(rows)]  # type: ignore[misc]
        found = _group(rows, {index: state for index, (state, _) in states.items()})
        if record.record_id not in found:
            continue
        moved: dict[str, list[str]] = {}
        if follow:
            for index, row in enumerate(rows):
                if row.symbol and states[index][0] is not None:
                    places = find_symbol(root, row.symbol, skip=row.path if states[index][0] == MISSING else None)
                    places = [place for place in places if place != row.path or states[index][0] == MISSING]
                    if places and row.path in places:
                        continue  # still defined where it was: changed in place, not moved
                    if places:
                        moved[f"{row.path}:{row.symbol}"] = [f"{place}:{row.symbol}" for place in places]
        result.append(StaleRecord(record=record, staleness=found[record.record_id], anchors=anchors, moved=moved))
    if write and updates:
        _store_states(store, updates)
    return result


def note_edit(store: Store, project: Project, path: str) -> int:
    """A tool edited `path` (project-relative): re-check the anchors on it and store their state,
    so `stale`, `status` and the digest show its records need a look. Returns how many current
    records anchored to it no longer match. Inside the caller's transaction; no file but `path`
    is read, and only when its stat moved."""
    rows = [
        _Row(row)
        for row in store.conn.execute(
            f"""SELECT {_ROW_COLUMNS} FROM record_anchors
                WHERE project_id = ? AND path = ?
                  AND record_id IN (SELECT id FROM records WHERE superseded_at IS NULL)""",
            (project.project_id, path),
        )
    ]
    root = root_text(project)
    if not rows or not _checkable(root):
        return 0
    stats: dict[str, os.stat_result | None] = {}
    updates = []
    stale: set[str] = set()
    for row in rows:
        state, info = _state(root, row, stats)
        updates.append((row.anchor_id, state, info))
        if state is not None:
            stale.add(row.record_id)
    _store_states(store, updates)
    return len(stale)


def _store_states(store: Store, updates: list[tuple[int, str | None, os.stat_result | None]]) -> None:
    import sqlite3

    now = _now()
    try:
        with store.transaction() as conn:
            for anchor_id, state, info in updates:
                if state is None and info is not None:
                    conn.execute(
                        "UPDATE record_anchors SET size = ?, mtime_ns = ?, state = NULL, checked_at = ? WHERE anchor_id = ?",
                        (info.st_size, info.st_mtime_ns, now, anchor_id),
                    )
                else:
                    conn.execute(
                        "UPDATE record_anchors SET state = ?, checked_at = ? WHERE anchor_id = ?",
                        (state, now, anchor_id),
                    )
    except sqlite3.OperationalError:  # read-only or locked: the states are a cache
        return


def counts(store: Store, project: Project) -> tuple[int, int]:
    """(current records with a changed or missing anchor, those of them whose anchors are all
    gone), as the last `scan` stored them: no file is read."""
    row = store.conn.execute(
        """SELECT count(*), coalesce(sum(gone), 0) FROM (
               SELECT a.record_id, min(coalesce(a.state, '')) = 'missing' AS gone
               FROM record_anchors a JOIN records r ON r.id = a.record_id
               WHERE a.project_id = ? AND r.superseded_at IS NULL
               GROUP BY a.record_id HAVING max(a.state IS NOT NULL) = 1)""",
        (project.project_id,),
    ).fetchone()
    return int(row[0] or 0), int(row[1] or 0)


def confirm(store: Store, project: Project, record_id: str, specs: Sequence[str] = ()) -> list[Anchor]:
    """The fact still holds: re-hash the record's anchors from the files as they are now, dropping
    anchors whose file or symbol is gone; or, with `specs`, anchor it to those instead (a
    re-anchor, e.g. to where a symbol moved). Returns the anchors it keeps.

    Raises:
        RecordNotFound: no such record in this project.
        ValidationError: a spec cannot be anchored.
    """
    from agentctx_store.upkeep.anchors import anchors_of

    if specs:
        return anchor_record(store, project, record_id, specs, replace=True)
    kept = still_there(project, [format_spec(anchor) for anchor in anchors_of(store, project, record_id)])
    return anchor_record(store, project, record_id, kept, replace=True)  # gone ones are dropped


def still_there(project: Project, specs: Iterable[str]) -> list[str]:
    """The specs that can still be anchored now (their file, range or symbol is there)."""
    root = root_text(project)
    kept = []
    for spec in specs:
        try:
            capture(root, spec)
        except ValidationError:
            continue
        kept.append(spec)
    return kept


def anchor_from_mentions(store: Store, project: Project, record_ids: Iterable[str], files: Iterable[str]) -> int:
    """Anchor records to the files they name among `files` (project-relative paths, e.g. those a
    session edited): to a symbol the record names (`` `name` `` or `name()`) that the file
    defines, else to the whole file when it is small. Records that already have anchors are
    left alone. Returns how many anchors were added. Offline (extraction), not the prompt path."""
    import re

    from agentctx_store.upkeep.anchors import anchors_of

    names = [name for name in dict.fromkeys(files) if name and not os.path.isabs(name)]
    if not names:
        return 0
    root = root_text(project)
    added = 0
    for record_id in record_ids:
        record = store.get(project, record_id)
        if record.scope != "project" or anchors_of(store, project, record_id):
            continue
        text = f"{record.title}\n{record.body}"
        symbols = set(re.findall(r"`([A-Za-z_][\w.]*)(?:\(\))?`", text)) | set(
            re.findall(r"\b([A-Za-z_]\w*)\(\)", text)
        )
        specs = []
        for name in names:
            base = name.rsplit("/", 1)[-1]
            if name not in text and not (base != name and "." in base and len(base) >= 6 and base in text):
                continue
            try:
                with open(os.path.join(root, name), encoding="utf-8", errors="replace") as handle:
                    content = handle.read()
            except OSError:
                continue
            defined = [symbol for symbol in sorted(symbols) if symbol_block(content, symbol) is not None]
            specs += [f"{name}:{symbol}" for symbol in defined]
            if not defined and len(content.encode("utf-8", errors="replace")) <= WHOLE_FILE_BYTES:
                specs.append(name)
        if specs:
            added += len(anchor_record(store, project, record.record_id, specs))
    return added


def find_symbol(root: str, symbol: str, *, skip: str | None = None) -> list[str]:
    """Project-relative paths of text files under `root` that define `symbol` (see
    `symbol_block`), at most FOLLOW_MAX_FILES files read, in path order; `skip` is left out."""
    name = symbol.rpartition(".")[2]
    found: list[str] = []
    seen = 0
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for file_name in sorted(files):
            seen += 1
            if seen > FOLLOW_MAX_FILES:
                return found
            full = os.path.join(directory, file_name)
            relative = os.path.relpath(full, root).replace(os.sep, "/")
            if relative == skip:
                continue
            try:
                if os.path.getsize(full) > 4 * WHOLE_FILE_BYTES:
                    continue
                with open(full, "rb") as handle:
                    data = handle.read()
            except OSError:
                continue
            if b"\0" in data[:1024] or name.encode() not in data:
                continue
            if symbol_block(data.decode("utf-8", errors="replace"), name) is not None:
                found.append(relative)
    return found
