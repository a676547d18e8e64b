"""Retrieval quality on the shared dev eval sets, saved next to the speed figures.

Each test times one pass of the set's queries through a ranking and attaches the set's own
`eval.py` metrics as `extra_info` (recall@3, MRR@10, nDCG@10, stale@3, bleed, empty
precision; per query kind; for the production run also what the prompt hook would inject:
records in the top 3 and the share of them that is relevant). Skipped when `../shared/eval`
is absent (a fresh clone).

Runs per set:
- `production`: `search()` with the production floor (what the prompt hook and MCP get);
- `no-floor`: ranking alone;
- `per-project`: each eval project alone in its own store (a new user's small store);
- `fts5-baseline` / `fts5-baseline-cutoff`: the set's `baseline_fts5.py` (a subprocess),
  without and with its dev-tuned cut-off.

`test_hook_injection` sends every query through the prompt hook's entry point (a fresh session
per query) and measures what it injected (`_eval.hook_injections`: relevant share of the injected
characters, mean characters, full and title-only records, recall@3 of the injected ids, no-answer
prompts injected into; docs/retrieval.md, "What a prompt injects").

`test_ablation` re-scores the production run with one idea of the pipeline switched off (or
one setting changed) per row: the "What we tried" table of docs/retrieval.md. It patches
constants of `agentctx_store.retrieval` in-process and restores them after each row;
`test_every_ablation_row_runs_without_the_dev_sets` runs each row on a small store of
`_corpus.padding_records()`, so a row that no longer fits `search()` fails on a fresh clone too.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import _corpus
import _eval
import pytest
from agentctx_store import Project

RUNS = ("production", "no-floor", "per-project", "fts5-baseline", "fts5-baseline-cutoff")
search_module = importlib.import_module("agentctx_store.retrieval")


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("set_name", _eval.SETS)
def test_retrieval(benchmark, eval_set, tmp_path, set_name: str, run: str) -> None:
    data = eval_set(set_name)
    benchmark.group = f"quality {set_name}"
    if run in ("production", "no-floor"):
        rows = benchmark.pedantic(
            _eval.run_queries,
            args=(data.loaded, data.queries),
            kwargs={"floor_on": run == "production", "now": data.now},
        )
        metrics = data.score(rows)
        if run == "production":
            metrics |= _eval.top3_load(data.queries, rows)
    elif run == "per-project":
        rows = benchmark.pedantic(per_project, args=(data, tmp_path))
        metrics = data.score(rows)
    else:
        rows = benchmark.pedantic(_eval.baseline_results, args=(data.folder, tmp_path / "baseline.jsonl"))
        if rows is None:
            pytest.skip(f"{data.folder} has no baseline_fts5.py")
        cutoff = _eval.BASELINE_CUTOFF.get(set_name, 7.0) if run == "fts5-baseline-cutoff" else None
        metrics = data.score(rows, cutoff)
        benchmark.extra_info["cutoff"] = cutoff
    benchmark.extra_info.update(_eval.rounded(metrics))
    if run == "production":  # superseded records must never come back
        assert metrics["superseded_returned"] == 0


def per_project(data: _eval.EvalSet, scratch) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name in sorted({record["project"] for record in data.records}):
        mine = [record for record in data.records if record["project"] == name]
        alone = _eval.load_into_store(mine, scratch / f"alone-{name}.db")
        try:
            own = [query for query in data.queries if query["project"] == name]
            rows += _eval.run_queries(alone, own, floor_on=True, now=data.now)
        finally:
            alone.store.close()
    return rows


@pytest.mark.parametrize("floor", ["calibrated", "constant"])
@pytest.mark.parametrize("set_name", _eval.SETS)
def test_hook_injection(benchmark, shared_dir, tmp_path, set_name: str, floor: str) -> None:
    """What the prompt hook injects for each query of the set (its entry point, in-process),
    with each project's keyword floor calibrated first (as consolidation does) or the constant."""
    folder = shared_dir / "eval" / set_name
    if not (folder / "records.jsonl").is_file():
        pytest.skip(f"{folder} not found")
    records, queries = _eval.load_jsonl(folder / "records.jsonl"), _eval.load_jsonl(folder / "queries.jsonl")
    benchmark.group = f"quality {set_name}"
    figures = benchmark.pedantic(
        _eval.hook_injections,
        args=(records, queries, tmp_path / "hook"),
        kwargs={"calibrated": floor == "calibrated"},
        rounds=1,
    )
    benchmark.extra_info.update(_eval.rounded(figures))
    print(f"\n{set_name} (hook, keyword path, {floor} floor): {_eval.rounded(figures)}")
    assert figures["injected_prompts"] > 0, "the hook injected nothing for any answerable prompt"


