"""Hybrid retrieval: the store's keyword search fused with vector similarity, and its floor.

Used by the warm search service (`agentctx_embed.service`) for the prompt hook, `ctx_search` and
`agentctx search`, and by `bench/` for the figures in docs/retrieval.md.

1. **Keyword**: `agentctx_store.retrieval.search()` exactly as the keyword path runs it (BM25,
   current heads, rerank), once without a floor (candidates and their relevance) and once with
   the production floor (did the keyword evidence alone pass?).
2. **Vector**: the cosine of the prompt's vector to every current record of the visible
   namespaces and types (`VectorIndex`, in memory).
3. **Fusion** (`evidence_fusion`): each candidate's keyword score in units of the store's gate
   plus a weight times its cosine's z; the values keep each signal's margin, so the composition
   of the injection can compare a runner-up to the best hit (reciprocal rank fusion,
   `agentctx_store.digest.ranking.rrf`, stays as the ablation's alternative).
4. **Floor** (`HybridFloor`): the query answers when the keyword floor passes, or when the best
   vector match stands out from the project's records (`z`, in standard deviations of the
   similarities to every visible record, a unit that travels across models and store sizes)
   together with some keyword evidence, or clearly on its own, or when the best match is near
   by both its cosine and its token coverage of the prompt's words (`coverage`). A hit is kept
   when it is close to the best by either signal (`tail`). docs/retrieval.md has the ablation.

Candidates found by vector alone are fetched through the store (`Store.current_records`) with
the same filters as the keyword search (current, visible namespaces, types, not excluded): a
stale vector can never bring back a superseded record or another project's. Both sides take the
visible namespaces from the store's one rule, `agentctx_store.rows.visible_namespaces`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from typing import Any, Literal, TypedDict, Unpack

import numpy as np
from agentctx_store.calibration import REFERENCE_PROMPTS, changed_size, quantile, reference_texts
from agentctx_store.digest.ranking import rrf
from agentctx_store.projects import Project
from agentctx_store.retrieval import (
    RELEVANCE_FLOOR,
    SHORT_QUERY_FLOOR_SHARE,
    SHORT_QUERY_TERMS,
    TAIL_RATIO,
    SearchHit,
    apply_relevance_floor,
    one_word_match,
    relevance_gate,
    search,
    word_weights,
    words,
)
from agentctx_store.rows import visible_namespaces
from agentctx_store.store import Store

from agentctx_embed.models import TokenStates
from agentctx_embed.phase import embedding_text
from agentctx_embed.vector_index import VectorIndex

CANDIDATES = 60
RRF_K = 60
MIN_POOL = 20
# How candidates are fused: "evidence" (`evidence_fusion`) or "rrf" (reciprocal rank fusion, the
# former way, kept for the ablation); calibrated in docs/retrieval.md ("Fusion").
FUSION: Literal["evidence", "rrf"] = "evidence"
# The weight of one standard deviation of cosine against one gate of keyword evidence.
VECTOR_WEIGHT = 0.3


@dataclass(frozen=True)
class HybridFloor:
    """When a query answers, and which hits it keeps (calibrated in bench/ablate_hybrid.py).

    Units that travel: keyword evidence as a share of the store's relevance gate (1.0 = the
    keyword floor exactly), vector evidence as `z`, how many standard deviations the best
    cosine stands above the cosines of every visible record (not a raw cosine, whose scale
    differs from model to model). The one raw cosine, `cosine_alone`, comes only from a
    project's calibration with the model in use: how near the reference texts got.
    """

    z_alone: float = 4.0  # vector evidence strong enough on its own (no keyword needed) …
    # … when the best cosine itself is also at least this near: a calibrated floor's bound from the
    # reference texts' best cosines (`Calibration.floor`); the constant floor has none (a raw
    # cosine does not travel across models)
    cosine_alone: float = -math.inf
    # … or, as near, the prompt's words covered by that record token by token (`coverage`) at least
    # this well: a calibrated floor's bound from the reference texts' coverage; none on the constant
    # floor (inf)
    coverage_alone: float = math.inf
    z_with_keyword: float = 3.0  # vector evidence that needs some keyword support …
    keyword_share: float = 0.5  # … a best keyword match of at least half the gate
    weak_keyword_share: float = 1.25  # a keyword pass this close to the gate …
    weak_keyword_z: float = 2.25  # … stands only if the vector side sees something stand out
    # one record carrying both kinds of evidence: the best fused hit itself matches at least this
    # share of the gate on keywords and stands this many standard deviations out on vectors
    same_record_share: float = 0.8
    same_record_z: float = 2.75
    tail_cosine: float = 0.75  # a hit is kept when its cosine is ≥ this share of the best …
    tail_keyword: float = TAIL_RATIO  # … or its keyword relevance ≥ this share of the best


DEFAULT_FLOOR = HybridFloor()

# The reference texts every project is measured against (`agentctx_store.calibration`: fixed
# developer prompts no project answers); the keyword path's floor is calibrated on the same texts
# by the same rule.
CALIBRATION_PROMPTS = REFERENCE_PROMPTS

# Which quantile of the reference prompts' best z each z threshold of the floor becomes
# (`Calibration.floor`): with a keyword match at half the gate, nine in ten of them; on the best
# hit itself, three in four; to keep a weak keyword pass, half of them. Vector evidence alone
# must stand above the highest reference prompt (what one unrelated prompt in 40 reaches) by a
# quarter of that one's distance from the median (`Z_ALONE_MARGIN`), and its best cosine must
# clear the reference prompts' best cosines by the same rule (`above_all`: z measures how far a
# record stands out from the project's others, which in a project of look-alike records is
# little; the cosine, how near the prompt came, which no unrelated text in 40 did). The keyword
# shares stay in units of the keyword gate (docs/retrieval.md, "The calibrated floor").
CALIBRATED_Z = {"z_with_keyword": 0.9, "same_record_z": 0.75, "weak_keyword_z": 0.5}
Z_ALONE_MARGIN = 0.25
# Vector evidence alone may answer without standing out (z) when the prompt comes near its best
# match by both measures: the cosine as above, and the token coverage of the prompt's words
# (`coverage`) above the reference texts' by half its distance from their median. Half, not a
# quarter: at a quarter one no-answer prompt of the rules set got through with the shipped model
# (docs/retrieval.md, "Covered word by word").
COVERAGE_MARGIN = 0.5
# How much of the record's embedded text is compared token by token (`passage_for`: all of a
# short one; of a long one its type and title and the stretch of its body holding most of the
# prompt's weight). An inference costs more than linearly in its length (one thread of this
# machine: 400 characters of English, ~105 word pieces, ~40 ms; 600, ~154, 53-84 ms; the 1,200
# embedded, 118-164 ms), and the prompt hook gives the service 150 ms for its whole answer: the
# service leaves the coverage out when it would not fit (`service.tokens_within`). 400, not
# 600: as many dev prompts answered per prompt (rules one more, ADR the same; 300: rules one
# fewer), at two thirds of the inference (docs/retrieval.md, "Covered word by word").
COVERAGE_CHARS = 400
# The rule both paths share: a floor answers at most a fixed share of the project's reference
# texts. The keyword floor is their `KEYWORD_LEVEL` quantile (one in ten clears it,
# `agentctx_store.calibration`); here the z thresholds above are raised together, by steps of
# `LIFT_STEP` up to `MAX_LIFT` standard deviations (`Calibration.lift`), until the whole floor
# answers at most `REFERENCE_ANSWER_RATE` of them (those the keyword floor alone lets through
# stay counted: they are not the vectors' to silence). One in five, not one in ten: measured
# held out in docs/retrieval.md ("The calibrated floor"), one in ten cost the rules set 0.07
# recall@3 with the shipped model.
REFERENCE_ANSWER_RATE = 0.2
LIFT_STEP = 0.1
MAX_LIFT = 3.0
Z_FIELDS = ("z_alone", *CALIBRATED_Z)
THRESHOLD_FIELDS = (*Z_FIELDS, "cosine_alone", "coverage_alone")


def above_all(values: Sequence[float], margin: float | None = None) -> float:
    """The highest of `values` plus `margin` (default `Z_ALONE_MARGIN`) of its distance from
    their median: how the vector-alone rule's bounds sit above the reference texts (−inf for
    none)."""
    if not values:
        return -math.inf
    highest = quantile(values, 1.0)
    return highest + (Z_ALONE_MARGIN if margin is None else margin) * (highest - quantile(values, 0.5))


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """What one project's records give text that is about none of them, with one model: the best
    vector `z`, best cosine and keyword share (of the gate) of each reference text (`calibrate`),
    sorted. The hybrid floor's z thresholds are quantiles of these (`floor`), and vector evidence
    alone must also come nearer than the reference texts' best cosines, so they follow the
    project's size and the model in use instead of constants fit to one model on the dev sets."""

    model: str
    records: int  # the visible current records it was measured on
    z: tuple[float, ...]
    shares: tuple[float, ...]
    cosines: tuple[float, ...] = ()  # each reference text's best cosine, sorted
    # each reference text's token coverage by its best vector match (`coverage`), sorted; () for
    # a model with no token states, None when measured by a version that did not look
    coverages: tuple[float, ...] | None = None
    at: str = ""
    lift: float = 0.0  # added to every z threshold so few reference texts are answered (`calibrate`)
    # each reference text's signals as measured (not saved; the benchmark lifts again with them)
    references: tuple[HybridResult, ...] = field(default=(), compare=False, repr=False)

    def quantile(self, level: float) -> float:
        """The `level` quantile of the reference texts' best z (`calibration.quantile`, the rule
        the keyword floor's calibration uses too)."""
        return quantile(self.z, level)

    def floor(self, base: HybridFloor = DEFAULT_FLOOR) -> HybridFloor:
        """`base` with its z thresholds taken from this project's reference prompts; with too few
        records to tell a z (`MIN_POOL`), vector evidence answers nothing on its own."""
        informative = self.records >= MIN_POOL and any(value > 0 for value in self.z)
        if not informative:
            return replace(base, z_alone=math.inf, **dict.fromkeys(CALIBRATED_Z, math.inf))
        return replace(
            base,
            z_alone=above_all(self.z) + self.lift,
            cosine_alone=above_all(self.cosines),
            coverage_alone=above_all(self.coverages, COVERAGE_MARGIN) if self.coverages else math.inf,
            **{name: self.quantile(level) + self.lift for name, level in CALIBRATED_Z.items()},
        )

    def stale(self, model: str, records: int) -> bool:
        """Measured with another model, on a store that has since changed size by a tenth, or by
        a version that kept no reference cosines or coverage."""
        return not self.fits(model) or changed_size(self.records, records)

    def fits(self, model: str) -> bool:
        """Measured with this model, by a version that kept the reference cosines and coverage:
        usable as it is, if perhaps on a project that has since grown."""
        return model == self.model and len(self.cosines) == len(self.z) and self.coverages is not None

    def as_json(self) -> dict[str, Any]:
        thresholds = self.floor()
        return {
            "model": self.model,
            "records": self.records,
            "at": self.at,
            "prompts": len(self.z),
            "reference_z": [round(value, 3) for value in self.z],
            "reference_keyword_share": [round(value, 3) for value in self.shares],
            "reference_cosine": [round(value, 4) for value in self.cosines],
            "reference_coverage": None if self.coverages is None else [round(value, 4) for value in self.coverages],
            "lift": self.lift,
            # null: vector evidence cannot answer here, or no bound (`floor`); JSON has no infinity
            "thresholds": {
                name: round(value, 4) if math.isfinite(value := getattr(thresholds, name)) else None
                for name in THRESHOLD_FIELDS
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Calibration:
        return cls(
            model=str(data["model"]),
            records=int(data["records"]),
            z=tuple(float(value) for value in data["reference_z"]),
            shares=tuple(float(value) for value in data["reference_keyword_share"]),
            cosines=tuple(float(value) for value in data.get("reference_cosine", ())),
            coverages=None
            if data.get("reference_coverage") is None
            else tuple(float(value) for value in data["reference_coverage"]),
            at=str(data.get("at") or ""),
            lift=float(data.get("lift", 0.0)),
        )


def calibrate(
    store: Store,
    project: Project,
    *,
    index: VectorIndex,
    embed: Callable[[str], np.ndarray],
    model: str,
    types: Sequence[str] | None = None,
    keyword_floor: float = RELEVANCE_FLOOR,
    tokens: Callable[[str], TokenStates | None] | None = None,
) -> Calibration:
    """Measure what this project's visible records give the reference texts
    (`agentctx_store.calibration.reference_texts`) with `embed` (the model's query side; the
    service caches the prompts' vectors per model); then the lift that keeps the share of them
    the floor answers at most `REFERENCE_ANSWER_RATE`. `keyword_floor`: the keyword floor
    (rare-term matches) deciding the keyword pass, the constant one in production (the
    benchmark's ablation tries the project's calibrated one). `tokens`: the model's token states
    (`Embedder.tokens`), for each reference text's `coverage`; none, no coverage bound."""
    signals: list[HybridResult] = []
    states = remembered(tokens) if tokens is not None else None  # the best matches repeat
    for prompt in reference_texts(store, project, types):
        found = candidates(
            store,
            project,
            prompt,
            index=index,
            query_vector=embed(prompt),
            types=types,
            keyword_floor=keyword_floor,
            tokens=states,
        )
        found.result.covered()
        signals.append(found.result)
    measured_coverage = [result.coverage for result in signals if result.coverage is not None]
    measured = Calibration(
        model=model,
        records=index.count(visible_namespaces(project), types),
        z=tuple(sorted(float(result.z) for result in signals)),
        shares=tuple(sorted(float(min(result.keyword_share, 99.0)) for result in signals)),
        cosines=tuple(sorted(float(result.best_cosine) for result in signals)),
        # every reference text's, or none (a model with no token states)
        coverages=tuple(sorted(measured_coverage)) if len(measured_coverage) == len(signals) else (),
        at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    return replace(measured, lift=lift(measured, signals), references=tuple(signals))


def lift(measured: Calibration, signals: Sequence[HybridResult]) -> float:
    """The least lift of the z thresholds (in `LIFT_STEP`s, at most `MAX_LIFT`) at which the floor
    answers at most `REFERENCE_ANSWER_RATE` of the reference texts; the keyword floor's own
    passes are not the vectors' to silence, so the aim is never below their share."""

    def answered(lift: float) -> float:
        floor = replace(measured, lift=lift).floor()
        return sum(_answers_result(floor, result) for result in signals) / max(1, len(signals))

    aim = max(REFERENCE_ANSWER_RATE, answered(math.inf))
    steps = round(MAX_LIFT / LIFT_STEP)
    for step in range(steps + 1):
        if answered(step * LIFT_STEP) <= aim + 1e-9:
            return round(step * LIFT_STEP, 3)
    return MAX_LIFT


def _answers_result(floor: HybridFloor, result: HybridResult) -> bool:
    if result.mode == "keyword":  # no index to trust, or nothing searchable: the keyword answer stands
        return result.keyword_pass
    return _answers(
        floor,
        keyword_pass=result.keyword_pass,
        share=result.keyword_share,
        z=result.z,
        top=(result.top_share, result.top_z),
        cosine=result.best_cosine,
        coverage=result.covered,
    )


@dataclass
class HybridResult:
    hits: list[SearchHit] = field(default_factory=list[SearchHit])
    mode: str = "hybrid"  # "hybrid" | "keyword"
    degraded: str | None = None
    terms: list[str] = field(default_factory=list[str])  # the query's searchable words (`SearchResult.terms`)
    # what the floor saw (for the bench and the ablation)
    keyword_pass: bool = False
    keyword_share: float = 0.0
    best_cosine: float = 0.0
    z: float = 0.0
    top_share: float = 0.0  # the best fused hit's own keyword share of the gate …
    top_z: float = 0.0  # … and its own cosine's z
    # how well the best vector match covers the prompt's words (`coverage`), once the floor asks
    # (`covered`: one more inference for the prompt and one for the record); None: not asked, or
    # nothing to measure with
    coverage: float | None = None
    measure: Callable[[], float | None] | None = field(default=None, repr=False, compare=False)

    def covered(self) -> float:
        """`coverage`, measured at the first call (0.0 when it cannot be)."""
        if self.coverage is None and self.measure is not None:
            self.coverage, self.measure = self.measure(), None
        return self.coverage if self.coverage is not None else 0.0


class Narrowing(TypedDict, total=False):
    """What narrows a query (`candidates`' parameters of the same names), passed on as it is."""

    types: Sequence[str] | None
    scope: str | None
    exclude_ids: Sequence[str]
    now: datetime | None


def hybrid_search(
    store: Store,
    project: Project,
    text: str,
    *,
    index: VectorIndex,
    query_vector: np.ndarray | Callable[[], np.ndarray],
    limit: int = 10,
    floor: HybridFloor | None = DEFAULT_FLOOR,
    tokens: Callable[[str], TokenStates | None] | None = None,
    **narrowing: Unpack[Narrowing],
) -> HybridResult:
    """Rank like `search()`, with vector similarity fused in; `floor=None` returns every candidate.
    `tokens`: the model's token states (`Embedder.tokens`), for the floor's `coverage`."""
    found = candidates(
        store,
        project,
        text,
        index=index,
        query_vector=query_vector,
        floor_check=floor is not None,
        tokens=tokens,
        **narrowing,
    )
    return apply_floor(found, floor, limit=limit)


@dataclass
class Candidates:
    """Everything the floor looks at for one query: the fused order, best first, and both
    signals. Records found by the vector side alone are read only when the floor keeps them."""

    result: HybridResult
    fused: list[SearchHit]  # the keyword answer as it stands (mode "keyword" only)
    cosine_of: dict[str, float]
    relevance_of: dict[str, float]
    best_relevance: float
    order: list[tuple[str, float]] = field(default_factory=list[tuple[str, float]])  # (id, fused value), best first
    records: dict[str, Any] = field(default_factory=dict[str, Any])
    fetch: Callable[[list[str]], dict[str, Any]] | None = None


def candidates(
    store: Store,
    project: Project,
    text: str,
    *,
    index: VectorIndex,
    query_vector: np.ndarray | Callable[[], np.ndarray],
    types: Sequence[str] | None = None,
    scope: str | None = None,
    exclude_ids: Sequence[str] = (),
    now: datetime | None = None,
    floor_check: bool = True,
    keyword_floor: float = RELEVANCE_FLOOR,
    tokens: Callable[[str], TokenStates | None] | None = None,
) -> Candidates:
    moment = now or datetime.now(UTC)
    # the keyword path's search of this query: without a floor here, with the production one where asked
    keyword_search = partial(
        search, store, project, text, limit=CANDIDATES, types=types, scope=scope, exclude_ids=exclude_ids, now=moment
    )
    keyword = keyword_search(floor=None)
    if keyword.degraded or not keyword.terms:
        # no index to trust (LIKE or pinned-only), or nothing searchable: the keyword answer stands
        fallback = keyword_search(floor=keyword_floor) if floor_check else keyword
        result = HybridResult(
            mode="keyword", degraded=keyword.degraded, terms=keyword.terms, keyword_pass=bool(fallback.hits)
        )
        return Candidates(result=result, fused=list(fallback.hits), cosine_of={}, relevance_of={}, best_relevance=0.0)
    namespaces = visible_namespaces(project, scope)
    if callable(query_vector):  # computed meanwhile on another thread (the service)
        query_vector = query_vector()
    rows, cosines = index.similarities(query_vector, namespaces, types)
    excluded = set(exclude_ids)
    wanted = min(len(rows), CANDIDATES + len(excluded))
    # the best few of 100K: a partition, not a sort
    top = np.argpartition(-cosines, wanted - 1)[:wanted] if 0 < wanted < len(rows) else np.arange(len(rows))
    top = top[np.lexsort((rows[top], -cosines[top]))]  # best first, ties by row
    top_ids = index.ids_of(rows[top])
    vector_order = [record_id for record_id in top_ids if record_id not in excluded][:CANDIDATES]
    cosine_of = {record_id: float(cosines[i]) for record_id, i in zip(top_ids, top.tolist(), strict=True)}
    best_cosine = cosine_of[vector_order[0]] if vector_order else 0.0

    keyword_order = [hit.record.record_id for hit in keyword.hits]
    relevance_of = {hit.record.record_id: hit.relevance for hit in keyword.hits}
    record_of = {hit.record.record_id: hit.record for hit in keyword.hits}
    best_relevance = max(relevance_of.values(), default=0.0)
    gate = relevance_gate(store.conn, RELEVANCE_FLOOR, namespaces)  # the keyword scores' own scale
    if len(keyword.terms) <= SHORT_QUERY_TERMS:
        gate *= SHORT_QUERY_FLOOR_SHARE

    judged: dict[str, float] = {}

    def evidence(record_id: str) -> float:
        """A record's keyword relevance as evidence: none where it shares only one word with a
        longer prompt (the keyword path's two-distinct-words rule, `one_word_match`). Once per
        record: the best keyword match is often the fused order's top too."""
        if record_id not in judged:
            relevance = relevance_of.get(record_id, 0.0)
            one_word = relevance > 0 and one_word_match(store.conn, record_of[record_id], keyword.terms, keyword.forms)
            judged[record_id] = 0.0 if relevance <= 0 or one_word else relevance
        return judged[record_id]

    best_evidence = evidence(max(relevance_of, key=lambda record_id: relevance_of[record_id])) if relevance_of else 0.0
    # a tiny store applies no gate (search.TINY_STORE_RECORDS): its keyword pass stands as is
    share = best_evidence / gate if gate > 0 else (math.inf if best_evidence > 0 else 0.0)
    keyword_pass = False
    if floor_check and keyword.hits:  # the keyword path's own floor, on the same matches
        scored = [(hit.record, hit.relevance) for hit in keyword.hits]
        keyword_pass = bool(
            apply_relevance_floor(
                store.conn,
                scored,
                keyword_floor,
                like=False,
                terms=keyword.terms,
                forms=keyword.forms,
                namespaces=namespaces,
            )
        )
    pool = _pool(cosines)  # once: 100K cosines at the largest stores
    result = HybridResult(
        terms=keyword.terms,
        keyword_pass=keyword_pass,
        keyword_share=share,
        best_cosine=best_cosine,
        z=_z(best_cosine, cosines, pool),
    )
    if tokens is not None and vector_order:  # measured only if the floor asks (`HybridResult.covered`)
        best = vector_order[0]
        result.measure = lambda: _coverage_of(
            text,
            record_of.get(best) or store.current_records(project, [best], scope=scope, types=types).get(best),
            tokens,
            lambda asked: word_weights(store.conn, asked, namespaces),
        )
    if FUSION == "rrf":
        fused = rrf([keyword_order, vector_order], k=RRF_K)
    else:
        fused = evidence_fusion(keyword.hits, vector_order, cosine_of, pool, gate)
    order = sorted(fused.items(), key=lambda item: (-item[1], item[0]))
    if order:
        top = order[0][0]
        top_relevance = evidence(top)
        result.top_share = top_relevance / gate if gate > 0 else (math.inf if top_relevance > 0 else 0.0)
        result.top_z = _z(cosine_of[top], cosines, pool) if top in cosine_of else 0.0
    return Candidates(
        result=result,
        fused=[],
        cosine_of=cosine_of,
        relevance_of=relevance_of,
        best_relevance=best_relevance,
        order=order,
        records=record_of,
        fetch=lambda ids: store.current_records(
            project, [record_id for record_id in ids if record_id not in excluded], scope=scope, types=types
        ),
    )


def apply_floor(found: Candidates, floor: HybridFloor | None, *, limit: int) -> HybridResult:
    """The hits `floor` lets through (all of them with `floor=None`), at most `limit`."""
    base = found.result
    if base.mode == "keyword":
        return replace(base, hits=found.fused[:limit] if (floor is None or base.keyword_pass) else [])
    answers = floor is None or _answers_result(floor, base)
    result = replace(base, hits=[])  # the signals as they are (with any coverage measured), the hits below
    if not answers:
        return result
    kept = [
        (record_id, value)
        for record_id, value in found.order
        if floor is None
        or _keeps(
            floor,
            cosine=found.cosine_of.get(record_id),
            best_cosine=base.best_cosine,
            relevance=found.relevance_of.get(record_id),
            best_relevance=found.best_relevance,
            keyword_pass=base.keyword_pass,
        )
    ]
    hits: list[SearchHit] = []
    start = 0
    while len(hits) < limit and start < len(kept):
        batch = kept[start : start + 2 * limit]
        start += len(batch)
        missing = [record_id for record_id, _ in batch if record_id not in found.records]
        if missing and found.fetch is not None:
            found.records.update(found.fetch(missing))
        for record_id, value in batch:
            record = found.records.get(record_id)
            if record is not None:  # not current, not visible or excluded: never shown
                # relevance stays the text match alone (0 for a record only the vectors found)
                relevance = found.relevance_of.get(record_id, 0.0)
                hits.append(SearchHit(record=record, relevance=relevance, score=value))
    result.hits = hits[:limit]
    return result


def _answers(
    floor: HybridFloor,
    *,
    keyword_pass: bool,
    share: float,
    z: float,
    top: tuple[float, float] = (0.0, 0.0),
    cosine: float = math.inf,
    coverage: Callable[[], float] = lambda: 0.0,
) -> bool:
    """`cosine`: the best cosine (`z`'s); it bounds vector evidence alone (`cosine_alone`).
    `coverage`: the best vector match's `coverage` of the prompt, asked last and only when it
    can decide (it costs two inferences)."""
    if keyword_pass and (share >= floor.weak_keyword_share or z >= floor.weak_keyword_z):
        return True
    if z >= floor.z_alone and cosine >= floor.cosine_alone:
        return True
    if top[0] >= floor.same_record_share and top[1] >= floor.same_record_z:
        return True
    if z >= floor.z_with_keyword and share >= floor.keyword_share:
        return True
    # vector evidence alone, near by both measures though not standing out from a project of look-alikes
    near = math.isfinite(floor.coverage_alone) and cosine >= floor.cosine_alone
    return near and coverage() >= floor.coverage_alone


def coverage(prompt: TokenStates, passage: TokenStates, weights: Mapping[str, float]) -> float:
    """How well `passage` covers `prompt`, word piece by word piece (as BERTScore's recall does):
    each of the prompt's pieces scores its best cosine to any of the passage's, and the mean
    weighs each piece by its word's weight (`agentctx_store.retrieval.word_weights`: the
    keyword ranking's IDF over the project's records, so a word most records hold counts for
    little; 0 for punctuation). 0.0 when no word of the prompt weighs anything."""
    weight = np.array([weights.get(word, 0.0) for word in prompt.words], dtype=np.float32)
    total = float(weight.sum())
    if total <= 0 or not len(passage.words):
        return 0.0
    best = (prompt.vectors @ passage.vectors.T).max(axis=1)
    return float((best * weight).sum() / total)


def _coverage_of(
    text: str,
    record: Any,
    tokens: Callable[[str], TokenStates | None],
    weights: Callable[[list[str]], Mapping[str, float]],
) -> float | None:
    """`coverage` of the prompt `text` by `record` as it is embedded (`phase.embedding_text`), at
    most `COVERAGE_CHARS` of it (`passage_for`); None when the record is not current and
    visible, or the model gives no token states. `weights` is asked for the words the model read
    (at most its window of pieces, however long the prompt: one count each)."""
    if record is None:
        return None
    prompt = tokens(text)
    if prompt is None:
        return None
    weighed = weights(list(dict.fromkeys(words(" ".join(prompt.words)))))
    embedded = embedding_text({"type": record.type, "title": record.title, "body": record.body})
    passage = tokens(passage_for(embedded, weighed))
    return None if passage is None else coverage(prompt, passage, weighed)


def passage_for(embedded: str, weights: Mapping[str, float]) -> str:
    """At most `COVERAGE_CHARS` of a record's embedded text: all of it when it fits; else its
    first line (type and title) and the stretch of the rest that holds the most of the prompt's
    weight (its words by `weights`, each once; windows half a window apart, the earliest of
    equals), so a long record is read where the prompt talks about it."""
    if len(embedded) <= COVERAGE_CHARS:
        return embedded
    head, _, rest = embedded.partition("\n")
    head = head[: COVERAGE_CHARS // 2]
    size = COVERAGE_CHARS - len(head) - 1
    best, best_weight = rest[:size], -1.0
    for start in range(0, max(1, len(rest) - size // 2), size // 2):
        if start:  # from the next word on
            space = rest.find(" ", start)
            start = space + 1 if 0 <= space < start + size // 2 else start
        window = rest[start : start + size]
        weight = sum(weights.get(word, 0.0) for word in set(words(window.lower())))
        if weight > best_weight:
            best, best_weight = window, weight
    return f"{head}\n{best}"


def remembered(tokens: Callable[[str], TokenStates | None]) -> Callable[[str], TokenStates | None]:
    """`tokens` with each text's states kept for the caller's while (a calibration's 40 reference
    texts often share their best match)."""
    known: dict[str, TokenStates | None] = {}

    def once(text: str) -> TokenStates | None:
        if text not in known:
            known[text] = tokens(text)
        return known[text]

    return once


def _keeps(
    floor: HybridFloor,
    *,
    cosine: float | None,
    best_cosine: float,
    relevance: float | None,
    best_relevance: float,
    keyword_pass: bool,
) -> bool:
    if relevance is not None and keyword_pass and relevance >= floor.tail_keyword * best_relevance:
        return True
    return cosine is not None and best_cosine > 0 and cosine >= floor.tail_cosine * best_cosine


def evidence_fusion(
    keyword_hits: Sequence[SearchHit],
    vector_order: Sequence[str],
    cosine_of: dict[str, float],
    pool: tuple[float, float],
    gate: float,
) -> dict[str, float]:
    """Each candidate's evidence, in units that mean the same in any store and with any model:
    its keyword score (BM25 relevance × the rerank factors) as a share of the store's relevance
    gate, plus VECTOR_WEIGHT × how many standard deviations its cosine stands above the mean
    cosine of the visible records (0 when below the mean). Unlike the floor's `z`, this is used
    in small pools too: there it can only reorder, never answer on its own.

    Unlike reciprocal rank fusion, the values keep the *size* of each signal's margin: a record
    both sides rank first by a wide margin scores far above the runner-ups, one that merely
    comes second on both does not; so the ratio of a runner-up's value to the best one's says
    how close it came (what `agentctx_store.inject` needs to decide full, title or nothing)."""
    unit = gate if gate > 0 else max((hit.score for hit in keyword_hits), default=0.0) or 1.0
    mean, spread = pool  # of every visible record's cosine (`_pool`)

    def vector(record_id: str) -> float:
        cosine = cosine_of.get(record_id)
        if cosine is None or not math.isfinite(spread) or spread <= 1e-6:
            return 0.0
        return VECTOR_WEIGHT * max(0.0, (cosine - mean) / spread)

    fused = {hit.record.record_id: hit.score / unit + vector(hit.record.record_id) for hit in keyword_hits}
    for record_id in vector_order:
        if record_id not in fused:
            fused[record_id] = vector(record_id)
    return fused


def _z(best: float, cosines: np.ndarray, pool: tuple[float, float] | None = None) -> float:
    """How many standard deviations the best cosine stands above the pool's mean; 0 for a pool
    under `MIN_POOL` records, where it cannot be told (n values cap z at (n − 1) / √n).
    `pool`: the pool's (mean, standard deviation), when already computed (`_pool`)."""
    if len(cosines) < MIN_POOL:
        return 0.0
    mean, spread = pool if pool is not None else _pool(cosines)
    if not math.isfinite(spread) or spread <= 1e-6:
        return 0.0
    return (best - mean) / spread


def _pool(cosines: np.ndarray) -> tuple[float, float]:
    """(mean, standard deviation) of the visible records' cosines; (0, 0) under two of them."""
    if len(cosines) < 2:
        return 0.0, 0.0
    return float(np.mean(cosines)), float(np.std(cosines))
