"""Client-supplied paths and a full disk, through the real `agentctx hook` processes.

- Every event that reads a transcript (Claude Code's Stop, PreCompact, SessionEnd and resume
  SessionStart; Codex's; Gemini's AfterAgent, SessionEnd and resume SessionStart), with a
  payload whose `transcript_path` is a FIFO, `/dev/zero` or a sparse 2 GB file: the hook exits
  0 with nothing malformed on stdout (the subprocess timeout is the guard), and the background
  extraction it starts ends too (an API key is set, so extraction really reads the transcript).
- A Stop whose `transcript_path` has a lone surrogate or a NUL leaves no marker, and the next
  SessionStart still sweeps the project's other crashed session.
- A full disk, simulated without privileges by `RLIMIT_FSIZE` in the hook process (SIGXFSZ
  ignored, so a write past the limit fails with EFBIG and SQLite cannot write its WAL): the
  PostToolUse capture stays in the spool while the store cannot be written, and reaches the
  store once the limit is lifted.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agentctx_hooks import state

AGENTCTX = Path(sys.executable).with_name("agentctx")
FIXTURES = Path(__file__).parent / "fixtures"
HOOK_TIMEOUT_SECONDS = 60  # the guard: a hook that hangs on its input fails here, not forever

# (client, its own event name, the captured payload it is built from)
TRANSCRIPT_EVENTS = [
    ("claude", "Stop", "claude-code/hooks/Stop.json"),
    ("claude", "PreCompact", "claude-code/hooks/PreCompact.json"),
    ("claude", "SessionEnd", "claude-code/hooks/SessionEnd.json"),
    ("claude", "SessionStart", "claude-code/hooks/SessionStart.resume.json"),
    ("codex", "Stop", "codex-cli/hooks/Stop.json"),
    ("codex", "PreCompact", "codex-cli/hooks/PreCompact.auto.json"),
    ("codex", "SessionEnd", "codex-cli/hooks/SessionEnd.json"),
    ("codex", "SessionStart", "codex-cli/hooks/SessionStart.resume.json"),
    ("gemini", "AfterAgent", "gemini-cli/hooks/AfterAgent.json"),
    ("gemini", "SessionEnd", "gemini-cli/hooks/SessionEnd.exit.json"),
    ("gemini", "SessionStart", "gemini-cli/hooks/SessionStart.resume.json"),
]


def _hook(
    client: str, event: str, payload: dict[str, Any], env: dict[str, str], *, fsize: int | None = None
) -> subprocess.CompletedProcess[bytes]:
    def limit() -> None:  # in the child, before exec: a "full disk" for files past `fsize` bytes
        if fsize is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return subprocess.run(
        [str(AGENTCTX), "hook", "--client", client, event],
        input=json.dumps(payload).encode("utf-8"),
        capture_output=True,
        env=env,
        timeout=HOOK_TIMEOUT_SECONDS,
        check=False,
        preexec_fn=limit if fsize is not None else None,
    )


def _assert_answered(done: subprocess.CompletedProcess[bytes]) -> None:
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    out = done.stdout.decode("utf-8")
    if out.strip():
        parsed = json.loads(out)
        assert isinstance(parsed, dict) and set(parsed) == {"hookSpecificOutput"}, out[:300]


def _payload(fixture: str, *, session: str, transcript: str, cwd: Path) -> dict[str, Any]:
    data = json.loads((FIXTURES / fixture).read_text(encoding="utf-8"))
    return {**data, "session_id": session, "transcript_path": transcript, "cwd": str(cwd)}


@pytest.fixture(scope="module")
def sparse_2gb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sparse") / "huge.jsonl"
    with open(path, "wb") as handle:
        handle.truncate(2 << 30)  # 2 GB of NULs, no block written
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    return path


@pytest.fixture
def background_env(hook_env: dict[str, str], tmp_path: Path) -> Iterator[dict[str, str]]:
    """Spawns on, and an API key (to a port nobody listens on), so that the detached extraction
    gets as far as reading the transcript. Whatever is still running at the end is killed."""
    env = {
        **hook_env,
        "AGENTCTX_HOOKS_NO_SPAWN": "0",
        "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
    }
    yield env
    for lock in Path(state.state_dir()).glob("*.lock"):
        with contextlib.suppress(OSError, ValueError):
            os.killpg(int(lock.read_text(encoding="utf-8").strip()), signal.SIGKILL)


def _wait_until_background_ends(seconds: float = 180) -> None:
    """Every detached run releases its lock when it ends (or is killed at its time limit)."""
    deadline = time.monotonic() + seconds
    while list(Path(state.state_dir()).glob("*.lock")):
        if time.monotonic() > deadline:
            raise AssertionError(
                "background work still running: " + ", ".join(p.name for p in Path(state.state_dir()).glob("*.lock"))
            )
        time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize(
    ("client", "event", "fixture"), TRANSCRIPT_EVENTS, ids=[f"{c}-{e}" for c, e, _ in TRANSCRIPT_EVENTS]
)
def test_a_transcript_path_that_never_ends_never_hangs_a_hook_or_its_extraction(
    client: str,
    event: str,
    fixture: str,
    tmp_path: Path,
    project: Path,
    sparse_2gb: Path,
    background_env: dict[str, str],
    hooks_log: Callable[[], str],
) -> None:
    fifo = tmp_path / "transcript.fifo"
    os.mkfifo(fifo)  # no writer ever comes: a blocking open waits for one
    for kind, transcript in (("fifo", fifo), ("zero", Path("/dev/zero")), ("sparse", sparse_2gb)):
        payload = _payload(fixture, session=f"{client}-{event}-{kind}", transcript=str(transcript), cwd=project)
        _assert_answered(_hook(client, event, payload, background_env))
    _wait_until_background_ends()
    log = hooks_log()
    assert "killed after" not in log  # no detached run had to be stopped at its time limit
    assert "Traceback" not in log


# -- a poisonous transcript_path, then the sweep -------------------------------------------------


def _crashed_stop(session: str, transcript: str, project: Path, env: dict[str, str]) -> None:
    """A Stop run by a client process that is gone by now (the marker's pid is dead)."""
    payload = _payload("claude-code/hooks/Stop.json", session=session, transcript=transcript, cwd=project)
    done = subprocess.run(
        ["/bin/sh", "-c", f"'{AGENTCTX}' hook Stop; true"],  # `; true`: sh stays the hook's parent, then exits
        input=json.dumps(payload).encode("utf-8"),
        capture_output=True,
        env=env,
        timeout=HOOK_TIMEOUT_SECONDS,
        check=False,
    )
    _assert_answered(done)


def test_a_poisonous_transcript_path_never_stops_the_sweep(
    tmp_path: Path, project: Path, hook_env: dict[str, str], hooks_log: Callable[[], str]
) -> None:
    transcript = tmp_path / "crashed.jsonl"
    transcript.write_text('{"type": "user", "message": {"content": "hello"}}\n', encoding="utf-8")
    _crashed_stop("a-surrogate", "\ud800/t.jsonl", project, hook_env)  # sorts before the good one
    _crashed_stop("a-nul", "/tmp/a\x00b.jsonl", project, hook_env)
    _crashed_stop("b-crashed", str(transcript), project, hook_env)
    markers = Path(os.environ["AGENTCTX_HOME"]) / "open-sessions"
    assert sorted(path.name for path in markers.iterdir()) == ["b-crashed.json"]

    payload = _payload(
        "claude-code/hooks/SessionStart.json", session="new", transcript=str(tmp_path / "new.jsonl"), cwd=project
    )
    done = subprocess.run(
        [str(AGENTCTX), "hook", "SessionStart"],
        input=json.dumps(payload).encode("utf-8"),
        capture_output=True,
        env=hook_env,
        timeout=HOOK_TIMEOUT_SECONDS,
        check=False,
    )
    _assert_answered(done)
    log = hooks_log()
    assert "agentctx extract --session-id b-crashed" in log and "--trigger sweep" in log
    assert log.count("transcript_path not usable") == 2
    assert "UnicodeEncodeError" not in log and "ValueError" not in log


# -- PostToolUse under a full disk -----------------------------------------------------------------


def _files_of(session: str) -> list[str]:
    conn = sqlite3.connect(Path(os.environ["AGENTCTX_HOME"]) / "agentctx.db")
    try:
        row = conn.execute("SELECT meta FROM sessions WHERE session_id = ?", (session,)).fetchone()
    finally:
        conn.close()
    return json.loads(row[0]).get("files", []) if row else []


def _spool() -> list[str]:
    folder = Path(os.environ["AGENTCTX_HOME"]) / "spool"
    names = sorted(path.name for path in folder.iterdir()) if folder.exists() else []
    return [name for name in names if name != ".reserve"]  # the room kept for a full disk is no capture


def test_a_capture_made_while_the_disk_is_full_waits_in_the_spool(
    tmp_path: Path, project: Path, hook_env: dict[str, str]
) -> None:
    base = {"session_id": "full", "cwd": str(project), "transcript_path": str(tmp_path / "t.jsonl")}
    _assert_answered(
        _hook("claude", "SessionStart", {**base, "source": "startup", "hook_event_name": "SessionStart"}, hook_env)
    )
    edit = {
        **base,
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(project / "src" / "a.py"), "content": "x = 1\n"},
        "tool_response": {},
    }
    full = 40_000  # bytes: a capture file fits, the store opens, its WAL cannot grow (COMMIT fails)
    _assert_answered(_hook("claude", "PostToolUse", edit, hook_env, fsize=full))
    assert len(_spool()) == 1
    moved = {**base, "hook_event_name": "CwdChanged", "old_cwd": str(tmp_path), "new_cwd": str(project)}
    prompt = {**base, "hook_event_name": "UserPromptSubmit", "prompt": "how is the cache configured"}
    for event, payload in (("CwdChanged", moved), ("UserPromptSubmit", prompt), ("CwdChanged", moved)):
        _assert_answered(_hook("claude", event, payload, hook_env, fsize=full))  # the store cannot be written
        assert len(_spool()) == 1, event  # still waiting (claimed by a hook that is gone: taken over)
    assert _files_of("full") == []

    _assert_answered(_hook("claude", "UserPromptSubmit", prompt, hook_env))  # room again
    assert _spool() == []
    assert _files_of("full") == ["src/a.py"]
