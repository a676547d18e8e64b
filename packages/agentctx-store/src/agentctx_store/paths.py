"""Where agentctx keeps its files (docs/store.md#the-data-dir). `AGENTCTX_HOME` overrides the data
dir.

Paths are text here (the hooks build them on every event); the CLI and the UI make them `Path`s.
"""

from __future__ import annotations

import os

DB_NAME = "agentctx.db"


def home() -> str:
    """The data dir: `$AGENTCTX_HOME`, else `~/.agentctx`."""
    override = os.environ.get("AGENTCTX_HOME")
    return os.path.expanduser(override) if override else os.path.join(os.path.expanduser("~"), ".agentctx")


def db_path() -> str:
    return os.path.join(home(), DB_NAME)


def config_path() -> str:
    return os.path.join(home(), "config.json")


def remote_schedule_path() -> str:
    """When a hook may next start a detached remote sync (epoch seconds; docs/remote.md). It
    exists only while a remote is added, so a hook without one pays one failed `stat`."""
    return os.path.join(home(), "remote-sync.next")


def logs_dir() -> str:
    return os.path.join(home(), "logs")


def digests_dir() -> str:
    """Precomputed SessionStart digests, one pair of files per project (derived, rebuildable)."""
    return os.path.join(home(), "digests")


def digest_path(project_id: str) -> str:
    """The digest text of a project; its metadata sits beside it (`digest_meta_path`)."""
    return os.path.join(digests_dir(), f"{safe_name(project_id)}.md")


def digest_meta_path(project_id: str) -> str:
    return os.path.join(digests_dir(), f"{safe_name(project_id)}.json")


def calibration_path(project_id: str) -> str:
    """What the warm search service measured to set a project's relevance floor (derived,
    rebuildable; `agentctx_embed.hybrid.Calibration`), shown by `agentctx status --json`."""
    return os.path.join(home(), "calibration", f"{safe_name(project_id)}.json")


def keyword_calibration_path(project_id: str) -> str:
    """A project's keyword floor, measured off the prompt path (`agentctx_store.calibration`) and
    read by the prompt hook; derived, rebuildable; shown by `agentctx status --json`."""
    return os.path.join(home(), "calibration", "keyword", f"{safe_name(project_id)}.json")


def session_state_dir() -> str:
    """Disposable per-session state (injection dedup, spawn locks): `agentctx_hooks.state`."""
    return os.path.join(home(), "state")


_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def safe_name(value: str, *, limit: int = 96) -> str:
    """A string from untrusted input (a session id from stdin) made safe as one file name:
    anything but ASCII letters, digits and `_.-` becomes `_`; no leading or trailing dot."""
    cleaned = "".join(char if char in _NAME_CHARS else "_" for char in value[:limit]).strip(".")
    return cleaned or "_"
