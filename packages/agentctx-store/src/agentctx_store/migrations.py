"""Ordered schema migrations keyed on `PRAGMA user_version` (docs/contracts.md#tables).

Each migration is a function `mNNN_what(conn, fts5)`; its position in `MIGRATIONS` is its
version. Never edit or reorder a shipped migration: append a new one.
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # not the `sqlite3` package (db.py)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Migration = Callable[[sqlite3.Connection, bool], None]
MIGRATIONS: list[Migration] = []

FTS_TABLE = """CREATE VIRTUAL TABLE IF NOT EXISTS records_fts USING fts5(
    title, body, content='records', content_rowid='rowid', tokenize='porter unicode61'
)"""
FTS_TRIGGERS = (
    """CREATE TRIGGER IF NOT EXISTS records_ai AFTER INSERT ON records BEGIN
        INSERT INTO records_fts(rowid, title, body) VALUES (new.rowid, new.title, new.body);
    END""",
    """CREATE TRIGGER IF NOT EXISTS records_ad AFTER DELETE ON records BEGIN
        INSERT INTO records_fts(records_fts, rowid, title, body) VALUES ('delete', old.rowid, old.title, old.body);
    END""",
    """CREATE TRIGGER IF NOT EXISTS records_au AFTER UPDATE OF title, body ON records BEGIN
        INSERT INTO records_fts(records_fts, rowid, title, body) VALUES ('delete', old.rowid, old.title, old.body);
        INSERT INTO records_fts(rowid, title, body) VALUES (new.rowid, new.title, new.body);
    END""",
)


def migration(func: Migration) -> Migration:
    MIGRATIONS.append(func)
    return func


def create_fts(conn: sqlite3.Connection) -> None:
    """The external-content FTS5 index and the triggers that keep it in step with `records`."""
    conn.execute(FTS_TABLE)
    for trigger in FTS_TRIGGERS:
        conn.execute(trigger)
    conn.execute("INSERT INTO records_fts(records_fts) VALUES ('rebuild')")


@migration
def m001_create_records(conn: sqlite3.Connection, fts5: bool) -> None:
    conn.execute(
        """CREATE TABLE records (
            id              TEXT PRIMARY KEY,
            project_id      TEXT NOT NULL,
            type            TEXT NOT NULL,
            title           TEXT NOT NULL,
            body            TEXT NOT NULL,
            scope           TEXT DEFAULT 'project',
            pinned          INTEGER DEFAULT 0,
            confidence      TEXT DEFAULT 'inferred',
            reinforce_count INTEGER DEFAULT 0,
            valid_from      TEXT NOT NULL,
            recorded_at     TEXT NOT NULL,
            superseded_at   TEXT,
            superseded_by   TEXT REFERENCES records(id),
            access_count    INTEGER DEFAULT 0,
            last_accessed   TEXT,
            score           REAL DEFAULT 1.0,
            claudemd_drift_score REAL DEFAULT 0.0,
            source          TEXT NOT NULL,
            session_id      TEXT,
            pending_embedding INTEGER DEFAULT 1,
            key             TEXT,
            updated_at      TEXT
        )"""
    )
    conn.execute("CREATE INDEX records_project ON records(project_id, superseded_at, type)")
    conn.execute("CREATE INDEX records_superseded_by ON records(superseded_by)")
    conn.execute("CREATE INDEX records_key ON records(project_id, type, key)")
    if fts5:
        create_fts(conn)


@migration
def m002_create_graph(conn: sqlite3.Connection, fts5: bool) -> None:
    # `name` is unique per project and kind, not store-wide as the seed schema had it:
    # two repositories both have a `src/main.py`.
    conn.execute(
        """CREATE TABLE nodes (
            id TEXT PRIMARY KEY, project_id TEXT, kind TEXT, name TEXT,
            UNIQUE (project_id, kind, name)
        )"""
    )
    conn.execute(
        """CREATE TABLE edges (
            id TEXT PRIMARY KEY,
            from_id TEXT NOT NULL, to_id TEXT NOT NULL,
            rel_type TEXT NOT NULL,
            weight REAL DEFAULT 1.0,
            UNIQUE (from_id, to_id, rel_type)
        )"""
    )
    conn.execute("CREATE INDEX edges_from ON edges(from_id)")
    conn.execute("CREATE INDEX edges_to ON edges(to_id)")
    conn.execute(
        "CREATE TABLE record_entities (record_id TEXT NOT NULL, entity_id TEXT NOT NULL, PRIMARY KEY (record_id, entity_id))"
    )
    conn.execute("CREATE INDEX record_entities_entity ON record_entities(entity_id)")


@migration
def m003_create_sessions_and_projects(conn: sqlite3.Connection, fts5: bool) -> None:
    conn.execute(
        """CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY, project_id TEXT,
            started_at TEXT, ended_at TEXT,
            tokens_injected INTEGER DEFAULT 0, extraction_cost_usd REAL DEFAULT 0,
            injections INTEGER DEFAULT 0,
            meta TEXT DEFAULT '{}'
        )"""
    )
    conn.execute("CREATE INDEX sessions_project ON sessions(project_id, started_at)")
    conn.execute(
        """CREATE TABLE projects (
            project_id TEXT PRIMARY KEY, name TEXT, root TEXT, remote TEXT,
            first_seen TEXT, last_seen TEXT
        )"""
    )


@migration
def m004_consolidation(conn: sqlite3.Connection, fts5: bool) -> None:
    """Offline consolidation (docs/consolidation.md): all of it derived and rebuildable except the
    archive marks and the answers a model gave on merge candidates (kept so nothing is asked twice).

    Archived records stay in `records` (every history path keeps working unchanged); the
    archive table marks them cold. Vectors live in sqlite-vec's `records_vec` when the
    extension loads (created by agentctx-embed), else as float32 BLOBs in `record_vectors`.
    """
    conn.execute("CREATE TABLE record_archive (record_id TEXT PRIMARY KEY, archived_at TEXT NOT NULL)")
    conn.execute(
        """CREATE TABLE merge_candidates (
            keep_id TEXT NOT NULL, drop_id TEXT NOT NULL, project_id TEXT NOT NULL, type TEXT NOT NULL,
            similarity REAL NOT NULL, found_at TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'open',  -- open | merged | rejected
            decided_at TEXT, note TEXT,
            PRIMARY KEY (keep_id, drop_id)
        )"""
    )
    conn.execute("CREATE INDEX merge_candidates_project ON merge_candidates(project_id, status)")
    conn.execute("CREATE TABLE record_vectors (record_id TEXT PRIMARY KEY, embedding BLOB NOT NULL)")
    conn.execute("CREATE TABLE vector_meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.execute(
        """CREATE TABLE consolidation_state (
            project_id TEXT PRIMARY KEY, fingerprint TEXT, finished_at TEXT, summary TEXT DEFAULT '{}'
        )"""
    )


FTS_NS_CONTENT = """CREATE VIEW records_fts_content AS
    SELECT rowid AS rid, title, body, hex(project_id) AS ns FROM records"""
FTS_NS_TABLE = """CREATE VIRTUAL TABLE records_fts USING fts5(
    title, body, ns, content='records_fts_content', content_rowid='rid', tokenize='porter unicode61'
)"""
# `ns` is the owning project as one token (`hex(project_id)`, served by a view since `records`
# has no such column): search ANDs it into the MATCH so
# FTS5 ranks only the current project's and `_global` rows. It is an accelerator, not a guard:
# every query still filters on `records.project_id`.
FTS_NS_TRIGGERS = (
    """CREATE TRIGGER records_ai AFTER INSERT ON records BEGIN
        INSERT INTO records_fts(rowid, title, body, ns) VALUES (new.rowid, new.title, new.body, hex(new.project_id));
    END""",
    """CREATE TRIGGER records_ad AFTER DELETE ON records BEGIN
        INSERT INTO records_fts(records_fts, rowid, title, body, ns)
        VALUES ('delete', old.rowid, old.title, old.body, hex(old.project_id));
    END""",
    """CREATE TRIGGER records_au AFTER UPDATE OF title, body, project_id ON records BEGIN
        INSERT INTO records_fts(records_fts, rowid, title, body, ns)
        VALUES ('delete', old.rowid, old.title, old.body, hex(old.project_id));
        INSERT INTO records_fts(rowid, title, body, ns) VALUES (new.rowid, new.title, new.body, hex(new.project_id));
    END""",
)


@migration
def m005_fts_namespace_column(conn: sqlite3.Connection, fts5: bool) -> None:
    """Rebuild the FTS index with the owning project as a column (search speed, docs/retrieval.md).

    Without it FTS5 scores every matching row of every project and the join throws most away
    (bench/README.md#search). Stores made without FTS5 stay so.
    """
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'records_fts'").fetchone()
    if exists is None:
        return
    for trigger in ("records_ai", "records_ad", "records_au"):
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    conn.execute("DROP TABLE records_fts")
    conn.execute("DROP VIEW IF EXISTS records_fts_content")
    conn.execute(FTS_NS_CONTENT)
    conn.execute(FTS_NS_TABLE)
    for trigger in FTS_NS_TRIGGERS:
        conn.execute(trigger)
    conn.execute("INSERT INTO records_fts(records_fts) VALUES ('rebuild')")


@migration
def m006_prompt_injection_accounting(conn: sqlite3.Connection, fts5: bool) -> None:
    """Per session: prompts that injected records, their tokens, and records shown in full or by
    title only (`injections` and `tokens_injected` also count the SessionStart digest)."""
    for column in ("prompt_injections", "prompt_tokens", "records_full", "records_title"):
        conn.execute(f"ALTER TABLE sessions ADD COLUMN {column} INTEGER DEFAULT 0")


@migration
def m007_record_anchors(conn: sqlite3.Connection, fts5: bool) -> None:
    """Where a record came from in the project's files (`agentctx_store.anchors`): a
    project-relative path, an optional line range or symbol, and the hash of what it covered.
    `learn` writes them; freshness reads them to tell when the evidence changed.

    A trigger drops a record's anchors with the record, so `Store.delete` needs no change.
    """
    conn.execute(
        """CREATE TABLE record_anchors (
            anchor_id    INTEGER PRIMARY KEY,
            record_id    TEXT NOT NULL,
            project_id   TEXT NOT NULL,
            path         TEXT NOT NULL,
            line_start   INTEGER,
            line_end     INTEGER,
            symbol       TEXT,
            content_hash TEXT NOT NULL,
            created_at   TEXT NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX record_anchors_record ON record_anchors(record_id)")
    conn.execute("CREATE INDEX record_anchors_path ON record_anchors(project_id, path)")
    conn.execute(
        """CREATE TRIGGER record_anchors_ad AFTER DELETE ON records BEGIN
            DELETE FROM record_anchors WHERE record_id = old.id;
        END"""
    )


@migration
def m008_anchor_freshness(conn: sqlite3.Connection, fts5: bool) -> None:
    """What freshness needs beside an anchor's hash (`agentctx_store.freshness`): the file's size
    and mtime when it was last seen to match (so a check is a `stat`, and a hash only when they
    moved), and the last known state (`changed` / `missing`, NULL = fresh) for `stale`, `status`
    and the digest. Additive: anchors written without them are hashed until a check fills them."""
    for column in ("size INTEGER", "mtime_ns INTEGER", "state TEXT", "checked_at TEXT"):
        conn.execute(f"ALTER TABLE record_anchors ADD COLUMN {column}")


@migration
def m009_freshness_proposals(conn: sqlite3.Connection, fts5: bool) -> None:
    """Re-verification proposals (`agentctx_store.stale.reverify`): what a model said about a record
    whose anchors changed, waiting in the review inbox for a person to accept or reject."""
    conn.execute(
        """CREATE TABLE freshness_proposals (
            proposal_id INTEGER PRIMARY KEY,
            record_id   TEXT NOT NULL,
            project_id  TEXT NOT NULL,
            verdict     TEXT NOT NULL,          -- still_true | update | no_longer_true
            title       TEXT,                   -- the superseding draft (update)
            body        TEXT,
            reason      TEXT NOT NULL DEFAULT '',
            cost_usd    REAL NOT NULL DEFAULT 0,
            created_at  TEXT NOT NULL,
            status      TEXT NOT NULL DEFAULT 'open',  -- open | accepted | rejected
            decided_at  TEXT
        )"""
    )
    conn.execute("CREATE INDEX freshness_proposals_project ON freshness_proposals(project_id, status)")
    conn.execute(
        """CREATE TRIGGER freshness_proposals_ad AFTER DELETE ON records BEGIN
            DELETE FROM freshness_proposals WHERE record_id = old.id AND status = 'open';
        END"""
    )


# The columns of a record that travel to a remote (docs/remote.md): the fact, where it belongs, its
# time axes, supersession, pinning and provenance; never the counters, scores or derived flags.
OP_STATE = """json_object('type', {r}.type, 'title', {r}.title, 'body', {r}.body, 'scope', {r}.scope,
    'pinned', {r}.pinned, 'confidence', {r}.confidence, 'reinforce_count', {r}.reinforce_count,
    'valid_from', {r}.valid_from, 'recorded_at', {r}.recorded_at, 'superseded_at', {r}.superseded_at,
    'superseded_by', {r}.superseded_by, 'source', {r}.source, 'session_id', {r}.session_id, 'key', {r}.key)"""
_OP_PARENT = "(SELECT op_id FROM record_ops WHERE record_id = {r}.id AND applied = 1 ORDER BY seq DESC LIMIT 1)"
_OP_NOW = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
_OP_QUIET = "NOT EXISTS (SELECT 1 FROM record_ops_applying)"
OP_TRIGGERS = (
    f"""CREATE TRIGGER record_ops_ai AFTER INSERT ON records WHEN {_OP_QUIET} BEGIN
        INSERT INTO record_ops(op_id, record_id, project_id, kind, parent, state, made_at)
        VALUES (lower(hex(randomblob(16))), new.id, new.project_id, 'put', {_OP_PARENT.format(r="new")},
                {OP_STATE.format(r="new")}, {_OP_NOW});
    END""",
    f"""CREATE TRIGGER record_ops_au AFTER UPDATE OF type, title, body, scope, project_id, pinned, confidence,
        valid_from, superseded_at, superseded_by, key ON records
        WHEN {_OP_QUIET} AND (new.type IS NOT old.type OR new.title IS NOT old.title OR new.body IS NOT old.body
            OR new.scope IS NOT old.scope OR new.project_id IS NOT old.project_id OR new.pinned IS NOT old.pinned
            OR new.confidence IS NOT old.confidence OR new.valid_from IS NOT old.valid_from
            OR new.superseded_at IS NOT old.superseded_at OR new.superseded_by IS NOT old.superseded_by
            OR new.key IS NOT old.key) BEGIN
        INSERT INTO record_ops(op_id, record_id, project_id, kind, parent, state, made_at)
        VALUES (lower(hex(randomblob(16))), new.id, new.project_id, 'put', {_OP_PARENT.format(r="new")},
                {OP_STATE.format(r="new")}, {_OP_NOW});
    END""",
    f"""CREATE TRIGGER record_ops_ad AFTER DELETE ON records WHEN {_OP_QUIET} BEGIN
        INSERT INTO record_ops(op_id, record_id, project_id, kind, parent, state, made_at)
        VALUES (lower(hex(randomblob(16))), old.id, old.project_id, 'delete', {_OP_PARENT.format(r="old")},
                json_object('type', old.type, 'scope', old.scope, 'confidence', old.confidence), {_OP_NOW});
    END""",
)


@migration
def m010_operation_log(conn: sqlite3.Connection, fts5: bool) -> None:
    """The local operation log a remote syncs from (docs/remote.md): every change of a record's
    shared columns and every deletion is one operation with a stable id (`op_id`), in order (`seq`).

    Triggers write it, so no path that changes a record can forget to; counters and scores
    (`count_access`, `set_scores`) do not fire them. `parent` is the operation this one changed
    (the record's version it saw), which tells two machines' concurrent edits apart from one
    after the other. Operations pulled from a remote are written by the sync itself, with their
    own ids and `origin`; while it applies them a row in `record_ops_applying` (inside the same
    transaction, so no other connection sees it) keeps the triggers quiet. `applied = 0` marks a
    pulled operation kept as a conflict rather than applied. Existing records get one operation
    each, so a first sync sends what was there before the log.

    `remotes` holds each remote's URL (never its password), what it shares (`rule`, JSON) and
    its cursors: the last local `seq` pushed and the last server sequence pulled. The pull cursor
    moves in the transaction that applies what was pulled, so a sync killed at any point resumes
    where its last transaction ended.
    """
    conn.execute(
        """CREATE TABLE record_ops (
            seq        INTEGER PRIMARY KEY AUTOINCREMENT,
            op_id      TEXT NOT NULL UNIQUE,
            record_id  TEXT NOT NULL,
            project_id TEXT NOT NULL,
            kind       TEXT NOT NULL,            -- put | delete
            parent     TEXT,                     -- the op_id of the version this one changed
            state      TEXT NOT NULL,            -- JSON: the record's shared columns after the change
            origin     TEXT,                     -- NULL: made here; else the remote it came from
            applied    INTEGER NOT NULL DEFAULT 1,
            made_at    TEXT NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX record_ops_record ON record_ops(record_id, seq)")
    conn.execute("CREATE TABLE record_ops_applying (since TEXT)")
    conn.execute(
        """CREATE TABLE remotes (
            name          TEXT PRIMARY KEY,
            url           TEXT NOT NULL,
            rule          TEXT NOT NULL DEFAULT '{}',
            pushed_seq    INTEGER NOT NULL DEFAULT 0,
            pulled_seq    INTEGER NOT NULL DEFAULT 0,
            added_at      TEXT NOT NULL,
            last_ok       TEXT,
            failing_since TEXT,
            last_error    TEXT,
            attempts      INTEGER NOT NULL DEFAULT 0,
            next_attempt  TEXT
        )"""
    )
    conn.execute(
        f"""INSERT INTO record_ops(op_id, record_id, project_id, kind, parent, state, made_at)
            SELECT lower(hex(randomblob(16))), r.id, r.project_id, 'put', NULL, {OP_STATE.format(r="r")}, {_OP_NOW}
            FROM records r ORDER BY r.recorded_at, r.id"""
    )
    for trigger in OP_TRIGGERS:
        conn.execute(trigger)


def _docsize_tokens(h: str) -> str:
    """SQL for the sum of the varints of an FTS5 `docsize` blob given as `hex()` in `h`: a row's
    tokens in all columns.

    SQLite's varint is big-endian, the high bit of a byte saying one more follows; each byte adds
    its low 7 bits times 128 to the power of the bytes after it in its varint. A blob holds three
    varints (title, body, ns) of at most three bytes (under 2M tokens) each, so nine bytes.
    """

    def high(k: int) -> str:  # the byte's high bit is set: its first hex digit is 8 or more
        return f"substr({h}, {2 * k - 1}, 1) >= '8'"

    def low7(k: int) -> str:
        digit = "(instr('0123456789ABCDEF', substr({h}, {i}, 1)) - 1)"  # past the end: '' is at 1, so 0
        return f"({digit.format(h=h, i=2 * k - 1)} % 8 * 16 + {digit.format(h=h, i=2 * k)})"

    terms = [
        f"{low7(k)} * (CASE WHEN NOT ({high(k)}) THEN 1 WHEN NOT ({high(k + 1)}) THEN 128 ELSE 16384 END)"
        for k in range(1, 10)
    ]
    return " + ".join(terms)


# A row's tokens in the index (all columns, as FTS5 counts them for BM25), one expression in the
# schema: every connection parses the schema, and the triggers only name it.
FTS_TOKENS_VIEW = f"""CREATE VIEW records_fts_tokens AS
    SELECT id, {_docsize_tokens("h")} AS tokens FROM (SELECT id, hex(sz) AS h FROM records_fts_docsize)"""


def _row_tokens(rowid: str) -> str:
    return f"coalesce((SELECT tokens FROM records_fts_tokens WHERE id = {rowid}), 0)"


_ADD_NS = """INSERT INTO fts_namespaces(ns, rows, tokens) VALUES ({row}.project_id, 1, {tokens})
        ON CONFLICT(ns) DO UPDATE SET rows = rows + 1, tokens = tokens + excluded.tokens;"""
_DROP_NS = """UPDATE fts_namespaces SET rows = rows - 1, tokens = tokens - {tokens} WHERE ns = {row}.project_id;"""
_FTS_INSERT = (
    "INSERT INTO records_fts(rowid, title, body, ns) VALUES (new.rowid, new.title, new.body, hex(new.project_id));"
)
_FTS_DELETE = """INSERT INTO records_fts(records_fts, rowid, title, body, ns)
        VALUES ('delete', old.rowid, old.title, old.body, hex(old.project_id));"""
# The FTS triggers of m005, each also keeping `fts_namespaces` in step (in the same body, so the
# index's own row sizes are read after an insert and before a delete).
FTS_STATS_TRIGGERS = (
    f"""CREATE TRIGGER records_ai AFTER INSERT ON records BEGIN
        {_FTS_INSERT}
        {_ADD_NS.format(row="new", tokens=_row_tokens("new.rowid"))}
    END""",
    f"""CREATE TRIGGER records_ad AFTER DELETE ON records BEGIN
        {_DROP_NS.format(row="old", tokens=_row_tokens("old.rowid"))}
        {_FTS_DELETE}
    END""",
    f"""CREATE TRIGGER records_au AFTER UPDATE OF title, body, project_id ON records BEGIN
        {_DROP_NS.format(row="old", tokens=_row_tokens("old.rowid"))}
        {_FTS_DELETE}
        {_FTS_INSERT}
        {_ADD_NS.format(row="new", tokens=_row_tokens("new.rowid"))}
    END""",
)


@migration
def m011_fts_namespace_statistics(conn: sqlite3.Connection, fts5: bool) -> None:
    """Per namespace (owning project): the rows of the FTS index and their tokens (all columns, as
    FTS5 counts them), so search can weigh words over what a query may return rather than over
    every project in the data dir (docs/retrieval.md, "Neighbours"). The FTS triggers keep it.
    Stores made without FTS5 stay without it.
    """
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'records_fts'").fetchone()
    if exists is None:
        return
    conn.execute(
        """CREATE TABLE fts_namespaces (
            ns     TEXT PRIMARY KEY,
            rows   INTEGER NOT NULL,
            tokens INTEGER NOT NULL
        ) WITHOUT ROWID"""
    )
    conn.execute(FTS_TOKENS_VIEW)
    for trigger in ("records_ai", "records_ad", "records_au"):
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    for trigger in FTS_STATS_TRIGGERS:
        conn.execute(trigger)
    conn.execute(
        f"""INSERT INTO fts_namespaces(ns, rows, tokens)
            SELECT r.project_id, count(*), sum({_row_tokens("r.rowid")}) FROM records r GROUP BY r.project_id"""
    )


@migration
def m012_remote_positions(conn: sqlite3.Connection, fts5: bool) -> None:
    """Positions in the operation log beyond each remote's cursors (docs/remote.md).

    What a remote still owes both ways after its share rule widened: `backfill_rule` (JSON) is
    the rule whose records already went to and came from the remote up to the local
    `push_backfill_seq` and the server's `pull_backfill_seq`; the cursors start over, and below
    those positions only what that rule did not cover is sent or fetched. A rule that only
    narrows changes neither. Cleared once a sync has gone past both positions.

    `record_ops_marks`, one row: how far the log was ever pushed, to any remote, even one
    removed since (`shared_upto`, kept by a trigger on `remotes.pushed_seq`); compaction
    (`oplog.compact`) drops an operation above it outright (no server can hold it) and keeps
    the id of one below it (a server may send it back). A store upgraded with operations
    already logged counts them all as possibly pushed. And where the last compaction left off
    (`compacted_below`, the push position every remote had passed; `compacted_max`, the last
    operation then), so the next one looks only at what changed since.
    """
    conn.execute("ALTER TABLE remotes ADD COLUMN backfill_rule TEXT")
    conn.execute("ALTER TABLE remotes ADD COLUMN push_backfill_seq INTEGER NOT NULL DEFAULT 0")
    conn.execute("ALTER TABLE remotes ADD COLUMN pull_backfill_seq INTEGER NOT NULL DEFAULT 0")
    conn.execute(
        """CREATE TABLE record_ops_marks (shared_upto INTEGER NOT NULL, compacted_below INTEGER NOT NULL DEFAULT 0,
            compacted_max INTEGER NOT NULL DEFAULT 0)"""
    )
    conn.execute("INSERT INTO record_ops_marks(shared_upto) SELECT coalesce(max(seq), 0) FROM record_ops")
    conn.execute(
        """CREATE TRIGGER remotes_pushed AFTER UPDATE OF pushed_seq ON remotes BEGIN
            UPDATE record_ops_marks SET shared_upto = max(shared_upto, new.pushed_seq);
        END"""
    )


@migration
def m013_remote_pulled_projects(conn: sqlite3.Connection, fts5: bool) -> None:
    """The projects a remote's pull cursor has covered (docs/remote.md, "Grants that change").

    `pulled_seq` is one position across every project the role could read; a project granted
    later has operations below it that were never fetched. `pulled_projects` (JSON list) says
    which projects the cursor went through, so a sync fetches a newly readable project's log from
    the start up to the cursor first. NULL (a remote from before this column): the rule's
    projects as they are at its next sync.
    """
    conn.execute("ALTER TABLE remotes ADD COLUMN pulled_projects TEXT")
