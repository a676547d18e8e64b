"""Push what the server lacks, pull from a cursor, apply idempotently (docs/remote.md#the-sync).

Push: the local operations made here (`record_ops`, `origin IS NULL`) after the remote's
`pushed_seq`, those the rule covers, in batches; each batch is one server transaction under the
push lock, and `op_id` is unique there, so a batch sent twice (a sync killed after the server
committed and before the cursor moved) adds nothing. Pull: the server's operations after
`pulled_seq` for the granted projects, in order; each batch is applied in one SQLite transaction
that also moves the cursor, so a sync killed anywhere resumes without loss or duplicates. Every
step with the server has a deadline (`server.deadline`), so a silent server fails the sync
within a bound instead of hanging it. After a rule widened, below the old positions only what
the old rule did not cover goes either way (`remotes.set_rule`). A shared record that leaves
the rule here is retired on the server with the server's own state (`_leaving`, `_retire`).

Applying one operation (`_apply`): an operation already known (by id) changes nothing; one the
rule does not cover, of another project, or on a record this user keeps private is refused; a
record deleted here never comes back; an operation made on the version this store has (its
`parent`) is applied; one made concurrently with a change here is a conflict: when both sides
superseded the record, both successors stay current (two heads); when both changed its text,
each version becomes a record superseding it (ids derived from the two operations, so every
machine makes the same two), again two heads. Nothing is decided by which write came last; a
person keeps one (`agentctx review`, `agentctx team resolve`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import psycopg
from agentctx_store import Project, Store, oplog
from agentctx_store.anchors import Anchor, replace_anchors
from agentctx_store.clock import utc_now
from agentctx_store.db import store_error
from agentctx_store.errors import AgentctxError, ValidationError
from agentctx_store.jsontext import is_array, is_object
from agentctx_store.records import CONFIDENCES, RECORD_TYPES, SCOPES, SOURCES
from agentctx_store.rows import RECORD_COLUMNS
from agentctx_store.ulid import is_ulid

from agentctx_remote import remotes, server, texts
from agentctx_remote.rule import ShareRule

BATCH = 5_000
LOCK_TIMEOUT_SECONDS = 60.0  # how long a push waits for another push's lock before it gives up
_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
# An operation's state: the columns it may set, besides the record's project.
_CONTENT = ("type", "title", "body", "scope", "pinned", "confidence", "valid_from", "key")


@dataclass(kw_only=True)
class SyncReport:
    name: str
    pushed: int = 0  # operations the server did not have
    sent: int = 0  # operations sent (a batch sent again, or a backfill, sends some the server has)
    pulled: int = 0  # operations this store did not have
    fetched: int = 0  # operations fetched
    retired: int = 0  # shared records retired on the remote because they left the rule here
    applied: int = 0
    conflicts: int = 0
    refused: int = 0
    not_granted: list[str] = field(default_factory=list[str])


PgConn = psycopg.Connection[tuple[Any, ...]]


def sync(
    store: Store,
    name: str,
    *,
    batch: int = BATCH,
    lock_timeout: float = LOCK_TIMEOUT_SECONDS,
    timeout: float = server.STEP_TIMEOUT_SECONDS,
    after_batch: Callable[[str], None] | None = None,
) -> SyncReport:
    """One sync of the remote `name`: push, then pull. The outcome (or the failure) is noted on
    the remote for `remote status` and the hooks' schedule. Each step with the server (the
    connection, one batch) waits at most `timeout` seconds, a push batch `lock_timeout` more
    for the push lock: a sync whose server goes silent gives up within that bound.

    Raises:
        RemoteError: unreachable, refused, a schema of another version; one line each.
    """
    remote = remotes.get(store, name)
    assert remote is not None
    try:
        report = _sync(store, remote, batch=batch, lock_timeout=lock_timeout, timeout=timeout, after_batch=after_batch)
    except AgentctxError as exc:
        _note_failure(store, name, exc)
        raise
    except sqlite3.DatabaseError as exc:  # the local store refused a write: a full disk, a size limit
        error = store_error(exc, str(store.path))  # the batch it was in rolled back, with its cursor
        _note_failure(store, name, error)
        raise error from None
    remotes.record_success(store, name)
    with contextlib.suppress(sqlite3.Error):  # maintenance: a store that cannot take it now does later
        oplog.compact(store)
    return report


def _note_failure(store: Store, name: str, error: AgentctxError) -> None:
    """Note the failure for `remote status` and the backoff, if the store can still take a
    write (on a full disk it may not: the sync's own line says what happened)."""
    with contextlib.suppress(sqlite3.Error):
        remotes.record_failure(store, name, str(error))


def _sync(
    store: Store,
    remote: remotes.Remote,
    *,
    batch: int,
    lock_timeout: float,
    timeout: float,
    after_batch: Callable[[str], None] | None,
) -> SyncReport:
    report = SyncReport(name=remote.name)
    conn = server.connect(remote.url, name=remote.name, timeout=timeout)
    try:
        with server.deadline(conn, timeout, remote.name, "connecting"):
            server.server_version(conn, remote.name)
            namespaces = _granted(conn, remote, report)
            conn.rollback()
        limits = (timeout, lock_timeout)
        _push(store, conn, remote, namespaces, report, batch=batch, limits=limits, after_batch=after_batch)
        _pull(store, conn, remote, namespaces, report, batch=batch, timeout=timeout, after_batch=after_batch)
        remotes.backfill_done(store, remote.name)
    except psycopg.Error as exc:
        raise server.described(exc, remote.name) from None
    finally:
        conn.close()
    return report


def _granted(conn: PgConn, remote: remotes.Remote, report: SyncReport) -> list[str]:
    """The namespaces this role may sync of those the rule names; one line when none."""
    visible = {row[0] for row in conn.execute("SELECT project FROM agentctx.grants")}
    owner = conn.execute(
        "SELECT pg_has_role(session_user, (SELECT nspowner FROM pg_namespace WHERE nspname = 'agentctx'), 'MEMBER')"
    ).fetchone()
    admin = bool(owner and owner[0])
    granted = [p for p in remote.rule.projects if admin or p in visible]
    report.not_granted = [p for p in remote.rule.projects if p not in granted]
    if not granted and not remote.rule.global_records:
        wanted = ", ".join(f"{remote.rule.names.get(p, p)} ({p})" for p in remote.rule.projects) or "no project"
        role = conn.execute("SELECT session_user").fetchone()
        raise server.RemoteError(
            f"Role {role[0] if role else '?'!r} has no grant on remote {remote.name!r} for {wanted}; "
            "ask its admin to grant it (docs/remote.md#access-grants)."
        )
    return [*granted, *(["_global"] if remote.rule.global_records else [])]


# -- push ----------------------------------------------------------------------------------


def _push(
    store: Store,
    conn: PgConn,
    remote: remotes.Remote,
    namespaces: Sequence[str],
    report: SyncReport,
    *,
    batch: int,
    limits: tuple[float, float],
    after_batch: Callable[[str], None] | None,
) -> None:
    timeout, lock_timeout = limits
    cursor = remote.pushed_seq
    allowed = set(namespaces)
    while True:
        rows = store.conn.execute(
            """SELECT seq, op_id, project_id, record_id, kind, parent, state, made_at FROM record_ops
               WHERE seq > ? AND origin IS NULL ORDER BY seq LIMIT ?""",
            (cursor, batch),
        ).fetchall()
        if not rows:
            return
        keep = [row for row in rows if row["project_id"] in allowed and _owed(remote, row)]
        anchored = _anchors(store, [row["record_id"] for row in keep if row["kind"] == "put"])
        leaving = _leaving(store, remote.rule, rows)
        retired: list[Op] = []
        if keep or leaving:
            pushing = server.deadline(conn, timeout, remote.name, "pushing")
            with pushing, conn.transaction(), conn.cursor() as cur:
                cur.execute(
                    """CREATE TEMP TABLE IF NOT EXISTS agentctx_push (ord int, op_id text, project text,
                       record_id text, kind text, parent text, state jsonb, made_at text) ON COMMIT DELETE ROWS"""
                )
                with cur.copy("COPY agentctx_push FROM STDIN") as copy:
                    for index, row in enumerate(keep):
                        copy.write_row(
                            (
                                index,
                                row["op_id"],
                                row["project_id"],
                                row["record_id"],
                                row["kind"],
                                row["parent"],
                                _with_anchors(row["state"], anchored.get(row["record_id"])),
                                row["made_at"],
                            )
                        )
                # the lock only once the batch is on the server: a push cut off mid-transfer holds none
                pushing.restart(timeout + lock_timeout)
                _push_lock(cur, remote.name, lock_timeout, timeout)
                cur.execute(
                    """INSERT INTO agentctx.ops (op_id, project, record_id, kind, parent, state, made_at)
                       SELECT op_id, project, record_id, kind, parent, state, made_at FROM agentctx_push
                       ORDER BY ord ON CONFLICT (op_id) DO NOTHING"""
                )
                report.pushed += max(cur.rowcount, 0)
                report.sent += len(keep)
                retired, fresh = _retire(store, cur, namespaces, leaving)
                report.retired += fresh
        cursor = rows[-1]["seq"]
        with store.transaction() as local:
            local.execute("UPDATE remotes SET pushed_seq = ? WHERE name = ?", (cursor, remote.name))
            for op in retired:  # known here, so the pull skips it and the next change here follows it
                _log(local, op, op.record_id, remote.name, applied=True)
        if after_batch is not None:
            after_batch("push")


def _push_lock(cur: psycopg.Cursor[tuple[Any, ...]], name: str, timeout: float, step: float) -> None:
    """Take the push lock, waiting at most `timeout` seconds (the statement bound, `step`, is
    lifted for the wait and put back after): a push cut off after taking it holds it until the
    server ends that transaction (its statement and idle-in-transaction timeouts, its
    keepalives), and no other machine's sync may wait on it forever.

    Raises:
        RemoteError: the lock stayed taken; the next sync retries.
    """
    wait = f"{max(int(timeout * 1000), 1)}ms"
    cur.execute("SELECT set_config('lock_timeout', %s, true), set_config('statement_timeout', '0', true)", (wait,))
    try:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (server.PUSH_LOCK,))
    except psycopg.errors.LockNotAvailable:
        raise server.RemoteError(
            f"Remote {name!r} is busy: another push has held its lock for over {timeout:g} s (one cut off "
            "mid-push holds it until the server drops that connection); the next sync retries."
        ) from None
    cur.execute(
        "SELECT set_config('lock_timeout', '0', true), set_config('statement_timeout', %s, true)",
        (f"{max(int(step * 1000), 1)}ms",),
    )


