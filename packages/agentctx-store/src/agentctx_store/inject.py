"""What a prompt injects: ranked search hits composed into `<agentctx-record>` blocks in budget.

One function, `compose_injection`, used by every path that injects records into a prompt (the
UserPromptSubmit hook, and a warm search service composing for it), so both always inject the
same text for the same hits. In proportion to the evidence (docs/retrieval.md, "What a prompt
injects"):
  - the best hit in full; a further hit in full only when its score is close to the best one's
    (at least FULL_RATIO of it), otherwise as a title line (`detail="title"`), so the agent still
    sees that it exists and can `ctx_get` it; a hit below TITLE_RATIO of the best is left out
    unless its title names the prompt (TITLE_TERMS of its words);
  - a full record longer than LONG_RECORD_CHARS is cut to the passages that match the prompt
    (`agentctx_store.passages`: whole sentences and code blocks, an ADR's decision section kept,
    `…` where text was left out, `detail="excerpt"` and a note that `ctx_get` has the rest);
  - at most PROMPT_RECORDS entries, none already injected this session, one short header line,
    all within the PROMPT budget (2,000 tokens, 8,000 characters).

Standard library and the store's fast core only: this runs on every prompt (docs/hooks.md).
"""

from __future__ import annotations

from agentctx_store.budget import PROMPT, PROMPT_RECORDS, Budget, estimate_tokens, truncate
from agentctx_store.fence import DATA_NOTE, unfence
from agentctx_store.prompt_answer import Injection
from agentctx_store.records import trust_mark
from agentctx_store.retrieval import query_terms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from agentctx_store.freshness import Staleness
    from agentctx_store.records import Record
    from agentctx_store.retrieval import SearchHit

    # `freshness.Checker`: record ids → the stale ones among them (docs/freshness.md)
    FreshnessCheck = Callable[[Sequence[str]], dict[str, Staleness]]

# A hit below the best one is shown in full only when its score is at least this share of the
# best score; otherwise by its title (calibrated in docs/retrieval.md).
FULL_RATIO = 0.95
# A hit below this share of the best score is not shown at all, unless its title names at least
# TITLE_TERMS of the prompt's searchable words (then its title line tells the agent what it is
# about). Below half of the best score a runner-up was rarely relevant on the dev sets, unless its
# title named two prompt words (docs/retrieval.md, "What a prompt injects";
# bench/README.md#injection).
TITLE_RATIO = 0.5
TITLE_TERMS = 2
# A full record whose body is longer than this is cut to the passages answering the prompt,
# about EXCERPT_CHARS of them, when that saves at least MIN_SAVING of the body.
LONG_RECORD_CHARS = 1000
EXCERPT_CHARS = 700
MIN_SAVING = 0.2
MIN_CUT_BODY_TOKENS = 40
# Read before every prompt's records, so it costs every injection: the session's digest and the
# MCP server's instructions already tell the agent to `ctx_get` ids for the full records.
HEADER = f"agentctx records ({DATA_NOTE}):"
EXCERPT_NOTE = "(excerpt: `ctx_get` has the rest)"


def compose_injection(
    hits: Sequence[SearchHit],
    prompt: str = "",
    *,
    terms: Sequence[str] | None = None,
    already_injected: Iterable[str] = (),
    budget: Budget = PROMPT,
    freshness: FreshnessCheck | None = None,
) -> Injection:
    """Compose the injection for `hits` (ranked best first, as `search()` returns them).

    Records in `already_injected` (shown earlier in the session, in full or by title) are
    skipped; of the rest, the top PROMPT_RECORDS are shown in full or by title (FULL_RATIO),
    within `budget`. `prompt` chooses the passages of long records; `terms` are its searchable
    words when the caller has them already (`SearchResult.terms`), so it is not split again.

    `freshness` (a `freshness.Checker`) checks the candidates' anchors: a record whose anchored
    text changed or whose file is gone is marked (`anchor-changed="…"`, `anchor-missing="…"`)
    and keeps STALE_FACTOR of its score, so a fresh record wins a tie; a record whose every
    anchor is gone is not shown (docs/freshness.md).
    """
    seen = set(already_injected)
    fresh = [hit for hit in hits if hit.record.record_id not in seen]
    scored = [(hit.record, hit.score) for hit in fresh[:PROMPT_RECORDS]]
    stale: dict[str, Staleness] = {}
    if freshness is not None and scored:
        stale = freshness([record.record_id for record, _ in scored])
        if stale:
            from agentctx_store.freshness import STALE_FACTOR

            scored = [
                (record, score * STALE_FACTOR if record.record_id in stale else score)
                for record, score in scored
                if not (record.record_id in stale and stale[record.record_id].all_missing)
            ]
            scored.sort(key=lambda pair: -pair[1])  # stable: equal scores keep search's order
    if not scored:
        return Injection()
    best = scored[0][1]
    # a runner-up far below the best is listed only when its title itself names the prompt
    if terms is None:
        terms = query_terms(prompt) if prompt else []
    wanted: set[str] = _stems(terms)
    scored = [
        (record, score)
        for rank, (record, score) in enumerate(scored)
        if rank == 0 or score >= TITLE_RATIO * best or _title_names(record, wanted)
    ]
    full = [rank == 0 or (best > 0 and score >= FULL_RATIO * best) for rank, (_, score) in enumerate(scored)]
    marks = {record_id: found.attributes for record_id, found in stale.items()}
    records = [record for record, _ in scored]
    return render(records, full=full, prompt=prompt, terms=terms, budget=budget, marks=marks)


