"""Calibrate and ablate the hybrid floor (`agentctx_embed.hybrid.HybridFloor`) on the eval sets.

A helper of `test_bench_hybrid.py` (no entry point of its own):

    uv run --frozen pytest bench/test_bench_hybrid.py -k ablation --benchmark-only

`prepare()` loads a set into a throwaway store (`_eval.load_into_store`), and each project alone
into its own store, embeds every current record once with the real model (the MiniLM int8 export
in the shared folder: `_harness.shared_root()`, `AGENTCTX_BENCH_SHARED`), and gathers every
query's candidates through `candidates()`; `score()` then applies one floor variant
(`variants()`) to them and scores the shared and the per-project runs with the set's `eval.py`.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from pathlib import Path
from typing import Any

from _eval import load_into_store  # bench/ is on sys.path
from _harness import REAL_MODEL_DIR, REAL_MODEL_NAME, shared_root

SHARED = shared_root()
MINILM = SHARED / REAL_MODEL_DIR
PROMPT_TYPES = ("decision", "convention", "preference", "discovery", "bugfix", "profile")


def load_embedder() -> Any:
    """MiniLM-L6-v2 int8 from the shared folder, offline (no environment variable is changed)."""
    from agentctx_embed.models import ModelChoice, load

    return load(ModelChoice(name=REAL_MODEL_NAME, model_dir=MINILM, cache_dir=MINILM.parent), allow_download=False)


CACHE: dict[tuple[str, str], Any] = {}


def cached_passages(embedder: Any, texts: list[str]) -> Any:
    """Embeddings of `texts`, each computed once per run and model (shared and per-project stores)."""
    import numpy as np

    todo = [text for text in dict.fromkeys(texts) if (embedder.name, text) not in CACHE]
    if todo:
        for text, vector in zip(todo, embedder.passages(todo), strict=True):
            CACHE[embedder.name, text] = vector
    if not texts:
        return np.zeros((0, embedder.dims), dtype=np.float32)
    return np.vstack([CACHE[embedder.name, text] for text in texts])


def build_index(loaded: Any, embedder: Any, text: Any = None) -> Any:
    """The set's current records embedded as `text(record)` makes them (default: production's
    `agentctx_embed.phase.embedding_text`), or as a `WithTitle` combines two passages."""
    from agentctx_embed.hybrid import VectorIndex
    from agentctx_embed.phase import embedding_text

    rows = loaded.store.conn.execute(
        "SELECT id, project_id, type, title, body, valid_from FROM records WHERE superseded_at IS NULL"
    ).fetchall()
    index = VectorIndex(embedder.dims)
    if isinstance(text, WithTitle):
        vectors = text.vectors(embedder, [dict(row) for row in rows])
    else:
        vectors = cached_passages(embedder, [(text or embedding_text)(dict(row)) for row in rows])
    index.put([(row["id"], row["project_id"], row["type"], "") for row in rows], vectors)
    return index


def gather(
    loaded: Any,
    index: Any,
    queries: list[dict[str, Any]],
    qvec: dict[str, Any],
    now: Any,
    keyword_floors: dict[str, float] | None = None,
    tokens: Any = None,
) -> list[Any]:
    """Every query's candidates and signals, once; floors are applied to them afterwards.
    `keyword_floors`: each eval project's keyword floor (its calibration), default the constant.
    `tokens`: the model's token states, for the floor's coverage (`Prepared.tokens`)."""
    from agentctx_embed.hybrid import candidates
    from agentctx_store.retrieval import RELEVANCE_FLOOR

    found = []
    for query in queries:
        project = loaded.projects.get(query["project"])
        if project is None:
            found.append(None)
            continue
        found.append(
            candidates(
                loaded.store,
                project,
                query["query"],
                index=index,
                query_vector=qvec[query["qid"]],
                types=PROMPT_TYPES,
                now=now,
                keyword_floor=(keyword_floors or {}).get(query["project"], RELEVANCE_FLOOR),
                tokens=tokens,
            )
        )
    return found


def run(
    loaded: Any, queries: list[dict[str, Any]], found: list[Any], floor: Any, floors: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """`floors`: a floor per eval project (the calibrated ones), instead of `floor` for all."""
    from agentctx_embed.hybrid import apply_floor

    rows = []
    for query, item in zip(queries, found, strict=True):
        chosen = floors[query["project"]] if floors is not None else floor
        hits = apply_floor(item, chosen, limit=10).hits if item is not None else []
        rows.append(
            {
                "qid": query["qid"],
                "ids": [loaded.eval_id.get(hit.record.record_id, hit.record.record_id) for hit in hits],
                "scores": [round(hit.score, 5) for hit in hits],
            }
        )
    return rows


def variants(grid: bool) -> list[tuple[str, Any]]:
    from agentctx_embed.hybrid import DEFAULT_FLOOR, HybridFloor

    final = DEFAULT_FLOOR
    replace = dataclasses.replace
    off = 99.0
    out: list[tuple[str, Any]] = [
        ("final", final),
        ("no floor (ranking alone)", None),
        ("keyword floor only", replace(final, z_alone=off, z_with_keyword=off, weak_keyword_share=0.0)),
        ("no vector veto on weak keyword passes", replace(final, weak_keyword_share=0.0)),
        ("no keyword+vector rule", replace(final, z_with_keyword=off)),
        ("no vector-alone rule", replace(final, z_alone=off)),
        ("no same-record rule", replace(final, same_record_share=off, same_record_z=off)),
        ("same-record rule at share 0.7", replace(final, same_record_share=0.7)),
        ("same-record rule at share 0.9", replace(final, same_record_share=0.9)),
        ("same-record rule at z 2.6", replace(final, same_record_z=2.6)),
        ("same-record rule at z 2.9", replace(final, same_record_z=2.9)),
        ("no tail cut", replace(final, tail_cosine=0.0, tail_keyword=0.0)),
    ]
    for z_kw in (2.5, 3.5):
        out.append((f"z_with_keyword {z_kw}", replace(final, z_with_keyword=z_kw)))
    for share in (0.25, 0.75):
        out.append((f"keyword_share {share}", replace(final, keyword_share=share)))
    for weak, weak_z in ((1.25, 2.5), (1.5, 2.25), (1.5, 2.5)):
        out.append(
            (
                f"veto below {weak} of the gate unless z ≥ {weak_z}",
                replace(final, weak_keyword_share=weak, weak_keyword_z=weak_z),
            )
        )
    for z_alone in (3.5, 4.5):
        out.append((f"z_alone {z_alone}", replace(final, z_alone=z_alone)))
    for tail in (0.5, 0.6, 0.7, 0.85):
        out.append((f"tail_cosine {tail}", replace(final, tail_cosine=tail)))
    if grid:
        for z_kw in (2.0, 2.5, 3.0, 3.5):
            for share in (0.25, 0.5, 0.75):
                for weak, weak_z in ((0.0, 0.0), (1.25, 2.25), (1.5, 2.5)):
                    out.append(
                        (
                            f"z_kw={z_kw} share={share} veto={weak}/{weak_z}",
                            HybridFloor(
                                z_with_keyword=z_kw, keyword_share=share, weak_keyword_share=weak, weak_keyword_z=weak_z
                            ),
                        )
                    )
    return out


@dataclasses.dataclass
class Prepared:
    """One eval set with every query's candidates gathered, shared and per project."""

    records: list[dict[str, Any]]
    queries: list[dict[str, Any]]
    scorer: Any
    loaded: Any
    found: list[Any]
    alone: list[tuple[Any, list[dict[str, Any]], list[Any]]]  # (store, its queries, their candidates)
    # what `regather` needs: the query vectors, "now", and each store's vector index
    qvec: dict[str, Any] = dataclasses.field(default_factory=dict)
    now: Any = None
    index: Any = None
    alone_index: list[Any] = dataclasses.field(default_factory=list)
    tokens: Any = None  # the model's token states, each text's once (`hybrid.coverage`)

    def close(self) -> None:
        self.loaded.store.close()
        for alone, _own, _found in self.alone:
            alone.store.close()