# -- ablations -------------------------------------------------------------------------------

# The developer-chatter words the retrieval work added to search.STOPWORDS.
_ADDED_WORDS = (
    "did decide decided deciding agree agreed anything something someone anyone everything nothing really actually "
    "currently sure quick days works worked working great perfect cool nice done good looks seems fine awesome "
    "sounds lgtm yeah yep nope"
)
ADDED_STOPWORDS = frozenset(_ADDED_WORDS.split())


def raw_bm25_floor(threshold: float) -> Callable[..., list[Any]]:
    """The floor before the retrieval work: each hit's raw BM25 must reach a constant."""

    def apply(conn: Any, scored: list[Any], floor: float, *, like: bool, terms: Any, **_context: Any) -> list[Any]:
        return [item for item in scored if item[1] >= threshold]

    return apply


ABLATIONS: dict[str, tuple[dict[str, Any], bool | float]] = {
    "final (production)": ({}, True),
    "no floor (ranking alone)": ({}, False),
    "floor 1.0": ({}, 1.0),
    "floor 1.2 rare-term matches (production: 1.4)": ({}, 1.2),
    "floor 1.3": ({}, 1.3),
    "floor 1.5": ({}, 1.5),
    "floor 1.6": ({}, 1.6),
    "floor 1.8": ({}, 1.8),
    "per-hit raw BM25 >= 7.0 (before)": ({"apply_relevance_floor": raw_bm25_floor(7.0)}, True),
    "no two-distinct-words rule": ({"MIN_DISTINCT_TERMS": 0}, True),
    "no short-query relief (short prompts also need 2 words)": ({"SHORT_QUERY_TERMS": 0}, True),
    "short queries: <= 3 terms": ({"SHORT_QUERY_TERMS": 3}, True),
    "no inheritance from superseded": ({"INHERIT_SHARE": 0.0}, True),
    "no tail cut": ({"TAIL_RATIO": 0.0}, True),
    "tail cut at 0.5 of best": ({"TAIL_RATIO": 0.5}, True),
    "without the chatter stop words": ({"STOPWORDS": search_module.STOPWORDS - ADDED_STOPWORDS}, True),
    "title weight 1 (= body)": ({"TITLE_WEIGHT": 1.0}, True),
    "title weight 4": ({"TITLE_WEIGHT": 4.0}, True),
    "no rerank (type, recency, pin, confidence)": ({"rerank_factor": lambda record, now: 1.0}, True),
}


def floor_of(variant: str) -> dict[str, Any]:
    """`run_queries`' floor arguments for an `ABLATIONS` row: the production floor, none, or the
    row's explicit one."""
    floor_on = ABLATIONS[variant][1]
    return {"floor_on": bool(floor_on), "floor": None if isinstance(floor_on, bool) else float(floor_on)}


@contextmanager
def patched(**values: Any) -> Iterator[None]:
    saved = {name: getattr(search_module, name) for name in values}
    try:
        for name, value in values.items():
            setattr(search_module, name, value)
        yield
    finally:
        for name, value in saved.items():
            setattr(search_module, name, value)


@pytest.mark.parametrize("variant", list(ABLATIONS))
@pytest.mark.parametrize("set_name", _eval.SETS)
def test_ablation(benchmark, eval_set, bench_mode, set_name: str, variant: str) -> None:
    data = eval_set(set_name)
    queries = data.queries[: bench_mode.scale(len(data.queries), 20)]  # CI: each row works, cheaply
    benchmark.group = f"ablation {set_name}"
    with patched(**ABLATIONS[variant][0]):
        rows = benchmark.pedantic(
            _eval.run_queries, args=(data.loaded, queries), kwargs={"now": data.now, **floor_of(variant)}
        )
    metrics = data.score(rows, queries=queries)
    benchmark.extra_info.update(
        queries=len(queries),
        **{key: round(metrics[key], 3) for key in ("recall@3", "MRR@10", "empty_precision")},
    )