def _leaving(store: Store, rule: ShareRule, rows: Sequence[sqlite3.Row]) -> list[sqlite3.Row]:
    """The operations of a batch that take a shared record out of the rule
    (docs/remote.md#records-that-leave-the-rule): a change the rule does not cover (another type or confidence, text the
    store redacted, another scope) made on a version it covered, the record's last in the batch."""
    last = {row["record_id"]: row["seq"] for row in rows}
    changed = [
        row
        for row in rows
        if row["kind"] == "put" and row["parent"] and last[row["record_id"]] == row["seq"] and not _covered(rule, row)
    ]
    if not changed:
        return []
    parents = _ops_by_id(store.conn, "op_id, project_id, state", [row["parent"] for row in changed])
    covered = {row["op_id"] for row in parents if _covered(rule, row)}
    return [row for row in changed if row["parent"] in covered]


def _retire(
    store: Store, cur: psycopg.Cursor[tuple[Any, ...]], namespaces: Sequence[str], leaving: Sequence[sqlite3.Row]
) -> tuple[list[Op], int]:
    """Retire on the server each record that left the rule here, inside the push's transaction:
    an operation on the server's own last version of it, that version's state (already there,
    so nothing new is said) with `superseded_at` set. Other machines then hold it as retired, not
    current. The id derives from the local change, so a batch sent again retires nothing twice;
    a server whose last version came after that change here (a later push of this store, seen
    again by a log read from the start) is left as it is. Returns the retirements to log here
    and how many the server did not have."""
    if not leaving:
        return [], 0
    cur.execute(
        """SELECT DISTINCT ON (record_id) record_id, op_id, project, kind, parent, state::text FROM agentctx.ops
           WHERE record_id = ANY(%s) AND project = ANY(%s) ORDER BY record_id, seq DESC""",
        ([row["record_id"] for row in leaving], list(namespaces)),
    )
    latest = {row[0]: row for row in cur.fetchall()}
    here = {row[0]: row[1] for row in _ops_by_id(store.conn, "op_id, seq", [row[1] for row in latest.values()])}
    retired: list[Op] = []
    for row in leaving:
        found = latest.get(row["record_id"])
        op_id = hashlib.sha256(f"retire:{row['op_id']}".encode()).hexdigest()[:32]
        if found is None or found[3] != "put":
            continue
        if found[1] == op_id:  # retired by a push whose cursor did not move: known here now
            retired.append(Op(op_id, found[2], found[0], "put", found[4], found[5], row["made_at"]))
            continue
        state: object = json.loads(found[5])
        if not is_object(state) or state.get("superseded_at") is not None or here.get(found[1], 0) > row["seq"]:
            continue  # not current there, or a later version from here is: nothing to retire
        text = json.dumps(state | {"superseded_at": row["made_at"], "superseded_by": None}, ensure_ascii=False)
        retired.append(Op(op_id, found[2], found[0], "put", found[1], text, row["made_at"]))
    fresh = [op for op in retired if latest[op.record_id][1] != op.op_id]
    if not fresh:
        return retired, 0
    cur.executemany(
        """INSERT INTO agentctx.ops (op_id, project, record_id, kind, parent, state, made_at)
           VALUES (%s, %s, %s, 'put', %s, %s::jsonb, %s) ON CONFLICT (op_id) DO NOTHING""",
        [(op.op_id, op.project, op.record_id, op.parent, op.state_text, op.made_at) for op in fresh],
    )
    return retired, len(fresh)


