"""Local stand-ins for the OpenAI Responses API (Codex CLI) and the Gemini API (Gemini CLI).

Like `claude_code_mock.py`: a `ThreadingHTTPServer` on a free 127.0.0.1 port that records the
JSON body of every request (exactly what the model would have received) and answers in the
wire format the client asked for. What it answers is a *responder*, a function of the request
body returning an `Answer` (text, or one function call), so a test can script a tool call and
check that the next request carries the tool's result.

- `ResponsesMock`: `POST /v1/responses` with `stream: true` -> SSE `response.created`,
  `response.output_item.added/done`, `response.output_text.delta`, `response.completed`
  (the events Codex 0.171.0 accepted, tests-e2e/fixtures/codex-cli/README.md §2).
- `GeminiMock`: `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` -> SSE chunks of
  `GenerateContentResponse`; `:generateContent` -> one JSON response. Gemini CLI's utility calls
  (the model router) get schema-valid JSON (fixtures/gemini-cli/README.md §2).

Standard library only; one daemon thread per server.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Recorded:
    method: str
    path: str
    body: dict[str, Any]

    @property
    def raw(self) -> str:
        return json.dumps(self.body)


@dataclass(frozen=True, kw_only=True)
class Answer:
    """Text, or one function call (`call = {"name", "arguments", "namespace"?}`)."""

    text: str = "Noted."
    call: dict[str, Any] | None = None


Responder = Callable[[dict[str, Any]], Answer]


def answer_noted(_body: dict[str, Any]) -> Answer:
    return Answer()


class _Mock:
    def __init__(self, responder: Responder = answer_noted) -> None:
        self.responder = responder
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def recorded(self) -> list[Recorded]:
        with self._lock:
            return list(self.requests)

    def dump(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        for number, request in enumerate(self.recorded(), 1):
            payload = {"method": request.method, "path": request.path, "body": request.body}
            (directory / f"{number:03d}.json").write_text(json.dumps(payload, indent=1), encoding="utf-8")

    def next_id(self, prefix: str) -> str:
        return f"{prefix}_mock{next(self._ids):06d}"

    def answer(self, handler: BaseHTTPRequestHandler, request: Recorded) -> None:  # pragma: no cover
        raise NotImplementedError

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: object) -> None:
                return

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", errors="replace")}
                request = Recorded(method=self.command, path=self.path, body=body if isinstance(body, dict) else {})
                with mock._lock:
                    mock.requests.append(request)
                mock.answer(self, request)

            do_POST = _handle
            do_GET = _handle

        return Handler


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: dict[str, Any]) -> None:
    data = json.dumps(payload).encode("utf-8")
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def send_sse(handler: BaseHTTPRequestHandler, events: list[tuple[str | None, dict[str, Any]]]) -> None:
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("cache-control", "no-cache")
    handler.send_header("connection", "close")
    handler.end_headers()
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        handler.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
    handler.wfile.flush()
    handler.close_connection = True


# -- Codex: the Responses API ----------------------------------------------------------------------


class ResponsesMock(_Mock):
    """`base_url = http://127.0.0.1:<port>/v1`, `wire_api = "responses"` in Codex's config."""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def model_requests(self) -> list[Recorded]:
        return [request for request in self.recorded() if request.path.split("?")[0].endswith("/responses")]

    def answer(self, handler: BaseHTTPRequestHandler, request: Recorded) -> None:
        route = request.path.split("?")[0]
        if request.method == "GET" and route.endswith("/models"):
            send_json(handler, 200, {"models": []})
            return
        if not route.endswith("/responses"):
            send_json(handler, 404, {"error": {"message": route}})
            return
        answer = self.responder(request.body)
        response_id = self.next_id("resp")
        if answer.call:
            item: dict[str, Any] = {
                "type": "function_call",
                "id": self.next_id("fc"),
                "call_id": self.next_id("call"),
                "name": answer.call["name"],
                "arguments": json.dumps(answer.call.get("arguments", {})),
                "status": "completed",
            }
            if answer.call.get("namespace"):
                item["namespace"] = answer.call["namespace"]
        else:
            item = {
                "type": "message",
                "id": self.next_id("msg"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": answer.text, "annotations": []}],
            }
        base = {"id": response_id, "object": "response", "model": request.body.get("model", "mock"), "output": []}
        events: list[tuple[str | None, dict[str, Any]]] = [
            ("response.created", {"type": "response.created", "response": {**base, "status": "in_progress"}}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
        ]
        if not answer.call:
            events.append(
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": 0,
                        "content_index": 0,
                        "delta": answer.text,
                    },
                )
            )
        events.append(
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item})
        )
        usage = {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 110,
        }
        done = {**base, "status": "completed", "output": [item], "usage": usage}
        events.append(("response.completed", {"type": "response.completed", "response": done}))
        send_sse(handler, events)


