"""The store: every read and write of records and their chains; entities and edges
(`graph.Graph`) and sessions (`sessions.Sessions`) are its other two parts.

Reads are scoped by construction: each method takes the `Project` it acts for and sees only
that project's records plus `_global` ones. Writes run in `BEGIN IMMEDIATE` transactions, so
many short-lived processes (hooks, MCP, CLI) can write at once under WAL.
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # not the `sqlite3` package (db.py)
from os import PathLike, fspath

from agentctx_store import paths
from agentctx_store.db import connect
from agentctx_store.errors import AmbiguousIdError, NotHeadError, RecordNotFound, ValidationError
from agentctx_store.graph import Graph
from agentctx_store.projects import GLOBAL_PROJECT_ID, Project
from agentctx_store.records import (
    CONFIDENCES,
    SCOPES,
    NewRecord,
    Record,
    check_choice,
    check_text,
    check_type,
    normalize_time,
    supersession_error,
    utc_now,
    validate,
)
from agentctx_store.rows import RECORD_COLUMNS, record_filters, row_to_record, visible_namespaces
from agentctx_store.sessions import Sessions
from agentctx_store.ulid import ALPHABET as _ID_ALPHABET
from agentctx_store.ulid import new_ulid

MIN_ID_PART = 6  # the shortest part of an id `Store.resolve_id` takes, as git's shortest abbreviation is 4

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping, Sequence
    from typing import Any, Protocol

    class ExecutesMany(Protocol):
        """A connection `Store.mark_embedded` can write through (sqlite3's or apsw's)."""

        def executemany(self, statement: str, bindings: Iterable[Sequence[Any]], /) -> object: ...


class Store(Graph, Sessions):
    """One open connection to the store file. Use as a context manager or call `close()`."""

    def __init__(self, conn: sqlite3.Connection, path: str) -> None:
        self.conn = conn
        self.path = path
        self.dirty: set[str] = set()  # projects changed through this connection (`digest.refreshing`)

    @classmethod
    def open(cls, path: str | PathLike[str] | None = None, *, create: bool = True, readonly: bool = False) -> Store:
        """Open the store (default `$AGENTCTX_HOME/agentctx.db`), creating it if needed;
        `readonly` opens an existing one for reading only (any write then fails).

        Raises:
            StoreError: the file is not ours, corrupt, too new, or not writable.
        """
        target = paths.db_path() if path is None else fspath(path)
        return cls(connect(target, create=create, readonly=readonly), target)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- projects ---------------------------------------------------------------------

    def remember_project(self, project: Project) -> None:
        """Keep the project's name and root so listings can show more than a hash."""
        if project.project_id == GLOBAL_PROJECT_ID:
            return
        now = utc_now()
        with self.transaction() as conn:
            conn.execute(
                """INSERT INTO projects(project_id, name, root, remote, first_seen, last_seen)
                   VALUES (?, ?, ?, ?, ?, ?)
                   ON CONFLICT(project_id) DO UPDATE SET name = excluded.name, root = excluded.root,
                       remote = excluded.remote, last_seen = excluded.last_seen""",
                (project.project_id, project.name, str(project.root), project.remote, now, now),
            )

    def list_projects(self) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            """SELECT p.project_id, p.name, p.root, p.remote, p.first_seen, p.last_seen,
                      (SELECT max(recorded_at) FROM records r WHERE r.project_id = p.project_id) AS last_record,
                      (SELECT max(started_at) FROM sessions s WHERE s.project_id = p.project_id) AS last_session
               FROM projects p ORDER BY p.last_seen DESC"""
        ).fetchall()
        return [dict(row) for row in rows]

    # -- writing records ------------------------------------------------------------

    def add(self, project: Project, new: NewRecord, *, supersedes: str | None = None) -> Record:
        """Insert a record; with `supersedes`, atomically retire that record
        (docs/contracts.md#supersession).

        Raises:
            ValidationError: the record breaks the contract.
            RecordNotFound: `supersedes` names no record this project can see.
            NotHeadError: `supersedes` names a record that is already superseded.
        """
        new = validate(new)
        now = utc_now()
        owner = GLOBAL_PROJECT_ID if new.scope == "global" else project.project_id
        record_id = new_ulid()
        valid_from = normalize_time(new.valid_from) if new.valid_from else now
        with self.transaction():
            if supersedes is not None:
                old = self._require_head(project, supersedes)
                if (why := supersession_error(old.type, old.key, new.type, new.key)) is not None:
                    raise ValidationError(f"Record {supersedes} is a {old.type}; {why}. Use type {old.type!r}.")
            self.insert_row(
                {
                    "id": record_id,
                    "project_id": owner,
                    "type": new.type,
                    "title": new.title,
                    "body": new.body,
                    "scope": new.scope,
                    "pinned": int(new.pinned),
                    "confidence": new.confidence,
                    "reinforce_count": new.reinforce_count,
                    "valid_from": valid_from,
                    "recorded_at": now,
                    "superseded_at": None,
                    "superseded_by": None,
                    "access_count": 0,
                    "last_accessed": None,
                    "score": 1.0,
                    "claudemd_drift_score": 0.0,
                    "source": new.source,
                    "session_id": new.session_id,
                    "pending_embedding": 1,
                    "key": new.key,
                    "updated_at": None,
                }
            )
            if supersedes is not None:
                self._mark_superseded(supersedes, record_id, now)
        self.dirty.add(owner)
        if project.project_id != GLOBAL_PROJECT_ID:
            self.remember_project(project)
        return self.get(project, record_id)

    def supersede(
        self,
        project: Project,
        old_id: str,
        *,
        body: str,
        title: str | None = None,
        rationale: str | None = None,
        source: str = "cli",
        confidence: str = "explicit",
        session_id: str | None = None,
        record_type: str | None = None,
    ) -> tuple[Record, Record]:
        """Replace the current head `old_id` with a new record of the same scope, and of the same
        type unless `record_type` names another (a convention replaced by a decision).

        The rationale, when given, is appended to the new body. Returns (old, new).

        Raises:
            RecordNotFound: no such record in this project.
            NotHeadError: `old_id` is already superseded; the error names the current head.
        """
        old = self._require_head(project, old_id)
        text = body.strip()
        if rationale and rationale.strip():
            text = f"{text}\n\nWhy: {rationale.strip()}"
        new = NewRecord(
            type=record_type or old.type,
            title=(title or old.title),
            body=text,
            scope=old.scope,
            confidence=confidence,
            source=source,
            session_id=session_id,
            pinned=old.pinned,
            key=old.key,
        )
        created = self.add(project, new, supersedes=old_id)
        return self.get(project, old_id, include_superseded=True), created

    def _require_head(self, project: Project, record_id: str) -> Record:
        old = self.get(project, record_id, include_superseded=True)
        if old.superseded_at is not None:
            head = self.head_of(project, record_id)
            raise NotHeadError(
                f"Record {record_id} is already superseded by {old.superseded_by}; supersede the current head "
                f"{head.record_id if head else old.superseded_by} instead.",
                head_id=head.record_id if head else old.superseded_by,
            )
        return old

    def _mark_superseded(self, old_id: str, new_id: str, when: str) -> None:
        if not self.mark_superseded(old_id, by=new_id, when=when):  # lost a race with another writer
            raise NotHeadError(f"Record {old_id} was superseded by another process meanwhile; retry.", head_id=None)

    def edit(
        self,
        project: Project,
        record_id: str,
        *,
        title: str | None = None,
        body: str | None = None,
        type: str | None = None,
        confidence: str | None = None,
        scope: str | None = None,
        valid_from: str | None = None,
    ) -> Record:
        """Correct a record in place (a typo, a wrong type), as opposed to superseding a fact.

        Raises:
            RecordNotFound, ValidationError.
        """
        current = self.get(project, record_id, include_superseded=True)
        new_title, new_body = check_text(
            title if title is not None else current.title, body if body is not None else current.body
        )
        new_type = check_type(type) if type is not None else current.type
        new_conf = check_choice("confidence", confidence, CONFIDENCES) if confidence is not None else current.confidence
        new_scope = check_choice("scope", scope, SCOPES) if scope is not None else current.scope
        owner = current.project_id
        if new_scope != current.scope:
            owner = GLOBAL_PROJECT_ID if new_scope == "global" else project.project_id
        new_valid = normalize_time(valid_from) if valid_from else current.valid_from
        fields = {"title": new_title, "body": new_body, "type": new_type, "confidence": new_conf, "scope": new_scope}
        self.rewrite(record_id, fields | {"project_id": owner, "valid_from": new_valid}, when=utc_now())
        self.dirty.update({owner, current.project_id})
        return self.get(project, record_id, include_superseded=True)

    def pin(self, project: Project, record_id: str, pinned: bool = True) -> Record:
        self.get(project, record_id, include_superseded=True)
        with self.transaction() as conn:
            conn.execute(
                "UPDATE records SET pinned = ?, updated_at = ? WHERE id = ?", (int(pinned), utc_now(), record_id)
            )
        self.dirty.add(self.get(project, record_id).project_id)
        return self.get(project, record_id, include_superseded=True)

    def reinforce(self, project: Project, record_id: str, *, threshold: int, explicit: bool = False) -> Record:
        """Count one more sighting of an inferred record; at `threshold` (or on an explicit
        statement) it becomes `reinforced` (one-way: docs/contracts.md#confidence)."""
        current = self.get(project, record_id)
        count, confidence = _sighting(current, threshold=threshold, explicit=explicit)
        with self.transaction() as conn:
            conn.execute(
                "UPDATE records SET reinforce_count = ?, confidence = ?, updated_at = ? WHERE id = ?",
                (count, confidence, utc_now(), record_id),
            )
        self.dirty.add(current.project_id)
        return self.get(project, record_id)

    def delete(self, project: Project, record_id: str) -> Record:
        """Remove one record for good: its row, its FTS entry, its edges and entity links.

        Its chain is closed over the gap: records it superseded now point at its successor,
        or, when it was the current head, become current again (deleting a wrong fact brings
        back the one it had replaced).

        Raises:
            RecordNotFound: no such record in this project.
        """
        doomed = self.get(project, record_id, include_superseded=True)
        with self.transaction() as conn:
            predecessors = [
                row[0] for row in conn.execute("SELECT id FROM records WHERE superseded_by = ?", (record_id,))
            ]
            if doomed.superseded_by is None:
                conn.execute(
                    "UPDATE records SET superseded_by = NULL, superseded_at = NULL WHERE superseded_by = ?",
                    (record_id,),
                )
            else:
                conn.execute(
                    "UPDATE records SET superseded_by = ? WHERE superseded_by = ?", (doomed.superseded_by, record_id)
                )
                for predecessor in predecessors:
                    conn.execute(
                        "INSERT OR IGNORE INTO edges(id, from_id, to_id, rel_type) VALUES (?, ?, ?, 'supersedes')",
                        (new_ulid(), doomed.superseded_by, predecessor),
                    )
            conn.execute("DELETE FROM edges WHERE from_id = ? OR to_id = ?", (record_id, record_id))
            conn.execute("DELETE FROM record_entities WHERE record_id = ?", (record_id,))
            conn.execute("DELETE FROM records WHERE id = ?", (record_id,))
        self.dirty.add(doomed.project_id)
        return doomed

    # -- record writes of the other parts of agentctx ---------------------------------
    # Import, consolidation, drift, scoring and the hooks' accounting change records too; the
    # SQL that does it lives here, beside `add` and `supersede`, so the rules of a record's
    # time axes (`valid_from`, `recorded_at`, `superseded_at`/`superseded_by`) and of its
    # derived columns are written once. Each method joins the caller's transaction if any.

    def insert_row(self, row: Mapping[str, object]) -> None:
        """Write one record row exactly as given, every column of `rows.RECORD_COLUMNS` named:
        an imported record keeps its id, times and supersession. The caller has checked it
        against the record contract (`add` and the import do).

        Raises:
            ValueError: a column is missing or unknown.
        """
        _check_columns(row, _COLUMN_NAMES, exact=True)
        with self.transaction() as conn:
            conn.execute(
                f"INSERT INTO records ({RECORD_COLUMNS}) VALUES ({', '.join('?' * len(_COLUMN_NAMES))})",
                [row[column] for column in _COLUMN_NAMES],
            )

    def rewrite(self, record_id: str, fields: Mapping[str, object], *, when: str) -> None:
        """Change a record in place, as a correction (`edit`, an imported hand edit) and not a
        new fact: `fields` are columns of `REWRITABLE`; `updated_at` becomes `when` and the
        record is embedded again.

        Raises:
            ValueError: a column is not one of `REWRITABLE`.
        """
        _check_columns(fields, REWRITABLE)
        assignments = "".join(f"{column} = ?, " for column in fields)
        with self.transaction() as conn:
            conn.execute(
                f"UPDATE records SET {assignments}updated_at = ?, pending_embedding = 1 WHERE id = ?",
                [*fields.values(), when, record_id],
            )

    def mark_superseded(self, record_id: str, *, by: str | None, when: str) -> bool:
        """End the current record `record_id` at `when` (`superseded_at`): replaced by the record
        `by` (linked by a `supersedes` edge), or by nothing (retired). False, and the record
        left as it is, when it was no longer current; the edge is written either way."""
        with self.transaction() as conn:
            cursor = conn.execute(
                "UPDATE records SET superseded_at = ?, superseded_by = ? WHERE id = ? AND superseded_at IS NULL",
                (when, by, record_id),
            )
            if by is not None:
                conn.execute(
                    "INSERT OR IGNORE INTO edges(id, from_id, to_id, rel_type) VALUES (?, ?, ?, 'supersedes')",
                    (new_ulid(), by, record_id),
                )
        return cursor.rowcount == 1

    def merge(self, keep: Record, drop: Record, *, threshold: int, when: str) -> None:
        """Consolidation found that `drop` states the fact `keep` states: `drop` is superseded
        by `keep` at `when`, and counts as one more sighting of `keep` (`reinforce`'s rule, a
        `drop` that is not `inferred` counting as an explicit statement). Neither text changed,
        so neither gets a new `updated_at`."""
        count, confidence = _sighting(keep, threshold=threshold, explicit=drop.confidence != "inferred")
        with self.transaction() as conn:
            self.mark_superseded(drop.record_id, by=keep.record_id, when=when)
            conn.execute(
                "UPDATE records SET reinforce_count = ?, confidence = ? WHERE id = ?",
                (count, confidence, keep.record_id),
            )

    def promote_reinforced(self, threshold: int) -> int:
        """Make every current `inferred` record seen at least `threshold` times `reinforced`
        (after the threshold was lowered); never the other way (docs/contracts.md#confidence).
        Returns how many."""
        with self.transaction() as conn:
            cursor = conn.execute(
                """UPDATE records SET confidence = 'reinforced' WHERE confidence = 'inferred'
                   AND reinforce_count >= ? AND superseded_at IS NULL""",
                (threshold,),
            )
            return cursor.rowcount

    def count_access(self, record_ids: Sequence[str]) -> None:
        """One more access of each record, now (shown in full by a hook, read by id): feeds
        the derived score (docs/consolidation.md#scores)."""
        now = utc_now()
        with self.transaction() as conn:
            conn.executemany(
                "UPDATE records SET access_count = access_count + 1, last_accessed = ? WHERE id = ?",
                [(now, record_id) for record_id in record_ids],
            )

    def set_scores(self, scores: Mapping[str, float]) -> None:
        """Store the derived `score` of these records (`upkeep.scoring`), by id."""
        with self.transaction() as conn:
            conn.executemany(
                "UPDATE records SET score = ? WHERE id = ?", [(score, record_id) for record_id, score in scores.items()]
            )

    def set_drift_scores(self, project: Project, scores: Mapping[str, float]) -> int:
        """Store `claudemd_drift_score` (derived) on the project's own records: `scores` by id,
        0.0 on every other decision and convention of the project. Returns how many rows changed."""
        with self.transaction() as conn:
            before = conn.total_changes
            conn.execute(
                """UPDATE records SET claudemd_drift_score = 0.0 WHERE project_id = ?
                   AND type IN ('decision', 'convention') AND claudemd_drift_score != 0.0""",
                (project.project_id,),
            )
            conn.executemany(
                "UPDATE records SET claudemd_drift_score = ? WHERE id = ? AND project_id = ?",
                [(score, record_id, project.project_id) for record_id, score in scores.items()],
            )
            return conn.total_changes - before

    @staticmethod
    def mark_embedded(conn: ExecutesMany, record_ids: Sequence[str]) -> None:
        """Clear `pending_embedding` of these records on `conn`, in the transaction that stores
        their vectors. It takes the connection because that one is the embedding phase's own
        (apsw, which loads sqlite-vec): a process may not hold a `Store` beside it."""
        conn.executemany(
            "UPDATE records SET pending_embedding = 0 WHERE id = ? AND pending_embedding != 0",
            [(record_id,) for record_id in record_ids],
        )

    # -- reading records --------------------------------------------------------------

    def get(self, project: Project, record_id: str, *, include_superseded: bool = True) -> Record:
        """One record this project can see.

        Raises:
            RecordNotFound: unknown id, or a record of another project.
        """
        row = self.conn.execute(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE id = ? AND project_id IN (?, ?)",
            (record_id.strip().upper(), *visible_namespaces(project)),
        ).fetchone()
        if row is None or (not include_superseded and row["superseded_at"] is not None):
            raise RecordNotFound(f"No record {record_id!r} in this project; `agentctx search` lists record ids.")
        return row_to_record(row)

    def resolve_id(self, project: Project, text: str) -> str:
        """The full id of the one record this project can see whose id is `text`, or starts or
        ends with it (at least MIN_ID_PART characters, any case): git's short ids, and, since a
        ULID opens with its creation time (records made together share their first ten
        characters), its random end as well. Superseded records count.

        Raises:
            RecordNotFound: no such record, or `text` is too short to be a part of an id.
            AmbiguousIdError: several records match; the message lists them.
        """
        wanted = text.strip().upper()
        namespaces = visible_namespaces(project)
        exact = self.conn.execute(
            "SELECT id FROM records WHERE id = ? AND project_id IN (?, ?)", (wanted, *namespaces)
        ).fetchone()
        if exact is not None:
            return exact[0]
        if len(wanted) < MIN_ID_PART and all(char in _ID_ALPHABET for char in wanted):
            raise RecordNotFound(
                f"No record {text!r}: give at least {MIN_ID_PART} characters of an id (its start or its end)."
            )
        if len(wanted) >= 26 or any(char not in _ID_ALPHABET for char in wanted):
            raise RecordNotFound(f"No record {text!r} in this project; `agentctx search` lists record ids.")
        rows = self.conn.execute(
            "SELECT id, type, title FROM records WHERE (substr(id, 1, ?) = ? OR substr(id, -?) = ?) "
            "AND project_id IN (?, ?) ORDER BY id LIMIT 11",
            (len(wanted), wanted, len(wanted), wanted, *namespaces),
        ).fetchall()
        if not rows:
            raise RecordNotFound(f"No record {text!r} in this project; `agentctx search` lists record ids.")
        if len(rows) > 1:
            listed = "".join(f"\n  {row[0]}  {row[1]:<10}  {row[2][:70]}" for row in rows[:10])
            more = "\n  …" if len(rows) > 10 else ""
            raise AmbiguousIdError(f"{text!r} is the start or end of several records; type more of one:{listed}{more}")
        return rows[0][0]

    def get_many(
        self, project: Project, record_ids: Sequence[str], *, touch: bool = False
    ) -> tuple[list[Record], list[str]]:
        """The records of `record_ids` this project can see, and the ids it cannot.

        With `touch`, counts the access (feeds derived scoring: docs/consolidation.md#scores).
        """
        found: list[Record] = []
        missing: list[str] = []
        for record_id in record_ids:
            try:
                found.append(self.get(project, record_id))
            except RecordNotFound:
                missing.append(record_id)
        if touch and found:
            self.count_access([record.record_id for record in found])
            found = [self.get(project, record.record_id) for record in found]
        return found, missing

    def current_records(
        self,
        project: Project,
        record_ids: Sequence[str],
        *,
        scope: str | None = None,
        types: Sequence[str] | None = None,
    ) -> dict[str, Record]:
        """The current records among `record_ids` that `project` may see under `scope`
        (`rows.visible_namespaces`), of `types` when given, by id: what a ranking made elsewhere
        (vectors, the warm service) may show. The SQL is the guard: a stale id of a superseded
        record or of another project's is left out.

        Raises:
            ValidationError: `scope` is not None, "project" or "global".
        """
        namespaces = visible_namespaces(project, scope)
        found: dict[str, Record] = {}
        for start in range(0, len(record_ids), 400):  # within SQLite's limit on bound parameters
            chunk = list(record_ids[start : start + 400])
            sql = (
                f"SELECT {RECORD_COLUMNS} FROM records WHERE id IN ({','.join('?' * len(chunk))}) "
                f"AND superseded_at IS NULL AND project_id IN ({','.join('?' * len(namespaces))})"
            )
            params: list[object] = [*chunk, *namespaces]
            if types is not None:
                sql += f" AND type IN ({','.join('?' * len(types))})"
                params.extend(types)
            for row in self.conn.execute(sql, params):
                found[row["id"]] = row_to_record(row)
        return found

    def list_records(
        self,
        project: Project,
        *,
        types: Sequence[str] | None = None,
        include_superseded: bool = False,
        scope: str | None = None,
        confidence: str | None = None,
        pinned: bool | None = None,
        limit: int | None = None,
        order: str = "recorded_at DESC",
    ) -> list[Record]:
        """Records this project may see under `scope` (`rows.visible_namespaces`: its own and
        `_global` ones by default), newest first; current only by default.

        Raises:
            ValidationError: `scope` is not None, "project" or "global".
        """
        clauses, params = record_filters(
            visible_namespaces(project, scope), types, include_superseded=include_superseded
        )
        if confidence:
            clauses.append("confidence = ?")
            params.append(confidence)
        if pinned is not None:
            clauses.append("pinned = ?")
            params.append(int(pinned))
        if order not in ("recorded_at DESC", "recorded_at ASC", "valid_from DESC"):
            raise ValueError(f"unsupported order {order!r}")
        sql = f"SELECT {RECORD_COLUMNS} FROM records WHERE {' AND '.join(clauses)} ORDER BY {order}, id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [row_to_record(row) for row in self.conn.execute(sql, params)]

    def find_by_key(self, project: Project, type: str, key: str) -> Record | None:
        """The current record of a keyed type (profile entries, the handover) with this key."""
        row = self.conn.execute(
            f"""SELECT {RECORD_COLUMNS} FROM records WHERE project_id = ? AND type = ? AND key = ?
                AND superseded_at IS NULL ORDER BY recorded_at DESC LIMIT 1""",
            (project.project_id, type, key),
        ).fetchone()
        return row_to_record(row) if row else None

    def history(self, project: Project, record_id: str) -> list[Record]:
        """The whole supersession chain through `record_id`, oldest first."""
        start = self.get(project, record_id)
        chain = [start]
        seen = {start.record_id}
        current = start
        while True:  # walk back: who did this one supersede?
            row = self.conn.execute(
                f"SELECT {RECORD_COLUMNS} FROM records WHERE superseded_by = ? AND project_id IN (?, ?) ORDER BY recorded_at DESC LIMIT 1",
                (current.record_id, *visible_namespaces(project)),
            ).fetchone()
            if row is None or row["id"] in seen:
                break
            current = row_to_record(row)
            seen.add(current.record_id)
            chain.insert(0, current)
        current = start
        while current.superseded_by and current.superseded_by not in seen:  # walk forward to the head
            try:
                current = self.get(project, current.superseded_by)
            except RecordNotFound:
                break
            seen.add(current.record_id)
            chain.append(current)
        return chain

    def head_of(self, project: Project, record_id: str) -> Record | None:
        chain = self.history(project, record_id)
        heads = [record for record in chain if record.superseded_at is None]
        return heads[-1] if heads else None

    def as_of(self, project: Project, moment: str, *, types: Sequence[str] | None = None) -> list[Record]:
        """What was true at `moment`: valid by then and not yet superseded then
        (docs/contracts.md#supersession)."""
        when = normalize_time(moment)
        clauses = ["project_id IN (?, ?)", "valid_from <= ?", "(superseded_at IS NULL OR superseded_at > ?)"]
        params: list[Any] = [*visible_namespaces(project), when, when]
        if types:
            clauses.append(f"type IN ({','.join('?' * len(types))})")
            params.extend(types)
        sql = f"SELECT {RECORD_COLUMNS} FROM records WHERE {' AND '.join(clauses)} ORDER BY valid_from DESC"
        return [row_to_record(row) for row in self.conn.execute(sql, params)]

    def counts_by_type(self, project: Project, *, include_superseded: bool = False) -> dict[str, int]:
        sql = "SELECT type, count(*) FROM records WHERE project_id IN (?, ?)"
        if not include_superseded:
            sql += " AND superseded_at IS NULL"
        return {
            row[0]: row[1]
            for row in self.conn.execute(sql + " GROUP BY type ORDER BY type", visible_namespaces(project))
        }


_COLUMN_NAMES = tuple(column.strip() for column in RECORD_COLUMNS.split(","))
# The columns `Store.rewrite` may set: the fact, where it belongs, and its supersession (an
# import may state it); never the counters, scores or the time it was recorded.
REWRITABLE = frozenset(
    (
        "type",
        "title",
        "body",
        "scope",
        "project_id",
        "pinned",
        "confidence",
        "valid_from",
        "superseded_at",
        "superseded_by",
    )
)


def _check_columns(row: Mapping[str, object], allowed: Collection[str], *, exact: bool = False) -> None:
    unknown = [column for column in row if column not in allowed]
    missing = [column for column in allowed if column not in row] if exact else []
    if unknown or missing:
        raise ValueError(f"record columns: unknown {unknown}, missing {missing}")


def _sighting(record: Record, *, threshold: int, explicit: bool) -> tuple[int, str]:
    """(reinforce_count, confidence) after one more sighting of `record`: an `inferred` one
    becomes `reinforced` on an explicit statement or at `threshold` sightings (one-way)."""
    count = record.reinforce_count + 1
    if record.confidence == "inferred" and (explicit or count >= threshold):
        return count, "reinforced"
    return count, record.confidence
