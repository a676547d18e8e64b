"""Request and response shapes of the JSON API; they are what `/api/openapi.json` documents.

Choices (type, scope, confidence) are enums here so a bad value is a 422 before the store is
touched; every other rule (title and body limits, dates) is the store's own validation.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from agentctx_store import clients
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

RecordTypeName = Literal["decision", "convention", "preference", "discovery", "bugfix", "handover", "profile"]
ScopeName = Literal["project", "global"]
ConfidenceName = Literal["explicit", "inferred", "reinforced"]
SupersededFilter = Literal["exclude", "include", "only"]


def encodable(text: str) -> str:
    """Text SQLite can store: JSON allows lone surrogates (`\\ud800`), UTF-8 does not."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text contains an unpaired surrogate; send valid Unicode") from None
    return text


Text = Annotated[str, AfterValidator(encodable)]


class ErrorOut(BaseModel):
    error: str
    head_id: str | None = None


class AnchorOut(BaseModel):
    anchor: str = Field(description="PATH, PATH:START-END or PATH:SYMBOL.")
    path: str
    line_start: int | None = None
    line_end: int | None = None
    symbol: str | None = None
    state: Literal["fresh", "changed", "missing", "unchecked"]


class RecordOut(BaseModel):
    id: str
    project_id: str
    type: str
    title: str
    body: str
    scope: str
    pinned: bool
    confidence: str
    reinforce_count: int
    valid_from: str
    recorded_at: str
    superseded_at: str | None
    superseded_by: str | None
    access_count: int
    last_accessed: str | None
    score: float
    claudemd_drift_score: float
    source: str
    session_id: str | None
    key: str | None
    updated_at: str | None
    rank: float | None = Field(
        default=None, description="Search rank (relevance × rerank factors); only in search results."
    )
    origin: dict[str, str] | None = Field(
        default=None,
        description=f"Which client ({', '.join(clients.names())}) and hook produced it, `{{client, hook?}}`, `{{}}` "
        "when not known; only when reading one record.",
    )
    anchors: list[AnchorOut] | None = Field(
        default=None,
        description="Every anchor (the file, lines or symbol the fact rests on) with its state now; only when "
        "reading one record. A learned record's first anchor is the file and lines it was read from.",
    )


class RecordList(BaseModel):
    records: list[RecordOut]
    count: int
    total: int | None = Field(default=None, description="How many records match when listing (not set for a search).")
    more: bool = Field(default=False, description="More records match than `limit` returned.")
    query_terms: list[str] = []
    degraded: str | None = Field(
        default=None, description="Set when search fell back (no FTS5): `like-search`, `pinned-only`."
    )


class RecordCreate(BaseModel):
    # Same fields as the store's `NewRecord` (which `create` builds from it) and `ImportItem`, kept
    # apart: this is the HTTP edge, checked by pydantic and described in the OpenAPI schema; the
    # store imports no pydantic.
    model_config = ConfigDict(extra="forbid")
    type: RecordTypeName
    title: Text
    body: Text
    scope: ScopeName = "project"
    confidence: ConfidenceName = "explicit"
    pinned: bool = False
    valid_from: Text | None = Field(default=None, description="ISO 8601 date or time; default now.")
    supersedes: Text | None = Field(
        default=None,
        description="Id of the current record this one replaces (its type may differ, except handover and profile).",
    )
    anchors: list[Text] = Field(
        default_factory=list,
        description="What the fact rests on: PATH, PATH:START-END or PATH:SYMBOL, project-relative (docs/freshness.md).",
    )


class RecordPatch(BaseModel):
    """A correction in place (a typo, a wrong type); to replace a fact, supersede instead."""

    model_config = ConfigDict(extra="forbid")
    title: Text | None = None
    body: Text | None = None
    type: RecordTypeName | None = None
    confidence: ConfidenceName | None = None
    scope: ScopeName | None = None
    valid_from: Text | None = None
    pinned: bool | None = None


class SupersedeIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    body: Text
    title: Text | None = None
    rationale: Text | None = Field(default=None, description="Why it changed; appended to the new body.")


class SupersedeOut(BaseModel):
    old: RecordOut
    new: RecordOut


class ChainOut(BaseModel):
    records: list[RecordOut] = Field(description="The supersession chain, oldest first.")
    head_id: str | None


class ProjectOut(BaseModel):
    project_id: str
    name: str
    root: str | None
    remote: str | None
    is_default: bool
    last_activity: str | None
    counts: dict[str, int]
    total: int
    stale: int = 0  # current records whose anchored files changed or are gone (docs/freshness.md)


class ProjectList(BaseModel):
    projects: list[ProjectOut]
    default_project: str


