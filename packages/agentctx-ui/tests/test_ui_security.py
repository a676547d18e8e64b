"""The dashboard's guard (docs/ui.md#security): foreign Host (DNS rebinding), cross-site requests
(CSRF), the start-up token, no cookies, and GET never writes — each checked against the real app
and a real store file."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from agentctx_store import Store
from fastapi.testclient import TestClient

from agentctx_ui.app import create_app

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from conftest import Seeded

    Snapshot = Callable[[], list[tuple[object, ...]]]

TOKEN = "test-token-0123456789"
WRITE = {"X-Agentctx-Token": TOKEN}


def write_requests(seeded: Seeded) -> list[tuple[str, str, dict[str, object] | None]]:
    return [
        ("POST", "/api/records", {"type": "decision", "title": "Injected", "body": "by an attacker"}),
        ("PATCH", f"/api/records/{seeded.convention}", {"title": "Hijacked"}),
        ("DELETE", f"/api/records/{seeded.convention}", None),
        ("POST", f"/api/records/{seeded.decision}/supersede", {"body": "attacker's truth"}),
    ]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:7327", "127.0.0.1:8080", "localhost.evil.com:7327", ""])
def test_a_foreign_host_header_is_refused(client: TestClient, host: str) -> None:
    response = client.get("/api/projects", headers={"Host": host})
    assert response.status_code == 403
    assert "localhost or 127.0.0.1" in response.json()["error"]
    assert client.get("/", headers={"Host": host}).status_code == 403  # the page (and its token) too


@pytest.mark.parametrize("host", ["127.0.0.1:7327", "localhost:7327", "LOCALHOST:7327"])
def test_local_host_headers_with_the_port_are_served(client: TestClient, host: str) -> None:
    assert client.get("/api/projects", headers={"Host": host}).status_code == 200


def test_cross_site_requests_are_refused_reads_and_writes(
    client: TestClient, seeded: Seeded, store_snapshot: Snapshot
) -> None:
    before = store_snapshot()
    cross = {"Sec-Fetch-Site": "cross-site"}
    assert client.get("/api/records", headers=cross).status_code == 403
    assert client.get("/", headers=cross).status_code == 403
    for method, path, body in write_requests(seeded):
        response = client.request(method, path, json=body, headers={**WRITE, **cross})
        assert response.status_code == 403, (method, path)
    # another local port is "same-site" for a browser: refused on the API too
    assert client.get("/api/records", headers={"Sec-Fetch-Site": "same-site"}).status_code == 403
    assert store_snapshot() == before


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:8080", "https://127.0.0.1:7327"])
def test_a_foreign_origin_is_refused(client: TestClient, seeded: Seeded, origin: str, store_snapshot: Snapshot) -> None:
    before = store_snapshot()
    assert client.get("/api/records", headers={"Origin": origin}).status_code == 403
    for method, path, body in write_requests(seeded):
        assert client.request(method, path, json=body, headers={**WRITE, "Origin": origin}).status_code == 403
    assert store_snapshot() == before


def test_a_write_from_the_page_itself_carries_its_own_origin(client: TestClient, seeded: Seeded) -> None:
    headers = {**WRITE, "Origin": "http://127.0.0.1:7327", "Sec-Fetch-Site": "same-origin"}
    response = client.patch(f"/api/records/{seeded.convention}", json={"pinned": True}, headers=headers)
    assert response.status_code == 200


def test_same_origin_and_typed_in_navigation_are_served(client: TestClient) -> None:
    assert client.get("/api/records", headers={"Sec-Fetch-Site": "same-origin"}).status_code == 200
    assert client.get("/", headers={"Sec-Fetch-Site": "none"}).status_code == 200


@pytest.mark.parametrize("token", [None, "", "wrong-token", TOKEN + "x", TOKEN.upper()])
def test_every_write_needs_the_exact_token(
    client: TestClient, seeded: Seeded, token: str | None, store_snapshot: Snapshot
) -> None:
    before = store_snapshot()
    headers = {} if token is None else {"X-Agentctx-Token": token}
    for method, path, body in write_requests(seeded):
        response = client.request(method, path, json=body, headers=headers)
        assert response.status_code == 403, (method, path)
        assert "token" in response.json()["error"]
    assert store_snapshot() == before


def test_the_token_is_random_per_start_and_embedded_in_the_page(seeded: Seeded) -> None:
    tokens = []
    for _ in range(2):
        app = create_app(project=seeded.project, port=7327)
        with TestClient(app, base_url="http://127.0.0.1:7327") as client:
            page = client.get("/")
            match = re.search(r'<meta name="agentctx-token" content="([^"]+)">', page.text)
            assert match, "token missing from the page"
            tokens.append(match.group(1))
            assert page.headers["cache-control"] == "no-store"
            created = client.post(
                "/api/records",
                json={"type": "convention", "title": "From the page", "body": "b"},
                headers={"X-Agentctx-Token": match.group(1)},
            )
            assert created.status_code == 201
    assert tokens[0] != tokens[1] and len(tokens[0]) >= 32


def test_a_token_of_another_start_is_refused(seeded: Seeded) -> None:
    app = create_app(project=seeded.project, port=7327)  # random token, not the test one
    with TestClient(app, base_url="http://127.0.0.1:7327") as client:
        response = client.patch(f"/api/records/{seeded.convention}", json={"title": "x"}, headers=WRITE)
        assert response.status_code == 403


def test_get_never_writes(client: TestClient, seeded: Seeded, store_snapshot: Snapshot) -> None:
    """Every GET endpoint, including ones given write-like parameters, leaves the store byte-for-byte equal."""
    before = store_snapshot()
    gets = [
        "/",
        "/api/meta",
        "/api/projects",
        "/api/records",
        "/api/records?q=storage&superseded=include",
        f"/api/records/{seeded.decision}",
        f"/api/records/{seeded.old_decision}/history",
        "/api/graph",
        "/api/profile",
        "/api/sessions",
        "/api/sync",
        "/api/openapi.json",
        f"/api/records/{seeded.decision}?pinned=true&title=changed",
        "/static/app.js",
    ]
    for path in gets:
        assert client.get(path).status_code == 200, path
    assert store_snapshot() == before
    assert (Path(seeded.project.root) / "CLAUDE.md").read_text(
        encoding="utf-8"
    ) == "# Alpha\n\n- Use MySQL for storage.\n"


def test_no_write_route_answers_get(client: TestClient, seeded: Seeded) -> None:
    assert client.get(f"/api/records/{seeded.decision}/supersede").status_code in (404, 405)
    with Store.open() as store:
        assert store.get(seeded.project, seeded.decision).is_current


def test_no_cookies_and_protective_headers(client: TestClient, seeded: Seeded) -> None:
    responses = [
        client.get("/"),
        client.get("/api/records"),
        client.patch(f"/api/records/{seeded.convention}", json={"pinned": True}, headers=WRITE),
        client.get("/api/records", headers={"Host": "evil.example"}),
    ]
    for response in responses:
        assert "set-cookie" not in response.headers
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
        assert response.headers["x-frame-options"] == "DENY"
    assert "access-control-allow-origin" not in responses[1].headers


def test_the_server_binds_loopback_only() -> None:
    from agentctx_ui.server import HOST, bind

    sock = bind(0)
    try:
        assert HOST == "127.0.0.1" and sock.getsockname()[0] == "127.0.0.1"
        # marked TCP so asyncio sets TCP_NODELAY on accepted connections (else ~40 ms per kept-alive response)
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()


def test_a_get_does_not_even_create_a_missing_store(tmp_path: Path) -> None:
    from agentctx_store import Project, paths

    app = create_app(project=Project(project_id="p-none", root=str(tmp_path), name="none"), token=TOKEN)
    with TestClient(app, base_url="http://127.0.0.1:7327") as client:
        response = client.get("/api/records")
    assert response.status_code == 503 and "No store" in response.json()["error"]
    assert not Path(paths.db_path()).exists()


@pytest.fixture
def live_port(seeded: Seeded) -> Iterator[int]:
    """The dashboard served by uvicorn in a thread, as `agentctx ui` serves it: its port."""
    import threading
    import time

    from agentctx_ui.server import bind, make_server

    sock = bind(0)
    server = make_server(seeded.project, sock)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "uvicorn did not start"
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()


def raw_request(port: int, request: bytes) -> bytes:
    """Send `request` as it is over a new connection and read the whole answer (the server closes)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        chunks: list[bytes] = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize("path", [b"/api/projects", b"/"])
def test_a_request_without_a_host_header_is_refused_by_the_real_server(live_port: int, path: bytes) -> None:
    # HTTP/1.0 allows leaving `Host` out; a rebinding page cannot be told apart from it, so it is refused
    answer = raw_request(live_port, b"GET " + path + b" HTTP/1.0\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 403"), answer[:200]
    assert b"only answers requests addressed to localhost" in answer
    assert b"agentctx-token" not in answer.lower()  # the page (and its token) is not served


def test_the_real_server_serves_a_request_with_its_own_host(live_port: int) -> None:
    answer = raw_request(live_port, b"GET /api/projects HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n\r\n" % live_port)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]


@pytest.mark.parametrize("host", ["evil.example:7327", ""])
def test_a_websocket_from_a_foreign_or_missing_host_is_closed_before_any_route(client: TestClient, host: str) -> None:
    """A rebinding page can open a WebSocket as well as a request: the guard refuses it the same way."""
    from starlette.websockets import WebSocketDisconnect

    with pytest.raises(WebSocketDisconnect) as closed, client.websocket_connect("/", headers={"host": host}):
        pass
    assert closed.value.code == 1008