def prepare(
    records: list[dict[str, Any]],
    queries: list[dict[str, Any]],
    scorer: Any,
    now: datetime,
    embedder: Any,
    scratch: Path,
    text: Any = None,
) -> Prepared:
    """Load, embed and gather once; `score()` applies floors afterwards. Close it when done.
    `text`: how a record becomes the passage embedded (`build_index`)."""
    qvec = {query["qid"]: embedder.query(query["query"]) for query in queries}
    loaded = load_into_store(records, scratch / "eval.db")
    prepared = Prepared(records, queries, scorer, loaded, [], [], qvec=qvec, now=now)
    if getattr(embedder, "tokens", None) is not None:
        from agentctx_embed.hybrid import remembered

        prepared.tokens = remembered(embedder.tokens)
    try:
        prepared.index = build_index(loaded, embedder, text)
        prepared.found = gather(loaded, prepared.index, queries, qvec, now, tokens=prepared.tokens)
        for name in sorted({record["project"] for record in records}):
            own = [query for query in queries if query["project"] == name]
            if not own:  # a neighbour with nothing asked of it (padding) has no figures alone
                continue
            alone = load_into_store([r for r in records if r["project"] == name], scratch / f"alone-{name}.db")
            prepared.alone_index.append(build_index(alone, embedder, text))
            found = gather(alone, prepared.alone_index[-1], own, qvec, now, tokens=prepared.tokens)
            prepared.alone.append((alone, own, found))
    except BaseException:
        prepared.close()
        raise
    return prepared


