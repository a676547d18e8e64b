"""Sessions: one row per client session, its metadata (branch, commits, tests, snapshot, …) and
the accounting of what the hooks injected (docs/adr/0003-hard-injection-budgets.md). A part of
`Store`."""

from __future__ import annotations

from agentctx_store.db import Connected
from agentctx_store.jsontext import dumps as json_dumps
from agentctx_store.jsontext import loads as json_loads
from agentctx_store.records import utc_now

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from agentctx_store.projects import Project


SESSION_LOG_ENTRIES = 50  # entries kept in each of a session's logs (`injections`, `hook_records`)
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def is_name(value: object, *, extra: str = "") -> bool:
    """A short name such as `codex`, `AfterTool` or a record id: 1–64 letters, digits, `_`, `-`
    (and the characters in `extra`)."""
    return (
        isinstance(value, str) and 0 < len(value) <= 64 and all(char in _NAME_CHARS or char in extra for char in value)
    )


def _is_plain(value: object) -> bool:
    """A count, a name, a stored timestamp, or a list of names (record ids)."""
    if isinstance(value, list):
        return all(is_name(item) for item in value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return isinstance(value, int) or is_name(value, extra=":.+")


class Sessions(Connected):
    if TYPE_CHECKING:  # what this part needs from `Store`, where every write of records lives

        def count_access(self, record_ids: Sequence[str]) -> None: ...

    def touch_session(self, project: Project, session_id: str) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO sessions(session_id, project_id, started_at) VALUES (?, ?, ?)",
                (session_id, project.project_id, utc_now()),
            )

    def record_injection(
        self,
        project: Project,
        session_id: str,
        record_ids: Sequence[str],
        tokens: int,
        *,
        title_ids: Sequence[str] = (),
        prompt: bool = False,
    ) -> None:
        """Self-accounting (docs/adr/0003-hard-injection-budgets.md): what a hook injected and its
        token estimate.

        `record_ids` were shown in full (their access count goes up), `title_ids` by their title
        only; `prompt=True` for a prompt's injection (counted apart from the session-start digest).
        """
        self.touch_session(project, session_id)
        with self.transaction() as conn:
            conn.execute(
                "UPDATE sessions SET tokens_injected = tokens_injected + ?, injections = injections + 1 WHERE session_id = ?",
                (tokens, session_id),
            )
            if prompt:
                conn.execute(
                    "UPDATE sessions SET prompt_injections = prompt_injections + 1, prompt_tokens = prompt_tokens + ?, "
                    "records_full = records_full + ?, records_title = records_title + ? WHERE session_id = ?",
                    (tokens, len(record_ids), len(title_ids), session_id),
                )
            if record_ids:
                self.count_access(record_ids)

    def update_session_meta(self, project: Project, session_id: str, **values: Any) -> dict[str, Any]:
        """Merge keys into a session's JSON metadata (branch, commits, snapshot, …); every
        text in it is redacted (commands carry tokens and passwords)."""
        from agentctx_store.redact import redact_value

        values = redact_value(values)
        return self._change_meta(project, session_id, lambda meta: meta.update(values))

    def log_in_session(
        self, project: Project, session_id: str, key: str, entry: dict[str, Any], *, count: str = ""
    ) -> None:
        """Append `entry` to the session's log `meta[key]` (the last `SESSION_LOG_ENTRIES` stay), name
        the session's client (`entry["client"]`), and add one to `meta[count]` when given: the
        provenance of what the hooks and the warm service injected or created
        (`agentctx_store.origin` reads it back).

        Unlike `update_session_meta`, nothing is redacted: an entry holds only what the store
        made (record ids, counts, a timestamp) and names, which are checked here; any other text
        is refused (ValueError). So the prompt path never loads the redactor."""
        refused = [name for name, value in entry.items() if not _is_plain(value)]
        if refused:
            raise ValueError(f"{refused} of a session log entry: not an id, a count, a time or a name")

        def append(meta: dict[str, Any]) -> None:
            current = meta.get(key)
            items: list[Any] = list(current) if isinstance(current, list) else []  # pyright: ignore[reportUnknownArgumentType]
            items.append(entry)
            meta[key] = items[-SESSION_LOG_ENTRIES:]
            meta["client"] = entry.get("client", meta.get("client"))
            if count:
                previous = meta.get(count)
                meta[count] = (previous if isinstance(previous, int) else 0) + 1

        self._change_meta(project, session_id, append)

    def _change_meta(
        self, project: Project, session_id: str, change: Callable[[dict[str, Any]], None]
    ) -> dict[str, Any]:
        """Read the session's metadata, `change` it in place and write it back, in one transaction."""
        self.touch_session(project, session_id)
        with self.transaction() as conn:
            row = conn.execute("SELECT meta FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
            meta: dict[str, Any] = json_loads(row[0] or "{}") if row else {}
            change(meta)
            conn.execute("UPDATE sessions SET meta = ? WHERE session_id = ?", (json_dumps(meta), session_id))
        return meta

    def end_session(self, project: Project, session_id: str) -> None:
        self.touch_session(project, session_id)
        with self.transaction() as conn:
            conn.execute("UPDATE sessions SET ended_at = ? WHERE session_id = ?", (utc_now(), session_id))

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT * FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
        if row is None:
            return None
        session = dict(row)
        session["meta"] = json_loads(session.get("meta") or "{}")
        return session

    def list_sessions(self, project: Project | None = None, *, limit: int = 50) -> list[dict[str, Any]]:
        if project is None:
            rows = self.conn.execute("SELECT * FROM sessions ORDER BY started_at DESC LIMIT ?", (limit,))
        else:
            rows = self.conn.execute(
                "SELECT * FROM sessions WHERE project_id = ? ORDER BY started_at DESC LIMIT ?",
                (project.project_id, limit),
            )
        sessions: list[dict[str, Any]] = []
        for row in rows:
            session = dict(row)
            session["meta"] = json_loads(session.get("meta") or "{}")
            sessions.append(session)
        return sessions

    def add_extraction_cost(self, session_id: str, project: Project, usd: float) -> None:
        self.touch_session(project, session_id)
        with self.transaction() as conn:
            conn.execute(
                "UPDATE sessions SET extraction_cost_usd = extraction_cost_usd + ? WHERE session_id = ?",
                (usd, session_id),
            )

    def total_tokens_injected(self, project: Project | None = None) -> int:
        if project is None:
            row = self.conn.execute("SELECT coalesce(sum(tokens_injected), 0) FROM sessions").fetchone()
        else:
            row = self.conn.execute(
                "SELECT coalesce(sum(tokens_injected), 0) FROM sessions WHERE project_id = ?", (project.project_id,)
            ).fetchone()
        return int(row[0])

    def prompt_injection_totals(self, project: Project | None = None) -> dict[str, int]:
        """Prompts that injected records, their tokens, records shown in full and by title only."""
        columns = "coalesce(sum(prompt_injections), 0), coalesce(sum(prompt_tokens), 0), "
        columns += "coalesce(sum(records_full), 0), coalesce(sum(records_title), 0)"
        if project is None:
            row = self.conn.execute(f"SELECT {columns} FROM sessions").fetchone()
        else:
            row = self.conn.execute(
                f"SELECT {columns} FROM sessions WHERE project_id = ?", (project.project_id,)
            ).fetchone()
        return dict(zip(("prompts", "tokens", "full", "title"), (int(value) for value in row), strict=True))
