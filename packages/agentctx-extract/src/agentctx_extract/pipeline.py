"""`agentctx extract`: transcript → redacted text → Claude Haiku → validated records.

Degrade, never break: every way this can fail (LLM off, no key, the monthly cap, another run
holding the lock, network errors, a malformed answer) ends in one line in
`$AGENTCTX_HOME/logs/extract.log` and an `Outcome`, never an exception into the session.
Nothing is written unless the whole answer is in hand, and then in one transaction.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
from collections.abc import Generator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict

from agentctx_store import AgentctxError, Project, Store, clients, config, digest, paths, resolve_project
from agentctx_store.budget import estimate_tokens
from agentctx_store.jsontext import is_array, is_object
from agentctx_store.records import utc_now
from agentctx_store.redact import redact, redact_text
from agentctx_store.spend import month_client_tokens, month_spent

from agentctx_extract.backends import Choice, ClientCaller, choose, client_slot, client_timeout
from agentctx_extract.client_transcripts import read_for_client
from agentctx_extract.ingest import IngestReport, ingest
from agentctx_extract.llm import Caller, CallFailed, CallSettings, Usage, make_client
from agentctx_extract.locks import session_lock
from agentctx_extract.prices import is_known, price_for
from agentctx_extract.prompt import (
    SYSTEM_PROMPT,
    TOOL,
    TOOL_USE_SYSTEM_TOKENS,
    KnownRecord,
    session_message,
    synthesis_message,
)
from agentctx_extract.schema import Extraction, MalformedOutput, parse_extraction
from agentctx_extract.sizing import InputPlan, plan_input
from agentctx_extract.transcript import render

log = logging.getLogger("agentctx.extract")

Status = Literal[
    "written",
    "flush_ok",
    "nothing_new",
    "disabled",
    "no_key",
    "no_client",
    "cap_reached",
    "locked",
    "already_done",
    "empty",
    "failed",
]
Trigger = Literal["stop", "precompact", "end", "sweep", "manual"]
TRIGGERS: tuple[str, ...] = ("stop", "precompact", "end", "sweep", "manual")
MAX_PARALLEL_CALLS = 4
MAX_PAID_FAILURES = 3
RUNS_KEPT = 50  # per-run lines kept on the session (the sums cover every run)
# The cap check prices a run before sending it: the estimated input of every planned call
# (our estimate over-counts) plus this many output tokens per call (answers run ~300-800).
EXPECTED_OUTPUT_TOKENS = 1000


@dataclass(frozen=True, kw_only=True)
class Outcome:
    status: Status
    message: str
    session_id: str
    project_id: str | None = None
    mode: str | None = None
    tokens_estimated: int = 0
    usage: Usage = field(default_factory=Usage)
    report: IngestReport | None = None
    secrets_redacted: int = 0

    @property
    def cost_usd(self) -> float:
        return self.usage.cost_usd


class _OutcomeBase(TypedDict):
    """The fields every `Outcome` of a run shares once its plan is known."""

    session_id: str
    project_id: str
    mode: str
    tokens_estimated: int
    secrets_redacted: int


@contextlib.contextmanager
def _extract_log() -> Generator[None]:
    """Send this run's log lines to `$AGENTCTX_HOME/logs/extract.log` (never the transcript's text)."""
    logs = Path(paths.logs_dir())
    try:
        logs.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(logs / "extract.log", encoding="utf-8")
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    previous = log.level
    log.setLevel(logging.INFO)
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(previous)
        handler.close()


SUMMED = ("calls", "input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens")


def with_run(
    extraction: dict[str, Any], usage: Usage, *, trigger: str, mode: str, status: str, backend: str = "api"
) -> dict[str, Any]:
    """The session's extraction metadata with one more run: its line in `runs_log` (backend,
    tokens in, cached, out, and cost) and the session's sums over every run, paid failures
    included. Tokens that went through a coding agent (`backend` a client) are also summed as
    `client_tokens`, what `llm_monthly_tokens` caps."""
    updated = dict(extraction)
    for key, value in zip(
        SUMMED,
        (usage.calls, usage.input_tokens, usage.output_tokens, usage.cache_write_tokens, usage.cache_read_tokens),
        strict=True,
    ):
        updated[key] = int(extraction.get(key, 0) or 0) + value
    updated["cost_usd"] = round(float(extraction.get("cost_usd", 0) or 0) + usage.cost_usd, 6)
    if backend != "api":
        sent = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens + usage.output_tokens
        updated["client_tokens"] = int(extraction.get("client_tokens", 0) or 0) + sent
    line = {"at": utc_now(), "trigger": trigger, "mode": mode, "status": status, "backend": backend}
    line |= usage.to_json()
    runs = [entry for entry in extraction.get("runs_log", ()) if is_object(entry)]
    updated["runs_log"] = [*runs, line][-RUNS_KEPT:]
    return updated


def estimated_inputs(plan: InputPlan, known: list[KnownRecord]) -> list[int]:
    """Every planned call's estimated input: system prompt, tool schema, the API's tool-use
    prompt, message."""
    fixed = estimate_tokens(SYSTEM_PROMPT) + estimate_tokens(json.dumps(TOOL)) + TOOL_USE_SYSTEM_TOKENS
    parts = list(plan.parts)
    inputs = [fixed + estimate_tokens(session_message(part, known)) for part in parts]
    if plan.mode == "map_reduce":  # the synthesis call reads one answer per part
        inputs.append(fixed + EXPECTED_OUTPUT_TOKENS * len(parts))
    return inputs


def estimated_run_cost(plan: InputPlan, known: list[KnownRecord], model: str) -> float:
    """What a run would cost at most, before it is sent: every planned call's estimated input
    and `EXPECTED_OUTPUT_TOKENS` per call."""
    price = price_for(model)
    return sum(
        price.cost(input_tokens=tokens, output_tokens=EXPECTED_OUTPUT_TOKENS)
        for tokens in estimated_inputs(plan, known)
    )


def estimated_run_tokens(plan: InputPlan, known: list[KnownRecord]) -> int:
    """What a run through a coding agent would send and receive at most, by our estimate."""
    inputs = estimated_inputs(plan, known)
    return sum(inputs) + EXPECTED_OUTPUT_TOKENS * len(inputs)


def cap_message(
    store: Store, settings: dict[str, Any], choice: Choice, estimate: tuple[float, int], *, what: str = "extraction"
) -> str:
    """Why a run must not start ("" when it may): this month's dollars on the API, or tokens
    through a coding agent, plus the run's estimate, against the cap of its backend."""
    cost, tokens = estimate
    if choice.is_client:
        used, token_cap = month_client_tokens(store), int(settings["llm_monthly_tokens"])
        if used + tokens > token_cap:
            return (
                f"monthly token cap for {choice.backend} reached ({used:,} used + ~{tokens:,} for this run "
                f"> llm_monthly_tokens {token_cap:,}); nothing sent"
            )
        return ""
    spent, cap = month_spent(store), float(settings["monthly_cap_usd"])
    if spent + cost > cap:
        return f"monthly {what} cap reached (${spent:.4f} spent + ~${cost:.4f} for this run > cap ${cap:.2f}); nothing sent"
    return ""


