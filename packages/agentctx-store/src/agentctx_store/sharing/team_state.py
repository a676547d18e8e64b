"""Has the committed team file changed since this store last synced with it? Cheaply.

SessionStart asks this once per session, so it never parses the file: it compares the file's
size and modification time with those saved at the last `team export`/`team import`, and only
when they differ hashes the bytes (a checkout that rewrote the same content is no change; the
new stat is saved so the next check is a stat again). Standard library only, imported lazily.

The saved state lives in `$AGENTCTX_HOME/team/<project_id>.json`: the file's size, mtime, hash
and the record ids it held (so a later import can tell a deleted block from a record made
since).
"""

from __future__ import annotations

import json
import os

from agentctx_store.jsontext import is_array, is_object
from agentctx_store.projects import repo_root

TEAM_FILE = os.path.join(".agentctx", "context.md")
# A team file is written by people, for the few hundred rules a team keeps: past this it is not
# one (docs/team.md, "Limits"). `team import` refuses a larger file; `file_hash` reads no more.
MAX_TEAM_BYTES = 5_000_000
NOTICE = "team context changed: run `agentctx team import` to take your team's edits"
AUTO_NOTICE = "team context changed: importing it now (team_autoimport)"


def team_path(root: str) -> str:
    return os.path.join(root, TEAM_FILE)


def state_path(project_id: str) -> str:
    from agentctx_store import paths

    return os.path.join(paths.home(), "team", paths.safe_name(project_id) + ".json")


def load_state(project_id: str) -> dict[str, object]:
    try:
        with open(state_path(project_id), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if is_object(data) else {}


def file_hash(path: str) -> str | None:
    """The sha256 of a regular file (never a FIFO or a device: SessionStart calls this), or
    None when it is missing, unreadable, or not a regular file."""
    import hashlib

    from agentctx_store.bounded import read_regular

    data = read_regular(path, limit=MAX_TEAM_BYTES + 1)  # a byte more: a larger file differs
    return None if data is None else hashlib.sha256(data).hexdigest()


def _linked(root: str) -> bool:
    """Whether `.agentctx` or the team file is a symbolic link: agentctx neither reads nor
    writes through one (`team import` says so in one line)."""
    from agentctx_store.bounded import Refused, refuse_links

    try:
        refuse_links(root, TEAM_FILE)
    except Refused:
        return True
    return False


def save_state(project_id: str, root: str, ids: list[str]) -> None:
    """Remember the team file as it is now (after an export or import)."""
    path = team_path(root)
    try:
        stat = os.stat(path)
    except OSError:
        return
    data = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": file_hash(path), "ids": sorted(ids)}
    target = state_path(project_id)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    temp = f"{target}.{os.getpid()}.tmp"
    with open(temp, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(temp, target)


def changed(root: str, project_id: str) -> bool:
    """Whether the team file exists and differs from what this store last synced (a link, or
    what is not a regular file, is never read: `team import` refuses it)."""
    path = team_path(root)
    if _linked(root):
        return False
    try:
        stat = os.stat(path)
    except OSError:
        return False
    saved = load_state(project_id)
    if saved.get("size") == stat.st_size and saved.get("mtime_ns") == stat.st_mtime_ns:
        return False
    digest = file_hash(path)
    if digest is not None and digest == saved.get("sha256"):
        ids = saved.get("ids")
        save_state(project_id, root, [str(value) for value in ids] if is_array(ids) else [])
        return False
    return True


def notice(cwd: str, project_id: str, *, autoimport: bool = False) -> str:
    """The one digest line SessionStart adds, or "" when the file is in step (or absent)."""
    root = repo_root(cwd)
    if not os.path.exists(team_path(root)) or not changed(root, project_id):
        return ""
    return AUTO_NOTICE if autoimport else NOTICE
