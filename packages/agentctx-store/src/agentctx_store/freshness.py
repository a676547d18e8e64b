"""Freshness: does the evidence a record was based on (its anchors) still say what it said?

A record's anchors (`agentctx_store.anchors`) name a project file, optionally a line range or a
symbol, and the hash of what that covered when the record was made. Here, the part the hooks and
the injecting paths run:
  - `capture` turns `PATH`, `PATH:START-END` or `PATH:SYMBOL` into an anchor by reading the file
    (the whole file when small, else the range or the symbol's block), with the file's size and
    mtime, so later checks can `stat` instead of hashing; `anchor_record` stores a record's;
  - `check` is what the injecting paths call (`agentctx_store.inject.compose_injection` through a
    `Checker`): per record, which anchors changed or are gone. It stats at most MAX_FILES files
    per call and hashes a file only when its size or mtime moved since it last matched; it
    writes nothing, so it costs a prompt no write;
  - `note_edit` re-checks the anchors on a file a tool just edited (the capture hook).

The offline half (scanning a whole project, confirming, re-anchoring, finding a symbol that
moved) is `agentctx_store.stale`. A core module (docs/architecture.md): `hashlib` is
imported only when a file must be hashed.
"""

from __future__ import annotations

import os

from agentctx_store._frozen import field, frozen
from agentctx_store.bounded import Refused, Unreadable
from agentctx_store.errors import ValidationError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Sequence

    from agentctx_store.anchors import Anchor
    from agentctx_store.projects import Project
    from agentctx_store.store import Store

CHANGED = "changed"
MISSING = "missing"
# Files a single check stats (a prompt shows at most three records; each may name a few files).
MAX_FILES = 8
# A file up to this size is anchored whole when no range or symbol is given; a larger one needs
# a range or a symbol (hashing it on every change would cost the prompt hook too much).
WHOLE_FILE_BYTES = 256 * 1024
# A record with a changed anchor keeps this share of its score: a fresh record wins a tie.
STALE_FACTOR = 0.8
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


def _read(root: str, path: str) -> str:
    """An anchored file's text: a regular file inside the project's real tree, bounded
    (`bounded.read_repo_text`): a FIFO or a link out of the repository is an unreadable anchor,
    never a hung prompt or another file's content.

    Raises:
        OSError: missing, unreadable, or refused (`bounded.Refused`).
    """
    from agentctx_store.bounded import MAX_SOURCE_FILE, read_repo_text

    return read_repo_text(root, path, limit=MAX_SOURCE_FILE, errors="replace")


def _digest(root: str, path: str, line_start: int | None, line_end: int | None, symbol: str | None) -> str | None:
    from agentctx_store.anchors import content_hash

    covered = anchored_text(_read(root, path), line_start, line_end, symbol)
    return None if covered is None else content_hash(covered)


def checkable(root: str) -> bool:
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
    from agentctx_store.anchors import Anchor, content_hash, normalize_anchor_path

    raw_path, start, end, symbol = parse_spec(spec)
    path = _relative(root, raw_path)
    path = normalize_anchor_path(path)
    full = os.path.join(root, path)
    try:
        info = os.stat(full)
        text = _read(root, path)
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
    from agentctx_store.anchors import add_anchors, replace_anchors

    root = project.root
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


class AnchorRow:
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
    anchor_id: int
    record_id: str
    path: str
    line_start: int | None
    line_end: int | None
    symbol: str | None
    content_hash: str
    size: int | None
    mtime_ns: int | None

    def __init__(self, row: Sequence[object]) -> None:
        for name, value in zip(self.__slots__, row, strict=True):
            setattr(self, name, value)


def anchor_state(
    root: str, row: AnchorRow, stats: dict[str, os.stat_result | None]
) -> tuple[str | None, os.stat_result | None]:
    """(None | CHANGED | MISSING, the file's stat) for one anchor row. Only a file that is not
    there is missing; one this user cannot read counts as unchecked (None, no stat)."""
    if row.path in stats:
        info = stats[row.path]
    else:
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
        digest = _digest(root, row.path, row.line_start, row.line_end, row.symbol)
    except Refused as exc:  # every failed read (`bounded.read_repo_text`)
        if not os.path.lexists(os.path.join(root, row.path)):
            return MISSING, None  # gone since the stat
        if isinstance(exc, Unreadable) and exc.why == "unreadable":
            return None, None  # permissions, an I/O error: not known to have changed
        return CHANGED, None  # now a FIFO, a link out of the tree, too large: not the text it was
    return (None if digest == row.content_hash else CHANGED), info


