"""The SessionStart digest (docs/contracts.md#budgets): composed ahead of time, read from a file at
session start.

Sections, in order, each with its own token cap, truncated from the bottom of the list:
profile ~200 · active decisions ~500 · last handover ~400 · reinforced global preferences ~200
· MCP hint ~100 · CLAUDE.md drift hint ~60 (only with ≥ 2 candidates).

Two writers share this module. Whatever changes the store refreshes a *cheap* digest (profile,
pinned records, recent explicit decisions, latest handover: plain SQL, no ranking). Offline
consolidation writes the *full* digest from its hybrid ranking. A write after a full digest
only marks it stale; SessionStart then starts a consolidation in the background.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Generator, Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from agentctx_store import digest_file, paths
from agentctx_store.budget import SESSION_START, Budget, estimate_tokens, fit_sections
from agentctx_store.digest_file import split_fence as split_fence
from agentctx_store.fence import DIGEST_CLOSE, DIGEST_OPEN, unfence
from agentctx_store.files import atomic_write
from agentctx_store.projects import GLOBAL_PROJECT_ID, Project, hash_id
from agentctx_store.records import Record, trust_mark, utc_now
from agentctx_store.store import Store

PROFILE_TOKENS = 200
DECISIONS_TOKENS = 500
HANDOVER_TOKENS = 400
PREFERENCES_TOKENS = 200
MCP_HINT_TOKENS = 100
DRIFT_TOKENS = 60
RECORD_LINE_CHARS = 320

MCP_HINT = (
    "More project context is searchable: call `ctx_search` (compact index) then `ctx_get` (full records); "
    "record new decisions with `ctx_record`, replace outdated ones with `ctx_supersede`."
)


@dataclass(frozen=True, kw_only=True)
class DigestInfo:
    kind: str  # "cheap" | "full"
    written_at: str
    stale: bool = False
    tokens: int = 0
    sha256: str = ""  # of the text: SessionStart trusts `tokens` while the text is unchanged


def record_line(record: Record, *, with_body: bool = True) -> str:
    text = f"- [{record.type} {record.record_id}] {unfence(record.title)}{trust_mark(record)}"
    if with_body and record.body.strip() and record.body.strip() != record.title:
        body = " ".join(unfence(record.body).split())
        if len(body) > RECORD_LINE_CHARS:
            body = body[: RECORD_LINE_CHARS - 1].rsplit(" ", 1)[0] + "…"
        text += f": {body}"
    return text


def profile_section(project_name: str, profile: Sequence[Record]) -> str:
    """Profile lines; an inferred one (a guess, not detected from the project's files nor stated)
    carries the same unconfirmed mark as an inferred handover."""
    lines = [f"## Project: {project_name}"]
    for record in sorted(profile, key=lambda item: item.key or item.title):
        lines.append(f"- {unfence(record.title)}{trust_mark(record)}: {' '.join(unfence(record.body).split())}")
    return "\n".join(lines)


def compose(
    store: Store,
    project: Project,
    *,
    decisions: Sequence[Record] | None = None,
    drift_candidates: int = 0,
    snapshot: str | None = None,
    budget: Budget = SESSION_START,
) -> str:
    """The digest text for a project. `decisions` is the ranked list (full digest); without it
    the cheap order is used: pinned first, then explicit/reinforced decisions and conventions by
    recency."""
    profile = store.list_records(project, scope="project", types=["profile"], limit=50)
    if decisions is None:
        decisions = cheap_ranking(store, project)
    decisions, stale_marks, stale_line = _freshness(store, project, decisions)
    handovers = store.list_records(project, scope="project", types=["handover"], limit=1)
    handover = handovers[0] if handovers else None
    preferences = [
        record
        for record in store.list_records(project, scope="global", types=["preference"])
        if record.confidence in ("reinforced", "explicit")
    ]
    sections: list[tuple[str, str, int]] = [
        ("profile", profile_section(project.name, profile), PROFILE_TOKENS),
    ]
    if snapshot:
        sections.append(("snapshot", "## Before compaction\n" + unfence(snapshot), HANDOVER_TOKENS))
    if decisions:
        sections.append(
            ("decisions", _list_section("Current decisions and conventions", decisions, stale_marks), DECISIONS_TOKENS)
        )
    if handover is not None:
        sections.append(
            ("handover", f"## Last handover{trust_mark(handover)}\n{unfence(handover.body)}", HANDOVER_TOKENS)
        )
    if preferences:
        sections.append(("preferences", _list_section("Developer preferences", preferences), PREFERENCES_TOKENS))
    ours: list[tuple[str, str, int]] = [("mcp", MCP_HINT, MCP_HINT_TOKENS)]
    if stale_line:
        ours.append(("stale", stale_line, DRIFT_TOKENS))
    if drift_candidates >= 2:
        ours.append(
            (
                "drift",
                f"CLAUDE.md is behind the store on {drift_candidates} points: `agentctx sync` shows the diff.",
                DRIFT_TOKENS,
            )
        )
    return fenced(sections, ours, budget)


def fenced(data: Sequence[tuple[str, str, int]], ours: Sequence[tuple[str, str, int]], budget: Budget) -> str:
    """The digest's text: the sections made of records (`data`, their text already escaped by
    `fence.unfence`) inside one `DIGEST_OPEN` … `DIGEST_CLOSE` element that says they are data,
    then agentctx's own lines (`ours`), each section held to its cap and the whole to `budget`.
    Records come first, as before: what does not fit is cut from the bottom, and the fence is
    never cut (its two lines are counted before the sections are fitted)."""
    frame = f"{DIGEST_OPEN}\n\n{DIGEST_CLOSE}"
    inner = fit_sections(
        data, Budget(tokens=budget.tokens - estimate_tokens(frame) - 4, chars=budget.chars - len(frame))
    )
    text = f"{DIGEST_OPEN}\n{inner}\n{DIGEST_CLOSE}"
    room = Budget(tokens=budget.tokens - estimate_tokens(text) - 4, chars=budget.chars - len(text) - 2)
    rest = fit_sections(ours, room) if room.tokens > 40 and room.chars > 100 else ""
    joined = f"{text}\n\n{rest}" if rest else text
    return joined if budget.allows(joined) else text


def cheap_ranking(store: Store, project: Project, *, limit: int = 40) -> list[Record]:
    """Pinned records, then explicit or reinforced decisions and conventions, newest first.

    Plain indexed queries with a limit: this runs whenever a write closes the store, so it
    must not read the whole project.
    """
    pinned = store.list_records(project, scope="project", pinned=True, limit=limit)
    recent = store.list_records(project, scope="project", types=["decision", "convention"], limit=limit * 2)
    chosen = [*pinned, *(record for record in recent if not record.pinned and record.confidence != "inferred")]
    return chosen[:limit]


def _list_section(title: str, records: Sequence[Record], marks: dict[str, str] | None = None) -> str:
    lines = [f"## {title}"]
    for record in records:
        line = record_line(record)
        if marks and record.record_id in marks:
            head, sep, rest = line.partition(": ")  # the mark goes after the title, before the body
            line = f"{head}{marks[record.record_id]}{sep}{rest}"
        lines.append(line)
    return "\n".join(lines)


# A digest checks the anchors of the records it lists against this many files at most.
DIGEST_ANCHOR_FILES = 32


def _freshness(store: Store, project: Project, records: Sequence[Record]) -> tuple[list[Record], dict[str, str], str]:
    """The records to list (those whose every anchor is gone are left out), a mark for each one
    whose anchored files changed (` (anchor-changed: a.py)`), and the digest's one line about
    stale records (empty when there are none; docs/freshness.md)."""
    from agentctx_store.freshness import check
    from agentctx_store.stale import counts

    found = check(store, project, [record.record_id for record in records], max_files=DIGEST_ANCHOR_FILES)
    kept = [record for record in records if not (record.record_id in found and found[record.record_id].all_missing)]
    marks: dict[str, str] = {}
    for record_id, staleness in found.items():
        parts: list[str] = []
        if staleness.changed:
            parts.append(f"anchor-changed: {', '.join(staleness.changed)}")
        if staleness.missing:
            parts.append(f"anchor-missing: {', '.join(staleness.missing)}")
        marks[record_id] = f" ({'; '.join(parts)})"
    stale, _ = counts(store, project)
    stale = max(stale, len(found))
    line = ""
    if stale:
        line = (
            f"{stale} record{'s' if stale != 1 else ''} rest on code that changed since "
            f"{'they were' if stale != 1 else 'it was'} recorded: `agentctx stale` lists "
            f"{'them' if stale != 1 else 'it'}; trust the code over them."
        )
    return kept, marks, line


# -- the digest file ----------------------------------------------------------------------


def read(project_id: str) -> tuple[str, DigestInfo] | None:
    """The digest text and its metadata, or None when there is none (or it is unreadable)."""
    found = digest_file.read(project_id)
    if found is None:
        return None
    text, meta, _age = found
    info = DigestInfo(
        kind=str(meta.get("kind", "cheap")),
        written_at=str(meta.get("written_at", "")),
        stale=bool(meta.get("stale", False)),
        tokens=int(meta.get("tokens", 0)),
        sha256=str(meta.get("sha256", "")),
    )
    if not SESSION_START.allows(text):  # cut inside the fence, so its closing line stays
        inner, ours = split_fence(text)
        text = fenced([("records", inner, SESSION_START.tokens)], [("ours", ours, MCP_HINT_TOKENS)], SESSION_START)
    return text, info


def write(project_id: str, text: str, *, kind: str) -> DigestInfo:
    """Write the digest and its metadata atomically (temp file + rename)."""
    info = DigestInfo(kind=kind, written_at=utc_now(), tokens=estimate_tokens(text), sha256=hash_id(text))
    atomic_write(Path(paths.digest_path(project_id)), text)
    atomic_write(Path(paths.digest_meta_path(project_id)), json.dumps(info.__dict__))
    return info


def mark_stale(project_id: str) -> None:
    existing = read(project_id)
    if existing is None:
        return
    _text, info = existing
    atomic_write(Path(paths.digest_meta_path(project_id)), json.dumps({**info.__dict__, "stale": True}))


def project_for(store: Store, project_id: str) -> Project:
    """A `Project` for an id seen in the store (name and root from the projects table)."""
    row = store.conn.execute("SELECT name, root, remote FROM projects WHERE project_id = ?", (project_id,)).fetchone()
    if row is None:
        return Project(project_id=project_id, root=".", name=project_id[:12])
    return Project(
        project_id=project_id, root=row["root"] or ".", name=row["name"] or project_id[:12], remote=row["remote"]
    )


def refresh_after_write(store: Store, project_ids: Iterable[str]) -> None:
    """After a change: rewrite a cheap digest, or mark a full one stale (consolidation redoes it)."""
    ids = set(project_ids)
    if GLOBAL_PROJECT_ID in ids:  # global preferences show in every project's digest
        ids.discard(GLOBAL_PROJECT_ID)
        ids.update(row[0] for row in store.conn.execute("SELECT project_id FROM projects"))
    for project_id in ids:
        existing = read(project_id)
        if existing is not None and existing[1].kind == "full" and not lists_non_current(store, existing[0]):
            mark_stale(project_id)
        else:  # no digest, a cheap one, or a full one naming a record that is superseded or gone now
            write(project_id, compose(store, project_for(store, project_id)), kind="cheap")
    from agentctx_store.service_link import notify_written

    notify_written()  # the warm search service embeds the new records now (never blocks)


def refresh_changed(store: Store) -> None:
    """Refresh the digests of the projects changed through `store` (`Store.dirty`). Never
    raises: the digest is derived, and the next write or consolidation rebuilds it."""
    try:
        if store.dirty:
            refresh_after_write(store, store.dirty)
    except (OSError, sqlite3.Error):
        pass
    finally:
        store.dirty.clear()


@contextmanager
def refreshing(store: Store) -> Generator[Store]:
    """`with refreshing(Store.open()) as store:` — on the way out, the digests of the projects
    it changed are refreshed, then the store is closed. What writes records opens it this way."""
    try:
        yield store
    finally:
        try:
            refresh_changed(store)
        finally:
            store.close()


def lists_non_current(store: Store, text: str) -> bool:
    """Whether a digest names a record (`[type ULID]`) that is no longer current. A stale full
    digest is still served until consolidation redoes it, so one that would hand the agent a
    superseded fact is replaced by the cheap digest at once."""
    ids = set(digest_file.record_ids(text))
    if not ids:
        return False
    marks = ",".join("?" * len(ids))
    current = store.conn.execute(
        f"SELECT COUNT(*) FROM records WHERE id IN ({marks}) AND superseded_at IS NULL", sorted(ids)
    ).fetchone()[0]
    return current < len(ids)