def make_caller(choice: Choice, settings: dict[str, Any], *, cache: bool = False) -> Caller | ClientCaller:
    """The caller of the chosen backend: the SDK against the API, or the client's headless mode
    (Claude Code runs the configured `extraction_model`; Codex and Gemini their own default)."""
    model = str(settings["extraction_model"])
    if choice.is_client:
        assert choice.backend is not None
        return ClientCaller(choice.backend, model=model if choice.backend == "claude" else "")
    call_settings = CallSettings.from_env(model)
    return Caller(make_client(call_settings), call_settings, cache=cache)


def _known_records(store: Store, project: Project) -> list[KnownRecord]:
    current = store.list_records(project, types=["decision", "convention"], scope="project", limit=60)
    return [KnownRecord(record_id=r.record_id, type=r.type, title=redact_text(r.title)) for r in current]


def _call_model(caller: Caller | ClientCaller, plan: InputPlan, known: list[KnownRecord]) -> Extraction:
    """Run the plan's calls; map-reduce chunks go out in parallel, then one synthesis call.

    Raises:
        CallFailed, MalformedOutput: any call failed; nothing is usable then.
    """
    if plan.mode != "map_reduce":
        return parse_extraction(caller.call(session_message(plan.parts[0], known), label="extract"))
    total = len(plan.parts)

    def one(index: int) -> Extraction:
        text = session_message(plan.parts[index], known, part=(index + 1, total))
        return parse_extraction(caller.call(text, label=f"chunk {index + 1}/{total}"))

    # a headless client is a whole agent process: its chunks go one after another
    workers = 1 if isinstance(caller, ClientCaller) else min(MAX_PARALLEL_CALLS, total)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        partials = list(pool.map(one, range(total)))
    useful = [partial.to_json() for partial in partials if not partial.flush_ok]
    if not useful:
        return Extraction(flush_ok=True)
    merged = redact_text(synthesis_message(useful, known))
    return parse_extraction(caller.call(merged, label="synthesis"))