MAX_ANCHORS = 50  # a pulled record keeps at most this many anchors


def _anchors(store: Store, record_ids: Sequence[str]) -> dict[str, list[dict[str, object]]]:
    """The anchors of these records now (they travel with a record's state when it is pushed:
    project-relative paths and content hashes, the same in every clone of the repository)."""
    found: dict[str, list[dict[str, object]]] = {}
    unique = list(dict.fromkeys(record_ids))
    for start in range(0, len(unique), 500):
        chunk = unique[start : start + 500]
        rows = store.conn.execute(
            f"""SELECT record_id, path, line_start, line_end, symbol, content_hash FROM record_anchors
                WHERE record_id IN ({",".join("?" * len(chunk))}) ORDER BY anchor_id""",
            chunk,
        )
        for row in rows:
            found.setdefault(row[0], []).append(
                {"path": row[1], "line_start": row[2], "line_end": row[3], "symbol": row[4], "content_hash": row[5]}
            )
    return found


def _with_anchors(state: str, anchors: list[dict[str, object]] | None) -> str:
    if not anchors:
        return state
    value: object = json.loads(state)
    if not is_object(value):
        return state
    return json.dumps(value | {"anchors": anchors[:MAX_ANCHORS]}, ensure_ascii=False)


def _owed(remote: remotes.Remote, row: sqlite3.Row) -> bool:
    """Whether the rule covers a local operation and the remote may lack it: below the
    position a widened rule left off, only what the rule before it did not cover. A compacted
    operation (a stub: its id without its state) is never sent."""
    state = _row_state(row)
    if state is None or oplog.is_stub(state) or not remote.rule.covers(row["project_id"], state):
        return False
    backfill = remote.backfill_rule
    return backfill is None or row["seq"] > remote.push_backfill_seq or not backfill.covers(row["project_id"], state)


