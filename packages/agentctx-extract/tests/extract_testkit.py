"""A real HTTP server on 127.0.0.1 that speaks enough of the Messages API for the SDK, and
helpers that write Claude Code-shaped transcripts (imported by the tests through conftest).

The SDK is pointed at the server through `ANTHROPIC_BASE_URL`; nothing in the SDK or in our
code is patched. The server records every request (headers and JSON body) and answers from a
script (a queue of replies) or from a function of the request (for parallel calls).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TOOL_NAME = "record_session_context"
# the captured Claude Code 2.1.332 / 2.0.77 transcripts the hooks work copied into the repo
FIXTURES = Path(__file__).resolve().parents[3] / "tests-e2e" / "fixtures" / "claude-code" / "transcripts"


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    raw: bytes | None = None  # sent as is instead of `body` (a broken response)


def usage(
    input_tokens: int = 1200, output_tokens: int = 300, cache_write: int = 0, cache_read: int = 0
) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": cache_write,
        "cache_read_input_tokens": cache_read,
    }


def empty_answer(**overrides: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "decisions": [],
        "preferences": [],
        "conventions": [],
        "active_work": {"current_task": "", "blockers": [], "next_steps": [], "open_questions": []},
        "gotchas": [],
        "flush_ok": False,
    }
    answer.update(overrides)
    return answer


def tool_reply(
    answer: Any, *, use: dict[str, int] | None = None, stop_reason: str = "tool_use", name: str = TOOL_NAME
) -> Reply:
    return Reply(
        body={
            "id": f"msg_test_{uuid.uuid4().hex[:12]}",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-4-5",
            "content": [{"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:12]}", "name": name, "input": answer}],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": use or usage(),
        }
    )


def text_reply(text: str, *, stop_reason: str = "end_turn") -> Reply:
    return Reply(
        body={
            "id": "msg_test_text",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-4-5",
            "content": [{"type": "text", "text": text}],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage(),
        }
    )


def error_reply(status: int, kind: str = "api_error", **headers: str) -> Reply:
    return Reply(
        status=status, body={"type": "error", "error": {"type": kind, "message": f"scripted {status}"}}, headers=headers
    )


class MessagesServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: deque[Reply] = deque()
        self.responder: Callable[[dict[str, Any]], Reply] | None = None
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                headers = {key.lower(): value for key, value in self.headers.items()}
                key_ok = bool(headers.get("x-api-key")) or headers.get("authorization", "").startswith("Bearer ")
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                with server._lock:
                    server.requests.append({"path": self.path, "headers": headers, "body": body, "raw": raw})
                    if not key_ok:
                        reply = error_reply(401, "authentication_error")
                    elif not self.path.startswith("/v1/messages"):
                        reply = error_reply(404, "not_found_error")
                    elif server.responder is not None:
                        reply = server.responder(body)
                    elif server.script:
                        reply = server.script.popleft()
                    else:
                        reply = error_reply(500, "api_error")
                if reply.delay_s:
                    time.sleep(reply.delay_s)  # the server is slow on purpose: a client timeout test
                payload = reply.raw if reply.raw is not None else json.dumps(reply.body).encode("utf-8")
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.send_header("request-id", "req_test")
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def push(self, *replies: Reply) -> None:
        self.script.extend(replies)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [request["body"] for request in self.requests]

    def everything_received(self) -> str:
        """Every byte the server received, headers included: for 'this never left the machine' checks."""
        return "\n".join(
            json.dumps(request["headers"]) + request["raw"].decode("utf-8", "replace") for request in self.requests
        )

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def transcript_lines(cwd: Path | str, session_id: str, turns: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """Claude Code-shaped entries. Turn roles: developer, claude, tool (name, input, output), meta, notification."""
    entries: list[dict[str, Any]] = []
    base = {"cwd": str(cwd), "sessionId": session_id, "version": "2.1.332", "isSidechain": False}
    for role, content in turns:
        if role == "developer":
            entries.append({**base, "type": "user", "message": {"role": "user", "content": content}})
        elif role == "meta":
            entries.append({**base, "type": "user", "isMeta": True, "message": {"role": "user", "content": content}})
        elif role == "notification":
            text = f"<task-notification>\n<status>completed</status>\n<result>{content}</result>\n</task-notification>"
            entries.append({**base, "type": "user", "message": {"role": "user", "content": text}})
        elif role == "claude":
            entries.append(
                {
                    **base,
                    "type": "assistant",
                    "message": {"role": "assistant", "content": [{"type": "text", "text": content}]},
                }
            )
        elif role == "tool":
            name, tool_input, output = content
            tool_id = f"toolu_{uuid.uuid4().hex[:12]}"
            entries.append(
                {
                    **base,
                    "type": "assistant",
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
                    },
                }
            )
            entries.append(
                {
                    **base,
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": output}],
                    },
                }
            )
        entries.append({"type": "last-prompt", "sessionId": session_id, "lastPrompt": "bookkeeping"})
    return entries
