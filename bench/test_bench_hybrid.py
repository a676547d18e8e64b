"""Hybrid retrieval on the shared eval sets with the real model (issue 12; formerly the plain
scripts `ablate_hybrid.py` and `eval_service.py`, now helper modules of this file).

    uv run --frozen pytest bench/test_bench_hybrid.py --benchmark-only

- `test_hook_with_service[<set>]` (group `hybrid service <set>`): every query of the set through
  the prompt hook's entry point with the warm search service of its data dir up (the real socket
  server, MiniLM-L6-v2 int8), a fresh session per query (`eval_service.hook_with_service`): one
  shared data dir, and each project alone in its own. `extra_info` (also printed, with `-s`):
  recall@3, MRR@10, empty precision, stale@3, bleed, for `shared` and `per_project`, how many
  prompts the warm path and the keyword fallback served (`served_warm`, `served_keyword`), and
  what was injected (issue 17: `relevant_char_share`, `mean_chars`, `full_records`,
  `title_records`, `hook_recall@3` counting title-only entries).
- `test_hybrid_fusion_ablation[<set>-<fusion>]` (group `hybrid fusion <set>`): how the two
  orders are fused (evidence at several vector weights, or reciprocal rank fusion as before):
  recall@3 of the ranking alone and with the floor, and what the hook would inject from it
  (relevant share, mean characters, recall@3 counting title lines), shared and per project.
- `test_embedding_text_ablation[<model>-<set>-<form>]` (group `hybrid embedded text <set>`): what a
  record's embedded passage is made of (`ablate_hybrid.TEXT_FORMS`: production's `[type] title`
  + body, the former one with the record's date, title + body alone, production's averaged with
  the title's own vector), each set embedded again per form: the same figures as the fusion
  ablation, plus each project's calibrated floor in-sample and held out (`*_calibrated`,
  `*_calibrated_lopo`); the second model only with `AGENTCTX_BENCH_SECOND_MODEL`.
- `test_hybrid_floor_ablation[<set>-<variant>]` (group `hybrid ablation <set>`): the hybrid
  floor (`agentctx_embed.hybrid.HybridFloor`) with one rule changed per row
  (`ablate_hybrid.variants`; `AGENTCTX_BENCH_HYBRID_GRID=1` adds the parameter sweep), applied to
  candidates gathered once per set; the time is applying the floor and scoring.
  `extra_info`: the same metrics, shared store and per project.

Both need `shared/eval/<set>` and `shared/models/all-MiniLM-L6-v2-onnx-int8` (the shared
folder beside the clone, or `AGENTCTX_BENCH_SHARED`) and skip without either. Under
`--benchmark-disable` (CI) they run on every `QUERY_STEP`-th query and the service test on the
shared data dir of the first set only, so the bodies stay working at a fraction of the cost.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _corpus
import _eval
import ablate_hybrid
import eval_service
import pytest

GRID_ENV = "AGENTCTX_BENCH_HYBRID_GRID"
VARIANTS = dict(ablate_hybrid.variants(grid=os.environ.get(GRID_ENV) == "1"))
QUERY_STEP = 8  # --benchmark-disable: every 8th query
SHORT_TMP = "/tmp" if os.path.isdir("/tmp") else None
METRICS = ("recall@3", "MRR@10", "empty_precision", "stale_rate@3", "bleed_rate")


@pytest.fixture(scope="session")
def minilm() -> Any:
    """The loaded MiniLM int8 embedder of the shared folder; skips when it is absent."""
    if not (ablate_hybrid.MINILM / "model.onnx").is_file():
        pytest.skip(f"{ablate_hybrid.MINILM}: no model.onnx (the shared folder, or AGENTCTX_BENCH_SHARED)")
    return ablate_hybrid.load_embedder()


def sample(queries: list[dict[str, Any]], disabled: bool) -> list[dict[str, Any]]:
    return queries[::QUERY_STEP] if disabled else queries


INJECTION = ("relevant_char_share", "mean_chars", "full_records", "title_records", "hook_recall@3")


def figures(metrics: dict[str, Any]) -> dict[str, Any]:
    out = {name: round(metrics[name], 3) for name in METRICS}
    for path, count in metrics.get("served", {}).items():
        out[f"served_{path}"] = count
    for name in INJECTION if "injection" in metrics else ():
        value = metrics["injection"][name]
        out[name] = round(value, 3) if isinstance(value, float) else value
    return out


def calibrated_figures(scored: dict[str, Any]) -> dict[str, Any]:
    """`ablate_hybrid.score_calibrated`'s figures, shared store and per project: in-sample
    (`<label>_calibrated`) and held out (`<label>_calibrated_lopo`, with the levels chosen)."""
    out: dict[str, Any] = {}
    for label in ("shared", "per_project"):
        held = scored[f"{label}_lopo"]
        out[f"{label}_calibrated"] = figures(scored[label])
        out[f"{label}_calibrated_lopo"] = figures(held) | {"levels_chosen": held["levels_chosen"]}
    return out


@pytest.mark.parametrize("set_name", _eval.SETS)
def test_hook_with_service(benchmark, eval_set, minilm, bench_mode, set_name: str) -> None:
    if bench_mode.disabled and set_name != _eval.SETS[0]:
        pytest.skip(
            f"--benchmark-disable: {_eval.SETS[0]} keeps the service path working; the service embeds every record"
        )
    data = eval_set(set_name)
    queries = sample(data.queries, bench_mode.disabled)
    per_project = not bench_mode.disabled
    benchmark.group = f"hybrid service {set_name}"
    # not pytest's tmp_path (nor $TMPDIR, which the suite points into it): the service's Unix
    # socket lives in the data dir, and AF_UNIX paths are short
    with tempfile.TemporaryDirectory(prefix="agentctx-hs-", dir=SHORT_TMP) as scratch:
        report = benchmark.pedantic(
            eval_service.hook_with_service,
            args=(data.records, queries, Path(scratch), data.scorer, minilm, per_project),
            rounds=1,
            iterations=1,
        )
    benchmark.extra_info.update(model=report["model"], queries=len(queries))
    for label in ("shared", "per_project"):
        if label in report:
            benchmark.extra_info[label] = figures(report[label])
            print(f"\n{set_name} {label} (hook, service up): {benchmark.extra_info[label]}")
    shared = report["shared"]
    assert shared["superseded_returned"] == 0, "a superseded record reached the prompt"
    assert shared["served"]["warm"] > 0, "the warm service answered no prompt"


@pytest.mark.parametrize("set_name", _eval.SETS)
def test_hook_processes_with_service(benchmark, eval_set, minilm, bench_mode, set_name: str) -> None:
    """`test_hook_with_service` as a user's machine runs it (`eval_service.hook_processes_with_service`):
    the service and each hook in processes of their own, the shipped deadline, the service's
    shipped settings. Which path served each prompt says how often the warm answer came in time
    on this machine; the figures are what a client gets here. The set's projects in one data dir."""
    if bench_mode.disabled:
        pytest.skip("--benchmark-disable: a process per query; test_hook_with_service keeps the path working")
    data = eval_set(set_name)
    benchmark.group = f"hybrid service {set_name}"
    with tempfile.TemporaryDirectory(prefix="agentctx-hp-", dir=SHORT_TMP) as scratch:
        report = benchmark.pedantic(
            eval_service.hook_processes_with_service,
            args=(data.records, data.queries, Path(scratch), data.scorer),
            rounds=1,
            iterations=1,
        )
    found = {**figures(report), "hook_ms": report["hook_ms"]}
    benchmark.extra_info.update(found)
    print(f"\n{set_name} processes (hook, service up, shipped deadline): {found}")
    assert report["superseded_returned"] == 0, "a superseded record reached the prompt"
    assert report["served"]["warm"] > 0, "the warm service answered no prompt"


