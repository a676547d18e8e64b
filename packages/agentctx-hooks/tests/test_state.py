"""Per-session state files and spawn locks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentctx_hooks import state


def test_session_ids_cannot_escape_the_state_dir() -> None:
    for hostile in ("../../etc/x", "/etc/passwd", "a/b\\c", "..", "\x00", "x" * 500):
        path = Path(state.state_path(hostile))
        assert path.parent == Path(state.state_dir())
        assert len(path.name) <= 101


def test_state_dir_is_private_and_refused_when_it_is_a_symlink(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = Path(state.state_dir())
    assert directory.stat().st_mode & 0o777 == 0o700
    os.rmdir(directory)
    (tmp_path / "elsewhere").mkdir()
    directory.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(PermissionError):
        state.state_dir()
    assert state.load("any") == {}  # readers treat it as no state


def test_corrupt_state_is_empty_state() -> None:
    Path(state.state_path("s")).write_text("{not json", encoding="utf-8")
    assert state.load("s") == {}
    state.save("s", {"injected": ["A", 3, None]})
    assert state.injected_ids(state.load("s")) == ["A"]


def test_lock_is_exclusive_until_released_or_stale() -> None:
    first = state.try_lock("extract-s", max_age_seconds=600)
    assert first is not None
    assert state.try_lock("extract-s", max_age_seconds=600) is None  # held by this live process
    os.unlink(first)
    again = state.try_lock("extract-s", max_age_seconds=600)
    assert again is not None
    state.set_lock_owner(again, 2**22 + 12345)  # a pid that does not exist: a leftover
    assert state.try_lock("extract-s", max_age_seconds=600) is not None


def test_old_lock_is_broken() -> None:
    path = state.try_lock("consolidate-p", max_age_seconds=600)
    assert path is not None
    os.utime(path, (1, 1))
    assert state.try_lock("consolidate-p", max_age_seconds=600) is not None