def _row_state(row: sqlite3.Row) -> dict[str, Any] | None:
    try:
        state: object = json.loads(row["state"])
    except ValueError:
        return None
    return state if is_object(state) else None


def _covered(rule: ShareRule, row: sqlite3.Row) -> bool:
    state = _row_state(row)
    return state is not None and rule.covers(row["project_id"], state)


# -- pull ----------------------------------------------------------------------------------


def _pull(
    store: Store,
    conn: PgConn,
    remote: remotes.Remote,
    namespaces: Sequence[str],
    report: SyncReport,
    *,
    batch: int,
    timeout: float,
    after_batch: Callable[[str], None] | None,
) -> None:
    cursor = remote.pulled_seq
    allowed = set(namespaces)
    projects = list(dict.fromkeys(namespaces))
    # below where a widened rule left off, only what the rule before it did not accept
    done = remote.backfill_rule or ShareRule(projects=(), types=(), confidences=())
    until = remote.pull_backfill_seq if remote.backfill_rule else 0
    owed = (until, done.namespaces(), list(done.types), list(done.confidences))

    def fetch(after: int, among: list[str], upto: int) -> _Pulled | None:
        with server.deadline(conn, timeout, remote.name, "pulling"):
            rows = conn.execute(_pull_query(len(among)), _pull_params(among, after, upto, batch, owed)).fetchall()
            conn.rollback()  # nothing to keep open between batches
        if not rows:
            return None
        report.fetched += len(rows)
        return _prepare(store, remote, allowed, checker, rows)

    # a project readable now that the cursor did not go through (granted since, or a rule
    # that named it before the role could read it): its log from the start up to the cursor
    # first ("Grants that change"); a remote from before `pulled_projects` trusts its cursor
    through = set(projects if remote.pulled_projects is None else remote.pulled_projects)
    newly = [project for project in projects if project not in through]
    passes = [(newly, cursor), (projects, _LAST_SEQ)] if newly and cursor > 0 else [(projects, _LAST_SEQ)]
    with texts.Checker() as checker:
        for among, upto in passes:
            pulled = fetch(0 if upto != _LAST_SEQ else cursor, among, upto)
            while pulled is not None:
                checked = pulled.checked(checker)
                # the next batch is fetched and its texts checked by the workers while this one is
                # written; batches are still written in order, each with its cursor
                following = fetch(pulled.cursor, among, upto)
                _write_batch(store, remote, allowed, pulled, checked, report)
                if after_batch is not None:
                    after_batch("pull")
                pulled = following
    remotes.pulled_through(store, remote.name, projects)


