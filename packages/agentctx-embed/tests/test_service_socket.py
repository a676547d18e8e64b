"""The warm service's socket limits (`agentctx_embed.service._Server`, `_Handler`): a whole
request within `REQUEST_READ_S`, at most `MAX_CONNECTIONS` handled at once, a frame nested too
deeply answered with an error, and a socket path that fits is bound. A real service on a real
Unix socket in this process, with the tiny model."""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentctx_store import paths

from agentctx_embed import service

if not hasattr(socket, "AF_UNIX"):
    pytest.skip("Unix domain sockets only", allow_module_level=True)


@pytest.fixture
def running(tiny_model: Path) -> Iterator[service.Running]:
    started = service.start(paths.home())
    assert started is not None
    try:
        yield started
    finally:
        started.close()


def connect(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(path)
    return sock


def read_all(sock: socket.socket) -> bytes:
    chunks: list[bytes] = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def ask(path: str, request: bytes) -> dict[str, object]:
    with connect(path) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        return json.loads(read_all(sock))


def handler_threads() -> int:
    return sum(1 for thread in threading.enumerate() if "process_request_thread" in thread.name)


def test_a_request_trickling_in_is_closed_at_the_deadline(
    running: service.Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service, "REQUEST_READ_S", 0.6)
    with connect(running.path) as sock:
        began = time.monotonic()
        sock.settimeout(0.15)
        answer = b""
        while time.monotonic() - began < 5:  # one byte every 0.15 s: each read alone is quick
            try:
                sock.send(b" ")
                answer = sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                break
            if answer:
                break
        closed_after = time.monotonic() - began
    assert b"did not arrive within" in answer
    assert closed_after < 4.5  # the 0.6 s deadline, with a loaded machine's margin; unbounded it trickles 5 s


def test_connection_threads_are_bounded_and_a_real_request_is_served_after_the_deadline(
    running: service.Running,
) -> None:
    idle = [connect(running.path) for _ in range(service.MAX_CONNECTIONS + 36)]
    try:
        time.sleep(0.5)
        assert handler_threads() <= service.MAX_CONNECTIONS
        began = time.monotonic()
        reply = ask(running.path, b'{"v": 1, "op": "ping"}')  # waits in the listen queue for a free thread
        assert reply.get("ok") is True
        assert time.monotonic() - began < service.REQUEST_READ_S + 8
    finally:
        for sock in idle:
            sock.close()


def test_a_frame_nested_too_deeply_gets_an_error_reply_and_one_log_line(
    running: service.Running, caplog: pytest.LogCaptureFixture
) -> None:
    depth = 100_000
    with caplog.at_level(logging.INFO, logger="agentctx.service"):
        reply = ask(running.path, b"[" * depth + b"]" * depth)
        nested = ask(running.path, b'{"v": 1, "op": "ping", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}")
    assert reply == {"error": "the request is nested too deeply"}
    assert nested == reply
    lines = [record for record in caplog.records if record.name == "agentctx.service"]
    assert len(lines) == 2 and all(record.exc_info is None for record in lines)
    assert ask(running.path, b'{"v": 1, "op": "ping"}').get("ok") is True  # still serving


def test_a_data_dir_whose_socket_path_just_fits_is_served(tiny_model: Path, tmp_path: Path) -> None:
    base = str(tmp_path / "h")
    home = base + "x" * (100 - len(os.path.join(base, "service.sock").encode()))
    assert len(os.path.join(home, "service.sock").encode()) == 100  # the longest kept in the data dir
    started = service.start(home)
    assert started is not None
    try:
        assert started.path == os.path.join(home, "service.sock")
        assert ask(started.path, b'{"v": 1, "op": "ping"}').get("ok") is True
    finally:
        started.close()
    assert not [name for name in os.listdir(home) if name.endswith((".tmp", ".sock"))]  # nothing left behind


def test_a_refused_short_folder_is_one_line_and_no_model_load(
    tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentctx_store import service_link

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # a folder anyone may write: a socket there could be swapped
    monkeypatch.setattr(service_link, "short_folder", lambda: str(shared))
    home = str(tmp_path / ("d" * 120))
    monkeypatch.setenv("AGENTCTX_HOME", home)
    said: list[str] = []
    assert service.serve_foreground(say=said.append) == 1
    assert len(said) == 1 and "\n" not in said[0]
    assert os.path.join(home, "service.sock") in said[0]
    assert str(shared) in said[0] and "is open to others (mode 0777)" in said[0]
    assert "AGENTCTX_HOME" in said[0]
    fd = service_link.try_lock(home)
    assert fd is not None  # the lock was released
    os.close(fd)
