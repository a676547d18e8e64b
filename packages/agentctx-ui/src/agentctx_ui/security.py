"""The dashboard's guard (docs/adr/0014-dashboard-separate-and-guarded.md), applied to every request
before routing.

The server listens on 127.0.0.1, but a web page the user has open elsewhere can still reach it:
- DNS rebinding: a hostile name re-resolved to 127.0.0.1 sends its own name as `Host`, so only
  `localhost:<port>` and `127.0.0.1:<port>` are served (a request with no `Host`, which HTTP/1.0
  allows, is refused as well: nothing tells it apart from a rebinding page's);
- cross-site requests (CSRF): browsers label them `Sec-Fetch-Site: cross-site`; the API also
  refuses `same-site` (another local port), because the dashboard's own page is same-origin; an
  `Origin` header (sent with every cross-origin request, and same-origin writes) must be this server;
- writes need the start-up token, which only the served page knows (a `<meta>` tag), sent as
  the `X-Agentctx-Token` header. No cookies are ever set, so there is no ambient credential.
GET and HEAD never write (the routes are read-only), so they need no token.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

TOKEN_HEADER = "x-agentctx-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Served with every response: no framing (clickjacking), nothing but our own files, no referrer.
SECURITY_HEADERS = (
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        b"frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


def allowed_hosts(port: int) -> frozenset[str]:
    """The `Host` values a browser sends for this server (the port is omitted only for 80)."""
    hosts = {f"localhost:{port}", f"127.0.0.1:{port}"}
    if port == 80:
        hosts |= {"localhost", "127.0.0.1"}
    return frozenset(hosts)


def refusal(scope: Scope, token: str, hosts: frozenset[str]) -> str | None:
    """Why this request must be refused, or None when it may go through."""
    headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope.get("headers", [])}
    host = headers.get("host", "").strip().lower()
    if host not in hosts:
        return "This dashboard only answers requests addressed to localhost or 127.0.0.1 on its own port."
    origin = headers.get("origin")
    if origin is not None and origin.strip().lower().removeprefix("http://") not in hosts:
        return "Requests from other sites are refused; open the dashboard from the address `agentctx ui` printed."
    fetch_site = headers.get("sec-fetch-site", "").strip().lower()
    path: str = scope.get("path", "")
    if fetch_site == "cross-site" or (fetch_site == "same-site" and path.startswith("/api/")):
        return "Requests from other sites are refused; open the dashboard from the address `agentctx ui` printed."
    if scope.get("method", "GET").upper() not in SAFE_METHODS:
        sent = headers.get(TOKEN_HEADER, "")
        if not sent or not hmac.compare_digest(sent.encode("utf-8", "replace"), token.encode("utf-8")):
            return "This change needs the dashboard's start-up token; reload the page started by `agentctx ui`."
    return None


class GuardMiddleware:
    """Pure ASGI middleware: refuses with 403 JSON, and adds the security headers to every answer."""

    def __init__(self, app: ASGIApp, *, token: str, port: int) -> None:
        self.app = app
        self.token = token
        self.hosts = allowed_hosts(port)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # no route takes a WebSocket; the same Host/Origin rule refuses a foreign one first
        if scope["type"] == "websocket" and refusal(scope, self.token, self.hosts) is not None:
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        reason = refusal(scope, self.token, self.hosts)
        if reason is not None:
            body = json.dumps({"error": reason}).encode("utf-8")
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 403, "headers": [*headers, *SECURITY_HEADERS]})
            await send({"type": "http.response.body", "body": body})
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(name, value) for name, value in message.get("headers", []) if name.lower() != b"set-cookie"]
                message["headers"] = [*kept, *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)