@dataclass(kw_only=True)
class _Pulled:
    """One batch of the server's log, its states parsed, its texts being checked."""

    cursor: int
    ops: list[Op]
    states: dict[str, dict[str, Any] | None]
    wanted: list[str]  # the op ids whose texts `job` checks, in its order
    job: texts.Job

    def checked(self, checker: texts.Checker) -> dict[str, texts.Texts | None]:
        return dict(zip(self.wanted, checker.finish(self.job), strict=True))


def _prepare(
    store: Store, remote: remotes.Remote, allowed: set[str], checker: texts.Checker, rows: Sequence[tuple[Any, ...]]
) -> _Pulled:
    """Parse a fetched batch and start checking its texts (the redactor), outside the write
    transaction, so the store is locked only while the batch is written; operations this store
    already has are not checked again."""
    ops = [Op(*row[1:]) for row in rows]
    seen = _known(store.conn, [op.op_id for op in ops])
    states = {op.op_id: _state(remote, allowed, op) for op in ops if op.op_id not in seen}
    wanted = [op.op_id for op in ops if op.kind == "put" and states.get(op.op_id) is not None]
    job = checker.start([_texts(states[op_id] or {}) for op_id in wanted])
    return _Pulled(cursor=int(rows[-1][0]), ops=ops, states=states, wanted=wanted, job=job)


def _write_batch(
    store: Store,
    remote: remotes.Remote,
    allowed: set[str],
    pulled: _Pulled,
    checked: dict[str, texts.Texts | None],
    report: SyncReport,
) -> None:
    """Apply one batch in one transaction that also moves the cursor: a sync killed anywhere
    leaves the whole batch or none of it."""
    states = pulled.states
    with store.transaction() as local:
        local.execute("INSERT INTO record_ops_applying VALUES (?)", (utc_now(),))
        known = _known(local, [op.op_id for op in pulled.ops])
        for op in pulled.ops:
            if op.op_id in known:
                continue
            known.add(op.op_id)
            report.pulled += 1
            if op.op_id not in states:  # no longer known here (the log compacted meanwhile)
                state = states[op.op_id] = _state(remote, allowed, op)
                if op.kind == "put" and state is not None:
                    checked[op.op_id] = texts.check(*_texts(state))
            state, op_texts = states[op.op_id], checked.get(op.op_id)
            outcome = _apply(store, remote, _as_logged(op, state, op_texts), state, op_texts)
            if outcome == "applied":
                report.applied += 1
            elif outcome == "conflict":
                report.conflicts += 1
            elif outcome == "refused":
                report.refused += 1
        local.execute("DELETE FROM record_ops_applying")
        # max: a catch-up pass for a newly readable project runs below the cursor
        local.execute("UPDATE remotes SET pulled_seq = max(pulled_seq, ?) WHERE name = ?", (pulled.cursor, remote.name))


