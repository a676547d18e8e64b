"""Where agentctx keeps its files (SPEC §2.4). `AGENTCTX_HOME` overrides the data dir."""

from __future__ import annotations

import os
import re
from pathlib import Path

DB_NAME = "agentctx.db"


def home() -> Path:
    """The data dir: `$AGENTCTX_HOME`, else `~/.agentctx`."""
    override = os.environ.get("AGENTCTX_HOME")
    return Path(override).expanduser() if override else Path.home() / ".agentctx"


def db_path() -> Path:
    return home() / DB_NAME


def config_path() -> Path:
    return home() / "config.json"


def logs_dir() -> Path:
    return home() / "logs"


def digests_dir() -> Path:
    """Precomputed SessionStart digests, one file per project (derived, rebuildable)."""
    return home() / "digests"


def digest_path(project_id: str) -> Path:
    return digests_dir() / f"{safe_name(project_id)}.md"


def safe_name(value: str, *, limit: int = 96) -> str:
    """A string from untrusted input (a session id from stdin) made safe as one file name."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "_", value)[:limit].strip(".")
    return cleaned or "_"


def session_state_dir() -> Path:
    """Per-user temp folder for disposable per-session state (injection dedup)."""
    uid = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    import tempfile  # here, not at the top: hooks import this module and tempfile costs ~5 ms

    return Path(tempfile.gettempdir()) / f"agentctx-{uid}"
