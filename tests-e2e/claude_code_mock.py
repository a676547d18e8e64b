"""A local stand-in for the Anthropic Messages API that the real Claude Code CLI can talk to.

Claude Code is pointed at it with `ANTHROPIC_BASE_URL=http://127.0.0.1:<port>`. It records the
JSON body of every request (that is exactly what the model would have received) and answers
in the format asked for: Server-Sent Events of the Messages streaming format for
`"stream": true`, a plain message object otherwise (title generation, quota checks). What it
answers is decided by a `responder`, a function of the request body, so a test can script a
`tool_use` turn and check that the next request carries the tool's result.

Below the server: helpers that read a recorded request the way the model sees it (hook context,
offered tools, tool results) and scripted models (responders) for the tests.

Standard library only; one daemon thread; binds 127.0.0.1 on a free port.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL = "claude-sonnet-4-5"


@dataclass(frozen=True, kw_only=True)
class Recorded:
    """One request as it reached the mock: method, path (with query) and the JSON body."""

    method: str
    path: str
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def is_messages(self) -> bool:
        return self.method == "POST" and self.path.split("?")[0] == "/v1/messages"

    @property
    def tool_names(self) -> list[str]:
        return [tool.get("name", "") for tool in self.body.get("tools") or [] if isinstance(tool, dict)]

    @property
    def text(self) -> str:
        """Everything textual the model gets: system prompt, messages (tool results included)."""
        return json.dumps({"system": self.body.get("system"), "messages": self.body.get("messages")})


@dataclass(frozen=True, kw_only=True)
class Answer:
    """What the mock answers: text blocks and/or tool_use blocks (`{"name", "input"}`), and the
    input tokens its `usage` reports (what the client takes as the size of its context)."""

    text: str = ""
    tool_uses: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int = 100


Responder = Callable[[dict[str, Any]], Answer]


def answer_ok(_body: dict[str, Any]) -> Answer:
    return Answer(text="OK.")


def answer_noted(_body: dict[str, Any]) -> Answer:
    return Answer(text="Noted.")


class MessagesMock:
    """Start with `with MessagesMock() as mock:`; `mock.url` goes into ANTHROPIC_BASE_URL."""

    def __init__(self, responder: Responder = answer_ok) -> None:
        self.responder = responder
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="messages-mock", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> MessagesMock:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def messages_requests(self) -> list[Recorded]:
        with self._lock:
            return [request for request in self.requests if request.is_messages]

    def dump(self, directory: Path) -> None:
        """Write every recorded request as `NNN.json` (method, path, headers, body) for inspection."""
        directory.mkdir(parents=True, exist_ok=True)
        with self._lock:
            requests = list(self.requests)
        for number, request in enumerate(requests, 1):
            payload = {"method": request.method, "path": request.path, "headers": request.headers, "body": request.body}
            (directory / f"{number:03d}.json").write_text(json.dumps(payload, indent=1), encoding="utf-8")

    def _record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)

    def next_id(self, prefix: str) -> str:
        return f"{prefix}_mock{next(self._ids):06d}"

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: object) -> None:  # keep pytest output clean
                return

            def _body(self) -> dict[str, Any]:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    parsed = json.loads(raw or b"{}")
                except ValueError:
                    parsed = {"_unparsed": raw.decode("utf-8", errors="replace")}
                return parsed if isinstance(parsed, dict) else {"_json": parsed}

            def _send_json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self) -> None:
                body = self._body() if self.command in ("POST", "PUT", "PATCH") else {}
                keep = ("x-api-key", "authorization", "anthropic-version", "anthropic-beta", "user-agent")
                headers = {name: value for name, value in self.headers.items() if name.lower() in keep}
                request = Recorded(method=self.command, path=self.path, body=body, headers=headers)
                mock._record(request)
                route = self.path.split("?")[0]
                if self.command == "POST" and route == "/v1/messages/count_tokens":
                    self._send_json(200, {"input_tokens": max(1, len(request.text) // 4)})
                elif request.is_messages:
                    answer = mock.responder(body)
                    if body.get("stream"):
                        self._stream(body, answer)
                    else:
                        self._send_json(200, mock.message(body, answer))
                else:
                    self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": route}})

            def _stream(self, body: dict[str, Any], answer: Answer) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for event, data in mock.events(body, answer):
                    self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

            do_POST = _handle
            do_GET = _handle
            do_HEAD = _handle

        return Handler

    # -- the Messages API shapes ---------------------------------------------------------------

    def _blocks(self, answer: Answer) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if answer.text or not answer.tool_uses:
            blocks.append({"type": "text", "text": answer.text})
        for use in answer.tool_uses:
            blocks.append({"type": "tool_use", "id": self.next_id("toolu"), "name": use["name"], "input": use["input"]})
        return blocks

    def message(self, body: dict[str, Any], answer: Answer) -> dict[str, Any]:
        return {
            "id": self.next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or MODEL,
            "content": self._blocks(answer),
            "stop_reason": "tool_use" if answer.tool_uses else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": answer.input_tokens, "output_tokens": 10},
        }

    def events(self, body: dict[str, Any], answer: Answer) -> Iterator[tuple[str, dict[str, Any]]]:
        """The streaming sequence: message_start, per block start/delta/stop, message_delta, message_stop."""
        message = self.message(body, answer)
        blocks = message["content"]
        usage = {"input_tokens": answer.input_tokens, "output_tokens": 1}
        start = {**message, "content": [], "stop_reason": None, "usage": usage}
        yield "message_start", {"type": "message_start", "message": start}
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                yield (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                empty = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": empty}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
        yield (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": 10},
            },
        )
        yield "message_stop", {"type": "message_stop"}


# -- reading what the model received -----------------------------------------------------------


def texts(request: Recorded) -> list[str]:
    """Every text block of the request's messages, in order (string contents count as one)."""
    found: list[str] = []
    for message in request.body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            found.append(content)
            continue
        for block in content or []:
            if block.get("type") == "text":
                found.append(block.get("text", ""))
    return found


