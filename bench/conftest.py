"""Fixtures of the benchmark suite (bench/README.md): cached synthetic stores, the shared
folder when it is there, whole-process timing next to a bare interpreter.

Fixtures for any bench file:

- `bench_store(size)` (session): a `_corpus.BenchStore` of 1K / 10K / 100K records, built once
  per session under pytest's temp dir and shared by every test that asks for that size. Treat
  it as read-only; `hook_site(size)` (one copy per session, for the hooks) and
  `fresh_site(size)` (a copy per test) are for things that write.
- `_harness.size_param`: parametrize a test over the store sizes (`@size_param`); a size not
  selected (`--bench-sizes` / `AGENTCTX_BENCH_SIZES`) is skipped, not failed. Without either,
  all three run, except under `--benchmark-disable` (CI), where 100K is skipped: building it
  costs ~20 s and a run that times nothing does not need it.
- `shared_dir`: `../shared` (or `AGENTCTX_BENCH_SHARED`); the test is skipped when absent.
- `eval_set(name)` (session): `shared/eval/<name>` loaded into a store (`_eval.EvalSet`: records,
  queries, the set's scorer, `.score(rows)`); skipped when absent.
- `embed_model` / `tiny_model` (session): an `_harness.EmbedModel` (the real all-MiniLM-L6-v2
  int8 from the shared folder when there, else the tiny test model); `.select(monkeypatch)`.
- `bench_mode`: `.disabled` is true under `--benchmark-disable`; `.scale(full, cheap)` picks a
  smaller workload there, so CI runs every body once, quickly.

Helpers that are not fixtures live in `_harness.py` (sizes, the shared folder, `Floor` and
`run_process` for whole-process timing against `python -c pass`) and `_corpus.py` (the
synthetic records and prompts, the bulk store builder). Test modules import them by name
(`import _harness`): this file puts bench/ on `sys.path`, which `--import-mode=importlib`
does not do.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

import _corpus  # noqa: E402 (needs the path above)
import _eval  # noqa: E402
from _harness import (  # noqa: E402
    REAL_MODEL_DIR,
    REAL_MODEL_NAME,
    SHARED_ENV,
    SIZE_IDS,
    SIZES,
    SIZES_ENV,
    BenchMode,
    EmbedModel,
    shared_root,
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentctx bench")
    group.addoption(
        "--bench-sizes",
        default=None,
        help=f"comma-separated store sizes to run, e.g. 1000,10000 (default: all; env {SIZES_ENV}; "
        "under --benchmark-disable: 1000,10000)",
    )


@pytest.fixture(scope="session")
def bench_mode(pytestconfig: pytest.Config) -> BenchMode:
    return BenchMode(disabled=bool(pytestconfig.getoption("benchmark_disable", False)))


def selected_sizes(config: pytest.Config) -> set[int]:
    text = config.getoption("--bench-sizes") or os.environ.get(SIZES_ENV, "")
    if not text.strip():
        disabled = bool(config.getoption("benchmark_disable", False))
        return {size for size in SIZES if not (disabled and size > 10_000)}
    try:
        return {int(part.strip().upper().replace("K", "000")) for part in text.split(",") if part.strip()}
    except ValueError:
        raise pytest.UsageError(
            f"--bench-sizes / {SIZES_ENV}: {text!r} is not a comma-separated list like 1000,10000"
        ) from None


@pytest.fixture(scope="session")
def bench_store(
    pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[int], _corpus.BenchStore]:
    """`bench_store(size)`: the store of that size, built on first use, then cached for the session."""
    built: dict[int, _corpus.BenchStore] = {}
    chosen = selected_sizes(pytestconfig)

    def get(size: int) -> _corpus.BenchStore:
        if size not in chosen:
            pytest.skip(f"{SIZE_IDS.get(size, size)} store not selected (--bench-sizes / {SIZES_ENV})")
        if size not in built:
            built[size] = _corpus.build(tmp_path_factory.mktemp(f"store-{size}"), size)
        return built[size]

    return get


def copy_site(source: _corpus.BenchStore, root: Path) -> _corpus.BenchStore:
    """A copy of a built store (home and project directory) under `root`: the same project."""
    shutil.copytree(source.home, root / "home")
    shutil.copytree(source.project_dir, root / "project")
    project = _corpus.resolve_project(root / "project")
    assert project.project_id == source.project.project_id, "the copy must be the same project (git origin)"
    return dataclasses.replace(source, root=root, home=root / "home", project_dir=root / "project", project=project)


@pytest.fixture(scope="session")
def hook_site(
    bench_store: Callable[[int], _corpus.BenchStore], tmp_path_factory: pytest.TempPathFactory
) -> Callable[[int], _corpus.BenchStore]:
    """`hook_site(size)`: a copy of the store of that size that hooks may change (sessions,
    injections, captures); one copy per size per session."""
    copies: dict[int, _corpus.BenchStore] = {}

    def get(size: int) -> _corpus.BenchStore:
        if size not in copies:
            copies[size] = copy_site(bench_store(size), tmp_path_factory.mktemp(f"site-{size}"))
        return copies[size]

    return get


@pytest.fixture
def fresh_site(bench_store: Callable[[int], _corpus.BenchStore], tmp_path: Path) -> Callable[[int], _corpus.BenchStore]:
    """`fresh_site(size)`: a private copy of the store of that size for this test alone."""
    return lambda size: copy_site(bench_store(size), tmp_path / f"site-{size}")


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    root = shared_root()
    if not root.is_dir():
        pytest.skip(f"{root} not found (the shared folder beside the clone, or {SHARED_ENV})")
    return root


@pytest.fixture(scope="session")
def eval_set(shared_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], _eval.EvalSet]]:
    """`eval_set("adr-dev")`: that set of `shared/eval/` loaded into its own store (once per
    session; read-only). Skips when the set is absent."""
    loaded: dict[str, _eval.EvalSet] = {}

    def get(name: str) -> _eval.EvalSet:
        folder = shared_dir / "eval" / name
        if not (folder / "records.jsonl").is_file() or not (folder / "queries.jsonl").is_file():
            pytest.skip(f"{folder}: no records.jsonl/queries.jsonl there")
        if name not in loaded:
            loaded[name] = _eval.load_set(folder, tmp_path_factory.mktemp(f"eval-{name}"))
        return loaded[name]

    yield get
    for item in loaded.values():
        item.loaded.store.close()


@pytest.fixture(scope="session")
def embed_model(tiny_model: EmbedModel) -> EmbedModel:
    """The real model (`shared/models/all-MiniLM-L6-v2-onnx-int8`) when present, else the tiny
    test model built over the synthetic corpus' words. Select it in a test with
    `embed_model.select(monkeypatch)`."""
    folder = shared_root() / REAL_MODEL_DIR
    if (folder / "model.onnx").is_file():
        return EmbedModel(REAL_MODEL_NAME, folder, real=True)
    return tiny_model


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> EmbedModel:
    """The tiny test model (agentctx_embed.tiny), whatever the shared folder holds."""
    from agentctx_embed.tiny import TINY_MODEL_NAME, build_tiny_model

    folder = build_tiny_model(tmp_path_factory.mktemp("tiny-model"), _corpus.Corpus().general)
    return EmbedModel(TINY_MODEL_NAME, folder, real=False)


# -- the machine's load, saved with each run (2 shared cores make it the biggest source of noise) --


_LOAD_AT_START: list[float] = []


def pytest_sessionstart(session: pytest.Session) -> None:
    _LOAD_AT_START[:] = [round(value, 2) for value in os.getloadavg()]


def pytest_benchmark_update_json(config: pytest.Config, benchmarks: list, output_json: dict) -> None:
    output_json["machine_info"]["loadavg_start"] = _LOAD_AT_START
    output_json["machine_info"]["loadavg_end"] = [round(value, 2) for value in os.getloadavg()]