def _as_logged(op: Op, state: dict[str, Any] | None, checked: texts.Texts | None) -> Op:
    """The operation as the local log keeps it: its title and body as checked (redacted), or
    none when they failed the check; the server's text is kept only when the check left it as
    it was, so no secret a remote sends reaches the store through the log either."""
    if state is None or op.kind != "put" or checked == _texts(state):
        return op
    kept = {key: value for key, value in state.items() if key not in ("title", "body")}
    if checked is not None:
        kept |= {"title": checked[0], "body": checked[1]}
    return replace(op, state_text=json.dumps(kept, ensure_ascii=False))


def _pull_query(projects: int) -> bytes:
    """The next batch of the server's log for these projects, in sequence order: one index
    range of `ops_project_seq` (project, seq) per project, merged in order, so a batch reads
    about as many rows as it returns, whether the rule names one project of fifty or all of
    them (keyset pagination on the sequence: no offset, nothing held open between batches).
    Below the position a widened rule left off (`owed`: that position and the rule before it),
    only what the rule before it did not accept."""
    branch = """(SELECT seq, op_id, project, record_id, kind, parent, state::text, made_at FROM agentctx.ops
                 WHERE project = %s AND seq > %s AND seq <= %s AND (seq > %s OR NOT (project = ANY(%s)
                     AND state->>'type' = ANY(%s) AND state->>'confidence' = ANY(%s)))
                 ORDER BY seq LIMIT %s)"""
    return f"SELECT * FROM ({' UNION ALL '.join([branch] * projects)}) AS batch ORDER BY seq LIMIT %s".encode()


def _pull_params(
    namespaces: Sequence[str], cursor: int, upto: int, batch: int, owed: tuple[int, list[str], list[str], list[str]]
) -> list[object]:
    return [*(value for project in namespaces for value in (project, cursor, upto, *owed, batch)), batch]


_LAST_SEQ = 2**62  # no upper bound: the server's sequence is a bigint


def _ops_by_id(conn: sqlite3.Connection, columns: str, op_ids: Sequence[str]) -> list[sqlite3.Row]:
    """`columns` of the local operations with these ids (in chunks: SQLite caps the parameters)."""
    found: list[sqlite3.Row] = []
    for start in range(0, len(op_ids), 500):
        chunk = list(op_ids[start : start + 500])
        marks = ",".join("?" * len(chunk))
        found += conn.execute(f"SELECT {columns} FROM record_ops WHERE op_id IN ({marks})", chunk).fetchall()
    return found


def _known(conn: sqlite3.Connection, op_ids: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(op_ids), 500):
        chunk = list(op_ids[start : start + 500])
        marks = ",".join("?" * len(chunk))
        found.update(row[0] for row in conn.execute(f"SELECT op_id FROM record_ops WHERE op_id IN ({marks})", chunk))
    return found


@dataclass(frozen=True)
class Op:
    op_id: str
    project: str
    record_id: str
    kind: str
    parent: str | None
    state_text: str
    made_at: str


def _state(remote: remotes.Remote, namespaces: set[str], op: Op) -> dict[str, Any] | None:
    """The operation's state, or None when it is refused on its face: not a JSON object, of a
    project not synced, not a record id, another kind, a record the rule does not share."""
    try:
        state: object = json.loads(op.state_text)
    except ValueError:
        return None
    if not is_object(state) or op.project not in namespaces or not is_ulid(op.record_id):
        return None
    if op.kind not in ("put", "delete") or not remote.rule.covers(op.project, {**state, "title": "", "body": ""}):
        return None
    return state


def _texts(state: dict[str, Any]) -> texts.Texts:
    return str(state.get("title") or ""), str(state.get("body") or "")


