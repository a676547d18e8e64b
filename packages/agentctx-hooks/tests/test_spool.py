"""The capture spool: claimed once, taken over from dead processes, never applied half-way."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
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


def test_a_flush_inside_another_transaction_leaves_the_captures(
    store: Store, project: Project, project_dir: Path, flush: Callable[[], int]
) -> None:
    spool.add(_entry(project_dir))
    with store.transaction():  # its COMMIT may still fail (a full disk): nothing may leave the spool yet
        assert spool.flush(store) == 0
    assert len(spool.pending()) == 1
    assert flush() == 1 and _file_nodes(store, project) == ["src/a.py"]


def test_a_store_error_while_applying_keeps_every_capture(
    store: Store, project: Project, project_dir: Path, flush: Callable[[], int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentctx_store.errors import StoreError

    from agentctx_hooks import apply_capture

    spool.add(_entry(project_dir))
    real_apply = apply_capture.apply

    def failing(store: Store, entry: dict[str, object]) -> None:
        raise StoreError("The store cannot be written: the disk is full.")

    monkeypatch.setattr(apply_capture, "apply", failing)
    with Store.open() as opened:
        assert spool.flush_quietly(opened, "UserPromptSubmit") == 0
    monkeypatch.setattr(apply_capture, "apply", real_apply)
    (claim,) = spool.pending()  # claimed by this hook's process, taken over once it is gone:
    directory = Path(spool.spool_dir())
    os.rename(directory / claim, directory / claim.replace(f".{os.getpid()}.claim", f".{2**22 + 4321}.claim"))
    assert flush() == 1 and _file_nodes(store, project) == ["src/a.py"]


def test_a_capture_that_cannot_be_written_leaves_no_temp_file(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_open = builtins.open

    class Full:
        def __init__(self, handle: object) -> None:
            self.handle = handle

        def __enter__(self) -> Full:
            return self

        def __exit__(self, *exc: object) -> None:
            self.handle.close()  # pyright: ignore[reportAttributeAccessIssue]

        def write(self, text: str) -> int:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(builtins, "open", lambda *args, **kwargs: Full(real_open(*args, **kwargs)))
    with pytest.raises(OSError):
        spool.add({"session_id": "s", "cwd": "/x", "kind": "file", "path": "/x/a"})
    monkeypatch.setattr(builtins, "open", real_open)
    assert os.listdir(spool.spool_dir()) == []
