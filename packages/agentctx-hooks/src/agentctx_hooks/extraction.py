"""When session-end extraction runs: once per session, at its end (issue 14).

- `SessionEnd` (also `/clear`, which ends the session) starts `agentctx extract` for everything
  of the session not extracted yet.
- `Stop` fires after every assistant turn. It only counts what the session gained since the
  last extraction, as the extraction would render it (the developer's and Claude's words and
  tool output, each cut to the rendering's cap; reading the transcript's new bytes, nothing
  else), and starts a checkpoint extraction once that reaches `CHECKPOINT_TOKENS` (about 20K
  tokens of the developer's and Claude's words in a session with ordinary tool use).
- `PreCompact` starts a checkpoint: the context is about to be summarised away.
- A session that ended without `SessionEnd` (a crash, a kill, a client without that hook) is
  swept by the next `SessionStart` of its project, detached.

Each running session leaves a small marker in `$AGENTCTX_HOME/open-sessions/` (its project,
transcript, and the pid of the process that ran the hook, i.e. the client); `SessionEnd` marks
it ended and the extraction that finishes an ended session removes it (`forget`). A marker of
another session whose client is gone, that is marked ended, or whose transcript has not moved
for a day is swept. Every start goes through the spawn lock `extract-<session>`, so two
`SessionStart`s racing start one extraction, and a sweep never overlaps a checkpoint.

Extraction is incremental either way: a run sends only the turns after the last extracted one
(plus the last three, marked as context), so checkpoints never send a turn twice.
"""

from __future__ import annotations

import os
import time

from agentctx_store import clients, paths, projects
from agentctx_store.bounded import read_regular
from agentctx_store.jsontext import dumps, is_object, loads

from agentctx_hooks import log, state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentctx_hooks.payload import HookInput

# Not yet extracted, as rendered (our estimate). Checkpoints are a safety net for long sessions,
# not a schedule: each one costs the fixed prompt again. At 30K, a 30-turn session with long
# replies is extracted once; a threshold low enough for each checkpoint to be sent whole cost
# clearly more than one extraction of the session (bench/README.md#extraction-checkpoints).
CHECKPOINT_TOKENS = 30_000
EXTRACT_TIMEOUT_SECONDS = 600
IDLE_SWEEP_SECONDS = 24 * 3600


def open_dir() -> str:
    return os.path.join(paths.home(), "open-sessions")


def marker_path(session_id: str) -> str:
    return os.path.join(open_dir(), paths.safe_name(session_id) + ".json")


def note_open(hook: HookInput, *, ended: bool = False, project_id: str | None = None) -> None:
    """Write (or refresh) this session's marker (`project_id`: the cwd's, when the caller has it)."""
    if not hook.session_id or not hook.transcript_path or not hook.cwd:
        return
    marker = {
        "session_id": hook.session_id,
        "project_id": project_id or projects.resolve_project(hook.cwd).project_id,
        "cwd": hook.cwd,
        "transcript": hook.transcript_path,
        "client": client_of(hook),
        "pid": os.getppid(),
        "ended": ended,
    }
    os.makedirs(open_dir(), exist_ok=True)
    target = marker_path(hook.session_id)
    temp = f"{target}.{os.getpid()}.tmp"
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(dumps(marker))
    os.replace(temp, target)


def forget(session_id: str) -> None:
    """The session is over and extracted: no sweep needs it any more."""
    try:
        os.unlink(marker_path(session_id))
    except FileNotFoundError:
        pass


MAX_MARKER_BYTES = 64_000


def read_marker(path: str) -> dict[str, Any] | None:
    """The marker at `path`, or None when it cannot be used: unreadable, not a regular file,
    not a JSON object, or a field of the wrong type or not usable as a path (a NUL or a lone
    surrogate, which a marker written by an older version may hold)."""
    from agentctx_hooks.payload import is_usable_path

    raw = read_regular(path, limit=MAX_MARKER_BYTES)
    try:
        data = loads(raw) if raw is not None else None
    except (ValueError, RecursionError):
        return None
    if not is_object(data):
        return None
    for name in ("session_id", "project_id", "transcript"):
        value = data.get(name)
        if not isinstance(value, str) or not value or not is_usable_path(value):
            return None
    for name in ("cwd", "client"):
        value = data.get(name)
        if value is not None and not (isinstance(value, str) and is_usable_path(value)):
            return None
    return data