def codex_developer_texts(request: Recorded) -> list[str]:
    """The `developer` messages of a Responses request (where Codex puts hook context)."""
    found = []
    for item in request.body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "developer":
            found.extend(part.get("text", "") for part in item.get("content") or [] if isinstance(part, dict))
    return found


def codex_user_texts(request: Recorded) -> list[str]:
    found = []
    for item in request.body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "user":
            found.extend(part.get("text", "") for part in item.get("content") or [] if isinstance(part, dict))
    return found


def codex_call_outputs(request: Recorded, name: str) -> list[str]:
    """The outputs of the function calls named `name` in a Responses request's history."""
    items = [item for item in request.body.get("input") or [] if isinstance(item, dict)]
    calls = {item.get("call_id") for item in items if item.get("type") == "function_call" and item.get("name") == name}
    return [
        json.dumps(item.get("output"))
        for item in items
        if item.get("type") == "function_call_output" and item.get("call_id") in calls
    ]


def codex_tool_outputs(request: Recorded) -> list[str]:
    return [
        json.dumps(item.get("output"))
        for item in request.body.get("input") or []
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]


# -- Gemini: generateContent / streamGenerateContent ----------------------------------------------


class GeminiMock(_Mock):
    """`GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:<port>`."""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def model_requests(self) -> list[Recorded]:
        """The main-loop calls (streamGenerateContent), not the router's utility calls."""
        return [request for request in self.recorded() if ":streamGenerateContent" in request.path]

    def answer(self, handler: BaseHTTPRequestHandler, request: Recorded) -> None:
        route = request.path.split("?")[0]
        if ":generateContent" in route:
            send_json(handler, 200, self._utility(request))
        elif ":streamGenerateContent" in route:
            answer = self.responder(request.body)
            if answer.call:
                part: dict[str, Any] = {
                    "functionCall": {"name": answer.call["name"], "args": answer.call.get("arguments", {})}
                }
            else:
                part = {"text": answer.text}
            chunk = {
                "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
                "modelVersion": "mock",
            }
            send_sse(handler, [(None, chunk)])
        elif ":countTokens" in route:
            send_json(handler, 200, {"totalTokens": 100})
        else:
            send_json(handler, 404, {"error": {"code": 404, "message": route, "status": "NOT_FOUND"}})

    def _utility(self, request: Recorded) -> dict[str, Any]:
        """A schema-valid answer for the CLI's side calls (the model router wants JSON)."""
        config = request.body.get("generationConfig") or {}
        if "complexity" in json.dumps(config.get("responseJsonSchema") or config.get("responseSchema") or {}) or (
            "Complexity" in json.dumps(request.body.get("systemInstruction") or {})
        ):
            text = json.dumps({"complexity_reasoning": "simple", "complexity_score": 10})
        elif config.get("responseMimeType") == "application/json":
            text = "{}"
        else:
            text = "Noted."
        return {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        }


def gemini_user_texts(request: Recorded) -> list[str]:
    """Every text part of the user turns (where Gemini puts hook context, `<hook_context>…`)."""
    found = []
    for content in request.body.get("contents") or []:
        if isinstance(content, dict) and content.get("role") == "user":
            found.extend(
                part["text"] for part in content.get("parts") or [] if isinstance(part, dict) and "text" in part
            )
    return found


def gemini_function_responses(request: Recorded) -> list[str]:
    found = []
    for content in request.body.get("contents") or []:
        for part in (content or {}).get("parts") or []:
            if isinstance(part, dict) and "functionResponse" in part:
                found.append(json.dumps(part["functionResponse"]))
    return found


def gemini_tool_names(request: Recorded) -> list[str]:
    return [
        declaration.get("name", "")
        for tool in request.body.get("tools") or []
        for declaration in (tool or {}).get("functionDeclarations") or []
    ]