def _apply(
    store: Store, remote: remotes.Remote, op: Op, state: dict[str, Any] | None, checked: texts.Texts | None
) -> str:
    """Apply one pulled operation inside the caller's transaction: "applied", "conflict",
    "deleted" (a record deleted here), "refused" or "same". `state` is `_state`'s answer and
    `checked` its title and body after `texts.check` (None: over the limits)."""
    conn = store.conn
    if state is None:
        return "refused"
    record_id = op.record_id.upper()
    local = conn.execute(f"SELECT {RECORD_COLUMNS} FROM records WHERE id = ?", (record_id,)).fetchone()
    if local is not None and (local["project_id"] != op.project or not remote.rule.covers(op.project, dict(local))):
        return "refused"  # another project's record, or one this user keeps private: never changed from outside
    if op.kind == "delete":
        if local is not None:
            store.delete(_namespace(op.project), record_id)
        _log(conn, op, record_id, remote.name, applied=True)
        return "applied"
    deleted = conn.execute(
        "SELECT 1 FROM record_ops WHERE record_id = ? AND kind = 'delete' AND applied = 1 LIMIT 1", (record_id,)
    ).fetchone()
    if deleted is not None:
        _log(conn, op, record_id, remote.name, applied=False)
        return "deleted"
    if checked is None:
        return "refused"
    try:
        row = _row(record_id, op.project, state, checked)
    except (ValidationError, ValueError, TypeError):
        return "refused"
    if local is None:
        store.insert_row(row)
        _successor_edge(store, row)
        _pulled_anchors(store, op.project, record_id, state.get("anchors"))
        _log(conn, op, record_id, remote.name, applied=True)
        return "applied"
    version = conn.execute(
        "SELECT op_id FROM record_ops WHERE record_id = ? AND applied = 1 ORDER BY seq DESC LIMIT 1", (record_id,)
    ).fetchone()
    fields = {column: row[column] for column in (*_CONTENT, "superseded_at", "superseded_by") if column != "key"}
    if (version[0] if version else None) == op.parent or all(local[c] == v for c, v in fields.items()):
        store.rewrite(record_id, fields, when=utc_now())
        _successor_edge(store, row)
        _pulled_anchors(store, op.project, record_id, state.get("anchors"))
        _log(conn, op, record_id, remote.name, applied=True)
        return "applied"
    _conflict(store, local, row, op, version[0] if version else record_id)
    _log(conn, op, record_id, remote.name, applied=False)
    return "conflict"


def _namespace(project_id: str) -> Project:
    return Project(project_id=project_id, root="", name=project_id)


def _row(record_id: str, project_id: str, state: dict[str, Any], checked: texts.Texts) -> dict[str, object]:
    """A full `records` row from a pulled state, checked as every imported record is: the type,
    confidence and scope known, ids well formed; `checked` is its title and body within the
    limits and redacted (`texts.check`)."""
    record_type, confidence, scope = state.get("type"), state.get("confidence"), state.get("scope") or "project"
    if record_type not in RECORD_TYPES or confidence not in CONFIDENCES or scope not in SCOPES:
        raise ValidationError("unknown type, confidence or scope")
    title, body = checked
    superseded_by = state.get("superseded_by")
    if superseded_by is not None and not (isinstance(superseded_by, str) and is_ulid(superseded_by)):
        raise ValidationError("superseded_by is not a record id")
    times = {name: state.get(name) for name in ("valid_from", "recorded_at", "superseded_at")}
    if not isinstance(times["valid_from"], str) or not isinstance(times["recorded_at"], str):
        raise ValidationError("a record needs valid_from and recorded_at")
    if times["superseded_at"] is not None and not isinstance(times["superseded_at"], str):
        raise ValidationError("superseded_at is not a time")
    source = state.get("source")
    key, session_id = state.get("key"), state.get("session_id")
    return {
        "id": record_id,
        "project_id": project_id,
        "type": record_type,
        "title": title,
        "body": body,
        "scope": scope,
        "pinned": 1 if state.get("pinned") else 0,
        "confidence": confidence,
        "reinforce_count": int(state.get("reinforce_count") or 0),
        "valid_from": times["valid_from"][:40],
        "recorded_at": times["recorded_at"][:40],
        "superseded_at": times["superseded_at"][:40] if isinstance(times["superseded_at"], str) else None,
        "superseded_by": superseded_by.upper() if isinstance(superseded_by, str) else None,
        "access_count": 0,
        "last_accessed": None,
        "score": 1.0,
        "claudemd_drift_score": 0.0,
        "source": source if source in SOURCES else "import",
        "session_id": session_id[:200] if isinstance(session_id, str) else None,
        "pending_embedding": 1,
        "key": key[:200] if isinstance(key, str) else None,
        "updated_at": None,
    }


