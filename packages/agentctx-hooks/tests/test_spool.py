"""The capture spool: claimed once, taken over from dead processes, never applied half-way."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from agentctx_store import Project, Store

from agentctx_hooks import log, spool


def _entry(project_dir: Path, path: str = "src/a.py", session: str = "s") -> dict[str, object]:
    return {"session_id": session, "cwd": str(project_dir), "kind": "file", "path": str(project_dir / path)}


def _file_nodes(store: Store, project: Project) -> list[str]:
    rows = store.conn.execute("SELECT name FROM nodes WHERE project_id = ? AND kind = 'file'", (project.project_id,))
    return sorted(row[0] for row in rows)


def test_captures_apply_once_in_order(
    store: Store, project: Project, project_dir: Path, flush: Callable[[], int]
) -> None:
    for name in ("src/a.py", "src/b.py", "src/a.py"):
        spool.add(_entry(project_dir, name))
    assert len(spool.pending()) == 3
    assert flush() == 3
    assert flush() == 0 and spool.pending() == []
    assert _file_nodes(store, project) == ["src/a.py", "src/b.py"]
    assert store.get_session("s")["meta"]["files"] == ["src/b.py", "src/a.py"]  # most recent last


def test_a_claim_of_a_dead_process_is_taken_over(
    store: Store, project: Project, project_dir: Path, flush: Callable[[], int]
) -> None:
    spool.add(_entry(project_dir))
    (name,) = spool.pending()
    directory = Path(spool.spool_dir())
    dead = 2**22 + 4321
    os.rename(directory / name, directory / f"{name}.{dead}.claim")
    spool.add(_entry(project_dir, "src/live.py"))
    live = [name for name in spool.pending() if name.endswith(".json")][0]
    os.rename(directory / live, directory / f"{live}.{os.getppid()}.claim")  # a live flusher holds it
    assert flush() == 1
    assert _file_nodes(store, project) == ["src/a.py"]
    assert spool.pending() == [f"{live}.{os.getppid()}.claim"]


def test_unreadable_capture_is_dropped_and_logged(
    store: Store, project: Project, project_dir: Path, flush: Callable[[], int]
) -> None:
    directory = Path(spool.spool_dir())
    directory.mkdir(parents=True)
    (directory / "00000000000000000001-1-1.json").write_text("{not json", encoding="utf-8")
    (directory / "00000000000000000002-1-1.json").write_text('{"kind": "file"}', encoding="utf-8")
    spool.add(_entry(project_dir))
    assert flush() == 3
    assert _file_nodes(store, project) == ["src/a.py"]
    assert spool.pending() == []
    text = Path(log.log_path()).read_text(encoding="utf-8")
    assert text.count("spool") == 2


def test_captures_of_several_projects_land_in_their_own(tmp_path: Path, store: Store, flush: Callable[[], int]) -> None:
    from agentctx_store import resolve_project

    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        spool.add(_entry(tmp_path / name, "main.py", session=name))
    flush()
    assert _file_nodes(store, resolve_project(tmp_path / "one")) == ["main.py"]
    assert _file_nodes(store, resolve_project(tmp_path / "two")) == ["main.py"]
    assert store.conn.execute("SELECT count(*) FROM nodes WHERE kind = 'file'").fetchone()[0] == 2


def test_a_bad_capture_never_holds_the_others_back(
    store: Store, project: Project, project_dir: Path, flush: Callable[[], int]
) -> None:
    spool.add(
        {"session_id": "s", "cwd": str(project_dir), "kind": "bash", "command": "x", "error": ["only a signature"]}
    )
    spool.add({"session_id": "s", "cwd": "relative/dir", "kind": "file", "path": "a.py"})
    spool.add(_entry(project_dir, "src/good.py"))
    assert flush() == 3
    assert _file_nodes(store, project) == ["src/good.py"]
    assert store.list_records(project, types=["bugfix"]) == []
    assert spool.pending() == []


def test_a_capture_older_than_a_week_is_dropped(
    store: Store, project: Project, project_dir: Path, flush: Callable[[], int]
) -> None:
    import time

    directory = Path(spool.spool_dir())
    directory.mkdir(parents=True)
    old = int((time.time() - 8 * 24 * 3600) * 1e9)
    entry = {"session_id": "s", "cwd": str(project_dir), "kind": "file", "path": "old.py"}
    (directory / f"{old:020d}-1-1.json").write_text(json.dumps(entry), encoding="utf-8")
    assert flush() == 1
    assert _file_nodes(store, project) == []
