"""Where the warm search service listens (`agentctx_store.service_link.socket_path`)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from agentctx_store import service_link


def test_a_short_data_dir_keeps_its_socket_inside(tmp_path: Path) -> None:
    home = tmp_path / "h"
    assert service_link.socket_path(str(home)) == str(home / service_link.SOCKET_NAME)


def test_a_long_data_dir_gets_a_short_private_socket_path(tmp_path: Path) -> None:
    home = tmp_path / ("d" * 120)
    path = service_link.socket_path(str(home))
    assert len(path.encode()) <= service_link.MAX_SOCKET_PATH
    folder = os.path.dirname(path)
    info = os.lstat(folder)
    assert stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077
    other = service_link.socket_path(str(tmp_path / ("e" * 120)))
    assert other != path and os.path.dirname(other) == folder  # one socket per data dir


def test_a_shared_folder_someone_else_could_write_is_never_used(tmp_path: Path) -> None:
    home = str(tmp_path / ("d" * 120))
    folder = os.path.dirname(service_link.socket_path(home))
    mode = stat.S_IMODE(os.lstat(folder).st_mode)
    os.chmod(folder, 0o777)
    try:
        assert service_link.socket_path(home) == os.path.join(home, service_link.SOCKET_NAME)
    finally:
        os.chmod(folder, mode)
