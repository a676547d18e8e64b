"""Vectors of current records, through `apsw` (an SQLite that can load extensions).

With sqlite-vec loadable, vectors live in a `vec0` table `records_vec` (cosine distance) and
nearest-neighbour queries run in SQL. Without it (or with `AGENTCTX_SIMULATE_NO_SQLITE_VEC=1`), they
are float32 BLOBs in the plain table `record_vectors` and numpy does the brute force (rung 2 of
docs/contracts.md#degradation). `vector_meta` remembers which model, dimensions and backend wrote
them: any change drops the vectors and the next run rebuilds them (they are derived:
docs/contracts.md#stored-inferred-derived).

A process that opens this must not also hold a stdlib `sqlite3` connection to the same file
(docs/adr/0018-one-sqlite-library-per-process.md): consolidation closes its `Store` before and
reopens it after.
"""

from __future__ import annotations

import gc
import os
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

import apsw
import numpy as np
from agentctx_store.db import BUSY_TIMEOUT_MS
from agentctx_store.errors import StoreError
from agentctx_store.rows import RECORD_COLUMNS
from agentctx_store.store import Store

COLUMN_NAMES = [column.strip() for column in RECORD_COLUMNS.split(",")]
KNN_MAX_K = 4096  # sqlite-vec's limit on k

Binding = str | int | float | bytes | None  # what this package binds to a statement


class Connection(Protocol):
    """The part of an `apsw.Connection` the vector code calls, with the bindings it passes.

    apsw's stub types bindings and values with `collections.abc.Buffer`, which typeshed defines
    from Python 3.12 on: checked as 3.11, each of these calls would be partially unknown.
    """

    def execute(self, statements: str, bindings: Sequence[Binding] = ..., /) -> apsw.Cursor: ...

    def executemany(self, statements: str, sequenceofbindings: Iterable[Sequence[Binding]], /) -> apsw.Cursor: ...

    def get_autocommit(self) -> bool: ...

    def close(self) -> None: ...


