"""The relevance floor a project calibrates for itself (issue 31), the part both paths share.

"Is anything here relevant enough to inject?" is decided against what the project's own records
give text that is about none of them: the reference texts (`reference_texts`), the fixed
developer prompts of `REFERENCE_PROMPTS`. The warm path (`agentctx_embed.hybrid.calibrate`) measures how far their
best cosine stands out (z) with the model in use; the keyword path (`calibrate_keyword`, here)
measures the keyword floor each one would clear (`keyword_level`, in rare-term matches). Each
path's threshold is a quantile of its own measurements, by one rule (`quantile`).

The keyword measurement is computed off the prompt path (`refresh_prompt_floor`: consolidation,
`learn` and the imports, the warm search service, `agentctx status`) and kept in `paths.keyword_calibration_path`; the prompt hook only reads that
small file (`read_keyword_floor`: bounded, validated) and falls back to `RELEVANCE_FLOOR`.
Standard library and the store's fast core only: the hook imports this module.
"""

from __future__ import annotations

import math

from agentctx_store import paths
from agentctx_store.jsontext import is_object, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from agentctx_store.projects import Project
    from agentctx_store.store import Store

# What a project's records give text that is about none of them: prompts a developer sends a
# coding agent that no project's decisions or conventions answer (general knowledge, chatter,
# edits named in the prompt itself). Written once, not drawn from any eval set.
REFERENCE_PROMPTS = (
    "can you explain what this function does?",
    "rename the variable x to count in this file",
    "thanks, that fixed it",
    "write a haiku about autumn leaves",
    "what's the time complexity of quicksort?",
    "convert this list comprehension into a plain for loop",
    "why is the sky blue?",
    "summarize your last message in one sentence",
    "how do I reverse a string in JavaScript?",
    "translate this paragraph into French",
    "what is the capital of Australia?",
    "make the button slightly larger",
    "fix the typo in the second paragraph",
    "what does HTTP status 418 mean?",
    "let's take a break and continue tomorrow",
    "print hello world in Rust",
    "sort these names alphabetically: Zoe, Adam, Maria",
    "what's a good name for a pet hamster?",
    "explain recursion to a five year old",
    "undo the last change you made",
    "show me the diff again",
    "calculate 17 times 23",
    "is a tomato a fruit or a vegetable?",
    "what year did the Berlin wall fall?",
    "split this long function into two smaller ones",
    "the weather is lovely today",
    "recommend a book about the history of mathematics",
    "how many bytes are in a kilobyte?",
    "draw an ASCII art cat",
    "keep going",
    "what's the boiling point of water at sea level?",
    "generate three lorem ipsum sentences",
    "which is bigger, a whale or an elephant?",
    "tell me a joke about compilers",
    "what does the acronym NASA stand for?",
    "how long should I boil an egg?",
    "rewrite that answer in a friendlier tone",
    "who wrote Pride and Prejudice?",
    "add two blank lines between these functions",
    "what's the square root of 144?",
)

# Prompts made of the project's own common words around a subject it never recorded were tried
# as reference texts too (docs/retrieval.md, "The calibrated floor"): once each project's words
# were weighed over its own records they gained nothing on either path, and with a small store
# they silenced real answers found by meaning, so the reference texts are the fixed prompts.
MIN_RECORDS = 20  # below this a project has no background to measure (`relevance_gate`'s tiny store)

# The keyword floor (rare-term matches) is the `KEYWORD_LEVEL` quantile of the reference texts'
# `keyword_level`s (what one unrelated text in ten still clears), held within `KEYWORD_BOUNDS`
# (a store whose references match nothing keeps a floor, one whose vocabulary is everywhere does
# not go silent).
KEYWORD_LEVEL = 0.9
KEYWORD_BOUNDS = (1.2, 2.2)
MAX_FILE_BYTES = 16_384  # a calibration file is ~2 KB; anything larger is not ours


