"""The client end of the warm search service (docs/adr/0008-warm-search-service.md), stdlib only.

The service (`agentctx_embed.service`) listens on a Unix domain socket in the data dir; this
module knows where that socket is and how to talk to it. It imports nothing that opens the
store, so the prompt hook can ask the service without loading `sqlite3`; and `_socket` only
when there is a socket to talk to (the C module, not `socket`, which imports `enum` and
`selectors`: the client needs nothing the C type lacks).

Wire format: one request per connection. The client sends one JSON object (UTF-8) and shuts its
side down; the service answers with one JSON object and closes. Every request carries
`PROTOCOL`; a service speaking another one answers `{"error": "protocol"}`.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from agentctx_store.projects import Project
    from agentctx_store.retrieval import SearchResult
    from agentctx_store.store import Store

PROTOCOL = 1
SOCKET_NAME = "service.sock"
LOCK_NAME = "service.lock"
# sockaddr_un holds 108 bytes on Linux and 104 on macOS; a longer data dir path gets its
# socket in the private per-user temp folder instead, named after the data dir.
MAX_SOCKET_PATH = 100
MAX_REPLY_BYTES = 1 << 20
# The service's process runs numpy's BLAS on one thread (set before numpy loads: by `agentctx
# serve`, and in the environment `agentctx mcp` starts it with). The vector product is
# bandwidth-bound; a second BLAS thread only competes with SQLite for the cores and makes the
# product slower and less steady (bench/README.md#the-warm-services-vectors). Cosines may differ
# in the last bit.
SERVICE_ENV = {"OPENBLAS_NUM_THREADS": "1"}


class ServiceUnavailable(Exception):
    """No answer from the service in time (absent, stale socket, hung, other version)."""


def socket_path(home: str | None = None) -> str:
    """Where the service of this data dir (`$AGENTCTX_HOME`) listens."""
    from agentctx_store import paths

    base = home or paths.home()
    direct = os.path.join(base, SOCKET_NAME)
    if len(direct.encode("utf-8")) <= MAX_SOCKET_PATH or not hasattr(os, "getuid"):
        return direct
    import hashlib

    digest = hashlib.sha256(os.path.abspath(base).encode("utf-8")).hexdigest()[:20]
    folder = short_folder()
    if _folder_problem(folder) is not None:
        return direct  # too long to bind: the service stays down and prompts take the keyword path
    return os.path.join(folder, f"{digest}.sock")


def short_folder() -> str:
    """The per-user folder for the sockets of data dirs whose own path is too long to bind."""
    return os.path.join("/tmp" if os.path.isdir("/tmp") else "/var/tmp", f"agentctx-svc-{os.getuid()}")


def socket_problem(home: str | None = None) -> str | None:
    """Why the service of this data dir cannot listen, as one line; None when its socket path
    can be bound. A data dir path too long for a Unix socket whose short folder is refused
    (another user's, or one others may write or list) has no usable socket."""
    from agentctx_store import paths

    base = home or paths.home()
    direct = os.path.join(base, SOCKET_NAME)
    if len(direct.encode("utf-8")) <= MAX_SOCKET_PATH or not hasattr(os, "getuid"):
        return None
    folder = short_folder()
    problem = _folder_problem(folder)
    if problem is None:
        return None
    return (
        f"the socket path {direct} is too long for a Unix socket ({len(direct.encode('utf-8'))} bytes, "
        f"at most {MAX_SOCKET_PATH}) and the short folder used instead, {folder}, {problem}; "
        "remove that folder, or set AGENTCTX_HOME to a shorter path"
    )


def _folder_problem(folder: str) -> str | None:
    """None when `folder` exists (made now if missing), is a real directory of ours, and no one
    else may write or list it; else what is wrong with it (a folder another user made in /tmp
    first, or a link, is never used)."""
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        return f"cannot be made ({exc.strerror})"
    try:
        info = os.lstat(folder)
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    import stat

    if not stat.S_ISDIR(info.st_mode):
        return "is not a directory"
    if info.st_uid != os.getuid():
        return f"belongs to uid {info.st_uid}"
    if info.st_mode & 0o077:
        return f"is open to others (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def lock_path(home: str | None = None) -> str:
    from agentctx_store import paths

    return os.path.join(home or paths.home(), LOCK_NAME)


def try_lock(home: str | None = None) -> int | None:
    """Take the service lock of a data dir (`flock`, non-blocking): the open descriptor, or None
    when another process holds it. The kernel drops the lock when every descriptor of it is
    closed, so a killed holder never blocks the next one."""
    from agentctx_store import paths

    base = home or paths.home()
    os.makedirs(base, mode=0o700, exist_ok=True)
    fd = os.open(lock_path(base), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (OSError, ImportError):
        os.close(fd)
        return None
    return fd


def lock_note(home: str | None = None) -> dict[str, Any]:
    """What the lock file says (the running service's description, or why the last one could
    not start); {} when nothing readable is there."""
    import json

    from agentctx_store.jsontext import is_object

    try:
        with open(lock_path(home), encoding="utf-8") as handle:
            data = json.loads(handle.read() or "{}")
    except (OSError, ValueError):
        return {}
    return data if is_object(data) else {}


def exchange(request: bytes, *, timeout: float, path: str | None = None) -> bytes:
    """Send one request and read the whole answer within `timeout` seconds in total.

    Raises:
        ServiceUnavailable: no socket, nobody listening, too slow, or a truncated answer.
    """
    import _socket as socket

    if not hasattr(socket, "AF_UNIX"):
        raise ServiceUnavailable("no Unix domain sockets on this platform")
    end = time.monotonic() + timeout
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(max(0.001, timeout))
        _connect(sock, path or socket_path(), end)
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        chunks: list[bytes] = []
        size = 0
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise ServiceUnavailable("the service did not answer in time")
            sock.settimeout(left)
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_REPLY_BYTES:
                raise ServiceUnavailable("the service's answer is too large")
    except OSError as exc:  # FileNotFoundError, ConnectionRefusedError, TimeoutError, ...
        raise ServiceUnavailable(f"{type(exc).__name__}: {exc}") from None
    finally:
        sock.close()
    if not chunks:
        raise ServiceUnavailable("the service closed the connection without an answer")
    return b"".join(chunks)


def _connect(sock: Any, path: str, end: float) -> None:
    """Connect, waiting while the service's listen queue is full: a Unix socket refuses a
    connection at once then (EAGAIN) instead of waiting, so a burst of prompts would each fall
    back to the keyword path. Tried again every few milliseconds until `end`.

    Raises:
        OSError: no socket, nobody listening, or the queue still full at `end`.
    """
    pause = 0.001
    while True:
        try:
            sock.connect(path)
            return
        except BlockingIOError:
            left = end - time.monotonic()
            if left <= pause:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.02)


def service_info(timeout: float = 1.0) -> dict[str, Any] | None:
    """The running service's own description (`ping`), None when none answers, or
    `{"error": ...}` when a socket exists but the service does not answer properly."""
    import json

    from agentctx_store.jsontext import is_object

    path = socket_path()
    if not os.path.exists(path):
        return None
    try:
        reply = json.loads(exchange(b'{"v": %d, "op": "ping"}' % PROTOCOL, timeout=timeout, path=path))
    except ServiceUnavailable as exc:
        return {"error": f"a socket is at {path} but no service answers ({exc}); a stale file from a killed one"}
    except ValueError:
        return {"error": "the service's answer is not JSON"}
    if not is_object(reply) or not reply.get("ok"):
        return {"error": f"the service answered {reply!r} (another agentctx version?)"}
    return reply


def notify_written(home: str | None = None) -> None:
    """Tell the service records were written, so it embeds them now. Never blocks, never raises:
    a service that is down finds the pending records itself when it starts or is next asked."""
    try:
        path = socket_path(home)
        if not os.path.exists(path):
            return
        import _socket as socket

        if not hasattr(socket, "AF_UNIX"):
            return
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.setblocking(False)
            sock.connect(path)
            sock.send(b'{"op":"written","v":%d}' % PROTOCOL)
            sock.shutdown(socket.SHUT_WR)
        finally:
            sock.close()
    except OSError:
        return


def service_search(
    store: Store,
    project: Project,
    text: str,
    *,
    limit: int,
    types: Sequence[str] | None = None,
    scope: str | None = None,
    floor: bool = True,
    timeout: float = 2.0,
) -> tuple[SearchResult, str] | None:
    """Hybrid search through the service (`agentctx search`, `ctx_search`): the result and its
    mode (`hybrid`, or `keyword` when the service degraded); None when the service is down.

    The service ranks; the records come from `store` with the keyword search's own filters
    (current, visible namespaces), so what the caller shows is never staler than its store.
    """
    import json
    import os

    if os.environ.get("AGENTCTX_NO_SERVICE") == "1" or not os.path.exists(socket_path()):
        return None
    from agentctx_store.jsontext import is_object
    from agentctx_store.retrieval import SearchHit, SearchResult, query_terms

    request = {
        "v": PROTOCOL,
        "op": "search",
        "cwd": str(project.root),
        "project_id": project.project_id,
        "query": text,
        "limit": limit,
        "types": list(types) if types else None,
        "scope": scope,
        "floor": floor,
    }
    try:
        reply = json.loads(exchange(json.dumps(request).encode("utf-8"), timeout=timeout))
    except (ServiceUnavailable, ValueError):
        return None
    if not is_object(reply) or not reply.get("ok") or reply.get("project_id") != project.project_id:
        return None
    ranking: list[Any] = reply.get("hits") or []
    ranked = [(str(item[0]), float(item[1]), float(item[2])) for item in ranking]
    found = store.current_records(project, [item[0] for item in ranked], scope=scope)
    hits = [SearchHit(record=found[rid], score=score, relevance=rel) for rid, score, rel in ranked if rid in found]
    result = SearchResult(hits=hits, degraded=reply.get("degraded"), terms=query_terms(text))
    return result, str(reply.get("mode") or "hybrid")
