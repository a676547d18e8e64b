"""Where agentctx keeps its files (SPEC §2.4). `AGENTCTX_HOME` overrides the data dir."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

DB_NAME = "agentctx.db"


def home() -> Path:
    """The data dir: `$AGENTCTX_HOME`, else `~/.agentctx`."""
    from pathlib import Path  # here, not at the top: the prompt hook opens the store without it (~3 ms)

    return Path(home_text())


def home_text() -> str:
    """`home()` as a string, without importing pathlib."""
    override = os.environ.get("AGENTCTX_HOME")
    return os.path.expanduser(override) if override else os.path.join(os.path.expanduser("~"), ".agentctx")


def db_path() -> Path:
    return home() / DB_NAME


def db_path_text() -> str:
    """`db_path()` as a string, without importing pathlib."""
    return os.path.join(home_text(), DB_NAME)


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
    import re  # here, not at the top: the prompt hook imports this module, never this function

    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "_", value)[:limit].strip(".")
    return cleaned or "_"


def session_state_dir() -> Path:
    """Disposable per-session state (injection dedup, spawn locks): `agentctx_hooks.state`."""
    return home() / "state"
