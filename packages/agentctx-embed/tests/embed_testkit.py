"""Helpers of the embedding tests (imported by conftest and the tests): the vocabulary of the
tiny model, a seeded project, and a Messages-API stand-in on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from agentctx_store import NewRecord, Project, Record, Store, resolve_project

# One project of 25 records on distinct subjects, as a team writes them (the calibration and
# neighbours tests).
TOPICS = [
    ("Use PostgreSQL 16", "All services keep durable state in PostgreSQL 16 behind pgbouncer."),
    ("Migrations with Alembic", "Schema changes are Alembic revisions, one per pull request."),
    ("Background jobs on Temporal", "Long work runs as Temporal workflows with retries."),
    ("Deploy from GitHub Actions", "Merges to main deploy to staging; production is a manual approval."),
    ("Validate bodies with pydantic", "Request bodies are pydantic models validated at the route boundary."),
    ("Tests beside the module", "Name test files after the module they test and keep them next to it."),
    ("Small pull requests", "Keep pull requests under four hundred changed lines."),
    ("Tenant id in cache keys", "Every cache key includes the tenant id to avoid cross-tenant leaks."),
    ("Dashboard assets from the package", "Serve the dashboard's static assets from the wheel, never a CDN."),
    ("Sessions in Redis", "Web sessions live in Redis with a TTL of one day."),
    ("Structured logging", "Log with structlog; every line carries the request id."),
    ("Money in cents", "Amounts are integers in minor units; never floats."),
    ("Feature flags in Unleash", "Read flags through flags.enabled, backed by Unleash."),
    ("API errors are problem+json", "Error responses follow RFC 7807."),
    ("Python 3.12 only", "CI runs 3.12; code may use its syntax."),
    ("Frontend in Vue 3", "The admin UI is Vue 3 with Pinia stores."),
    ("Emails through SES", "Transactional email goes through Amazon SES with a suppression list."),
    ("Search with OpenSearch", "Full-text search of orders runs on OpenSearch 2."),
    ("Secrets in Vault", "Services read secrets from Vault at start; nothing in env files."),
    ("Time zones in UTC", "Store timestamps in UTC; convert only when rendering."),
    ("Retries with backoff", "HTTP clients retry idempotent calls three times with jittered backoff."),
    ("Ruff for lint and format", "ruff check and ruff format run in pre-commit and CI."),
    ("Type hints everywhere", "pyright runs in strict mode on every package."),
    ("Containers on distroless", "Images build on distroless python, no shell."),
    ("Metrics in Prometheus", "Expose /metrics; dashboards live in Grafana."),
]

# Every word the tests write; words outside it map to the zero [UNK] vector.
TEST_TEXTS = [
    "decision convention preference discovery bugfix handover profile",
    "Use PostgreSQL as the main database. All services store their data in PostgreSQL 16.",
    "Use PostgreSQL for the main database. All services store data in PostgreSQL 16.",
    "Run background jobs on Temporal workflows with retries and visibility.",
    "Deploy to Fly.io from GitHub Actions on every merge to main.",
    "Validate request bodies with zod schemas at the route boundary.",
    "Name test files after the module they test and keep them next to it.",
    "Working on the billing export; next step is the CSV writer and its tests.",
    "Prefer small pull requests under four hundred lines.",
    "The cache key includes the tenant id to avoid cross tenant leaks.",
    "Serve the dashboard assets from the package, never from a CDN.",
    "Sessions live in Redis with a TTL of one day.",
    "2024 2025 2026 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31",
]


def make_project(base: Path, name: str) -> Project:
    root = base / name
    (root / ".git").mkdir(parents=True)
    return resolve_project(root)


def add(store: Store, project: Project, type_: str, title: str, body: str, **fields: Any) -> Record:
    supersedes = fields.pop("supersedes", None)
    return store.add(project, NewRecord(type=type_, title=title, body=body, **fields), supersedes=supersedes)


def seed(store: Store, project: Project) -> dict[str, Record]:
    """A small realistic project: decisions, a convention, a handover, a near-duplicate pair."""
    records = {
        "pg": add(
            store,
            project,
            "decision",
            "Use PostgreSQL as the main database",
            "All services store their data in PostgreSQL 16.",
        ),
        "pg_dup": add(
            store,
            project,
            "decision",
            "Use PostgreSQL for the main database",
            "All services store their data in PostgreSQL 16.",
            confidence="inferred",
            source="llm_extraction",
            session_id="s-dup",
        ),
        "jobs": add(
            store,
            project,
            "decision",
            "Run background jobs on Temporal",
            "Temporal workflows with retries and visibility.",
        ),
        "deploy": add(store, project, "decision", "Deploy to Fly.io", "From GitHub Actions on every merge to main."),
        "zod": add(
            store, project, "convention", "Validate request bodies with zod", "Zod schemas at the route boundary."
        ),
        "tests": add(
            store, project, "convention", "Name test files after the module", "Keep them next to the module they test."
        ),
        "handover": add(
            store,
            project,
            "handover",
            "Handover",
            "Working on the billing export; next step is the CSV writer and its tests.",
            key="handover",
        ),
    }
    return records


@dataclass
class MessagesServer:
    """A Messages-API stand-in on 127.0.0.1: answers DUPLICATE or DIFFERENT by a rule."""

    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    answer: str = "DUPLICATE"


@contextmanager
def serve_messages() -> Iterator[MessagesServer]:
    """Serve until the block ends; the caller points ANTHROPIC_BASE_URL at `state.url`."""
    state = MessagesServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            state.requests.append(body)
            state.headers.append({key.lower(): value for key, value in self.headers.items()})
            reply = {
                "id": "msg_test",
                "type": "message",
                "role": "assistant",
                "model": body.get("model", "claude-haiku-4-5"),
                "content": [{"type": "text", "text": json.dumps({"verdict": state.answer})}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 100, "output_tokens": 2},
            }
            data = json.dumps(reply).encode("utf-8")
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