@pytest.mark.parametrize("variant", list(ABLATIONS))
def test_every_ablation_row_runs_without_the_dev_sets(tmp_path: Path, variant: str) -> None:
    """Each row of `test_ablation` patched into a real search on a fresh clone, where the dev
    sets (and so `test_ablation`) are absent: a stand-in that no longer fits what `search()`
    calls it with fails here, not only where `../shared` is."""
    records = _corpus.padding_records(projects=2, records=60)
    loaded = _eval.load_into_store(records, tmp_path / "small.db")
    try:
        queries = [
            {"qid": f"q{number}", "project": record["project"], "query": f"why {record['title'].lower()}?"}
            for number, record in enumerate(records[::15])
        ] + [{"qid": "nothing", "project": records[0]["project"], "query": "which coffee should the team order?"}]
        with patched(**ABLATIONS[variant][0]):
            rows = _eval.run_queries(loaded, queries, now=_eval.default_now(records), **floor_of(variant))
    finally:
        loaded.store.close()
    assert len(rows) == len(queries)
    assert any(row["ids"] for row in rows), "no query found its own record's title"


# -- held out: leave one project out (issue 31) ------------------------------------------------

FLOOR_GRID = (1.0, 1.2, 1.3, 1.4, 1.5, 1.6, 1.8)  # the keyword floor's one fitted constant, in rare-term matches


def test_keyword_floor_held_out(benchmark, eval_set, bench_mode) -> None:
    """The keyword path's figure the way acceptance measures it: for each of the 12 dev projects
    (both sets), the floor (`RELEVANCE_FLOOR`) chosen among `FLOOR_GRID` on the other 11
    (recall@3 + empty precision), then applied to the one left out; next to in-sample
    (production's 1.4, chosen on all of them). Each set in its own store, as `test_retrieval`."""
    sets = [eval_set(name) for name in _eval.SETS]
    benchmark.group = "quality held out"

    def gather() -> dict[tuple[str, float], list[dict[str, Any]]]:
        rows: dict[tuple[str, float], list[dict[str, Any]]] = {}
        for data in sets:
            queries = data.queries[: bench_mode.scale(len(data.queries), 20)]
            for floor in FLOOR_GRID:
                rows[data.name, floor] = _eval.run_queries(
                    data.loaded, queries, floor_on=True, now=data.now, floor=floor
                )
        return rows

    rows = benchmark.pedantic(gather, rounds=1, iterations=1)
    in_sample, held_out, held = held_out_figures(sets, rows)
    benchmark.extra_info.update(
        in_sample=in_sample, held_out=held_out, floors_chosen={f"{s}/{p}": f for (s, p), f in held.items()}
    )
    print(f"\nkeyword floor, in-sample (1.4): {in_sample}\nheld out: {held_out}\nchosen: {held}")


Figures = dict[str, dict[str, float]]


def held_out_figures(
    sets: list[_eval.EvalSet], rows: dict[tuple[str, float], list[dict[str, Any]]]
) -> tuple[Figures, Figures, dict[tuple[str, str], float]]:
    """In-sample (floor 1.4 everywhere) and leave-one-project-out figures (each project's floor
    chosen among `FLOOR_GRID` on the other projects of both sets) from each set's result rows
    per floor (`rows[set name, floor]`); and the floor chosen for each project."""
    by_qid = {query["qid"]: (data, query) for data in sets for query in data.queries}
    projects = sorted({(data.name, query["project"]) for data in sets for query in data.queries})

    def figures(picked: dict[tuple[str, str], float]) -> Figures:
        out: Figures = {}
        for data in sets:
            chosen = [
                row for row in rows[data.name, FLOOR_GRID[0]] if (data.name, by_qid[row["qid"]][1]["project"]) in picked
            ]
            result = [
                next(
                    r
                    for r in rows[data.name, picked[data.name, by_qid[row["qid"]][1]["project"]]]
                    if r["qid"] == row["qid"]
                )
                for row in chosen
            ]
            asked = {row["qid"] for row in result}
            if result:
                metrics = data.score(result, queries=[q for q in data.queries if q["qid"] in asked])
                out[data.name] = {key: round(metrics[key], 3) for key in ("recall@3", "empty_precision")}
        return out

    def merit(floor: float, keep: set[tuple[str, str]]) -> float:
        found = figures(dict.fromkeys(keep, floor))
        return sum(item["recall@3"] + item["empty_precision"] for item in found.values())

    held: dict[tuple[str, str], float] = {}
    for project in projects:
        others = set(projects) - {project}
        held[project] = max(FLOOR_GRID, key=lambda floor: (merit(floor, others), -abs(floor - 1.4)))
    return figures(dict.fromkeys(projects, 1.4)), figures(held), held