_PREPARED: dict[tuple[str, bool], ablate_hybrid.Prepared] = {}


@pytest.fixture(scope="module")
def prepared_sets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, bool], Any]]:
    yield _PREPARED
    for item in _PREPARED.values():
        item.close()
    _PREPARED.clear()


@pytest.mark.parametrize("variant", list(VARIANTS), ids=[label.replace("≥", ">=") for label in VARIANTS])
@pytest.mark.parametrize("set_name", _eval.SETS)
def test_hybrid_floor_ablation(
    benchmark, eval_set, minilm, bench_mode, prepared_sets, tmp_path_factory, set_name: str, variant: str
) -> None:
    data = eval_set(set_name)
    key = (set_name, bench_mode.disabled)
    if key not in prepared_sets:
        queries = sample(data.queries, bench_mode.disabled)
        scratch = tmp_path_factory.mktemp(f"hybrid-{set_name}")
        prepared_sets[key] = ablate_hybrid.prepare(data.records, queries, data.scorer, data.now, minilm, scratch)
    prepared = prepared_sets[key]
    benchmark.group = f"hybrid ablation {set_name}"
    result = benchmark.pedantic(ablate_hybrid.score, args=(prepared, VARIANTS[variant]), rounds=1, iterations=1)
    benchmark.extra_info.update(queries=len(prepared.queries))
    benchmark.extra_info.update(shared=figures(result["shared"]), per_project=figures(result["per_project"]))
    if variant == "final":  # the production floor: superseded records never come back
        assert result["shared"]["superseded_returned"] == 0
        assert result["per_project"]["superseded_returned"] == 0