def abandoned(project_id: str, current_session: str, *, now: float | None = None) -> list[dict[str, Any]]:
    """Markers of this project's other sessions that are over: marked ended, their client gone,
    or their transcript idle for a day. Markers whose transcript is gone are dropped, and so
    are markers that cannot be used (`read_marker`), with one log line each: one bad marker
    never keeps the others from being swept."""
    from agentctx_store.processes import is_alive

    try:
        names = [name for name in os.listdir(open_dir()) if name.endswith(".json")]
    except OSError:
        return []
    moment = time.time() if now is None else now
    found: list[dict[str, Any]] = []
    for name in sorted(names):
        path = os.path.join(open_dir(), name)
        marker = read_marker(path)
        if marker is None:
            _drop(path, "it cannot be used")
            continue
        if marker.get("project_id") != project_id or marker["session_id"] == current_session:
            continue
        try:
            idle = moment - os.path.getmtime(marker["transcript"])
        except (OSError, ValueError):
            forget(marker["session_id"])
            continue
        pid = marker.get("pid")
        gone = not isinstance(pid, int) or isinstance(pid, bool) or not is_alive(pid)
        if marker.get("ended") is True or gone or idle > IDLE_SWEEP_SECONDS:
            found.append(marker)
    return found


def _drop(path: str, why: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
    log.write("sweep", f"dropped the open-session marker {os.path.basename(path)}: {why}")


def client_of(hook: HookInput) -> str:
    """The client whose hook this is (`agentctx hook --client X`); its transcript format."""
    return hook.get_text("agentctx_client") or clients.DEFAULT


def start(session_id: str, transcript: str, cwd: str, trigger: str, client: str = clients.DEFAULT) -> bool:
    """Start `agentctx extract` detached for the session; False when one is running already."""
    from agentctx_hooks.spawn import spawn_agentctx

    return spawn_agentctx(
        ["extract", "--session-id", session_id, "--transcript", transcript, "--trigger", trigger]
        + (["--client", client] if client != clients.DEFAULT else []),
        lock_name=f"extract-{session_id}",
        timeout_seconds=EXTRACT_TIMEOUT_SECONDS,
        cwd=cwd,
    )


# -- the hooks ----------------------------------------------------------------------------


def on_stop(hook: HookInput) -> str:
    """Count what the last turn added; checkpoint only once the un-extracted part is large."""
    if not hook.session_id or not hook.transcript_path:
        log.write(hook.event, "payload has no session_id or transcript_path; no extraction", session=hook.session_id)
        return ""
    if not os.path.exists(marker_path(hook.session_id)):
        try:
            note_open(hook)  # hooks installed mid-session, or no SessionStart from this client
        except OSError as exc:
            log.error(hook.event, exc, session=hook.session_id)
    from agentctx_hooks.unextracted import scan

    data = state.load(hook.session_id)
    pending = scan(hook.transcript_path, data)
    if pending >= CHECKPOINT_TOKENS and start(hook.session_id, hook.transcript_path, hook.cwd, "stop", client_of(hook)):
        data["scan"]["tokens"] = 0
    state.save(hook.session_id, data)
    return ""


def on_pre_compact(hook: HookInput) -> None:
    """The context is about to be summarised: extract what it holds now."""
    if not hook.session_id or not hook.transcript_path:
        return
    from agentctx_hooks.unextracted import scan

    data = state.load(hook.session_id)
    scan(hook.transcript_path, data)
    if start(hook.session_id, hook.transcript_path, hook.cwd, "precompact", client_of(hook)):
        data["scan"]["tokens"] = 0
    state.save(hook.session_id, data)


def on_session_end(hook: HookInput) -> None:
    """Mark the session ended and extract the rest of it."""
    if not hook.session_id or not hook.transcript_path:
        log.write(hook.event, "payload has no session_id or transcript_path; no extraction", session=hook.session_id)
        return
    try:
        note_open(hook, ended=True)
    except OSError as exc:  # without the mark the next SessionStart still sweeps it (its client is gone)
        log.error(hook.event, exc, session=hook.session_id)
    start(hook.session_id, hook.transcript_path, hook.cwd, "end", client_of(hook))


def sweep(hook: HookInput, project_id: str) -> None:
    """At SessionStart: note this session, and extract this project's sessions that ended
    without SessionEnd. Never raises (the digest must still be printed)."""
    try:
        note_open(hook, project_id=project_id)
        for marker in abandoned(project_id, hook.session_id):
            cwd = marker.get("cwd")
            cwd = cwd if isinstance(cwd, str) else hook.cwd
            client = marker.get("client")
            client = client if isinstance(client, str) else clients.DEFAULT
            try:
                started = start(marker["session_id"], marker["transcript"], cwd, "sweep", client)
            except (OSError, ValueError) as exc:  # this session only: the others are still swept
                log.error(hook.event, exc, session=marker["session_id"])
                continue
            if started:
                log.write(hook.event, f"sweeping session {marker['session_id']} (ended without SessionEnd)")
    except Exception as exc:  # the sweep is a side job of SessionStart
        log.error(hook.event, exc, session=hook.session_id)