def test_keyword_neighbours(benchmark, eval_set, bench_mode, tmp_path) -> None:
    """Issue 31: a project's figures do not depend on the other projects in the store. Each dev
    set in its own store (`eval_set`) against one store holding both sets and
    `_corpus.PADDING_PROJECTS` synthetic projects of developer vocabulary; keyword path, in-sample and
    held out (`held_out_figures`), recall@3 and empty precision must agree within 0.02."""
    sets = [eval_set(name) for name in _eval.SETS]
    benchmark.group = "quality held out"
    shared = _eval.load_into_store([record for data in sets for record in data.records], tmp_path / "shared.db")
    padding = _corpus.padding()
    neighbours = {name: Project(project_id=name, root=Path("/padding") / name, name=name) for name, _record in padding}
    _corpus.bulk_insert(shared.store, [(neighbours[name], record) for name, record in padding])

    def gather() -> dict[str, dict[tuple[str, float], list[dict[str, Any]]]]:
        out: dict[str, dict[tuple[str, float], list[dict[str, Any]]]] = {"alone": {}, "shared": {}}
        for data in sets:
            queries = data.queries[: bench_mode.scale(len(data.queries), 20)]
            for floor in FLOOR_GRID:
                for store_kind, loaded in (("alone", data.loaded), ("shared", shared)):
                    out[store_kind][data.name, floor] = _eval.run_queries(
                        loaded, queries, floor_on=True, now=data.now, floor=floor
                    )
        return out

    try:
        rows = benchmark.pedantic(gather, rounds=1, iterations=1)
    finally:
        shared.store.close()
    figures = {kind: held_out_figures(sets, rows[kind])[:2] for kind in ("alone", "shared")}
    report = {
        f"{kind} {which}": figures[kind][index]
        for kind in ("alone", "shared")
        for index, which in enumerate(("in-sample", "held out"))
    }
    benchmark.extra_info.update(report)
    print("\nkeyword path, each set alone vs both sets + padding in one store:")
    for key, value in report.items():
        print(f"  {key}: {value}")
    for index in (0, 1):
        for name, alone in figures["alone"][index].items():
            for metric, value in alone.items():
                shared_value = figures["shared"][index][name][metric]
                if math.isnan(value) and math.isnan(shared_value):
                    continue  # no query of that kind in a short sample (--benchmark-disable)
                assert abs(shared_value - value) <= 0.02, (name, metric, index)


CALIBRATION_LEVELS = (0.75, 0.8, 0.85, 0.9, 0.95)  # `agentctx_store.calibration.KEYWORD_LEVEL` candidates
K1_GRID = (1.2, 1.5, 1.75, 2.0, 2.5)  # `agentctx_store.retrieval.BM25_K1` candidates (1.2 is FTS5's)


def test_keyword_floor_calibrated(benchmark, eval_set, bench_mode) -> None:
    """The keyword floor each project calibrates for itself (`agentctx_store.calibration`: the
    reference texts' levels, the `KEYWORD_LEVEL` quantile within `KEYWORD_BOUNDS`), each set in
    its own store: in-sample (production's level) and held out (the level chosen among
    `CALIBRATION_LEVELS` on the other 11 dev projects, recall@3 + empty precision, applied to
    the one left out; its calibration never sees an eval query). The time is calibrating."""
    benchmark.group = "quality held out"
    sets = [eval_set(name) for name in _eval.SETS]
    found = benchmark.pedantic(calibrated_held_out, args=(sets, bench_mode), rounds=1, iterations=1)
    benchmark.extra_info.update(found)
    print(
        f"\ncalibrated keyword floor, in-sample: {found['in_sample']}\nheld out: {found['held_out']}"
        f"\nfloors: {found['floors']}\nlevels: {found['chosen']}"
    )