def quantile(values: Sequence[float], level: float) -> float:
    """The `level` quantile of sorted `values` (linear, like numpy's default); inf when empty."""
    if not values:
        return math.inf
    position = level * (len(values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)


def reference_texts(store: Store, project: Project, types: Sequence[str] | None = None) -> list[str]:
    """What both paths measure a project against: `REFERENCE_PROMPTS`, the same for every project
    (what differs is what the project's records make of them)."""
    return [*REFERENCE_PROMPTS]


def keyword_level(store: Store, project: Project, text: str, *, types: Sequence[str] | None = None) -> float:
    """The highest keyword floor (in rare-term matches, `retrieval.RELEVANCE_FLOOR`'s unit) at
    which the keyword path would still answer `text`: its best match over the store's gate at
    floor 1 (halved for a short query, as the floor does), 0.0 when no floor lets it through
    (nothing matched, or it shares one word only with the best match), inf in a store too small
    for a gate."""
    from agentctx_store.retrieval import apply_relevance_floor, relevance_gate, search
    from agentctx_store.rows import visible_namespaces

    namespaces = visible_namespaces(project)
    found = search(store, project, text, floor=None, limit=60, types=types)
    if not found.hits:
        return 0.0
    scored = [(hit.record, hit.relevance) for hit in found.hits]
    # passes every rule but the gate? (floor 0: the gate is 0, the distinct-words rule stands)
    if not apply_relevance_floor(
        store.conn,
        scored,
        0.0,
        like=found.degraded is not None,
        terms=found.terms,
        forms=found.forms,
        namespaces=namespaces,
    ):
        return 0.0
    unit = relevance_gate(store.conn, 1.0, namespaces)
    if found.degraded is not None or unit <= 0:
        return math.inf
    from agentctx_store.retrieval import SHORT_QUERY_FLOOR_SHARE, SHORT_QUERY_TERMS

    if len(found.terms) <= SHORT_QUERY_TERMS:
        unit *= SHORT_QUERY_FLOOR_SHARE
    return max(relevance for _, relevance in scored) / unit


def visible_records(store: Store, project: Project, types: Sequence[str] | None = None) -> int:
    """The current records a prompt in `project` may see (its own and `_global`)."""
    from agentctx_store.rows import visible_namespaces

    return visible_count(store, visible_namespaces(project), types)


def visible_count(store: Store, namespaces: Sequence[str], types: Sequence[str] | None = None) -> int:
    """The current records of `namespaces` (and `types`): one count over the records index."""
    from agentctx_store.rows import record_filters

    clauses, params = record_filters(namespaces, types, include_superseded=False, exclude_ids=())
    return int(store.conn.execute(f"SELECT count(*) FROM records WHERE {' AND '.join(clauses)}", params).fetchone()[0])


def keyword_floor(levels: Sequence[float], records: int, level: float = KEYWORD_LEVEL) -> float:
    """The keyword floor from the reference texts' sorted `levels`; `RELEVANCE_FLOOR` when the
    project is too small to measure."""
    from agentctx_store.retrieval import RELEVANCE_FLOOR

    if records < MIN_RECORDS or not levels or not all(math.isfinite(value) for value in levels):
        return RELEVANCE_FLOOR
    low, high = KEYWORD_BOUNDS
    return min(high, max(low, quantile(levels, level)))


def calibrate_keyword(
    store: Store, project: Project, *, types: Sequence[str] | None = None, at: str = ""
) -> dict[str, Any]:
    """Measure the keyword floor of `project`: every reference text's `keyword_level`, the floor
    they set (`keyword_floor`), and what it was measured on (the JSON kept in the file)."""
    texts = reference_texts(store, project, types)
    levels = sorted(keyword_level(store, project, text, types=types) for text in texts)
    records = visible_records(store, project, types)
    from agentctx_store.retrieval import visible_rows
    from agentctx_store.rows import visible_namespaces

    indexed = visible_rows(store.conn, visible_namespaces(project))  # what BM25 weighs words over
    return {
        "records": records,
        "indexed_records": indexed,
        "at": at,
        "prompts": len(texts),
        "level": KEYWORD_LEVEL,
        "reference_levels": [round(value, 3) if math.isfinite(value) else None for value in levels],
        "floor": round(keyword_floor(levels, records), 3),
    }


def changed_size(measured: int, records: int) -> bool:
    """Whether a project measured at `measured` records has changed size by more than a tenth
    (at least 2) now that it has `records`: when what was measured over its records (a
    calibration, the stop words' weights) is measured again."""
    return abs(records - measured) > max(2, measured // 10)


def stale(saved: dict[str, Any] | None, records: int) -> bool:
    """No calibration, or one measured on a project that has since changed size by a tenth."""
    if saved is None:
        return True
    measured = saved.get("records")
    if not isinstance(measured, int):
        return True
    return changed_size(measured, records)


def refresh_keyword(store: Store, project: Project, *, types: Sequence[str] | None = None) -> dict[str, Any]:
    """The project's keyword calibration, measured again when missing or stale (`stale`) and
    written to `paths.keyword_calibration_path`; off the prompt path only (a few dozen searches).
    A data dir that cannot be written keeps the measurement unwritten (the hook falls back)."""
    from agentctx_store.clock import utc_now

    saved = read_keyword_calibration(project.project_id)
    if not stale(saved, visible_records(store, project, types)) and saved is not None:
        return saved
    fresh = calibrate_keyword(store, project, types=types, at=utc_now())
    write_keyword_calibration(project.project_id, fresh)
    return fresh


def refresh_prompt_floor(store: Store, project: Project) -> dict[str, Any]:
    """`refresh_keyword` for the record types a prompt is answered from: what every writer that
    changes a project's records in bulk calls once it has written (consolidation, `learn`,
    `import`, `team import`), and what the warm service and `status` call, so a project's own
    floor is in force from its first prompt, not only once a consolidation has run."""
    from agentctx_store.prompt_answer import PROMPT_TYPES

    return refresh_keyword(store, project, types=PROMPT_TYPES)


def write_keyword_calibration(project_id: str, data: dict[str, Any]) -> None:
    from pathlib import Path

    from agentctx_store.files import atomic_write
    from agentctx_store.jsontext import dumps

    try:
        atomic_write(Path(paths.keyword_calibration_path(project_id)), dumps(data) + "\n")
    except OSError:
        pass  # a read-only data dir: the constant floor applies, as without a calibration


def read_keyword_calibration(project_id: str) -> dict[str, Any] | None:
    """The saved keyword calibration, or None when there is none or it is not one of ours."""
    calibration, _problem = _read(project_id)
    return calibration


def read_keyword_floor(project_id: str) -> tuple[float, str | None]:
    """The keyword floor the prompt hook applies: the project's calibrated one, else
    `RELEVANCE_FLOOR`; and why it fell back when the file exists but is not usable (None when it
    is usable or absent). At most `MAX_FILE_BYTES` are read; nothing is computed."""
    from agentctx_store.retrieval import RELEVANCE_FLOOR

    calibration, problem = _read(project_id)
    if calibration is None:
        return RELEVANCE_FLOOR, problem
    return float(calibration["floor"]), None


def _read(project_id: str) -> tuple[dict[str, Any] | None, str | None]:
    path = paths.keyword_calibration_path(project_id)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"keyword calibration unreadable ({type(exc).__name__}); constant floor"
    if len(raw) > MAX_FILE_BYTES:
        return None, f"keyword calibration over {MAX_FILE_BYTES} bytes; constant floor"
    try:
        data = loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None, "keyword calibration is not JSON; constant floor"
    low, high = KEYWORD_BOUNDS
    floor = data.get("floor") if is_object(data) else None
    if (
        not is_object(data)
        or isinstance(floor, bool)
        or not isinstance(floor, (int, float))
        or not low <= floor <= high
        or not isinstance(data.get("records"), int)
    ):
        return None, "keyword calibration has no usable floor; constant floor"
    return data, None
