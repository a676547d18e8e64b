"""Offline consolidation (docs/adr/0011-capture-then-consolidate.md): one run at a time,
time-boxed, safe to kill at any point.

A run has three phases, and never has two SQLite libraries open at once (mixing them inside
one process is unsafe: docs/adr/0018-one-sqlite-library-per-process.md):

1. stdlib `sqlite3`: skip when nothing changed; recompute scores; mark the cold archive; read
   each project's focus text. Closed.
2. the vector phase (agentctx-embed, through `apsw`, only when installed and enabled): embed
   pending records, find near-duplicates, rank records against each focus. Closed.
3. stdlib `sqlite3` again: let a model confirm near-duplicates (with an API key), scan
   CLAUDE.md drift, rank and write the full digest, remember the fingerprint.

Every write is its own transaction and every step is idempotent, so a run killed anywhere
leaves a consistent store and the next run finishes the work.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
from collections.abc import Generator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from agentctx_store import digest, drift, oplog, paths
from agentctx_store.calibration import refresh_prompt_floor
from agentctx_store.consolidate import duplicates, profile, scoring
from agentctx_store.consolidate.checkpoints import checkpoint
from agentctx_store.consolidate.merges import MergeJudge, apply_merges
from agentctx_store.digest import ranking
from agentctx_store.errors import AgentctxError
from agentctx_store.projects import Project
from agentctx_store.records import utc_now
from agentctx_store.rows import visible_namespaces
from agentctx_store.store import Store

DEFAULT_TIME_LIMIT_S = 240.0


class ConsolidationRunning(AgentctxError):
    """Another consolidation holds the lock for this store."""


@dataclass(frozen=True, kw_only=True)
class VectorRequest:
    db_path: Path
    focus: dict[str, str]  # project id → focus text to rank against
    deadline: float  # time.monotonic() value
    settings: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class VectorOutcome:
    backend: str  # "vec0" | "numpy"
    model: str
    embedded: int = 0
    pending: int = 0  # still to embed (the time box ran out)
    merge_candidates: int = 0
    rankings: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    degraded: list[str] = field(default_factory=list[str])


class VectorPhase(Protocol):
    def __call__(self, request: VectorRequest) -> VectorOutcome: ...


@dataclass(frozen=True, kw_only=True)
class RunReport:
    projects: list[str]
    skipped: bool = False
    scored: int = 0
    archived: int = 0
    compacted_ops: int = 0  # operations of the local log compacted (oplog.compact)
    embedded: int = 0
    pending: int = 0
    merge_candidates: int = 0
    merged: int = 0
    drift: dict[str, int] = field(default_factory=dict[str, int])
    digest_tokens: dict[str, int] = field(default_factory=dict[str, int])
    backend: str | None = None
    degraded: list[str] = field(default_factory=list[str])
    timed_out: bool = False
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- the lock ------------------------------------------------------


def lock_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".consolidate.lock")


@contextlib.contextmanager
def run_lock(db_path: Path) -> Generator[None]:
    """One consolidation per store: an OS file lock, released by the kernel when the process
    dies (kill -9 included), so a crashed run never blocks the next one.

    Raises:
        ConsolidationRunning: another process holds it.
    """
    path = lock_path(db_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = path.open("a+", encoding="utf-8")
    try:
        try:
            _lock_file(handle)
        except OSError:
            raise ConsolidationRunning(
                "Another consolidation is running on this store; it will refresh the digest when it ends."
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        yield
    finally:
        handle.close()


def _lock_file(handle: Any) -> None:
    if sys.platform == "win32":  # no fcntl there
        import msvcrt

        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        return
    import fcntl

    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)


# -- fingerprints: quick when nothing changed -------------------------------------------


def fingerprint(store: Store, project: Project, settings: dict[str, Any], now: datetime) -> str:
    """Everything a run's outcome for a project depends on, hashed."""
    row = store.conn.execute(
        """SELECT count(*), max(rowid), max(recorded_at), max(updated_at), max(superseded_at),
                  sum(access_count), sum(pending_embedding), sum(pinned), sum(reinforce_count)
           FROM records WHERE project_id IN (?, ?)""",
        visible_namespaces(project),
    ).fetchone()
    files: list[tuple[str, int, int]] = []
    for name in drift.CLAUDE_FILES:
        with contextlib.suppress(OSError):
            stat = (Path(project.root) / name).stat()
            files.append((name, stat.st_mtime_ns, stat.st_size))
    merges = store.conn.execute(
        "SELECT count(*), max(decided_at) FROM merge_candidates WHERE project_id = ?", (project.project_id,)
    ).fetchone()
    material = {
        "records": list(row),
        "files": files,
        "merges": list(merges),
        "day": now.date().isoformat(),  # scores decay daily
        "settings": {
            key: settings.get(key)
            for key in ("embeddings", "embed_model", "embed_model_dir", "llm", "reinforce_threshold")
        },
        "api_key": bool(os.environ.get("ANTHROPIC_API_KEY")),
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def _saved_fingerprint(store: Store, project_id: str) -> str | None:
    row = store.conn.execute(
        "SELECT fingerprint FROM consolidation_state WHERE project_id = ?", (project_id,)
    ).fetchone()
    return row[0] if row else None


def _digest_fresh(project_id: str) -> bool:
    existing = digest.read(project_id)
    return existing is not None and existing[1].kind == "full" and not existing[1].stale


def _save_state(store: Store, project_id: str, value: str | None, summary: dict[str, Any]) -> None:
    with store.transaction() as conn:
        conn.execute(
            """INSERT INTO consolidation_state(project_id, fingerprint, finished_at, summary) VALUES (?, ?, ?, ?)
               ON CONFLICT(project_id) DO UPDATE SET fingerprint = excluded.fingerprint,
                   finished_at = excluded.finished_at, summary = excluded.summary""",
            (project_id, value, utc_now(), json.dumps(summary, sort_keys=True)),
        )


# -- the run ----------------------------------------------------------------------------


def run(
    projects: Sequence[Project],
    settings: dict[str, Any],
    *,
    vector_phase: VectorPhase | None = None,
    judge: MergeJudge | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT_S,
    force: bool = False,
    db_path: Path | None = None,
    degraded: Sequence[str] = (),
    now: datetime | None = None,
) -> RunReport:
    """Consolidate the store for `projects`.

    Raises:
        ConsolidationRunning: another run holds the lock.
        StoreError: the store cannot be opened.
    """
    started = time.monotonic()
    deadline = started + time_limit
    path = db_path or Path(paths.db_path())
    moment = now or datetime.now(UTC)
    notes = list(degraded)
    with run_lock(path):
        store = Store.open(path)
        try:
            if not force and all(
                _saved_fingerprint(store, p.project_id) == fingerprint(store, p, settings, moment)
                and _digest_fresh(p.project_id)
                for p in projects
            ):
                return RunReport(projects=[p.project_id for p in projects], skipped=True)
            profile.promote_reinforced(store, int(settings.get("reinforce_threshold", 3)))
            scored = scoring.update_scores(store, moment)
            checkpoint("scores")
            archived_by = scoring.archive_superseded(store, moment)
            compacted = oplog.compact(store)
            duplicated = sum(duplicates.flag(store, p) for p in projects)
            focus = {p.project_id: ranking.focus_text(store, p) for p in projects}
        finally:
            store.dirty.clear()
            store.close()

        outcome: VectorOutcome | None = None
        if vector_phase is not None:
            outcome = vector_phase(VectorRequest(db_path=path, focus=focus, deadline=deadline, settings=settings))
            notes.extend(outcome.degraded)

        store = Store.open(path)
        try:
            merged = apply_merges(store, judge, deadline=deadline, settings=settings) if judge else 0
            drift_counts: dict[str, int] = {}
            tokens: dict[str, int] = {}
            for project in projects:
                report = drift.analyse(store, project)
                drift.write_scores(store, project, report)
                drift_counts[project.project_id] = report.digest_candidates
                ranked = ranking.rank_digest(
                    store,
                    project,
                    vector_ranking=outcome.rankings.get(project.project_id) if outcome else None,
                    focus=focus[project.project_id],
                )
                text = digest.compose(store, project, decisions=ranked, drift_candidates=report.digest_candidates)
                checkpoint("digest")
                tokens[project.project_id] = digest.write(project.project_id, text, kind="full").tokens
                # the keyword floor the prompt hook reads, measured here, off the prompt path
                refresh_prompt_floor(store, project)
            profile.export(store, int(settings.get("reinforce_threshold", 3)))
            timed_out = time.monotonic() > deadline or bool(outcome and outcome.pending)
            result = RunReport(
                projects=[p.project_id for p in projects],
                scored=scored,
                archived=sum(archived_by.get(owner, 0) for owner in _namespaces(projects)),
                compacted_ops=compacted,
                embedded=outcome.embedded if outcome else 0,
                pending=outcome.pending if outcome else 0,
                merge_candidates=duplicated + (outcome.merge_candidates if outcome else 0),
                merged=merged,
                drift=drift_counts,
                digest_tokens=tokens,
                backend=(outcome.backend or None) if outcome else None,
                degraded=sorted(set(notes)),
                timed_out=timed_out,
                seconds=round(time.monotonic() - started, 3),
            )
            for project in projects:
                # an unfinished run leaves no fingerprint, so the next one picks up the rest
                value = None if timed_out else fingerprint(store, project, settings, moment)
                own = sum(archived_by.get(owner, 0) for owner in _namespaces([project]))
                _save_state(store, project.project_id, value, result.to_dict() | {"archived": own})
            return result
        finally:
            store.dirty.clear()  # the digests written above are the fresh ones: do not mark them stale
            store.close()


def _namespaces(projects: Sequence[Project]) -> set[str]:
    """The namespaces these projects see (their own and `_global`)."""
    return {owner for project in projects for owner in visible_namespaces(project)}


# -- what `agentctx status` shows --------------------------------------------------------


def status_sections(store: Store, project: Project, *, now: datetime | None = None) -> list[dict[str, Any]]:
    """Consolidation's part of `agentctx status`: each section {key, title, lines, data}."""
    moment = now or datetime.now(UTC)
    sections: list[dict[str, Any]] = []
    state = store.conn.execute(
        "SELECT finished_at, summary FROM consolidation_state WHERE project_id = ?", (project.project_id,)
    ).fetchone()
    summary: dict[str, Any] = json.loads(state[1] or "{}") if state else {}
    lines = (
        [
            f"last run {state[0]}: {summary.get('embedded', 0)} embedded, {summary.get('merged', 0)} merged, "
            f"{summary.get('archived', 0)} archived, vectors: {summary.get('backend') or 'none (keyword-only)'}",
        ]
        if state
        else ["never run: `agentctx consolidate` (SessionEnd starts it)"]
    )
    lines.extend(f"degraded: {note}" for note in summary.get("degraded") or ())
    drift_counts: dict[str, Any] = summary.get("drift") or {}
    drift_candidates = drift_counts.get(project.project_id)
    if drift_candidates:
        lines.append(f"CLAUDE.md is behind the store on {drift_candidates} points: `agentctx sync` shows the diff")
    if summary.get("pending"):
        lines.append(f"{summary['pending']} records still to embed (the time box ran out; the next run goes on)")
    archived = scoring.archived_count(store, project)
    lines.append(f"{archived} superseded records archived (> {scoring.ARCHIVE_AFTER_DAYS} days)")
    sections.append(
        {
            "key": "consolidation",
            "title": "Consolidation",
            "lines": lines,
            "data": summary | {"archived_total": archived},
        }
    )
    rows = store.conn.execute(
        """SELECT m.keep_id, m.drop_id, m.type, m.similarity, k.title, d.title FROM merge_candidates m
           JOIN records k ON k.id = m.keep_id JOIN records d ON d.id = m.drop_id
           WHERE m.project_id IN (?, ?) AND m.status = 'open' AND k.superseded_at IS NULL AND d.superseded_at IS NULL
           ORDER BY m.similarity DESC LIMIT 20""",
        visible_namespaces(project),
    ).fetchall()
    if rows:
        data = [
            {
                "keep": r[0],
                "drop": r[1],
                "type": r[2],
                "similarity": round(r[3], 3),
                "keep_title": r[4],
                "drop_title": r[5],
            }
            for r in rows
        ]
        lines = [
            f"{d['drop']} ≈ {d['keep']} ({d['type']}, similarity {d['similarity']}): {d['drop_title']}" for d in data
        ]
        lines.append("merge one by hand: `agentctx supersede DROP_ID` or `agentctx delete DROP_ID`")
        sections.append({"key": "merge_candidates", "title": "Near-duplicate candidates", "lines": lines, "data": data})
    prune = scoring.pruning_candidates(store, project, moment)
    if prune:
        lines = [f"{r.record_id} [{r.type}] score {r.score:.3f}: {r.title}" for r in prune]
        lines.append("never deleted automatically: `agentctx delete ID` removes one")
        data = [{"id": r.record_id, "type": r.type, "score": r.score, "title": r.title} for r in prune]
        sections.append({"key": "pruning_candidates", "title": "Pruning candidates", "lines": lines, "data": data})
    return sections
