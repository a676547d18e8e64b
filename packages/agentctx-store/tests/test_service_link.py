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


def test_a_full_listen_queue_is_waited_for_not_taken_for_no_service(tmp_path: Path) -> None:
    import socket
    import threading
    import time

    path = str(tmp_path / "s.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    queued: list[socket.socket] = []
    try:
        while True:  # fill the queue: a Unix socket then refuses at once (EAGAIN) instead of waiting
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.setblocking(False)
            try:
                client.connect(path)
            except BlockingIOError:
                client.close()
                break
            queued.append(client)
            assert len(queued) < 100

        def answer_later() -> None:
            time.sleep(0.2)  # the client meanwhile finds the queue full
            for _ in queued:
                server.accept()[0].close()
            conn, _ = server.accept()
            with conn:
                conn.settimeout(5)
                while conn.recv(65536):
                    pass
                conn.sendall(b'{"ok": true}')

        answering = threading.Thread(target=answer_later)
        answering.start()
        try:
            assert service_link.exchange(b'{"v": 1, "op": "ping"}', timeout=5, path=path) == b'{"ok": true}'
        finally:
            answering.join(10)
    finally:
        for client in queued:
            client.close()
        server.close()


def test_nobody_listening_still_fails_at_once(tmp_path: Path) -> None:
    import socket
    import time

    import pytest

    path = str(tmp_path / "s.sock")
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(path)
    dead.close()  # a socket file left by a killed service
    began = time.monotonic()
    with pytest.raises(service_link.ServiceUnavailable, match="ConnectionRefusedError"):
        service_link.exchange(b"{}", timeout=2, path=path)
    assert time.monotonic() - began < 1.5  # at once: retrying would wait out the 2 s timeout