def _with_date(record: dict[str, Any]) -> str:
    from agentctx_embed.phase import EMBED_CHARS

    return f"[{record['type']}] [{str(record['valid_from'])[:10]}] {record['title']}\n{record['body']}"[:EMBED_CHARS]


def _plain(record: dict[str, Any]) -> str:
    from agentctx_embed.phase import EMBED_CHARS

    return f"{record['title']}\n{record['body']}"[:EMBED_CHARS]


@dataclasses.dataclass(frozen=True)
class WithTitle:
    """A record's vector made of two passages: production's (`embedding_text`) plus `weight` times
    that of its `[type] title` alone, normalised, so the subject a title names keeps its weight
    in a long text. `long_only`: only for records whose passage is cut at `EMBED_CHARS` (the others
    keep production's vector)."""

    weight: float
    long_only: bool = False

    def vectors(self, embedder: Any, records: list[dict[str, Any]]) -> Any:
        import numpy as np
        from agentctx_embed.phase import EMBED_CHARS, embedding_text

        passages = [embedding_text(record) for record in records]
        full = cached_passages(embedder, passages)
        titles = cached_passages(embedder, [f"[{record['type']}] {record['title']}" for record in records])
        if self.long_only:
            cut = np.array([len(passage) >= EMBED_CHARS for passage in passages], dtype=np.float32)[:, None]
            titles = titles * cut
        both = full + self.weight * titles
        return (both / np.linalg.norm(both, axis=1, keepdims=True)).astype(np.float32)


# What a record's embedded passage is made of (`agentctx_embed.phase.embedding_text`), or a
# `WithTitle` pair of passages
TEXT_FORMS: dict[str, Any] = {
    "[type] title + body (production)": None,
    "[type] [date] title + body (before)": _with_date,
    "title + body": _plain,
    "with the title's vector at 0.5": WithTitle(0.5),
    "with the title's vector at 1.0": WithTitle(1.0),
    "with the title's vector at 0.5, cut records only": WithTitle(0.5, long_only=True),
    "with the title's vector at 1.0, cut records only": WithTitle(1.0, long_only=True),
}


