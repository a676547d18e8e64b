"""The vector table on its own: both backends order the same way, beyond sqlite-vec's k limit too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from agentctx_store import Store, paths

from agentctx_embed.phase import TEXT_FORM
from agentctx_embed.vectors import KNN_MAX_K, VectorStore

pytestmark = pytest.mark.embed


def unit_rows(count: int, dims: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((count, dims)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.mark.parametrize("backend", ["vec0", "numpy"])
def test_nearest_is_the_exact_cosine_order_even_past_the_knn_limit(
    backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend == "numpy":
        monkeypatch.setenv("AGENTCTX_SIMULATE_NO_SQLITE_VEC", "1")
    Store.open().close()  # create and migrate the store
    count = KNN_MAX_K + 904
    ids = [f"R{index:06d}" for index in range(count)]
    rows = unit_rows(count, 8, seed=1)
    query = unit_rows(1, 8, seed=2)[0]
    with VectorStore.open(Path(paths.db_path())) as vectors:
        assert vectors.backend == backend
        vectors.prepare("test-model", 8, TEXT_FORM)
        vectors.begin()
        vectors.put(ids, rows)
        vectors.commit()
        subset = ids[::7]  # spread over the whole table, far ones included
        got = vectors.nearest(query, subset)
    similarity = rows @ query
    expected = sorted(subset, key=lambda rid: -float(similarity[ids.index(rid)]))
    assert len(got) == len(subset)
    assert got[:50] == expected[:50]
    assert [round(float(similarity[ids.index(rid)]), 4) for rid in got] == [
        round(float(similarity[ids.index(rid)]), 4) for rid in expected
    ]