def hook_context(request: Recorded, event: str) -> str:
    """What the `<event>` hook added, as the model saw it ("" when nothing).

    Claude Code 2.1 puts it in a `role: "system"` message that starts with
    `<Event> hook additional context: `; the SessionStart one is followed by Claude Code's own
    `# Environment` section, which is cut off here. 2.0 wraps it in a `<system-reminder>` text
    block of the user message; the closing tag is cut off too.
    """
    marker = f"{event} hook additional context: "
    for text in texts(request):
        if marker in text:
            context = text.split(marker, 1)[1].split("\n\n# Environment\n", 1)[0]
            return context.removesuffix("\n</system-reminder>")
    return ""


def offered_tools(request: Recorded, candidates: Iterable[str]) -> set[str]:
    """Which of `candidates` the model can use: loaded definitions, or names that 2.1's
    ToolSearch lists as deferred (one per line in a system message)."""
    listed = "\n".join(texts(request)) + "\n"
    return {name for name in candidates if name in request.tool_names or f"\n{name}\n" in listed}


def in_conversation(body: dict[str, Any], prompt: str) -> bool:
    """Whether a request belongs to the conversation that `prompt` started (not a warm-up or
    a side call of the client, which 2.0.x makes several of per session)."""
    request = Recorded(method="POST", path="", body=body, headers={})
    return any(prompt in text for text in texts(request))


def is_compaction(body: dict[str, Any]) -> bool:
    """Whether this is Claude Code's request for a compaction summary: 2.1 sends the
    conversation (with its tools) and ends it with a user text asking for an `<analysis>` and a
    `<summary>` of it, for `/compact` and automatic compaction alike."""
    found = texts(Recorded(method="POST", path="", body=body, headers={}))
    return bool(found) and "summary of the conversation so far" in found[-1]


def tool_results(request: Recorded) -> list[dict[str, Any]]:
    """The `tool_result` blocks the request carries back to the model."""
    return [
        block
        for message in request.body.get("messages") or []
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


# -- scripted models --------------------------------------------------------------------------


def use_tool_once(name: str, tool_input: dict[str, Any], *, during: str) -> Responder:
    """A model that calls `name` once in the conversation of prompt `during` (when the tool is
    offered and nothing was called yet), then answers."""

    def respond(body: dict[str, Any]) -> Answer:
        offered = name in [tool.get("name") for tool in body.get("tools") or []] and in_conversation(body, during)
        called = any(tool_results(Recorded(method="POST", path="", body=body, headers={})))
        if offered and not called:
            return Answer(tool_uses=[{"name": name, "input": tool_input}])
        return answer_noted(body)

    return respond


def use_tools_in_turn(*uses: dict[str, Any], during: str) -> Responder:
    """A model that calls the given tools one after another (one per turn) in the conversation
    of prompt `during`, then answers."""

    def respond(body: dict[str, Any]) -> Answer:
        done = len(tool_results(Recorded(method="POST", path="", body=body, headers={})))
        if in_conversation(body, during) and done < len(uses):
            return Answer(tool_uses=[uses[done]])
        return answer_noted(body)

    return respond