@pytest.mark.parametrize("fusion", list(ablate_hybrid.FUSIONS))
@pytest.mark.parametrize("set_name", _eval.SETS)
def test_hybrid_fusion_ablation(
    benchmark, eval_set, minilm, bench_mode, prepared_sets, tmp_path_factory, set_name: str, fusion: str
) -> None:
    """The fused order (`hybrid.FUSION`, `hybrid.VECTOR_WEIGHT`), measured by `ranking_figures`."""
    data = eval_set(set_name)
    key = (set_name, bench_mode.disabled)
    if key not in prepared_sets:
        queries = sample(data.queries, bench_mode.disabled)
        scratch = tmp_path_factory.mktemp(f"hybrid-{set_name}")
        prepared_sets[key] = ablate_hybrid.prepare(data.records, queries, data.scorer, data.now, minilm, scratch)
    benchmark.group = f"hybrid fusion {set_name}"
    mode, weight = ablate_hybrid.FUSIONS[fusion]
    fused = benchmark.pedantic(ablate_hybrid.regather, args=(prepared_sets[key], mode, weight), rounds=1, iterations=1)
    benchmark.extra_info.update(ranking_figures(fused))
    print(f"\n{set_name} {fusion}: {benchmark.extra_info['shared']} per project {benchmark.extra_info['per_project']}")


def ranking_figures(prepared: Any) -> dict[str, dict[str, float]]:
    """The ranking alone (no floor), with the production floor, and what the hook would inject
    from it (recall@3 counting title lines, relevant share, mean characters): shared store and
    per project."""
    alone = ablate_hybrid.score(prepared, None)
    floored = ablate_hybrid.score(prepared, VARIANTS["final"])
    injected = ablate_hybrid.injection(prepared, VARIANTS["final"])
    return {
        label: {
            "ranking_recall@3": round(alone[label]["recall@3"], 3),
            "ranking_MRR@10": round(alone[label]["MRR@10"], 3),
            "recall@3": round(floored[label]["recall@3"], 3),
            "MRR@10": round(floored[label]["MRR@10"], 3),
            "empty_precision": round(floored[label]["empty_precision"], 3),
            "hook_recall@3": round(injected[label]["hook_recall@3"], 3),
            "relevant_char_share": round(injected[label]["relevant_char_share"], 3),
            "mean_chars": round(injected[label]["mean_chars"], 1),  # nan when nothing was injected
        }
        for label in ("shared", "per_project")
    }


@pytest.mark.parametrize("form", list(ablate_hybrid.TEXT_FORMS))
@pytest.mark.parametrize("set_name", _eval.SETS)
def test_embedding_text_ablation(
    benchmark, eval_set, model, bench_mode, tmp_path_factory, set_name: str, form: str
) -> None:
    """The passage each record is embedded as (`agentctx_embed.phase.embedding_text`), measured
    by `ranking_figures` (the constant floor), and with each project's calibrated floor in-sample
    and held out (`ablate_hybrid.score_calibrated`), for the shipped model and the second one
    (`model`). The time is embedding the set and gathering every query's candidates."""
    data = eval_set(set_name)
    queries = sample(data.queries, bench_mode.disabled)
    scratch = tmp_path_factory.mktemp(f"text-{set_name}")
    text = ablate_hybrid.TEXT_FORMS[form]
    benchmark.group = f"hybrid embedded text {set_name}"
    prepared = benchmark.pedantic(
        ablate_hybrid.prepare,
        args=(data.records, queries, data.scorer, data.now, model, scratch, text),
        rounds=1,
        iterations=1,
    )
    try:
        benchmark.extra_info.update(ranking_figures(prepared))
        calibrated = ablate_hybrid.score_calibrated(prepared, ablate_hybrid.calibrations(prepared, model))
    finally:
        prepared.close()
    benchmark.extra_info.update(calibrated_figures(calibrated))
    print(f"\n{set_name} {form} ({model.name}): {benchmark.extra_info}")


STORES = ("set alone", "both sets and padding in one store")


@pytest.fixture(scope="session")
def second_model() -> Any:
    """paraphrase-MiniLM-L3-v2 (`_second_model`); skips without `AGENTCTX_BENCH_SECOND_MODEL`."""
    import _second_model

    loaded = _second_model.load()
    if loaded is None:
        pytest.skip(f"no second model: set {_second_model.ENV} (bench/_second_model.py says how)")
    return loaded


@pytest.fixture(params=["minilm-l6", "paraphrase-minilm-l3"])
def model(request: pytest.FixtureRequest) -> Any:
    """The shipped MiniLM-L6 int8 (`minilm`), or paraphrase-MiniLM-L3-v2 (`second_model`) with no
    threshold changed: the two models every figure of the calibrated floor is measured with."""
    return request.getfixturevalue("minilm" if request.param == "minilm-l6" else "second_model")