def test_keyword_bm25_k1_held_out(benchmark, eval_set, bench_mode) -> None:
    """BM25's k1 in the rescoring (`BM25_K1`), chosen the way acceptance would see it: with the
    calibrated floor, each dev project's k1 and level chosen together among `K1_GRID` ×
    `CALIBRATION_LEVELS` on the other 11 (`chosen`), applied to the one left out (`held_out`);
    next to each k1 alone, held out over the levels (`by_k1`). Each set in its own store."""
    benchmark.group = "quality held out"
    sets = [eval_set(name) for name in _eval.SETS]
    cache: dict[Any, Any] = {}
    found = benchmark.pedantic(calibrated_held_out, args=(sets, bench_mode, K1_GRID, cache), rounds=1, iterations=1)
    by_k1 = {k1: calibrated_held_out(sets, bench_mode, (k1,), cache)["held_out"] for k1 in K1_GRID}
    found["by_k1"] = by_k1
    benchmark.extra_info.update(found)
    print(f"\nk1 and level chosen held out: {found['held_out']}\nchosen: {found['chosen']}")
    for k1, figures in by_k1.items():
        print(f"  k1 {k1}, level held out: {figures}")


def calibrated_held_out(
    sets: list[Any], bench_mode: Any, k1_grid: tuple[float, ...] | None = None, cache: dict[Any, Any] | None = None
) -> dict[str, Any]:
    """The calibrated keyword floor's figures in-sample (production's k1 and level) and held out:
    for each project, the (k1, level) pair among `k1_grid` (default: production's k1 alone) ×
    `CALIBRATION_LEVELS` with the best recall@3 + empty precision on the other 11 projects (ties
    go to production's), applied to it. `cache`, when given, keeps the calibrations and query
    rows for the caller's next call."""
    from agentctx_store import calibration

    production = (search_module.BM25_K1, calibration.KEYWORD_LEVEL)
    k1_grid = (production[0],) if k1_grid is None else k1_grid
    cache = {} if cache is None else cache
    types = ("decision", "convention", "preference", "discovery", "bugfix", "profile")
    projects = sorted({(data.name, query["project"]) for data in sets for query in data.queries})
    by_name = {data.name: data for data in sets}

    def measured(k1: float, set_name: str, name: str) -> tuple[list[float], int]:
        if ("calibration", k1, set_name, name) not in cache:
            loaded = by_name[set_name].loaded
            project = loaded.projects[name]
            with patched(BM25_K1=k1):
                texts = calibration.reference_texts(loaded.store, project, types)
                levels = sorted(calibration.keyword_level(loaded.store, project, t, types=types) for t in texts)
            cache["calibration", k1, set_name, name] = (
                levels,
                calibration.visible_records(loaded.store, project, types),
            )
        return cache["calibration", k1, set_name, name]

    def rows(set_name: str, name: str, choice: tuple[float, float]) -> list[dict[str, Any]]:
        k1, level = choice
        floor = round(calibration.keyword_floor(*measured(k1, set_name, name), level=level), 4)
        if ("rows", k1, set_name, name, floor) not in cache:
            data = by_name[set_name]
            own = [q for q in data.queries if q["project"] == name][: bench_mode.scale(10_000, 4)]
            with patched(BM25_K1=k1):
                cache["rows", k1, set_name, name, floor] = _eval.run_queries(
                    data.loaded, own, floor_on=True, now=data.now, floor=floor
                )
        return cache["rows", k1, set_name, name, floor]

    def figures(choice_of: dict[tuple[str, str], tuple[float, float]]) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for data in sets:
            picked = [rows(s, name, choice) for (s, name), choice in choice_of.items() if s == data.name]
            result = [row for part in picked for row in part]
            if result:
                asked = {row["qid"] for row in result}
                metrics = data.score(result, queries=[q for q in data.queries if q["qid"] in asked])
                out[data.name] = {key: round(metrics[key], 3) for key in ("recall@3", "empty_precision")}
        return out

    choices = [(k1, level) for k1 in k1_grid for level in CALIBRATION_LEVELS]
    held: dict[tuple[str, str], tuple[float, float]] = {}
    for project in projects:
        others = [p for p in projects if p != project]

        def merit(choice: tuple[float, float], others: list[tuple[str, str]] = others) -> float:
            return sum(v["recall@3"] + v["empty_precision"] for v in figures(dict.fromkeys(others, choice)).values())

        held[project] = max(choices, key=lambda c: (merit(c), -abs(c[0] - production[0]), -abs(c[1] - production[1])))
    in_sample = figures(dict.fromkeys(projects, production)) if production[0] in k1_grid else {}
    return {
        "in_sample": in_sample,
        "held_out": figures(held),
        "floors": {
            f"{s}/{p}": round(calibration.keyword_floor(*measured(production[0], s, p)), 3) for s, p in projects
        },
        "chosen": {f"{s}/{p}": choice for (s, p), choice in held.items()},
    }