FUSIONS = {
    "evidence, weight 0.3 (production)": ("evidence", 0.3),
    "reciprocal rank fusion (before)": ("rrf", 0.3),
    "evidence, weight 0.1": ("evidence", 0.1),
    "evidence, weight 0.2": ("evidence", 0.2),
    "evidence, weight 0.5": ("evidence", 0.5),
    "evidence, weight 1.0": ("evidence", 1.0),
}


def regather(prepared: Prepared, fusion: str, weight: float) -> Prepared:
    """The same set's candidates fused another way (`hybrid.FUSION`, `hybrid.VECTOR_WEIGHT`
    patched while gathering); the stores and vectors are shared with `prepared`."""
    import importlib

    hybrid = importlib.import_module("agentctx_embed.hybrid")
    saved = hybrid.FUSION, hybrid.VECTOR_WEIGHT
    hybrid.FUSION, hybrid.VECTOR_WEIGHT = fusion, weight
    try:
        found = gather(
            prepared.loaded, prepared.index, prepared.queries, prepared.qvec, prepared.now, tokens=prepared.tokens
        )
        alone = [
            (store, own, gather(store, index, own, prepared.qvec, prepared.now, tokens=prepared.tokens))
            for (store, own, _found), index in zip(prepared.alone, prepared.alone_index, strict=True)
        ]
    finally:
        hybrid.FUSION, hybrid.VECTOR_WEIGHT = saved
    return dataclasses.replace(prepared, found=found, alone=alone)


def injection(prepared: Prepared, floor: Any) -> dict[str, Any]:
    """What the prompt hook would inject for each query (top 3 through `compose_injection`, as
    `agentctx_store.prompt_answer` composes), measured as `_eval.injection_figures` does, shared
    store and per project; recall@3 counts title lines."""
    from _eval import injected_blocks, injection_figures
    from agentctx_embed.hybrid import apply_floor
    from agentctx_store.inject import compose_injection

    def measure(loaded: Any, queries: list[dict[str, Any]], found: list[Any]) -> list[Any]:
        rows = []
        for query, item in zip(queries, found, strict=True):
            hits = apply_floor(item, floor, limit=3).hits if item is not None else []
            text = compose_injection(hits, query["query"]).text
            rows.append((query, text, injected_blocks(text, loaded.eval_id)))
        return rows

    alone_rows: list[Any] = []
    for store, own, own_found in prepared.alone:
        alone_rows += measure(store, own, own_found)
    return {
        "shared": injection_figures(measure(prepared.loaded, prepared.queries, prepared.found)),
        "per_project": injection_figures(alone_rows),
    }


def score(prepared: Prepared, floor: Any) -> dict[str, Any]:
    """The set's metrics with `floor` applied, in the shared store and with each project alone."""
    rows = run(prepared.loaded, prepared.queries, prepared.found, floor)
    alone_rows: list[dict[str, Any]] = []
    for alone, own, own_found in prepared.alone:
        alone_rows += run(alone, own, own_found, floor)
    evaluate = prepared.scorer.evaluate
    return {
        "shared": evaluate(prepared.queries, rows, prepared.records, None, 10),
        "per_project": evaluate(prepared.queries, alone_rows, prepared.records, None, 10),
    }


# -- the calibrated floor (issue 31) -------------------------------------------------------------


@dataclasses.dataclass
class Calibrated:
    """Each eval project's calibration (`hybrid.calibrate`), in the set's store and alone."""

    shared: dict[str, Any]  # eval project -> Calibration
    alone: dict[str, Any]
    # every query's candidates gathered again with its project's calibrated keyword floor
    found: list[Any] = dataclasses.field(default_factory=list)
    alone_found: list[list[Any]] = dataclasses.field(default_factory=list)


