"""The warm search service's vectors, in memory: int8 codes with a float32 scale per row (one
contiguous block of the rows loaded at start, a second block for the records embedded since)
and, per row, small numpy codes (namespace, type, live, version); no Python object per record
but its id.

Used by `agentctx_embed.hybrid` (the vector side of a query) and `agentctx_embed.service`.
What one record costs at 384 dims: 384 bytes of codes and 4 of scale, ~10 bytes of row codes,
and its id (the id string, its list slot and its dict entry, ~120 bytes). The version of a row
(its `updated_at`) is kept as a 64-bit hash, compared within this process only.

Why int8 (docs/adr/0008-warm-search-service.md#memory): a quarter of float32's memory, with each
component within half a step (1/254 of the row's largest component) of its float32 value, so a
cosine moves by at most ~0.002. numpy has no fast int8 product, so a query converts BLOCK_ROWS rows
at a time to float32 in a buffer that stays in the CPU cache and multiplies it with BLAS: reading a
quarter of the bytes, this is faster than the float32 product it replaced
(bench/README.md#the-warm-services-vectors).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

import numpy as np

BLOCK_ROWS = 512  # rows converted to float32 at a time by a query (768 KB at 384 dims: stays in cache)


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 codes, float32 scale per row) with `row ≈ codes * scale`: each row's largest
    component becomes ±127."""
    vectors = np.asarray(vectors, dtype=np.float32)
    scales = np.abs(vectors).max(axis=1) / 127 if vectors.size else np.zeros(len(vectors), dtype=np.float32)
    scales[scales == 0] = 1.0
    codes = np.rint(vectors / scales[:, None]).astype(np.int8)
    return codes, scales.astype(np.float32)


def scaled_product(codes: np.ndarray, scales: np.ndarray, query: np.ndarray) -> np.ndarray:
    """`(codes * scales[:, None]) @ query`, a block of rows at a time."""
    out = np.empty(len(codes), dtype=np.float32)
    buffer = np.empty((min(BLOCK_ROWS, len(codes)), codes.shape[1]), dtype=np.float32)
    for start in range(0, len(codes), BLOCK_ROWS):
        block = codes[start : start + BLOCK_ROWS]
        np.copyto(buffer[: len(block)], block, casting="unsafe")
        np.matmul(buffer[: len(block)], query, out=out[start : start + len(block)])
    out *= scales
    return out


