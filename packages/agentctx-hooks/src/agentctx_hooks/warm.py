"""The prompt hook's warm path: ask the search service of this data dir for the injection.

When the service (`agentctx_embed.service`, hosted by `agentctx mcp` or `agentctx serve`) is up,
it ranks the prompt (keyword + vectors), composes the injection exactly as the keyword path
does, records the accounting, and sends back the text and ids; the hook only keeps the session's
dedup state. This path imports `socket` and the store's `service_link`, never `sqlite3`.

Any failure — no socket, a stale one, a hung or slow service, another protocol, an error
reply — returns None within `DEADLINE_S` of the hook's start and the hook takes the keyword
path. A failure other than "no service at all" is logged once per session.
"""

from __future__ import annotations

import os
import time

from agentctx_store.jsontext import dumps, is_array, is_object, loads

from agentctx_hooks import log

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentctx_store.prompt_answer import Asked

    from agentctx_hooks.payload import HookInput

# From the hook's start (module import on the hook path) to the service's answer; past this the
# keyword path still fits Claude Code's patience (bench/README.md#the-warm-services-vectors).
DEADLINE_S = 0.150
# The first ask of a process counts from this import (the hook's start); later asks in the same
# process (in-process callers: tests, the eval bench) count from their own call.
_CLOCK: dict[str, float | None] = {"start": time.monotonic()}
LOGGED_KEY = "warm_fallback_logged"
SERVED_KEY = "served"


def deadline_s() -> float:
    override = os.environ.get("AGENTCTX_WARM_DEADLINE_MS")
    if override:
        try:
            return max(0.0, float(override) / 1000.0)
        except ValueError:
            pass
    return DEADLINE_S


def ask(hook: HookInput, asked: Asked, data: dict[str, Any]) -> tuple[str, list[str], bool] | None:
    """(text, ids, True: recorded) composed and accounted by the service, or None: take the
    keyword path."""
    if os.environ.get("AGENTCTX_NO_SERVICE") == "1":
        return None
    from agentctx_store import service_link

    try:
        path = service_link.socket_path()
    except Exception:  # a broken environment only means the keyword path
        return None
    if not os.path.exists(path):
        return None  # no service for this data dir: the normal case without MCP, not logged
    request = {
        "v": service_link.PROTOCOL,
        "op": "prompt",
        "cwd": hook.cwd,
        "prompt": asked.prompt,
        "session_id": asked.session_id,
        "client": asked.client,
        "hook": asked.hook,
        "exclude": asked.already,
        "pending": asked.pending.to_json(),
        "gated": asked.gated,
    }
    began = _CLOCK["start"] or time.monotonic()
    _CLOCK["start"] = None
    left = deadline_s() - (time.monotonic() - began)
    try:
        request["budget_ms"] = int(left * 1000)
        if left <= 0:
            raise service_link.ServiceUnavailable("no time left before the deadline")
        reply = loads(service_link.exchange(dumps(request).encode("utf-8"), timeout=left, path=path))
        if not is_object(reply) or not reply.get("ok"):
            raise service_link.ServiceUnavailable(f"the service answered {str(reply)[:200]}")
        text = reply.get("text")
        ids = reply.get("ids")
        if not isinstance(text, str) or not is_array(ids) or not all(isinstance(i, str) for i in ids):
            raise service_link.ServiceUnavailable("the service's answer is malformed")
    except (service_link.ServiceUnavailable, ValueError, TypeError, OverflowError) as exc:
        _note_fallback(hook, data, str(exc))
        return None
    _count(data, "warm")
    return text, ids, bool(reply.get("recorded", True))


def count_keyword(data: dict[str, Any]) -> None:
    _count(data, "keyword")


def _count(data: dict[str, Any], path: str) -> None:
    served = data.get(SERVED_KEY)
    served = served if is_object(served) else {}
    served[path] = int(served.get(path, 0) or 0) + 1
    served["last"] = path
    data[SERVED_KEY] = served


def _note_fallback(hook: HookInput, data: dict[str, Any], reason: str) -> None:
    if data.get(LOGGED_KEY):
        return
    data[LOGGED_KEY] = True
    log.write(hook.event, f"search service did not answer ({reason}); keyword path", session=hook.session_id)