def render(
    records: Sequence[Record],
    *,
    full: Sequence[bool] | None = None,
    prompt: str = "",
    terms: Sequence[str] | None = None,
    budget: Budget = PROMPT,
    marks: dict[str, str] | None = None,
) -> Injection:
    """The additionalContext for ranked records, best first, within `budget`.

    `marks[id]` is added to that record's element (the anchor marks of `freshness.Staleness`).
    `full[i]` says whether record i is shown with its body (default: all are). Long bodies are
    cut to the passages matching `prompt`. Entries are added while they fit; a full record that
    does not fit is cut to fewer passages (or, when it has no sentence to cut at, inside its
    text), else shown by its title; the first entry that fits in no form ends the list.
    """
    if terms is None:
        terms = query_terms(prompt) if prompt else []
    parts = _Parts(budget)
    full_ids: list[str] = []
    title_ids: list[str] = []
    for index, record in enumerate(records):
        title_line = unfence(record.title) + trust_mark(record)
        extra = marks.get(record.record_id, "") if marks else ""
        if (full is None or full[index]) and _add_full(parts, record, title_line, prompt, terms, extra):
            full_ids.append(record.record_id)
            continue
        if not parts.add(
            f'<agentctx-record id="{record.record_id}" type="{record.type}"{extra} detail="title">\n{title_line}\n{_CLOSE}'
        ):
            break
        title_ids.append(record.record_id)
    if not full_ids and not title_ids:
        return Injection()
    text = "\n\n".join(parts.texts)
    tokens = estimate_tokens(text)
    if len(text) > budget.chars or tokens > budget.tokens:  # never: `_Parts` over-counts, if anything
        text = truncate(text, budget)
        tokens = estimate_tokens(text)
    return Injection(text=text, full_ids=full_ids, title_ids=title_ids, tokens=tokens)


_CLOSE = "</agentctx-record>"


class _Parts:
    """The header and the blocks added so far, with their size kept as they grow, so a block is
    checked against the budget without estimating the whole text again. Token estimates add
    up to at least the estimate of the joined text (each part's is rounded up, plus one; no
    word runs across the `\\n\\n` between parts), so the check errs on the side of the budget."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.texts = [HEADER]
        self.chars = len(HEADER)
        self.tokens = estimate_tokens(HEADER)

    def add(self, block: str) -> bool:
        """Add `block` if the text still fits the budget with it; say whether it did."""
        chars = self.chars + 2 + len(block)
        if chars > self.budget.chars:
            return False
        tokens = self.tokens + 1 + estimate_tokens(block)
        if tokens > self.budget.tokens:
            return False
        self.texts.append(block)
        self.chars, self.tokens = chars, tokens
        return True

    def room(self, frame: str) -> Budget:
        """About what is left for a body inside `frame` (a block with an empty body)."""
        return Budget(
            tokens=self.budget.tokens - self.tokens - 1 - estimate_tokens(frame),
            chars=self.budget.chars - self.chars - 2 - len(frame),
        )


def _add_full(
    parts: _Parts, record: Record, title_line: str, prompt: str, terms: Sequence[str], extra: str = ""
) -> bool:
    """Add the record with its body, or an excerpt of it, if either fits; say whether one did."""
    from agentctx_store.passages import excerpt  # only once there is a record to show

    def block(body: str, cut: bool) -> str:
        detail = ' detail="excerpt"' if cut else ""
        return (
            f'<agentctx-record id="{record.record_id}" type="{record.type}" confidence="{record.confidence}" '
            f'valid_from="{record.valid_from[:10]}"{extra}{detail}>\n{title_line}\n{body}\n{_CLOSE}'
        )

    body = unfence(record.body)
    if len(body) > LONG_RECORD_CHARS:
        cut = excerpt(body, prompt, limit=EXCERPT_CHARS, terms=terms)
        if (
            cut is not None
            and len(cut) <= (1 - MIN_SAVING) * len(body)
            and parts.add(block(f"{cut}\n{EXCERPT_NOTE}", True))
        ):
            return True
    if parts.add(block(body, False)):
        return True
    room = parts.room(block("\n" + EXCERPT_NOTE, True))
    if room.tokens < MIN_CUT_BODY_TOKENS or room.chars < 4 * MIN_CUT_BODY_TOKENS:
        return False
    limit = min(room.chars, EXCERPT_CHARS if len(body) > LONG_RECORD_CHARS else len(body) - 1)
    while limit >= 4 * MIN_CUT_BODY_TOKENS:  # fewer passages until it fits the tokens too
        cut = excerpt(body, prompt, limit=limit, terms=terms)
        if cut is None:
            break
        if parts.add(block(f"{cut}\n{EXCERPT_NOTE}", True)):
            return True
        limit //= 2
    cut = truncate(body, room)  # no whole sentence fits (one long unbroken run of text)
    return bool(cut) and parts.add(block(f"{cut}\n{EXCERPT_NOTE}", True))


def _title_names(record: Record, wanted: set[str]) -> bool:
    """Whether the record's title names at least TITLE_TERMS of the prompt's searchable words."""
    return len(wanted) >= TITLE_TERMS and len(_stems(query_terms(record.title)) & wanted) >= TITLE_TERMS


def _stems(terms: Iterable[str]) -> set[str]:
    """The words by their light stem (`passages.stem`), so "tests" meets "test"."""
    from agentctx_store.passages import stem

    return {stem(term) for term in terms}