class VectorIndex:
    """Unit vectors of current records, in memory: one row per record, filtered per query."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self.lock = threading.Lock()
        self.matrix = np.zeros((0, dims), dtype=np.int8)  # the rows loaded at start, exactly
        self.fresh = np.zeros((0, dims), dtype=np.int8)  # rows added since (with room to grow)
        self.ids: list[str] = []
        self.rows: dict[str, int] = {}
        self.scale = np.zeros(0, dtype=np.float32)  # per row, of `matrix` and `fresh` alike
        self.namespace = np.zeros(0, dtype=np.int32)
        self.kind = np.zeros(0, dtype=np.int32)
        self.alive = np.zeros(0, dtype=bool)
        self.version = np.zeros(0, dtype=np.int64)
        self.generation = 0  # changes with every put and remove (for callers that cache a scan)
        self._codes: dict[str, int] = {}
        self._live = 0

    def __len__(self) -> int:
        return self._live

    def _code(self, value: str) -> int:
        return self._codes.setdefault(value, len(self._codes))

    def _grow(self, wanted: int) -> None:
        """Room for `wanted` rows in all. Rows past the bulk-loaded `matrix` live in `fresh`,
        which doubles when full: the big block is never copied or zero-filled (copying it into
        a larger zeroed array left more of it resident: bench/README.md#the-warm-services-vectors),
        and the room `fresh` keeps is not resident until rows are written into it. Call with the
        lock held."""
        if wanted > len(self.matrix) + len(self.fresh):
            rows = max(wanted - len(self.matrix), 2 * len(self.fresh), 256)
            fresh = np.empty((rows, self.dims), dtype=np.int8)
            fresh[: len(self.fresh)] = self.fresh
            self.fresh = fresh
        if wanted > len(self.alive):
            total = max(wanted, len(self.alive) + len(self.alive) // 4 + 256)
            for name, dtype in (
                ("scale", np.float32),
                ("namespace", np.int32),
                ("kind", np.int32),
                ("alive", bool),
                ("version", np.int64),
            ):
                old = getattr(self, name)
                new = np.zeros(total, dtype=dtype)
                new[: len(old)] = old
                setattr(self, name, new)

    def _set_vector(self, row: int, vector: np.ndarray) -> None:
        bulk = len(self.matrix)
        if row < bulk:
            self.matrix[row] = vector
        else:
            self.fresh[row - bulk] = vector

    def put(
        self, items: Sequence[tuple[str, str, str, str]], vectors: np.ndarray, scales: np.ndarray | None = None
    ) -> None:
        """`items` are (record id, project id, type, version) for the rows of `vectors`: unit
        vectors, or with `scales` their `quantize`d codes."""
        codes, scales = (vectors, scales) if scales is not None else quantize(vectors)
        with self.lock:
            new = [index for index, item in enumerate(items) if item[0] not in self.rows]
            bulk = bool(new) and not self.ids and len(new) == len(items)
            if bulk:  # the first load: its codes and scales become the block as they are, no copy
                self.matrix = np.ascontiguousarray(codes, dtype=np.int8)
                self.scale = np.ascontiguousarray(scales, dtype=np.float32)
                self.namespace = np.zeros(len(items), dtype=np.int32)
                self.kind = np.zeros(len(items), dtype=np.int32)
                self.alive = np.zeros(len(items), dtype=bool)
                self.version = np.zeros(len(items), dtype=np.int64)
                for row, item in enumerate(items):
                    self.rows[item[0]] = row
                    self.ids.append(item[0])
                new = []
            if new:
                start = len(self.ids)
                self._grow(start + len(new))
                for offset, index in enumerate(new):
                    self.rows[items[index][0]] = start + offset
                    self.ids.append(items[index][0])
            for index, (record_id, project_id, record_type, version) in enumerate(items):
                row = self.rows[record_id]
                if not self.alive[row]:
                    self._live += 1
                if not bulk:  # (a bulk load's rows are in place already)
                    self._set_vector(row, codes[index])
                    self.scale[row] = scales[index]
                self.namespace[row] = self._code(project_id)
                self.kind[row] = self._code(record_type)
                self.alive[row] = True
                self.version[row] = hash(version)
            self.generation += 1

    def remove(self, record_ids: Sequence[str]) -> None:
        with self.lock:
            for record_id in record_ids:
                row = self.rows.get(record_id)
                if row is not None and self.alive[row]:
                    self.alive[row] = False
                    self._live -= 1
            self.generation += 1

    def is_current(self, record_id: str, version: str) -> bool:
        """A live vector of this version of the record is held."""
        row = self.rows.get(record_id)
        return row is not None and bool(self.alive[row]) and int(self.version[row]) == hash(version)

    def reconcile(self, current: Iterable[tuple[str, str]]) -> list[str]:
        """`current`: every current record's (id, version), streamed. Drops the rows of records
        no longer among them; returns the ids whose vector is missing or of another version, in
        the order given. Builds no dict of the whole store (its garbage stayed resident)."""
        with self.lock:
            size = len(self.ids)
        seen = np.zeros(size, dtype=bool)
        todo: list[str] = []
        for record_id, version in current:
            row = self.rows.get(record_id)
            if row is not None and row < size:
                seen[row] = True
                if self.alive[row] and int(self.version[row]) == hash(version):
                    continue
            todo.append(record_id)
        with self.lock:
            gone = np.flatnonzero(self.alive[:size] & ~seen)
            if len(gone):
                self.alive[gone] = False
                self._live -= len(gone)
                self.generation += 1
        return todo

    def live_ids(self) -> list[str]:
        with self.lock:
            return [self.ids[row] for row in np.flatnonzero(self.alive[: len(self.ids)]).tolist()]

    def similarities(
        self, query: np.ndarray, namespaces: Sequence[str], types: Sequence[str] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(rows, cosines) of the live rows in these namespaces and types, in row order. One
        product over all rows (bandwidth-bound, no copy of the visible rows' vectors),
        then the mask, built through lookup tables of the codes."""
        with self.lock:
            size = len(self.ids)
            rows = self._visible(size, namespaces, types)
            if not len(rows):
                return rows, np.zeros(0, dtype=np.float32)
            query = np.asarray(query, dtype=np.float32)
            bulk = min(size, len(self.matrix))
            product = scaled_product(self.matrix[:bulk], self.scale[:bulk], query)
            if size > bulk:
                fresh = scaled_product(self.fresh[: size - bulk], self.scale[bulk:size], query)
                product = np.concatenate([product, fresh])
            cosines = product[rows]
        return rows, cosines

    def count(self, namespaces: Sequence[str], types: Sequence[str] | None) -> int:
        """How many live rows these namespaces and types hold (`similarities`' rows, without
        the product: what a calibration's size is checked against on every prompt)."""
        with self.lock:
            return len(self._visible(len(self.ids), namespaces, types))

    def _visible(self, size: int, namespaces: Sequence[str], types: Sequence[str] | None) -> np.ndarray:
        """The live rows of these namespaces and types, in row order (under `lock`)."""
        allowed = np.zeros(len(self._codes) + 1, dtype=bool)
        allowed[[self._codes[n] for n in namespaces if n in self._codes]] = True
        mask = allowed[self.namespace[:size]]
        if types is not None:
            allowed[:] = False
            allowed[[self._codes[t] for t in types if t in self._codes]] = True
            mask &= allowed[self.kind[:size]]
        mask &= self.alive[:size]
        return np.flatnonzero(mask)

    def ids_of(self, rows: np.ndarray) -> list[str]:
        return [self.ids[row] for row in rows.tolist()]

    def nbytes(self) -> int:
        """The vectors and the per-row codes (with the room kept for growth)."""
        codes = self.scale.nbytes + self.namespace.nbytes + self.kind.nbytes + self.alive.nbytes + self.version.nbytes
        return int(self.matrix.nbytes + self.fresh.nbytes + codes)
