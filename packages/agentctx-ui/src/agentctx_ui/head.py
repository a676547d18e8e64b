"""HEAD answered as GET without the body (RFC 9110 §9.3.2).

FastAPI routes only the methods a route declares, so a `HEAD` got 405 although every GET
route is read-only. This middleware runs the GET route and drops the body, keeping the
status and headers (`content-length` included); HEAD therefore writes exactly as little as
GET: nothing.
"""

from __future__ import annotations

from agentctx_ui.security import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "HEAD":
            await self.app(scope, receive, send)
            return

        async def send_headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body"):
                    return  # the rest of a streamed body: nothing goes out
                message = {"type": "http.response.body", "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, send_headers_only)
