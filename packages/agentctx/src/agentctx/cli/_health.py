"""What works on this machine, checked cheaply: the degradation rungs in force (for `status`)
and the checks of `doctor`. Nothing here imports an optional part: `find_spec` only.
"""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentctx_store import Project, Store, clients, config, paths
from agentctx_store.db import fts5_available, schema_version
from agentctx_store.errors import StoreError
from agentctx_store.jsontext import is_object

from agentctx.cli._install import install_command


def module_available(name: str) -> bool:
    """Whether a module could be imported, without importing it (the heavy ones cost seconds)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def sqlite_vec_loadable() -> bool:
    """sqlite-vec is installed and something can load it: the stdlib driver when built with
    extension loading (many Pythons are not), else apsw, which the [embeddings] extra brings."""
    loader = hasattr(sqlite3.Connection, "enable_load_extension") or module_available("apsw")
    return module_available("sqlite_vec") and loader


@dataclass(frozen=True, kw_only=True)
class Rung:
    rung: int
    name: str
    why: str
    fix: str


def active_rungs(store: Store | None, settings: dict[str, Any]) -> list[Rung]:
    """The degradation rungs (docs/contracts.md#degradation) in force right now, checked cheaply."""
    rungs: list[Rung] = []
    probe = sqlite3.connect(":memory:")
    try:
        fts5 = fts5_available(probe) and (store is None or store.has_fts)
    finally:
        probe.close()
    if not fts5:
        rungs.append(
            Rung(
                rung=4,
                name="like-search",
                why="this SQLite has no FTS5: search falls back to LIKE",
                fix="use a Python whose sqlite3 has FTS5 (python.org and uv builds do)",
            )
        )
    from agentctx_extract.backends import choose

    backend = choose(settings)
    if backend.status == "disabled":
        rungs.append(Rung(rung=3, name="no-llm", why="LLM extraction is off", fix="agentctx config --llm"))
    elif backend.backend is None:
        rungs.append(
            Rung(
                rung=3,
                name="no-llm",
                why=(
                    "ANTHROPIC_API_KEY is not set and no coding agent ("
                    + ", ".join(client.binary for client in clients.CLIENTS.values() if client.headless)
                    + ") is on PATH to run it through: deterministic capture only"
                    if backend.status == "no_key" and not backend.reason.startswith("llm = api")
                    else f"{backend.reason}: deterministic capture only"
                ),
                fix="export ANTHROPIC_API_KEY=..., or sign in to Claude Code, Codex CLI or Gemini CLI",
            )
        )
    elif backend.backend == "api" and not module_available("anthropic"):
        rungs.append(Rung(rung=3, name="no-llm", why="the anthropic package is missing", fix=install_command()))
    if not sqlite_vec_loadable():
        rungs.append(
            Rung(
                rung=2,
                name="no-vectors",
                why="sqlite-vec is not loadable: no offline vector work",
                fix=install_command("embeddings"),
            )
        )
    if not settings.get("embeddings", True):
        rungs.append(Rung(rung=2, name="no-embeddings", why="embeddings are off", fix="agentctx config --embeddings"))
    elif not (module_available("agentctx_embed") and module_available("fastembed")):
        rungs.append(
            Rung(
                rung=2,
                name="no-embeddings",
                why="the [embeddings] extra is not installed",
                fix=install_command("embeddings"),
            )
        )
    return rungs


# -- doctor -----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Check:
    name: str
    state: str  # "ok" | "warn" | "fail"
    detail: str
    fix: str = ""
    extra: dict[str, Any] = field(default_factory=dict[str, Any])


OPTIONAL_PARTS: tuple[tuple[str, tuple[str, ...], str, str], ...] = (
    ("embeddings", ("agentctx_embed", "fastembed"), "offline embeddings", install_command("embeddings")),
    ("sqlite-vec", ("sqlite_vec", "apsw"), "vector table for embeddings", install_command("embeddings")),
    ("dashboard", ("agentctx_ui", "fastapi", "uvicorn"), "local web dashboard", install_command("ui")),
    ("mcp", ("agentctx_mcp", "mcp"), "MCP server for Claude Code", install_command()),
    ("anthropic", ("agentctx_extract", "anthropic"), "session-end extraction", install_command()),
)


def _dir_writable(directory: Path) -> tuple[bool, str]:
    """Whether files can be created in `directory` (or, if absent, in its nearest existing parent)."""
    probe_dir = directory
    while not probe_dir.exists() and probe_dir != probe_dir.parent:
        probe_dir = probe_dir.parent
    if not probe_dir.is_dir():
        return False, f"{probe_dir} is not a directory"
    try:
        with tempfile.NamedTemporaryFile(dir=probe_dir, prefix=".agentctx-probe-"):
            pass
    except OSError as exc:
        return False, f"cannot create files in {probe_dir} ({exc.strerror})"
    return True, "writable" if probe_dir == directory else f"will be created (in {probe_dir})"


def check_store(path: Path) -> list[Check]:
    if not path.exists():
        return [Check(name="store", state="ok", detail=f"no store yet at {path}; the first record creates it")]
    try:
        store = Store.open(path, create=False)
    except StoreError as exc:
        return [Check(name="store", state="fail", detail=str(exc))]
    try:
        checks = [Check(name="store", state="ok", detail=f"{path}, schema {schema_version()}")]
        mode = store.conn.execute("PRAGMA journal_mode").fetchone()[0]
        checks.append(
            Check(
                name="wal",
                state="ok" if mode.lower() == "wal" else "fail",
                detail=f"journal_mode={mode}",
                fix="" if mode.lower() == "wal" else "remove stale -journal files next to the store, then rerun",
            )
        )
        try:
            store.conn.execute("BEGIN IMMEDIATE")
            store.conn.execute("ROLLBACK")
            checks.append(Check(name="store writable", state="ok", detail="a write transaction can start"))
        except sqlite3.Error as exc:
            checks.append(
                Check(name="store writable", state="fail", detail=str(exc), fix="fix the permissions of the data dir")
            )
        checks.append(
            Check(
                name="full-text index",
                state="ok" if store.has_fts else "warn",
                detail="records_fts present" if store.has_fts else "no FTS5 index: search runs on LIKE (rung 4)",
            )
        )
    finally:
        store.close()
    return checks


def check_config(path: Path) -> Check:
    if not path.exists():
        return Check(name="config", state="ok", detail="defaults (no config.json yet)")
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        data = None
    if not is_object(data) or data.get(config.MARKER) != config.MARKER_VALUE:
        return Check(
            name="config",
            state="fail",
            detail=f"{path} was not written by agentctx; it is left alone and defaults apply",
            fix="move it aside, or set AGENTCTX_HOME to another directory",
        )
    return Check(name="config", state="ok", detail=str(path))


def check_api_key() -> Check:
    """Which backend extraction uses and why (`agentctx_extract.backends.choose`): a warning only
    when none is available while LLM use is on."""
    from agentctx_extract.backends import choose, describe

    try:
        settings = config.load()
    except (OSError, ValueError):  # a broken config is reported by check_config
        settings = {name: setting.default for name, setting in config.SETTINGS.items()}
    backend = choose(settings)
    line = describe(settings, probe=True)
    if backend.status == "disabled" or (backend.backend is not None and not line.startswith("extraction: none")):
        return Check(name="extraction backend", state="ok", detail=line)
    return Check(
        name="extraction backend",
        state="warn",
        detail=f"{line}: no LLM extraction (rung 3)",
        fix="export ANTHROPIC_API_KEY=..., sign in to Claude Code, Codex CLI or Gemini CLI, or `agentctx config llm off`",
    )


def run_checks(project: Project) -> list[Check]:
    probe = sqlite3.connect(":memory:")
    try:
        fts5 = fts5_available(probe)
    finally:
        probe.close()
    checks = [
        Check(
            name="fts5",
            state="ok" if fts5 else "warn",
            detail=f"sqlite {sqlite3.sqlite_version}, FTS5 {'available' if fts5 else 'missing: search degrades to LIKE'}",
        )
    ]
    home = Path(paths.home())
    writable, detail = _dir_writable(home)
    checks.append(
        Check(
            name="data dir",
            state="ok" if writable else "fail",
            detail=f"{home}: {detail}",
            fix="" if writable else "set AGENTCTX_HOME to a writable directory",
        )
    )
    from agentctx.cli._private import check_modes

    checks.append(check_modes(home))
    checks.append(check_config(Path(paths.config_path())))
    checks.extend(check_store(Path(paths.db_path())))
    for name, modules, what, fix in OPTIONAL_PARTS:
        missing = [module for module in modules if not module_available(module)]
        checks.append(
            Check(
                name=name,
                state="ok" if not missing else "warn",
                detail=f"{what}: installed" if not missing else f"{what}: not installed ({', '.join(missing)})",
                fix=fix if missing else "",
            )
        )
    checks.append(check_embedding_model())
    checks.append(check_api_key())
    from agentctx.cli.clients import claude, client_checks

    checks.append(claude.check_hooks(project))
    checks.append(claude.check_mcp_registration(project))
    checks.append(check_search_service())
    checks.extend(client_checks(project))  # every other client
    return checks


def check_embedding_model() -> Check:
    """Which embedding model is active, where it loads from, and whether bench/ measured it."""
    if not (module_available("agentctx_embed") and module_available("fastembed")):
        return Check(name="embedding model", state="ok", detail="none: the [embeddings] extra is not installed")
    from agentctx.cli.models import active_model, describe

    model = active_model()
    return Check(
        name="embedding model",
        state="ok" if model["measured"] else "warn",
        detail=describe(model),
        fix="" if model["measured"] else "unset AGENTCTX_EMBED_MODEL / embed_model for the measured default",
        extra=model,
    )


def check_search_service() -> Check:
    """Whether the warm search service of this data dir is up, and which model it holds."""
    from agentctx_store.service_link import service_info

    info = service_info()
    if info is None:
        return Check(
            name="search service",
            state="ok",
            detail="not running: prompts use keyword search (an `agentctx mcp` session or `agentctx serve` starts it)",
        )
    if "error" in info:
        return Check(
            name="search service",
            state="warn",
            detail=str(info["error"]),
            fix="restart the Claude Code session or `agentctx serve`",
        )
    return Check(
        name="search service",
        state="ok",
        detail=(
            f"up (pid {info.get('pid')}): hybrid search with {info.get('model')}, {info.get('vectors')} vectors, "
            f"RSS {int(info.get('rss_bytes') or 0) // 1_000_000} MB"
        ),
        extra={key: info.get(key) for key in ("pid", "model", "vectors", "rss_bytes", "socket", "version")},
    )