class VectorStore:
    def __init__(self, conn: apsw.Connection, backend: str) -> None:
        self.conn: Connection = conn
        self.backend = backend  # "vec0" | "numpy"

    @classmethod
    def open(cls, db_path: Path) -> VectorStore:
        """Open the store file through apsw.

        Raises:
            StoreError: this process still holds a stdlib `sqlite3` connection to the file
                (measured: that combination corrupts the file).
        """
        refuse_if_stdlib_open(db_path)
        conn = apsw.Connection(str(db_path))
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        return cls(conn, "vec0" if _load_sqlite_vec(conn) else "numpy")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> VectorStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- transactions and meta ------------------------------------------------------

    def begin(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.conn.execute("COMMIT")

    def rollback(self) -> None:
        if not self.conn.get_autocommit():
            self.conn.execute("ROLLBACK")

    def meta(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT key, value FROM vector_meta"))

    def prepare(self, model: str, dims: int, text: str) -> bool:
        """Make the vector table match this model, backend and form of the embedded text
        (`phase.TEXT_FORM`); True when it was reset."""
        wanted = {"model": model, "dims": str(dims), "backend": self.backend, "text": text}
        current = self.meta()
        reset = any(current.get(key) != value for key, value in wanted.items())
        self.begin()
        try:
            if reset:
                self.conn.execute("DELETE FROM record_vectors")
                if self.backend == "vec0":
                    self.conn.execute("DROP TABLE IF EXISTS records_vec")
            if self.backend == "vec0":
                self.conn.execute(
                    "CREATE VIRTUAL TABLE IF NOT EXISTS records_vec USING vec0("
                    f"record_id TEXT PRIMARY KEY, embedding float[{dims}] distance_metric=cosine)"
                )
            self.conn.executemany(
                "INSERT INTO vector_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                list(wanted.items()),
            )
            self.commit()
        except BaseException:
            self.rollback()
            raise
        return reset

    # -- records ----------------------------------------------------------------------

    def current_records(self) -> list[dict[str, Any]]:
        """Every current record as a mapping (works with `row_to_record`)."""
        rows = self.conn.execute(f"SELECT {RECORD_COLUMNS} FROM records WHERE superseded_at IS NULL ORDER BY id")
        return [dict(zip(COLUMN_NAMES, row, strict=True)) for row in rows]

    # -- vectors ----------------------------------------------------------------------

    def table(self) -> str:
        return "records_vec" if self.backend == "vec0" else "record_vectors"

    def has_table(self) -> bool:
        row = self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (self.table(),)).fetchone()
        return row is not None

    def stored_ids(self) -> set[str]:
        if not self.has_table():
            return set()
        return {row[0] for row in self.conn.execute(f"SELECT record_id FROM {self.table()}")}

    def put(self, record_ids: Sequence[str], vectors: np.ndarray) -> None:
        """Store vectors and clear `pending_embedding`; call inside `begin()`/`commit()`."""
        table = self.table()
        self.conn.executemany(f"DELETE FROM {table} WHERE record_id = ?", [(rid,) for rid in record_ids])
        self.conn.executemany(
            f"INSERT INTO {table}(record_id, embedding) VALUES (?, ?)",
            [(rid, np.asarray(vector, dtype="<f4").tobytes()) for rid, vector in zip(record_ids, vectors, strict=True)],
        )
        Store.mark_embedded(self.conn, record_ids)

    def delete(self, record_ids: Iterable[str]) -> int:
        ids = [(rid,) for rid in record_ids]
        if ids:
            self.conn.executemany(f"DELETE FROM {self.table()} WHERE record_id = ?", ids)
        return len(ids)

    def matrix(self, record_ids: Sequence[str]) -> tuple[list[str], np.ndarray]:
        """The stored vectors of these ids (those that have one), as a row matrix."""
        found: dict[str, bytes] = {}
        table = self.table()
        if not self.has_table():
            return [], np.zeros((0, 0), dtype=np.float32)
        for start in range(0, len(record_ids), 500):
            chunk = list(record_ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            found.update(
                self.conn.execute(f"SELECT record_id, embedding FROM {table} WHERE record_id IN ({marks})", chunk)
            )
        ids = [rid for rid in record_ids if rid in found]
        if not ids:
            return [], np.zeros((0, 0), dtype=np.float32)
        return ids, np.vstack([np.frombuffer(found[rid], dtype="<f4") for rid in ids])

    def nearest(self, query: np.ndarray, record_ids: Sequence[str]) -> list[str]:
        """`record_ids` ordered by cosine similarity to `query`, nearest first.

        With vec0: its KNN query (k is capped at 4096 by sqlite-vec) gives the nearest of all
        vectors; the wanted ids among them come first, in that order, and the wanted ids beyond
        its reach follow by exact similarity. The result is the same total order numpy gives.
        """
        if not record_ids:
            return []
        ordered: list[str] = []
        if self.backend == "vec0" and self.has_table():
            wanted = set(record_ids)
            row = self.conn.execute("SELECT count(*) FROM records_vec").fetchone()
            count = row[0] if row else 0
            rows = self.conn.execute(
                "SELECT record_id, distance FROM records_vec WHERE embedding MATCH ? AND k = ? ORDER BY distance",
                (np.asarray(query, dtype="<f4").tobytes(), max(1, min(count, KNN_MAX_K))),
            )
            hits = sorted(
                ((rid, distance) for rid, distance in rows if rid in wanted), key=lambda hit: (hit[1], hit[0])
            )
            ordered = [rid for rid, _distance in hits]
            if len(ordered) == len(wanted) or count <= KNN_MAX_K:
                return ordered
        seen = set(ordered)
        ids, vectors = self.matrix([rid for rid in record_ids if rid not in seen])
        if not ids:
            return ordered
        similarity = vectors @ np.asarray(query, dtype=np.float32)
        rest = sorted(range(len(ids)), key=lambda i: (-float(similarity[i]), ids[i]))
        return ordered + [ids[index] for index in rest]


def refuse_if_stdlib_open(db_path: Path) -> None:
    """Refuse to open apsw next to a live stdlib connection to the same file in this process.
    Two SQLite libraries do not see each other's POSIX locks, and closing one drops the other's:
    a run done that way left a file that `PRAGMA integrity_check` called malformed."""
    target = os.path.realpath(db_path)
    for candidate in gc.get_objects():
        if not isinstance(candidate, sqlite3.Connection):
            continue
        try:
            files = [row[2] for row in candidate.execute("PRAGMA database_list").fetchall()]
        except sqlite3.Error:  # closed, or owned by another thread
            continue
        if any(name and os.path.realpath(name) == target for name in files):
            raise StoreError(
                f"This process still has the store {str(db_path)!r} open through sqlite3; close it before "
                "vector work opens it through apsw (two SQLite libraries on one file corrupt it)."
            )


def _load_sqlite_vec(conn: apsw.Connection) -> bool:
    if os.environ.get("AGENTCTX_SIMULATE_NO_SQLITE_VEC") == "1":
        return False
    try:
        import sqlite_vec  # pyright: ignore[reportMissingTypeStubs]  # it ships no type information

        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
    except (ImportError, apsw.Error, OSError, AttributeError):
        return False
    return True