def _note_failure(
    store: Store,
    project: Project,
    session_id: str,
    done: dict[str, Any],
    *,
    start: int,
    total_turns: int,
    paid: bool,
    run: dict[str, Any],
) -> str:
    """Count failures that cost money (an answer came back but was unusable) from one starting
    turn. Network errors and 429/5xx cost nothing and are retried at the next Stop for ever;
    after `MAX_PAID_FAILURES` unusable answers in a row those turns are given up, so one bad
    stretch of a session cannot be paid for again at every later turn."""
    if not paid:
        return ""
    previous: dict[str, Any] = done.get("failures") or {}
    count = int(previous.get("count", 0)) + 1 if previous.get("start") == start else 1
    extraction = dict(with_run(done, **run), failures={"start": start, "count": count})
    note = ""
    if count >= MAX_PAID_FAILURES:
        extraction.update(turns_done=total_turns, failures={})
        note = f"; gave up on turns {start}-{total_turns} after {count} unusable answers"
    store.update_session_meta(project, session_id, extraction=extraction)
    return note


def _write(
    store: Store,
    project: Project,
    extraction: Extraction,
    *,
    settings: dict[str, Any],
    done: dict[str, Any],
    session_id: str,
    meta: dict[str, Any],
    run: dict[str, Any],
) -> IngestReport:
    """Ingest and mark the session's progress in one transaction: all of it or none.

    Raises:
        sqlite3.Error, AgentctxError: the write failed and was rolled back.
    """
    already_reinforced = list(done.get("reinforced", []))
    with store.transaction():
        report = ingest(
            store,
            project,
            extraction,
            session_id=session_id,
            threshold=int(settings["reinforce_threshold"]),
            already_reinforced=already_reinforced,
            review_required=settings.get("review") == "required",
        )
        _anchor_created(store, project, session_id, report.created)
        store.update_session_meta(
            project,
            session_id,
            extraction={
                **with_run(done, **run),
                **meta,
                "at": utc_now(),
                "runs": int(done.get("runs", 0)) + 1,
                "flush_ok": extraction.flush_ok,
                "created": sorted(set(done.get("created", [])) | set(report.created)),
                "reinforced": sorted(set(already_reinforced) | set(report.reinforced)),
                "failures": {},
            },
        )
    return report


def _anchor_created(store: Store, project: Project, session_id: str, created: list[str]) -> None:
    """New records that name a file the session edited are anchored to it (docs/freshness.md)."""
    from agentctx_store.stale import anchor_from_mentions

    session = store.get_session(session_id) or {}
    files = session.get("meta", {}).get("files")
    if created and is_array(files):  # none, or not a list: nothing to anchor to
        anchor_from_mentions(store, project, created, [str(name) for name in files])


@contextlib.contextmanager
def _one_client_run(choice: Choice) -> Generator[bool]:
    """One headless client run at a time per data dir (each is a whole agent process); the API
    path is not limited. Waits up to the client timeout for the one before."""
    if not choice.is_client:
        yield True
        return
    with client_slot(client_timeout()) as held:
        yield held


def extract_session(
    session_id: str,
    transcript_path: Path,
    *,
    project_path: Path | None = None,
    force: bool = False,
    trigger: Trigger = "manual",
    client: str = clients.DEFAULT,
) -> Outcome:
    """Extract one session's context into the store. Never raises for runtime failures.

    `trigger` says which hook asked (`end`, `stop`, `precompact`, `sweep`) or `manual`; it is
    written on the session's per-run line and in the log. `client` names the client whose
    transcript it is (`agentctx_store.clients`; its format is read by `client_transcripts`)."""
    with _extract_log():
        try:
            outcome = _run(
                session_id, transcript_path, project_path=project_path, force=force, trigger=trigger, client=client
            )
        except Exception as exc:  # process boundary: a detached run must end in a log line, not a traceback
            log.exception("session %s: extraction crashed", session_id)
            return Outcome(status="failed", message=f"extraction crashed: {type(exc).__name__}", session_id=session_id)
        level = logging.WARNING if outcome.status == "failed" else logging.INFO
        log.log(level, "session %s (%s): %s", session_id, trigger, outcome.message)
        return outcome