class GraphOut(BaseModel):
    records: list[RecordOut]
    entities: list[dict[str, str]]
    supersedes: list[dict[str, str]] = Field(description="Edges newer → older.")
    links: list[dict[str, str]] = Field(description="Record → entity (file) links.")
    anchors: list[dict[str, str]] = Field(
        default=[],
        description="Record → anchored file: `{record, path, anchor, state}`, the state fresh, changed, missing "
        "or unchecked.",
    )
    truncated: bool


class ExtractionOut(BaseModel):
    """A session's extraction runs (`agentctx_store.spend.session_usage`)."""

    runs: int
    calls: int
    input_tokens: int
    cached_tokens: int = Field(description="Input tokens read from the prompt cache.")
    cache_write_tokens: int
    output_tokens: int
    cost_usd: float
    last_trigger: str | None = Field(default=None, description="end, stop, precompact, sweep or manual.")
    client_tokens: int = Field(
        default=0, description="Tokens sent and received through a coding agent's headless mode."
    )
    backend: str | None = Field(default=None, description="The last run's backend: api, or the client it ran through.")


class InjectionOut(BaseModel):
    """One prompt injection of a session (the last 50 are kept)."""

    at: str | None = None
    client: str | None = None
    hook: str | None = Field(default=None, description="The client's own hook name (`BeforeAgent` in Gemini).")
    ids: list[str] = []
    tokens: int = 0


class SessionOut(BaseModel):
    session_id: str
    project_id: str | None
    started_at: str | None
    ended_at: str | None
    injections: int = Field(description="Every injection: the session-start digest and each prompt's.")
    prompt_injections: int = Field(default=0, description="The prompts' injections (those in `injection_log`).")
    tokens_injected: int
    extraction_cost_usd: float
    extraction: ExtractionOut
    client: str | None = Field(
        default=None, description=f"The client the session ran in: {', '.join(clients.names())}."
    )
    injection_log: list[InjectionOut] = Field(default=[], description="The prompt injections, oldest first (last 50).")
    meta: dict[str, Any]


class SessionList(BaseModel):
    sessions: list[SessionOut]
    total_tokens_injected: int
    total_extraction_cost_usd: float
    month_extraction_cost_usd: float = Field(description="This month's extraction spend, all projects.")
    monthly_cap_usd: float
    month_client_tokens: int = Field(default=0, description="This month's tokens through a coding agent, all projects.")
    llm_monthly_tokens: int = Field(default=0, description="The monthly cap on those tokens.")


class SyncOut(BaseModel):
    available: bool
    message: str | None = None
    report: Any = None


class MetaOut(BaseModel):
    version: str
    default_project: str
    types: list[str]
    scopes: list[str]
    confidences: list[str]


VerdictName = Literal["still_true", "update", "no_longer_true"]
Outcome = Literal["confirmed", "superseded", "deleted"]


class ProposalOut(BaseModel):
    """A re-verification proposal (`agentctx_store.stale.reverify`) for a record whose anchored code changed."""

    id: int = Field(description="The proposal id (POST /api/inbox/proposals/{id}/accept|reject).")
    verdict: VerdictName = Field(
        description="still_true: accepting re-hashes the anchors; update: accepting supersedes the record with the "
        "draft; no_longer_true: accepting deletes the record."
    )
    title: str | None = Field(description="The draft title (update only).")
    body: str | None = Field(description="The draft body (update only).")
    reason: str
    created_at: str
    status: Literal["open", "accepted", "rejected"]
    record: RecordOut = Field(description="The record it is about, as it was before the decision.")


class HeadsOut(BaseModel):
    """A record superseded twice, concurrently (two machines on a remote, two branches of the team
    file): its successors are all current until a person keeps one."""

    record: RecordOut
    heads: list[RecordOut] = Field(description="The current successors, oldest id first.")


class HeadsList(BaseModel):
    conflicts: list[HeadsOut]
    count: int


class HeadsKeepOut(BaseModel):
    kept: RecordOut
    retired: list[str] = Field(description="The other heads, now superseded by the one kept.")


class ProposalList(BaseModel):
    proposals: list[ProposalOut] = Field(description="Oldest first, as `agentctx review` walks them.")
    count: int


class ProposalAcceptOut(BaseModel):
    """What accepting did to the store."""

    proposal: ProposalOut
    outcome: Outcome = Field(
        description="confirmed (still_true: anchors re-hashed), superseded (update), deleted (no_longer_true)."
    )
    record: RecordOut | None = Field(
        description="The record current now: the confirmed one, or the new one superseding it; null when deleted."
    )
