"""Serving the dashboard: bind 127.0.0.1 (never all interfaces), run uvicorn in the foreground,
open the browser once the server answers, and stop cleanly on Ctrl-C.

The socket is bound here, before uvicorn starts, so a taken port is one clear error instead of a
uvicorn log line, and so tests can ask for port 0 and learn which port they got.
"""

from __future__ import annotations

import errno
import socket
import threading
import time
import webbrowser
from collections.abc import Callable
from pathlib import Path

import uvicorn
from agentctx_store import AgentctxError, Project, Store

from agentctx_ui.app import create_app

HOST = "127.0.0.1"
DEFAULT_PORT = 7327
BROWSER_WAIT_SECONDS = 10.0


class PortInUseError(AgentctxError):
    """The chosen port cannot be used: taken (often by another `agentctx ui`) or privileged."""


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:`port` (0 = any free port).

    Raises:
        PortInUseError: the port is taken; the message names a way out.
    """
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and
    # without it every response on a kept-alive connection waits ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EACCES:
            raise PortInUseError(
                f"Port {port} on {HOST} needs administrator rights; pick one above 1024, e.g. --port {DEFAULT_PORT}."
            ) from None
        if exc.errno == errno.EADDRINUSE:
            raise PortInUseError(
                f"Port {port} on {HOST} is already in use (another `agentctx ui`?); "
                f"open http://{HOST}:{port}/ if it is, or pick another port with --port {port + 1}."
            ) from None
        raise
    sock.listen(128)
    return sock


def make_server(project: Project, sock: socket.socket, *, db_path: Path | None = None) -> uvicorn.Server:
    port = sock.getsockname()[1]
    app = create_app(project=project, port=port, db_path=db_path)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", server_header=False)
    return uvicorn.Server(config)


def _open_when_ready(server: uvicorn.Server, url: str, opener: Callable[[str], object]) -> None:
    deadline = time.monotonic() + BROWSER_WAIT_SECONDS
    while not server.started and not server.should_exit and time.monotonic() < deadline:
        time.sleep(0.05)
    if server.started:
        opener(url)


def serve(
    project: Project,
    *,
    port: int = DEFAULT_PORT,
    open_browser: bool = True,
    echo: Callable[[str], None] = print,
    opener: Callable[[str], object] = webbrowser.open,
) -> None:
    """Run the dashboard in the foreground until Ctrl-C (uvicorn turns SIGINT/SIGTERM into a clean stop)."""
    sock = bind(port)
    Store.open().close()  # create the store now if this is the first run: requests never create it
    url = f"http://{HOST}:{sock.getsockname()[1]}/"
    server = make_server(project, sock)
    echo(f"agentctx dashboard for {project.name}: {url}  (Ctrl-C to stop)")
    if open_browser:
        threading.Thread(target=_open_when_ready, args=(server, url, opener), daemon=True).start()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass  # uvicorn has already shut down; it re-raises the Ctrl-C it captured for the caller
    finally:
        sock.close()
    echo("Dashboard stopped.")
