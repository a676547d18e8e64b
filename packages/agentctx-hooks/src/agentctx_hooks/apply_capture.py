"""Applying a spooled capture (`capture` → `spool`) to the store: file nodes and their links,
bugfix stubs, test runs, commits, branches and pull requests in the session's metadata.

Run by `spool.flush`, inside the transaction of whichever hook opened the store next.
"""

from __future__ import annotations

import os

from agentctx_store import clients
from agentctx_store.jsontext import is_array, is_object
from agentctx_store.projects import resolve_project

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentctx_store import Project, Store

MAX_FILES = 50
MAX_TESTS = 20
MAX_COMMITS = 20


def file_name(project_root: str, path: str) -> str:
    """The node name of a file: relative to the project root (portable across clones), the
    absolute path for files outside it."""
    absolute = os.path.normpath(path if os.path.isabs(path) else os.path.join(project_root, path))
    root = os.path.normpath(project_root)
    if absolute == root or not absolute.startswith(root.rstrip(os.sep) + os.sep):
        return absolute
    return os.path.relpath(absolute, root).replace(os.sep, "/")


def apply(store: Store, entry: dict[str, Any]) -> None:
    """Write one spooled capture, inside the caller's transaction.

    Raises:
        ValueError, TypeError, KeyError: the capture is malformed.
    """
    session_id, cwd = str(entry["session_id"]), str(entry["cwd"])
    if not session_id or not os.path.isabs(cwd):
        raise ValueError("a capture without a session or an absolute cwd")
    project = resolve_project(cwd)
    root = project.root
    if entry.get("kind") == "file":
        _apply_file(store, project, root, session_id, str(entry["path"]))
    elif entry.get("kind") == "bash":
        _apply_bash(store, project, root, session_id, entry)
    else:
        raise ValueError(f"unknown capture kind {entry.get('kind')!r}")


def _apply_file(store: Store, project: Project, root: str, session_id: str, path: str) -> None:
    name = file_name(root, path)
    node = store.upsert_node(project, "file", name)
    session_node = store.upsert_node(project, "session", session_id)
    store.add_edge(node, session_node, "observed_in")
    if _append_meta(store, project, session_id, "files", name, limit=MAX_FILES, unique=True):
        for record_id in records_naming(store, project, name):  # once per file and session
            store.link_entity(record_id, node)
    if not os.path.isabs(name):  # records anchored to the file: note whether it still matches them
        from agentctx_store.freshness import note_edit

        if note_edit(store, project, name):  # the digest lists them unmarked: compose it again
            from agentctx_store import digest

            digest.mark_stale(project.project_id)


def records_naming(store: Store, project: Project, name: str) -> list[str]:
    """Current records of this project whose title or body mentions the file (its relative
    path, or its base name when that is distinctive enough)."""
    needles = [name]
    base = name.rsplit("/", 1)[-1]
    if base != name and "." in base and len(base) >= 6:
        needles.append(base)
    clause = " OR ".join("instr(r.title, ?) > 0 OR instr(r.body, ?) > 0" for _ in needles)
    params: list[str] = [project.project_id]
    for needle in needles:
        params.extend([needle, needle])
    scan = f"SELECT r.id FROM records r WHERE r.project_id = ? AND r.superseded_at IS NULL AND ({clause}) LIMIT 50"
    from agentctx_store.retrieval import words

    tokens = list(words(needles[-1]))  # how FTS5's unicode61 tokenizer cuts the name
    if tokens and store.has_fts:
        # The FTS index narrows the candidates to records containing the name's words in a row,
        # instead of scanning every body of the project.
        phrase = '"' + " ".join(tokens) + '"'
        indexed = scan.replace(
            "WHERE", "WHERE r.rowid IN (SELECT rowid FROM records_fts WHERE records_fts MATCH ?) AND", 1
        )
        import _sqlite3 as sqlite3  # not the `sqlite3` package (agentctx_store/db.py)

        try:
            return [row[0] for row in store.conn.execute(indexed, [phrase, *params])]
        except sqlite3.Error:
            pass  # an index problem: the scan below still answers
    return [row[0] for row in store.conn.execute(scan, params)]


def _append_meta(
    store: Store, project: Project, session_id: str, key: str, value: Any, *, limit: int, unique: bool = False
) -> bool:
    """Append to a list in the session's metadata, inside the caller's transaction; False
    when `unique` and the value was already there (it moves to the end)."""
    session = store.get_session(session_id) or {}
    current = session.get("meta", {}).get(key)
    items = list(current) if is_array(current) else []
    new = value not in items
    if unique and not new:
        items.remove(value)
    items.append(value)
    store.update_session_meta(project, session_id, **{key: items[-limit:]})
    return new


def _apply_bash(store: Store, project: Project, root: str, session_id: str, entry: dict[str, Any]) -> None:
    from agentctx_store import NewRecord

    command = str(entry.get("command") or "")
    at = str(entry.get("at") or "")
    session_node = store.upsert_node(project, "session", session_id)
    error = entry.get("error")
    if error:
        signature, key = str(error[0]), str(error[1])
        stub = store.find_by_key(project, "bugfix", key)
        if stub is None:
            stub = store.add(
                project,
                NewRecord(
                    type="bugfix",
                    title=_title(signature),
                    body=f"Seen running `{_short(command, 160)}`: {_short(signature, 300)}. "
                    "Cause and fix not recorded yet.",
                    confidence="inferred",
                    source="hook_observation",
                    session_id=session_id,
                    key=key,
                ),
            )
            from agentctx_hooks.provenance import note_record

            hook = str(entry.get("hook") or "PostToolUseFailure")
            note_record(store, project, session_id, stub.record_id, str(entry.get("client") or clients.DEFAULT), hook)
        store.add_edge(stub.record_id, session_node, "observed_in")
    test = entry.get("test")
    if test:
        outcome, files = str(test[0]), [str(name) for name in test[1]]
        for name in files or [_short(command, 120)]:
            kind = "file" if name in files else "test"
            node = store.upsert_node(project, kind, file_name(root, name) if kind == "file" else name)
            store.add_edge(node, session_node, f"test_{outcome}")
        run = {"command": _short(command, 200), "outcome": outcome, "files": files, "at": at}
        _append_meta(store, project, session_id, "tests", run, limit=MAX_TESTS)
    if entry.get("branch"):
        store.update_session_meta(project, session_id, branch=str(entry["branch"]))
    commit = entry.get("commit")
    if is_object(commit):
        _append_meta(store, project, session_id, "commits", commit, limit=MAX_COMMITS)
        if commit.get("branch"):
            store.update_session_meta(project, session_id, branch=str(commit["branch"]))
    if entry.get("pull_request"):
        _append_meta(store, project, session_id, "prs", str(entry["pull_request"]), limit=MAX_COMMITS, unique=True)


def _title(signature: str) -> str:
    return _short(f"Error: {signature}", 120)


def _short(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