def _run(
    session_id: str,
    transcript_path: Path,
    *,
    project_path: Path | None,
    force: bool,
    trigger: str,
    client: str = clients.DEFAULT,
) -> Outcome:
    settings = config.load()
    choice = choose(settings, client)
    if choice.backend is None:
        if choice.status == "disabled":
            return Outcome(
                status="disabled",
                message="LLM extraction is off (`agentctx config llm`); nothing sent",
                session_id=session_id,
            )
        status: Status = "no_key" if choice.status == "no_key" else "no_client"
        return Outcome(
            status=status, message=f"{choice.reason}; extraction skipped, nothing sent", session_id=session_id
        )
    with session_lock(session_id) as held:
        if not held:
            return Outcome(
                status="locked", message="another extraction of this session is running", session_id=session_id
            )
        try:
            transcript = read_for_client(transcript_path, client, session_id=session_id)
        except OSError as exc:  # gone, or not a regular file (`agentctx_store.bounded`)
            return Outcome(status="failed", message=f"cannot read the transcript: {exc}", session_id=session_id)
        project = resolve_project(project_path or transcript.cwd or Path.cwd())
        with Store.open() as store:
            session = store.get_session(session_id)
            done = (session or {}).get("meta", {}).get("extraction", {})
            total_turns = len(transcript.turns)
            start = 0 if force else min(int(done.get("turns_done", 0)), total_turns)
            cleaned = redact(render(transcript, start=start))
            plan = plan_input(cleaned.text)
            base_outcome: _OutcomeBase = {
                "session_id": session_id,
                "project_id": project.project_id,
                "mode": plan.mode,
                "tokens_estimated": plan.tokens,
                "secrets_redacted": cleaned.count,
            }
            if done and start >= total_turns:
                return Outcome(status="already_done", message="already extracted; no new turns", **base_outcome)
            if not any(turn.kind == "developer" for turn in transcript.turns[start:]):
                return Outcome(
                    status="empty", message="no new words from the developer in the transcript", **base_outcome
                )
            known = _known_records(store, project)
            model = str(settings["extraction_model"])
            estimate = (estimated_run_cost(plan, known, model), estimated_run_tokens(plan, known))
            capped = cap_message(store, settings, choice, estimate)
            if capped:
                return Outcome(status="cap_reached", message=capped, **base_outcome)
        if plan.chunks_dropped:
            log.info("session %s: huge session, %d middle chunks left out", session_id, plan.chunks_dropped)
        if not is_known(model) and not choice.is_client:
            log.info("session %s: model %r is not in the price table; priced at the dearest row", session_id, model)
        # the prefix repeats within the cache's 5 minutes only across a map-reduce run's calls
        caller = make_caller(choice, settings, cache=plan.mode == "map_reduce")
        with _one_client_run(choice) as slot:
            if not slot:
                return Outcome(
                    status="locked", message="another extraction through a coding agent is running", **base_outcome
                )
            try:
                extraction: Extraction | None = _call_model(caller, plan, known)
                failure = ""
            except (CallFailed, MalformedOutput) as exc:
                extraction, failure = None, str(exc)
        with digest.refreshing(Store.open()) as store:
            if caller.usage.calls:
                store.add_extraction_cost(session_id, project, caller.usage.cost_usd)
            run = {"usage": caller.usage, "trigger": trigger, "mode": plan.mode, "backend": choice.backend}
            if extraction is None:
                note = _note_failure(
                    store,
                    project,
                    session_id,
                    done,
                    start=start,
                    total_turns=total_turns,
                    paid=caller.usage.calls > 0,
                    run={**run, "status": "failed"},
                )
                return Outcome(
                    status="failed", message=f"extraction skipped: {failure}{note}", usage=caller.usage, **base_outcome
                )
            try:
                report = _write(
                    store,
                    project,
                    extraction,
                    settings=settings,
                    done=done,
                    session_id=session_id,
                    meta={"turns_done": total_turns, "mode": plan.mode, "model": model, "backend": choice.backend},
                    run={**run, "status": "flush_ok" if extraction.flush_ok else "written"},
                )
            except (sqlite3.Error, AgentctxError) as exc:  # rolled back whole: nothing of this run is stored
                return Outcome(
                    status="failed",
                    message=f"store write failed, nothing written: {exc}",
                    usage=caller.usage,
                    **base_outcome,
                )
        for reason in (*extraction.dropped, *report.skipped):
            log.info("session %s: dropped %s", session_id, reason)
    if extraction.flush_ok:
        status: Status = "flush_ok"
        message = "trivial session (flush_ok); nothing written"
    elif report.created or report.reinforced:
        status = "written"
        message = (
            f"{len(report.created)} records written, {len(report.reinforced)} reinforced, "
            f"{len(report.superseded)} superseded"
        )
    else:
        status, message = "nothing_new", "nothing new to write"
    if choice.is_client:
        tokens = caller.usage.input_tokens + caller.usage.cache_read_tokens + caller.usage.output_tokens
        message += f" ({plan.mode}, {caller.usage.calls} calls through {choice.backend}, {tokens:,} tokens)"
    else:
        message += f" ({plan.mode}, {caller.usage.calls} calls, ${caller.usage.cost_usd:.4f})"
    return Outcome(status=status, message=message, usage=caller.usage, report=report, **base_outcome)
