"""Writing an extraction into the store (docs/extraction.md#validation-and-ingest), all in one
transaction.

- Every text is redacted again before it is written.
- An entry that repeats a current record (same type and namespace, normalised text equal or
  token sets ≥ 85% alike) is not added: it reinforces that record when the record is inferred
  and came from another session (`reinforce_count` counts the sessions that saw it; a new
  record starts at 1, so the default threshold of 3 means three sessions), or at once on an
  explicit statement. A record is reinforced at most once per session, so re-running a session
  never counts twice.
- A decision's `supersedes` is applied only when the id names a current decision of this
  project; otherwise it is ignored and logged.
- The new handover (key `handover`) supersedes the project's current one.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentctx_store import NewRecord, Project, Record, RecordNotFound, Store
from agentctx_store.records import MAX_BODY_CHARS, MAX_TITLE_CHARS
from agentctx_store.redact import redact_text

from agentctx_extract.schema import ActiveWork, Extraction

log = logging.getLogger("agentctx.extract")

HANDOVER_KEY = "handover"
SIMILARITY_THRESHOLD = 0.85
SOURCE = "llm_extraction"
NEVER = 2**31  # a reinforce threshold no count reaches (review required: a person promotes)


@dataclass(kw_only=True)
class IngestReport:
    created: list[str] = field(default_factory=list[str])
    reinforced: list[str] = field(default_factory=list[str])
    superseded: list[str] = field(default_factory=list[str])
    skipped: list[str] = field(default_factory=list[str])  # why entries were not written


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """One extracted entry, shaped as a record: `core` is the fact alone, compared for repeats."""

    type: str
    core: str
    body: str
    confidence: str
    scope: str = "project"
    supersedes: str | None = None


def make_title(text: str) -> str:
    """One line of at most 120 characters, cut at a word boundary."""
    line = " ".join(text.split())
    if len(line) <= MAX_TITLE_CHARS:
        return line
    cut = line[: MAX_TITLE_CHARS - 1]
    if " " in cut[60:]:
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip(" ,;:.-") + "…"


def normalise(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


_POLARITY = frozenset({"not", "no", "never", "dont", "don", "avoid", "without", "stop", "instead", "nor", "cannot"})


def similarity(left: str, right: str) -> float:
    """1.0 for normalised-equal texts, else the Jaccard index of their word sets; 0.0 when
    the two differ in a negation or a number ("always X" vs "never X", "3 retries" vs "5"),
    however alike the rest, since those are opposite facts, not the same one reworded."""
    a, b = normalise(left), normalise(right)
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    words_a, words_b = set(a.replace("'", "").split()), set(b.replace("'", "").split())
    if (words_a & _POLARITY) != (words_b & _POLARITY):
        return 0.0
    if {w for w in words_a if w.isdigit()} != {w for w in words_b if w.isdigit()}:
        return 0.0
    return len(words_a & words_b) / len(words_a | words_b)


def _record_texts(record: Record) -> list[str]:
    return [record.title, record.body.split("\n\n", 1)[0], record.body]


def candidates(extraction: Extraction) -> list[Candidate]:
    """The entries as records-to-be, text redacted, in a fixed order."""
    out: list[Candidate] = []
    for decision in extraction.decisions:
        what = redact_text(decision.what)
        body = what + (f"\n\nWhy: {redact_text(decision.rationale)}" if decision.rationale else "")
        out.append(
            Candidate(
                type="decision", core=what, body=body, confidence=decision.confidence, supersedes=decision.supersedes
            )
        )
    for convention in extraction.conventions:
        text = redact_text(convention.convention)
        out.append(
            Candidate(
                type="convention",
                core=text,
                body=f"{text}\n\nApplies to: {convention.scope}",
                confidence=convention.confidence,
            )
        )
    for preference in extraction.preferences:
        text = redact_text(preference.rule)
        out.append(
            Candidate(
                type="preference",
                core=text,
                body=f"{text}\n\nCategory: {preference.category}",
                confidence=preference.confidence,
                scope=preference.scope,
            )
        )
    for gotcha in extraction.gotchas:
        text = redact_text(gotcha.pattern)
        why = redact_text(gotcha.why_it_matters)
        out.append(
            Candidate(
                type="discovery",
                core=text,
                body=text + (f"\n\nWhy it matters: {why}" if why else ""),
                confidence="inferred",
            )
        )
    return out


def handover_body(work: ActiveWork) -> str:
    lines = [f"Current task: {work.current_task or '(none stated)'}"]
    for name, items in (
        ("Blockers", work.blockers),
        ("Next steps", work.next_steps),
        ("Open questions", work.open_questions),
    ):
        if items:
            lines.append(f"{name}:")
            lines.extend(f"- {item}" for item in items)
    body = redact_text("\n".join(lines))
    return body if len(body) <= MAX_BODY_CHARS else body[: MAX_BODY_CHARS - 2].rstrip() + " …"


def _match(existing: Sequence[Record], candidate: Candidate) -> Record | None:
    best, best_score = None, 0.0
    for record in existing:
        score = max(similarity(candidate.core, text) for text in _record_texts(record))
        if score > best_score:
            best, best_score = record, score
    return best if best_score >= SIMILARITY_THRESHOLD else None


def _valid_supersedes(store: Store, project: Project, record_id: str) -> Record | None:
    try:
        old = store.get(project, record_id, include_superseded=True)
    except RecordNotFound:
        log.info("supersedes %r ignored: no such record in this project", record_id)
        return None
    if old.project_id != project.project_id or old.type != "decision" or old.superseded_at is not None:
        log.info("supersedes %r ignored: not a current decision of this project", record_id)
        return None
    return old


def ingest(
    store: Store,
    project: Project,
    extraction: Extraction,
    *,
    session_id: str,
    threshold: int,
    already_reinforced: Sequence[str] = (),
    review_required: bool = False,
) -> IngestReport:
    """Write the extraction; the caller wraps this in `store.transaction()` so it is all or nothing.

    With `review_required` (`agentctx config review required`) nothing extracted is trusted
    until a person accepts it: new records are `inferred` whatever the model judged, and a
    repeat counts a sighting without promoting the record (`agentctx review` does that)."""
    report = IngestReport()
    if extraction.flush_ok:
        return report
    seen_this_session = set(already_reinforced)
    for candidate in candidates(extraction):
        if len(candidate.body) > MAX_BODY_CHARS:
            report.skipped.append(f"{candidate.type} over the {MAX_BODY_CHARS}-char body limit")
            continue
        scope = "global" if candidate.scope == "global" else "project"
        existing = store.list_records(project, types=[candidate.type], scope=scope)
        match = _match(existing, candidate)
        if match is not None:
            if match.session_id == session_id or match.record_id in seen_this_session:
                report.skipped.append(f"{candidate.type} already recorded from this session: {match.record_id}")
            elif match.confidence == "inferred":
                store.reinforce(
                    project,
                    match.record_id,
                    threshold=NEVER if review_required else threshold,
                    explicit=candidate.confidence == "explicit" and not review_required,
                )
                report.reinforced.append(match.record_id)
                seen_this_session.add(match.record_id)
            else:
                report.skipped.append(f"{candidate.type} repeats {match.confidence} record {match.record_id}")
            continue
        supersedes = None
        if candidate.supersedes:
            old = _valid_supersedes(store, project, candidate.supersedes)
            supersedes = old.record_id if old else None
            if old is None:
                report.skipped.append(f"supersedes {candidate.supersedes!r} ignored")
        record = store.add(
            project,
            NewRecord(
                type=candidate.type,
                title=make_title(candidate.core),
                body=candidate.body,
                scope=scope,
                confidence="inferred" if review_required else candidate.confidence,
                source=SOURCE,
                session_id=session_id,
                reinforce_count=1,
            ),
            supersedes=supersedes,
        )
        report.created.append(record.record_id)
        if supersedes:
            report.superseded.append(supersedes)
    if extraction.active_work is not None:
        _write_handover(store, project, extraction.active_work, session_id=session_id, report=report)
    return report


def _write_handover(store: Store, project: Project, work: ActiveWork, *, session_id: str, report: IngestReport) -> None:
    body = handover_body(work)
    previous = store.find_by_key(project, "handover", HANDOVER_KEY)
    if previous is None:
        current = store.list_records(project, types=["handover"], scope="project", limit=1)
        previous = current[0] if current else None
    if previous is not None and normalise(previous.body) == normalise(body):
        report.skipped.append(f"handover unchanged: {previous.record_id}")
        return
    record = store.add(
        project,
        NewRecord(
            type="handover",
            title=make_title(redact_text(f"Handover: {work.current_task or 'session end'}")),
            body=body,
            confidence="inferred",
            source=SOURCE,
            session_id=session_id,
            key=HANDOVER_KEY,
        ),
        supersedes=previous.record_id if previous else None,
    )
    report.created.append(record.record_id)
    if previous is not None:
        report.superseded.append(previous.record_id)