# How `calibrations` may measure: production; the calibration before the project's own
# vocabulary prompts and the lift (the 40 fixed prompts, thresholds their quantiles); or
# production with each project's calibrated keyword floor deciding the hybrid's keyword pass.
CALIBRATION_MODES = ("production", "no lift", "calibrated keyword floor in the hybrid")


def calibrations(prepared: Prepared, embedder: Any, mode: str = CALIBRATION_MODES[0]) -> Calibrated:
    """Measure every project with the reference texts, as the service does at a first prompt,
    in one of `CALIBRATION_MODES`."""
    import importlib

    from agentctx_embed.hybrid import calibrate

    hybrid = importlib.import_module("agentctx_embed.hybrid")
    saved = hybrid.REFERENCE_ANSWER_RATE
    if mode == CALIBRATION_MODES[1]:
        hybrid.REFERENCE_ANSWER_RATE = 1.0
    try:
        return _calibrations(prepared, embedder, calibrate, keyword=mode == CALIBRATION_MODES[2])
    finally:
        hybrid.REFERENCE_ANSWER_RATE = saved


def _calibrations(prepared: Prepared, embedder: Any, calibrate: Any, *, keyword: bool) -> Calibrated:
    from agentctx_store.calibration import calibrate_keyword
    from agentctx_store.retrieval import RELEVANCE_FLOOR

    vectors: dict[str, Any] = {}

    def embed(prompt: str) -> Any:
        if prompt not in vectors:
            vectors[prompt] = embedder.query(prompt)
        return vectors[prompt]

    keyword_floors: dict[tuple[int, str], float] = {}

    def measure(loaded: Any, index: Any, name: str) -> Any:
        project = loaded.projects[name]
        floor = calibrate_keyword(loaded.store, project, types=PROMPT_TYPES)["floor"] if keyword else RELEVANCE_FLOOR
        keyword_floors[id(loaded), name] = floor
        return calibrate(
            loaded.store,
            project,
            index=index,
            embed=embed,
            model=embedder.name,
            types=PROMPT_TYPES,
            keyword_floor=floor,
            tokens=prepared.tokens,
        )

    def floors(loaded: Any) -> dict[str, float]:
        return {name: value for (owner, name), value in keyword_floors.items() if owner == id(loaded)}

    asked = sorted({query["project"] for query in prepared.queries})
    shared = {name: measure(prepared.loaded, prepared.index, name) for name in asked}
    alone: dict[str, Any] = {}
    alone_found: list[list[Any]] = []
    for (store, own, found), index in zip(prepared.alone, prepared.alone_index, strict=True):
        alone |= {name: measure(store, index, name) for name in {query["project"] for query in own}}
        alone_found.append(
            gather(store, index, own, prepared.qvec, prepared.now, floors(store), prepared.tokens) if keyword else found
        )
    found = prepared.found
    if keyword:  # the queries' keyword pass at their project's calibrated floor
        found = gather(
            prepared.loaded,
            prepared.index,
            prepared.queries,
            prepared.qvec,
            prepared.now,
            floors(prepared.loaded),
            prepared.tokens,
        )
    return Calibrated(shared=shared, alone=alone, found=found, alone_found=alone_found)


# The calibration's levels (`hybrid.CALIBRATED_Z`, `hybrid.Z_ALONE_MARGIN`,
# `hybrid.REFERENCE_ANSWER_RATE`) a leave-one-project-out run chooses from: production first.
LEVEL_GRID: list[tuple[dict[str, float], float, float]] = [
    ({"z_with_keyword": kw, "same_record_z": same, "weak_keyword_z": weak}, margin, rate)
    for kw, same, weak, margin, rate in (
        (0.9, 0.75, 0.5, 0.25, 0.2),
        (0.9, 0.75, 0.5, 0.25, 0.1),
        (0.9, 0.75, 0.5, 0.25, 0.3),
        (0.9, 0.75, 0.5, 0.25, 1.0),
        (0.9, 0.75, 0.5, 0.0, 0.2),
        (0.9, 0.75, 0.5, 1.0, 0.2),
        (1.0, 0.75, 0.25, 0.25, 0.2),
        (0.9, 0.5, 0.5, 0.25, 0.2),
        (0.75, 0.75, 0.5, 0.25, 0.2),
        (0.9, 0.9, 0.5, 0.25, 0.2),
        (0.9, 0.75, 0.75, 0.25, 0.2),
    )
]


