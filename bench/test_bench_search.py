"""In-process figures of the read path: `search()` per store size and prompt class, the prompt
hook's budget composition, the session-start digest.

Targets (issue 2): `search()` p50 ≤ 5 ms at 10K records, ≤ 30 ms at 100K. The store's hook
project holds half of the records (the worst case for one project; see `_corpus.build`).
"""

from __future__ import annotations

import itertools
import statistics
import time

import _corpus
import pytest
from _harness import SIZE_IDS, size_param
from agentctx_store import digest, search
from agentctx_store.inject import compose_injection
from agentctx_store.prompt_answer import PROMPT_TYPES

SEARCH_ROUNDS = 150


@size_param
@pytest.mark.parametrize("prompt_class", _corpus.PROMPT_CLASSES)
def test_search(benchmark, bench_store, bench_mode, size: int, prompt_class: str) -> None:
    """One `search()` call with the production floor, a different prompt each round."""
    site = bench_store(size)
    prompts = itertools.cycle(site.prompts[prompt_class])
    benchmark.group = f"search {SIZE_IDS[size]}"
    with site.open() as store:
        for prompt in site.prompts[prompt_class][:10]:  # page cache warm, as for a session's second prompt
            search(store, site.project, prompt)
        hits: list[int] = []

        def one(prompt: str) -> None:
            hits.append(len(search(store, site.project, prompt).hits))

        benchmark.pedantic(
            one,
            setup=lambda: ((next(prompts),), {}),
            rounds=bench_mode.scale(SEARCH_ROUNDS, 1),
            warmup_rounds=bench_mode.scale(5, 0),
        )
    benchmark.extra_info.update(
        records=size,
        prompts_with_hits=round(sum(1 for count in hits if count) / len(hits), 3),
        prompt_words_mean=round(
            sum(len(p.split()) for p in site.prompts[prompt_class]) / len(site.prompts[prompt_class]), 1
        ),
    )
    if prompt_class == "nothing":  # prompts about nothing in the store: the floor must keep them empty
        assert sum(1 for count in hits if count) <= max(1, len(hits) // 10), "the floor let chatter through"


@size_param
def test_search_short_form(benchmark, bench_store, bench_mode, size: int) -> None:
    """A prompt holding a short form such as `e2e` (docs/retrieval.md, "The pipeline" step 1: it
    is spelled out from the rows about the prompt's other words, one more ranked query) against
    the same prompt without it, interleaved in one run (each round times both):
    `extra_info["ratio"]`."""
    site = bench_store(size)
    plain = site.prompts["topic"][:40]
    short = [f"{prompt} and the e2e tests" for prompt in plain]
    pairs = itertools.cycle(zip(short, plain, strict=True))
    benchmark.group = f"search {SIZE_IDS[size]}"
    times: dict[str, list[float]] = {"with": [], "without": []}
    with site.open() as store:
        for prompt in [*short[:5], *plain[:5]]:
            search(store, site.project, prompt)

        def one(prompt: str, other: str) -> None:
            for key, text in (("without", other), ("with", prompt)):
                started = time.perf_counter()
                search(store, site.project, text)
                times[key].append(time.perf_counter() - started)

        benchmark.pedantic(
            one,
            setup=lambda: (next(pairs), {}),
            rounds=bench_mode.scale(SEARCH_ROUNDS, 1),
            warmup_rounds=bench_mode.scale(5, 0),
        )
    with_ms, without_ms = (statistics.median(times[key]) * 1000 for key in ("with", "without"))
    benchmark.extra_info.update(
        records=size,
        with_median_ms=round(with_ms, 2),
        without_median_ms=round(without_ms, 2),
        ratio=round(with_ms / without_ms, 2),
    )


@size_param
def test_prompt_budget(benchmark, bench_store, size: int) -> None:
    """The prompt hook's composition of the injected text from its hits (≤ 2,000 tokens)."""
    site = bench_store(size)
    with site.open() as store:
        ranked = [
            (search(store, site.project, prompt, limit=3, types=PROMPT_TYPES).hits, prompt)
            for prompt in site.prompts["topic"][:40]
        ]
    batches = [(hits, prompt) for hits, prompt in ranked if hits]
    assert batches, "no topic prompt found anything: the corpus or search is broken"
    cycle = itertools.cycle(batches)
    benchmark.group = "budget and digest"
    injection = benchmark.pedantic(compose_injection, setup=lambda: (next(cycle), {}), rounds=200, warmup_rounds=5)
    benchmark.extra_info.update(records=size, last_ids=len(injection.ids), last_tokens=injection.tokens)


@size_param
def test_digest(benchmark, bench_store, size: int) -> None:
    """Composing the session-start digest (cheap ranking, ≤ 1,500 tokens) from the store."""
    site = bench_store(size)
    benchmark.group = "budget and digest"
    with site.open() as store:
        text = benchmark(digest.compose, store, site.project)
    assert text.strip()
    benchmark.extra_info.update(records=size, chars=len(text))
