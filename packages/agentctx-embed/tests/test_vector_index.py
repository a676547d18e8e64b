"""The warm service's in-memory vectors (`agentctx_embed.vector_index`) and the query worker that
embeds and scans ahead of the keyword search (`agentctx_embed.warm_query`)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from agentctx_embed.vector_index import VectorIndex, quantize
from agentctx_embed.warm_query import Expired, QueryWorker, ScanAhead

DIMS = 16


def unit_rows(count: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((count, DIMS)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def filled() -> tuple[VectorIndex, np.ndarray, list[tuple[str, str, str, str]]]:
    index = VectorIndex(DIMS)
    vectors = unit_rows(12, 1)
    items = [
        (f"r{n:02d}", "own" if n % 3 else "other", "decision" if n % 2 else "handover", f"v{n}") for n in range(12)
    ]
    index.put(items, vectors)
    return index, vectors, items


def test_similarities_are_the_cosines_of_the_visible_live_rows_in_row_order() -> None:
    index, vectors, items = filled()
    query = unit_rows(1, 2)[0]
    rows, cosines = index.similarities(query, ["own", "_global"], ["decision"])
    wanted = [n for n, item in enumerate(items) if item[1] == "own" and item[2] == "decision"]
    assert rows.tolist() == wanted
    assert np.allclose(cosines, (vectors @ query)[wanted], atol=0.01)  # int8 codes: within ~1/127
    assert index.ids_of(rows) == [items[n][0] for n in wanted]
    rows, _ = index.similarities(query, ["own", "other"], None)
    assert rows.tolist() == list(range(12))
    rows, cosines = index.similarities(query, ["nobody"], None)
    assert rows.size == 0 and cosines.size == 0


def test_removed_rows_are_never_returned_and_versions_are_tracked() -> None:
    index, vectors, items = filled()
    assert len(index) == 12
    assert index.is_current("r01", "v1") and not index.is_current("r01", "v1-edited")
    assert not index.is_current("missing", "v1")
    index.remove(["r01", "r04", "unknown"])
    assert len(index) == 10
    assert not index.is_current("r01", "v1")
    assert "r01" not in index.live_ids() and len(index.live_ids()) == 10
    rows, _ = index.similarities(vectors[1], ["own", "other"], None)
    assert 1 not in rows.tolist() and 4 not in rows.tolist()
    # counted as `similarities` returns them (what a calibration's size is checked against)
    for namespaces, types in (
        (["own", "other"], None),
        (["own"], ["decision"]),
        (["other"], ["handover"]),
        (["x"], None),
    ):
        assert index.count(namespaces, types) == len(index.similarities(vectors[0], namespaces, types)[0])
    assert index.count(["own", "other"], None) == 10
    # an edited record comes back in its old row, with its new vector and version
    index.put([("r01", "own", "decision", "v1-edited")], vectors[5:6])
    assert index.is_current("r01", "v1-edited") and len(index) == 11
    rows, cosines = index.similarities(vectors[5], ["own"], ["decision"])
    assert dict(zip(index.ids_of(rows), cosines.tolist(), strict=True))["r01"] == pytest.approx(1.0, abs=0.01)


def test_records_added_one_by_one_grow_the_matrix_and_change_the_generation() -> None:
    index, _vectors, _items = filled()
    generation = index.generation
    fresh = unit_rows(300, 3)
    for n, vector in enumerate(fresh):
        index.put([(f"new{n}", "own", "decision", "v")], vector[None, :])
    assert index.generation == generation + 300
    assert len(index) == 312 and len(index.matrix) + len(index.fresh) >= 312
    rows, cosines = index.similarities(fresh[299], ["own"], ["decision"])
    best = index.ids_of(rows[[int(np.argmax(cosines))]])
    assert best == ["new299"]
    assert index.nbytes() >= index.matrix.nbytes


def test_the_worker_embeds_and_scans_ahead_and_the_scan_is_reused_only_while_it_holds() -> None:
    index, vectors, _items = filled()
    embedded: list[str] = []

    def embed(text: str) -> np.ndarray:
        embedded.append(text)
        return vectors[int(text)]

    worker = QueryWorker(embed, index)
    try:
        job = worker.submit("3", namespaces=["own", "_global"], types=["decision"])
        vector = job.vector()
        assert embedded == ["3"] and job.scan is not None
        ahead = ScanAhead(index, job)
        rows, cosines = ahead.similarities(vector, ("own", "_global"), ("decision",))
        assert rows is job.scan[1] and cosines is job.scan[2]  # the worker's scan, not a new one
        assert ahead.ids_of(rows) == index.ids_of(rows)
        other_rows, _ = ahead.similarities(vector, ["own", "other"], None)  # other filters: scanned anew
        assert other_rows is not job.scan[1] and len(other_rows) == 12
        # a record embedded between the scan and its use: scanned again, so it is seen
        index.put([("late", "own", "decision", "v")], vectors[3:4])
        rows, _ = ahead.similarities(vector, ["own", "_global"], ["decision"])
        assert "late" in index.ids_of(rows)
    finally:
        worker.close()
        worker.thread.join(5)


def test_a_job_whose_request_gave_up_is_not_embedded() -> None:
    index, vectors, _items = filled()
    calls: list[str] = []
    gate = threading.Event()

    def embed(text: str) -> np.ndarray:
        calls.append(text)
        gate.wait(5)
        return vectors[0]

    worker = QueryWorker(embed, index)
    try:
        first = worker.submit("first")  # keeps the worker busy while the second request gives up
        given_up = threading.Event()
        second = worker.submit("second", expired=given_up.is_set)
        given_up.set()
        gate.set()
        first.vector()
        with pytest.raises(Expired):
            second.vector()
        assert calls == ["first"] and worker.skipped == 1
    finally:
        worker.close()
        worker.thread.join(5)


def test_reconcile_drops_what_is_no_longer_current_and_lists_what_to_embed() -> None:
    index, _vectors, items = filled()
    current = [(record_id, version) for record_id, _ns, _type, version in items if record_id not in {"r02", "r07"}]
    current[0] = (current[0][0], "edited")  # r00 edited since its vector was made
    current.append(("brand-new", "v"))
    generation = index.generation
    assert index.reconcile(iter(current)) == ["r00", "brand-new"]
    assert len(index) == 10 and index.generation == generation + 1
    assert "r02" not in index.live_ids() and "r07" not in index.live_ids()
    assert index.reconcile(iter(current)) == ["r00", "brand-new"]  # nothing more dropped
    assert len(index) == 10 and index.generation == generation + 1


def test_rows_added_after_the_bulk_load_go_to_the_second_block_and_are_scanned_with_it() -> None:
    index = VectorIndex(DIMS)
    base = unit_rows(20, 4)
    index.put([(f"r{n}", "own", "decision", "v") for n in range(10)], base[:10])  # contiguous view: not owned
    index.put([(f"s{n}", "own", "decision", "v") for n in range(10)], base[10:])
    rows, cosines = index.similarities(base[3], ["own"], None)
    assert len(rows) == 20 and index.ids_of(rows[[int(np.argmax(cosines))]]) == ["r3"]
    stored = np.concatenate([index.matrix, index.fresh[:10]]) * index.scale[:20, None]
    assert np.abs(stored - base).max() <= np.abs(base).max(axis=1).max() / 254 + 1e-6  # half a step


def test_the_loaded_vectors_are_compacted_in_place_to_the_rows_kept() -> None:
    from agentctx_embed.service import _compact

    rows = unit_rows(10_000, 5)
    codes, scales = quantize(rows)
    keep = [index for index in range(10_000) if index % 7 and index != 9_999]
    wanted_codes, wanted_scales = codes[keep], scales[keep]
    for matrix, wanted in ((codes, wanted_codes), (scales, wanted_scales)):
        compacted = _compact(matrix, keep)
        assert np.array_equal(compacted, wanted)
        assert compacted.flags.owndata or compacted.base is matrix  # no second copy of the vectors


def test_quantized_rows_keep_cosines_and_order_and_the_product_is_blockwise() -> None:
    """int8 codes with a scale per row: each component within half a step of its float32 value,
    cosines within 0.01 at 16 dims (~0.002 at 384), and a query over more rows than one block
    gives the same values as the product of the dequantized rows."""
    from agentctx_embed import vector_index

    rows = unit_rows(vector_index.BLOCK_ROWS * 2 + 5, 6)
    codes, scales = quantize(rows)
    assert codes.dtype == np.int8 and scales.dtype == np.float32
    restored = codes * scales[:, None]
    assert np.all(np.abs(restored - rows) <= np.abs(rows).max(axis=1, keepdims=True) / 254 + 1e-7)
    query = unit_rows(1, 7)[0]
    product = vector_index.scaled_product(codes, scales, query)
    assert np.allclose(product, restored @ query, atol=1e-5)
    assert np.abs(product - rows @ query).max() < 0.01
    zero_codes, zero_scales = quantize(np.zeros((2, DIMS), dtype=np.float32))  # no division by zero
    assert not zero_codes.any() and np.all(zero_scales == 1.0)


def test_the_service_reads_the_stored_vectors_a_block_at_a_time_and_notices_a_short_stream() -> None:
    import io

    from agentctx_embed import service

    rows = unit_rows(service.LOAD_BLOCK_ROWS + 3, 8)
    raw = rows.astype("<f4").tobytes()
    codes, scales, complete = service._read_quantized(io.BufferedReader(io.BytesIO(raw)), len(rows), DIMS)
    wanted_codes, wanted_scales = quantize(rows)
    assert complete and np.array_equal(codes, wanted_codes) and np.array_equal(scales, wanted_scales)
    _codes, _scales, complete = service._read_quantized(io.BufferedReader(io.BytesIO(raw[:-4])), len(rows), DIMS)
    assert not complete