def calibrated_floors(
    calibrated: dict[str, Any], levels: tuple[dict[str, float], float, float] | None = None
) -> dict[str, Any]:
    """Each project's floor from its calibration, at `levels` (default: production's; the lift
    measured again at those levels from the reference texts' signals)."""
    import importlib

    hybrid = importlib.import_module("agentctx_embed.hybrid")
    if levels is None:
        return {name: calibration.floor() for name, calibration in calibrated.items()}
    saved = hybrid.CALIBRATED_Z, hybrid.Z_ALONE_MARGIN, hybrid.REFERENCE_ANSWER_RATE
    hybrid.CALIBRATED_Z, hybrid.Z_ALONE_MARGIN, hybrid.REFERENCE_ANSWER_RATE = levels
    try:
        out = {}
        for name, calibration in calibrated.items():
            lifted = dataclasses.replace(calibration, lift=hybrid.lift(calibration, calibration.references))
            out[name] = lifted.floor()
        return out
    finally:
        hybrid.CALIBRATED_Z, hybrid.Z_ALONE_MARGIN, hybrid.REFERENCE_ANSWER_RATE = saved


def score_calibrated(prepared: Prepared, calibrated: Calibrated) -> dict[str, Any]:
    """The set's metrics with each project's calibrated floor: in-sample (production levels) and
    leave-one-project-out (the levels of `LEVEL_GRID` that score best on every other project,
    recall@3 + empty precision, applied to the one left out), shared store and each alone."""
    evaluate = prepared.scorer.evaluate

    def rows_for(label: str, floors: dict[str, Any], only: set[str] | None = None) -> list[dict[str, Any]]:
        if label == "shared":
            pairs = [(prepared.loaded, prepared.queries, calibrated.found)]
        else:
            pairs = [
                (store, own, found)
                for (store, own, _found), found in zip(prepared.alone, calibrated.alone_found, strict=True)
            ]
        rows: list[dict[str, Any]] = []
        for loaded, queries, found in pairs:
            keep = [i for i, query in enumerate(queries) if only is None or query["project"] in only]
            rows += run(loaded, [queries[i] for i in keep], [found[i] for i in keep], None, floors)
        return rows

    def metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
        asked = {row["qid"] for row in rows}
        return evaluate([q for q in prepared.queries if q["qid"] in asked], rows, prepared.records, None, 10)

    out: dict[str, Any] = {}
    names = sorted({query["project"] for query in prepared.queries})
    for label in ("shared", "per_project"):
        cals = calibrated.shared if label == "shared" else calibrated.alone
        out[label] = metrics(rows_for(label, calibrated_floors(cals)))
        held: list[dict[str, Any]] = []
        chosen: dict[str, int] = {}
        for name in names:
            others = set(names) - {name}

            def merit(
                levels: tuple[dict[str, float], float, float],
                others: set[str] = others,
                label: str = label,
                cals: dict[str, Any] = cals,
            ) -> float:
                found = metrics(rows_for(label, calibrated_floors(cals, levels), others))
                return found["recall@3"] + found["empty_precision"]

            best = max(range(len(LEVEL_GRID)), key=lambda i: (merit(LEVEL_GRID[i]), -i))
            chosen[name] = best
            held += rows_for(label, calibrated_floors(cals, LEVEL_GRID[best]), {name})
        out[f"{label}_lopo"] = metrics(held) | {"levels_chosen": chosen}
    return out