def _pulled_anchors(store: Store, project_id: str, record_id: str, value: object) -> None:
    """Give a pulled record the anchors its state carries, checked as `agentctx record --anchor`
    checks them (relative paths inside the project, sane ranges); anchors that fail the check are
    dropped, the record is kept."""
    if not is_array(value) or not value:
        return
    anchors: list[Anchor] = []
    for item in value[:MAX_ANCHORS]:
        if not is_object(item):
            continue
        path, digest = item.get("path"), item.get("content_hash")
        start, end, symbol = item.get("line_start"), item.get("line_end"), item.get("symbol")
        if not isinstance(path, str) or not isinstance(digest, str) or len(path) > 1000 or len(digest) > 200:
            continue
        anchors.append(
            Anchor(
                path=path,
                content_hash=digest,
                line_start=start if isinstance(start, int) else None,
                line_end=end if isinstance(end, int) else None,
                symbol=symbol[:200] if isinstance(symbol, str) else None,
            )
        )
    try:
        replace_anchors(store, _namespace(project_id), record_id, anchors)
    except ValidationError:
        return


def _successor_edge(store: Store, row: dict[str, object]) -> None:
    successor = row["superseded_by"]
    if isinstance(successor, str):
        store.add_edge(successor, str(row["id"]), "supersedes")


def _log(conn: sqlite3.Connection, op: Op, record_id: str, origin: str, *, applied: bool) -> None:
    conn.execute(
        """INSERT OR IGNORE INTO record_ops(op_id, record_id, project_id, kind, parent, state, origin, applied, made_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        (op.op_id, record_id, op.project, op.kind, op.parent, op.state_text, origin, int(applied), op.made_at[:40]),
    )


def fork_id(record_id: str, op_id: str) -> str:
    """The id of the record one side of a conflict becomes: the record's time prefix and a hash
    of the operation, so every machine that meets the same conflict makes the same record."""
    digest = int.from_bytes(hashlib.sha256(f"{record_id}:{op_id}".encode()).digest()[:10], "big")
    tail = "".join(_ALPHABET[(digest >> (5 * index)) & 31] for index in reversed(range(16)))
    return record_id[:10] + tail


def _conflict(store: Store, local: sqlite3.Row, remote_row: dict[str, object], op: Op, local_version: str) -> None:
    """Two concurrent changes of one record: both sides stay, as two heads."""
    same_text = all(local[column] == remote_row[column] for column in _CONTENT)
    if same_text:  # both superseded (or retired) it: each successor stays current
        _successor_edge(store, remote_row)
        return
    when = utc_now()
    mine = dict(local) | {"id": fork_id(str(local["id"]), local_version)}
    theirs = dict(remote_row) | {"id": fork_id(str(local["id"]), op.op_id)}
    for fork in (mine, theirs):
        if store.conn.execute("SELECT 1 FROM records WHERE id = ?", (fork["id"],)).fetchone() is None:
            store.insert_row(
                fork
                | {
                    "superseded_at": None,
                    "superseded_by": None,
                    "recorded_at": when,
                    "access_count": 0,
                    "last_accessed": None,
                    "pending_embedding": 1,
                }
            )
        store.add_edge(str(fork["id"]), str(local["id"]), "supersedes")
    if local["superseded_at"] is None:
        store.rewrite(str(local["id"]), {"superseded_at": when, "superseded_by": mine["id"]}, when=when)


def conflicts(store: Store) -> int:
    """How many pulled operations were kept as conflicts (for `remote status`)."""
    return int(store.conn.execute("SELECT count(*) FROM record_ops WHERE applied = 0").fetchone()[0])
