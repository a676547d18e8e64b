"""The store's half of a prompt, in three steps with plain data between them:

    rank(…) -> Ranked        the hits worth considering (keyword search here; the warm search
                             service ranks with vectors too and builds the same `Ranked`)
    compose(…) -> Injection  what the prompt injects (`agentctx_store.inject.compose_injection`),
                             anchored records checked against their files
    account(…)               what was injected, recorded: the session's token accounting, the
                             records' access counts, the injection log and the client
                             (provenance), which path served it, and what the fast SessionStart
                             path left pending

Both ways a prompt is answered, the keyword path in the hook process and the warm search service
(`agentctx_embed.service`), call `compose` and `account`, so the same hits inject the same text
and leave the same record, apart from the name of the path. Nothing here calls back into the
caller: the caller runs the steps in order, and may stop between them (the service does, when
the hook has given up waiting). Standard library and the store's fast core only.
"""

from __future__ import annotations

from agentctx_store.clients import DEFAULT
from agentctx_store.digest_file import Pending

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from agentctx_store.budget import Budget
    from agentctx_store.projects import Project
    from agentctx_store.retrieval import SearchHit
    from agentctx_store.store import Store

MAX_QUERY_CHARS = 10_000
SHOWN = 3  # records a prompt may show (`inject.PROMPT_RECORDS`)
GATED = 10  # ranked when `review = required` may still drop some, so three kept ones can remain
PATHS = ("keyword", "warm")
# The current handover is the one the SessionStart digest already shows (a new one written
# mid-session comes from this very session), so prompts never inject handovers.
PROMPT_TYPES = ("decision", "convention", "preference", "discovery", "bugfix", "profile")

# The data between the steps are plain classes with slots, written out: every prompt builds them,
# and a prompt that finds nothing loads nothing of the composition (`agentctx_store.inject`,
# budgets, passages). `Pending` lives with the digest files (`digest_file`): SessionStart's fast
# path parks it without loading the prompt line.


class Asked:
    """One prompt, as both paths receive it from the hook.

    `client`: the agent the hook runs in (`agentctx_store.clients`); `hook`: the client's own
    name for the hook (`BeforeAgent` for Gemini); `already`: records shown earlier in the
    session; `gated`: `config review = required`, so extraction results nobody accepted stay out."""

    __slots__ = ("already", "client", "gated", "hook", "pending", "prompt", "session_id")

    def __init__(
        self,
        *,
        prompt: str,
        session_id: str = "",
        client: str = DEFAULT,
        hook: str = "UserPromptSubmit",
        already: list[str] | None = None,
        pending: Pending | None = None,
        gated: bool = False,
    ) -> None:
        self.prompt, self.session_id, self.client, self.hook = prompt, session_id, client, hook
        self.already = already if already is not None else []
        self.pending = pending if pending is not None else Pending()
        self.gated = gated

    @property
    def query(self) -> str:
        return self.prompt[:MAX_QUERY_CHARS]

    @property
    def wanted(self) -> int:
        """How many hits to rank."""
        return GATED if self.gated else SHOWN


class Ranked:
    """The hits of a prompt, best first, and the prompt's searchable words."""

    __slots__ = ("hits", "terms")

    def __init__(self, *, hits: list[SearchHit] | None = None, terms: list[str] | None = None) -> None:
        self.hits = hits if hits is not None else []
        self.terms = terms if terms is not None else []


class Injection:
    """The additionalContext for one prompt and what it spent ("" and no ids: inject nothing);
    composed by `agentctx_store.inject`."""

    __slots__ = ("full_ids", "text", "title_ids", "tokens")

    def __init__(
        self,
        *,
        text: str = "",
        full_ids: list[str] | None = None,  # records shown with their body (or an excerpt)
        title_ids: list[str] | None = None,  # records shown by their title line only
        tokens: int = 0,
    ) -> None:
        self.text, self.tokens = text, tokens
        self.full_ids = full_ids if full_ids is not None else []
        self.title_ids = title_ids if title_ids is not None else []

    @property
    def ids(self) -> list[str]:
        """Every record the text shows."""
        return [*self.full_ids, *self.title_ids]

    def __repr__(self) -> str:
        return f"Injection(text={self.text!r}, full_ids={self.full_ids!r}, title_ids={self.title_ids!r}, tokens={self.tokens!r})"


def shortlist(asked: Asked, hits: Sequence[SearchHit], terms: Sequence[str]) -> Ranked:
    """The ranked hits a prompt may show: under the review gate, those somebody accepted."""
    if asked.gated:
        from agentctx_store.review import awaiting_review

        hits = [hit for hit in hits if not awaiting_review(hit.record)]
    return Ranked(hits=list(hits[:SHOWN]), terms=list(terms))


def rank(store: Store, project: Project, asked: Asked, *, floor: float | None = None) -> Ranked:
    """The keyword path's ranking: BM25, rerank and the relevance floor (`agentctx_store.retrieval`).
    `floor`: the project's calibrated keyword floor (`calibration.read_keyword_floor`, which the
    hook reads); default `retrieval.RELEVANCE_FLOOR`."""
    from agentctx_store.retrieval import RELEVANCE_FLOOR, search

    result = search(
        store,
        project,
        asked.query,
        limit=asked.wanted,
        types=PROMPT_TYPES,
        exclude_ids=asked.already,
        floor=RELEVANCE_FLOOR if floor is None else floor,
    )
    return shortlist(asked, result.hits, result.terms)


def compose(store: Store, project: Project, asked: Asked, ranked: Ranked, *, budget: Budget | None = None) -> Injection:
    """The injection for the ranked hits; records whose anchored files changed are marked, those
    whose anchored files are all gone left out (`agentctx_store.freshness`). `budget`: the
    prompt's (`budget.PROMPT`) unless the caller has a smaller one (a subagent's start)."""
    if not ranked.hits:
        return Injection()
    from agentctx_store.freshness import Checker
    from agentctx_store.inject import compose_injection

    checker = Checker(store, project)
    if budget is None:
        from agentctx_store.budget import PROMPT as budget
    return compose_injection(
        ranked.hits, asked.query, terms=ranked.terms, already_injected=asked.already, budget=budget, freshness=checker
    )


def account(store: Store, project: Project, asked: Asked, injection: Injection, *, path: str, at: str) -> None:
    """Record what a prompt injected (and what SessionStart left pending), in one transaction.

    Nothing is written for a prompt that injected nothing and had nothing pending. `path` is
    "keyword" or "warm": the one thing the two paths record differently. `at`: the time of the
    injection, as stored. Raises `sqlite3.OperationalError` when the store stayed locked: the
    caller injects anyway."""
    if path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}, not {path!r}")
    if not asked.session_id or not (injection.text or asked.pending.count):
        return
    with store.transaction():
        record_pending(store, project, asked.session_id, asked.pending)
        if not injection.text:
            return
        store.record_injection(
            project,
            asked.session_id,
            injection.full_ids,
            injection.tokens,
            title_ids=injection.title_ids,
            prompt=True,
        )
        entry = {"at": at, "client": asked.client, "hook": asked.hook, "ids": injection.ids, "tokens": injection.tokens}
        store.log_in_session(project, asked.session_id, "injections", entry, count=f"prompts_served_{path}")


def record_pending(store: Store, project: Project, session_id: str, pending: Pending) -> None:
    """Record SessionStart's parked accounting: `count` injections, the tokens and ids on the last."""
    if not pending.count:
        return
    with store.transaction():
        for _ in range(pending.count - 1):
            store.record_injection(project, session_id, [], 0)
        store.record_injection(project, session_id, pending.ids, pending.tokens)