@pytest.mark.parametrize("store_kind", STORES)
@pytest.mark.parametrize("set_name", _eval.SETS)
def test_calibrated_floor(
    benchmark, eval_set, model, bench_mode, tmp_path_factory, set_name: str, store_kind: str
) -> None:
    """The floor each project calibrates for itself (`hybrid.calibrate`, issue 31) next to the
    constant one: in-sample (production levels) and leave-one-project-out (`_lopo`: the
    calibration levels chosen on the set's other projects, applied to the one left out), in the
    set's store or one holding both dev sets and `_corpus.padding()`'s 24 projects (`shared`),
    and with each project alone (`per_project`); the same for the other `ablate_hybrid.CALIBRATION_MODES` (the calibration
    before the project's vocabulary prompts and the lift; the calibrated keyword floor deciding the
    hybrid's keyword pass); plus each project's calibration inputs. The time is calibrating every
    project (the reference texts, in both stores), with each `model`."""
    data = eval_set(set_name)
    queries = sample(data.queries, bench_mode.disabled)
    records = list(data.records)
    if store_kind != STORES[0]:
        for other in _eval.SETS:
            if other != set_name:
                records += eval_set(other).records
        records += _corpus.padding_records()
    scratch = tmp_path_factory.mktemp(f"calibrated-{set_name}")
    prepared = ablate_hybrid.prepare(records, queries, data.scorer, data.now, model, scratch)
    try:
        benchmark.group = f"hybrid calibrated floor {set_name}"
        calibrated = benchmark.pedantic(ablate_hybrid.calibrations, args=(prepared, model), rounds=1, iterations=1)
        scored = ablate_hybrid.score_calibrated(prepared, calibrated)
        others = {
            mode: ablate_hybrid.score_calibrated(prepared, ablate_hybrid.calibrations(prepared, model, mode))
            for mode in ablate_hybrid.CALIBRATION_MODES[1:]
        }
        constant = ablate_hybrid.score(prepared, VARIANTS["final"])
    finally:
        prepared.close()
    info: dict[str, Any] = {"queries": len(queries), "model": model.name, "store": store_kind}
    info |= calibrated_figures(scored)
    for label in ("shared", "per_project"):
        info[f"{label}_constant"] = figures(constant[label])
        for mode, other in others.items():
            info[f"{label}: {mode}"] = figures(other[label])
            info[f"{label}: {mode}, lopo"] = figures(other[f"{label}_lopo"])
    info["calibration"] = {
        name: {
            "records": cal.records,
            "prompts": len(cal.z),
            **cal.as_json()["thresholds"],
            "lift": cal.lift,
            "reference_z_median": round(cal.quantile(0.5), 3),
        }
        for name, cal in calibrated.shared.items()
    }
    benchmark.extra_info.update(info)
    for key, value in info.items():
        print(f"\n{set_name} [{store_kind}] {key}: {value}")
    assert scored["shared"]["superseded_returned"] == 0


def test_coverage_cost(benchmark, minilm) -> None:
    """What the floor's token coverage costs when it is asked (`hybrid.coverage`: the prompt's
    token states and a record's `COVERAGE_CHARS` characters'), as a ratio to
    embedding the prompt's vector, both in this run with the same loaded model.
    `extra_info`: `coverage_ms`, `query_vector_ms` (medians of 15) and their ratio."""
    import statistics
    import time

    from agentctx_embed.hybrid import COVERAGE_CHARS, coverage
    from agentctx_embed.models import TokenStates

    prompt = "should the rendered invoice cache key carry the invoice version, and for how long is it kept?"
    record = ("[decision] Cache rendered invoices for an hour\n" + "The cache key holds the invoice version. " * 60)[
        :COVERAGE_CHARS
    ]
    weights = dict.fromkeys(prompt.replace("?", " ").replace(",", " ").split(), 1.0)

    def covered() -> float:
        asked, passage = minilm.tokens(prompt), minilm.tokens(record)
        assert isinstance(asked, TokenStates) and isinstance(passage, TokenStates)
        return coverage(asked, passage, weights)

    def median_ms(action: Any) -> float:
        action()
        times = []
        for _ in range(15):
            start = time.perf_counter()
            action()
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1000

    vector_ms = median_ms(lambda: minilm.query(prompt))
    coverage_ms = median_ms(covered)
    benchmark.extra_info.update(
        coverage_ms=round(coverage_ms, 1),
        query_vector_ms=round(vector_ms, 1),
        ratio=round(coverage_ms / vector_ms, 1),
    )
    print("coverage cost:", benchmark.extra_info)
    assert 0 < covered() <= 1.0
    benchmark(covered)