def anchor_rows(store: Store, record_ids: Sequence[str]) -> list[AnchorRow]:
    rows: list[AnchorRow] = []
    for start in range(0, len(record_ids), 500):
        chunk = list(record_ids[start : start + 500])
        sql = (
            f"SELECT {_ROW_COLUMNS} FROM record_anchors WHERE record_id IN ({', '.join('?' * len(chunk))}) "
            "ORDER BY anchor_id"
        )
        rows += [AnchorRow(row) for row in store.conn.execute(sql, chunk)]
    return rows


def group_states(rows: Iterable[AnchorRow], states: dict[int, str | None]) -> dict[str, Staleness]:
    by_record: dict[str, list[tuple[AnchorRow, str | None]]] = {}
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
    rows = anchor_rows(store, record_ids)
    if not rows:
        return {}
    root = project.root
    if not checkable(root):
        return {}
    stats: dict[str, os.stat_result | None] = {}
    states: dict[int, str | None] = {}
    for index, row in enumerate(rows):
        if row.path not in stats and len(stats) >= max_files:
            continue
        states[index] = anchor_state(root, row, stats)[0]
    found = group_states(rows, states)
    unchecked = {row.record_id for index, row in enumerate(rows) if index not in states}
    for record_id in unchecked & found.keys():
        old = found[record_id]
        found[record_id] = Staleness(record_id=record_id, changed=old.changed, missing=old.missing, all_missing=False)
    return found


FRESH = "fresh"
UNCHECKED = "unchecked"


def anchor_report(store: Store, project: Project, record_ids: Sequence[str]) -> dict[str, list[dict[str, object]]]:
    """Every anchor of `record_ids` with its state now, by record: `{"anchor": PATH[:LINES|:SYMBOL],
    "path", "line_start", "line_end", "symbol", "state"}`, the state `fresh`, `changed`,
    `missing`, or `unchecked` (the project folder is not here, or the file cannot be read).
    What `show` and the dashboard print; reads the files, writes nothing."""
    from agentctx_store.anchors import Anchor

    rows = anchor_rows(store, record_ids)
    root = project.root
    stats: dict[str, os.stat_result | None] = {}
    found: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        state: str = UNCHECKED
        if checkable(root):
            moved, info = anchor_state(root, row, stats)
            state = moved or (FRESH if info is not None else UNCHECKED)
        anchor = Anchor(
            path=row.path,
            content_hash=row.content_hash,
            line_start=row.line_start,
            line_end=row.line_end,
            symbol=row.symbol,
        )
        found.setdefault(row.record_id, []).append(
            {
                "anchor": format_spec(anchor),
                "path": row.path,
                "line_start": row.line_start,
                "line_end": row.line_end,
                "symbol": row.symbol,
                "state": state,
            }
        )
    return found


class Checker:
    """`check` bound to a store and project: what an injecting path hands to `compose_injection`."""

    __slots__ = ("max_files", "project", "store")

    def __init__(self, store: Store, project: Project, *, max_files: int = MAX_FILES) -> None:
        self.store, self.project, self.max_files = store, project, max_files

    def __call__(self, record_ids: Sequence[str]) -> dict[str, Staleness]:
        return check(self.store, self.project, record_ids, max_files=self.max_files)


def note_edit(store: Store, project: Project, path: str) -> int:
    """A tool edited `path` (project-relative): re-check the anchors on it and store their state,
    so `stale`, `status` and the digest show its records need a look. Returns how many current
    records anchored to it no longer match. Inside the caller's transaction; no file but `path`
    is read, and only when its stat moved."""
    rows = [
        AnchorRow(row)
        for row in store.conn.execute(
            f"""SELECT {_ROW_COLUMNS} FROM record_anchors
                WHERE project_id = ? AND path = ?
                  AND record_id IN (SELECT id FROM records WHERE superseded_at IS NULL)""",
            (project.project_id, path),
        )
    ]
    root = project.root
    if not rows or not checkable(root):
        return 0
    stats: dict[str, os.stat_result | None] = {}
    updates: list[tuple[int, str | None, os.stat_result | None]] = []
    stale: set[str] = set()
    for row in rows:
        state, info = anchor_state(root, row, stats)
        updates.append((row.anchor_id, state, info))
        if state is not None:
            stale.add(row.record_id)
    store_states(store, updates)
    return len(stale)


def store_states(store: Store, updates: list[tuple[int, str | None, os.stat_result | None]]) -> None:
    import _sqlite3 as sqlite3  # not the `sqlite3` package (agentctx_store/db.py)

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
