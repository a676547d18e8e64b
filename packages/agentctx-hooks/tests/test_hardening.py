"""Issue 13 on the hook path: session state in the data dir, bounded transcript reads, no
phantom projects, captures without secrets in private files."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentctx_store import NewRecord, Project, Store, paths

from agentctx_hooks import spool, state
from agentctx_hooks.session_start import _replays_hook_context

Hook = Callable[..., dict[str, Any] | None]

Payload = Callable[..., dict[str, Any]]
TOKEN = "ghp_HTQi5TMpUFn3NcLSLcwLUKvlsmkYRJh5okeB"
PASSWORD = "S3cr3tPassw0rd"
FAILING = f"GITHUB_TOKEN={TOKEN} PGPASSWORD={PASSWORD} pytest tests/"
ERROR = (
    'Exit code 1\nTraceback (most recent call last):\n  File "t.py", line 3\n'
    f"psycopg.OperationalError: connection to postgres://app:{PASSWORD}@db.internal:5432/app failed\n1 failed"
)


# -- 7. state under the data dir --------------------------------------------------------------


def test_session_state_lives_in_the_data_dir_not_the_temp_dir() -> None:
    state.save("s-1", {"injected": ["A"]})
    assert Path(state.state_path("s-1")).parent == Path(paths.home()) / "state"
    assert not [name for name in os.listdir(os.environ["TMPDIR"]) if name.startswith("agentctx-")]


def test_dedup_survives_a_resume_under_another_tmpdir(
    hook: Hook, payload: Payload, project: Project, project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Store.open() as store:
        store.add(project, NewRecord(type="decision", title="Redis for the job queue", body="Redis streams hold jobs."))
    first = hook("UserPromptSubmit", payload("UserPromptSubmit", project_dir, "resumed", prompt="redis job queue?"))
    assert first is not None and "Redis for the job queue" in first["hookSpecificOutput"]["additionalContext"]
    other = tmp_path / "other-tmp"
    other.mkdir()
    monkeypatch.setenv("TMPDIR", str(other))  # the resumed session's hooks run with another TMPDIR
    again = hook("UserPromptSubmit", payload("UserPromptSubmit", project_dir, "resumed", prompt="redis job queue?"))
    assert again is None


def test_hostile_session_ids_never_share_a_file() -> None:
    ids = ["..", ".", "_", "a/b", "a_b", "a\\b", "x" * 97, "x" * 96, "é", "_~0", ""]
    files = {state.state_path(value) for value in ids if value}
    assert len(files) == len([value for value in ids if value])
    for value in ids[:-1]:
        assert Path(state.state_path(value)).parent == Path(state.state_dir())
    state.save("..", {"injected": ["A"]})
    state.save(".", {"injected": ["B"]})
    assert state.injected_ids(state.load("..")) == ["A"] and state.injected_ids(state.load(".")) == ["B"]


def test_prune_removes_only_old_state_of_ours() -> None:
    state.save("old", {"injected": []})
    state.save("new", {"injected": []})
    directory = Path(state.state_dir())
    foreign = directory / "notes.txt"
    foreign.write_text("mine", encoding="utf-8")
    month_ago = time.time() - 31 * 86400
    for name in ("old.json", "notes.txt"):
        os.utime(directory / name, (month_ago, month_ago))
    assert state.prune() == 1
    assert sorted(path.name for path in directory.iterdir()) == ["new.json", "notes.txt"]


def test_state_spool_and_log_files_are_private(hook: Hook, payload: Payload, project_dir: Path) -> None:
    os.umask(0o022)
    try:
        bash = payload(
            "PostToolUseFailure",
            project_dir,
            "modes",
            tool_name="Bash",
            tool_input={"command": FAILING},
            error=ERROR,
        )
        hook("PostToolUseFailure", bash)
        state.save("modes", {"injected": []})
        from agentctx_hooks import log

        log.write("test", "a line")
    finally:
        os.umask(0o022)
    home = Path(paths.home())
    assert stat.S_IMODE(os.stat(home / "state").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(home / "spool").st_mode) == 0o700
    for path in [*Path(spool.spool_dir()).iterdir(), Path(state.state_path("modes")), home / "logs" / "hooks.log"]:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path


# -- 1. captures: nothing secret in the spool, the store or the session metadata ---------------


def test_a_failing_command_with_secrets_leaves_none_anywhere(
    hook: Hook, payload: Payload, project: Project, project_dir: Path
) -> None:
    bash = payload(
        "PostToolUseFailure", project_dir, "leak", tool_name="Bash", tool_input={"command": FAILING}, error=ERROR
    )
    hook("PostToolUseFailure", bash)
    spooled = "".join(path.read_text(encoding="utf-8") for path in Path(spool.spool_dir()).iterdir())
    assert spooled and TOKEN not in spooled and PASSWORD not in spooled
    assert "[REDACTED:" in spooled
    hook("UserPromptSubmit", payload("UserPromptSubmit", project_dir, "leak", prompt="why did pytest fail?"))
    with Store.open() as store:
        rows = [
            tuple(row)
            for table in ("records", "sessions", "nodes")
            for row in store.conn.execute(f"SELECT * FROM {table}")
        ]
        bugfix = store.list_records(project, types=["bugfix"])
    dumped = json.dumps(rows, default=str)
    assert bugfix, "the failure still makes a bugfix stub"
    assert TOKEN not in dumped and PASSWORD not in dumped
    assert "pytest tests/" in dumped  # the command itself is kept, only its secrets go


# -- 5. bounded transcript reads ---------------------------------------------------------------


def _session_start_process(project_dir: Path, transcript: str) -> subprocess.CompletedProcess[bytes]:
    payload = {
        "session_id": "resume-1",
        "transcript_path": transcript,
        "cwd": str(project_dir),
        "hook_event_name": "SessionStart",
        "source": "resume",
    }
    code = "import sys; from agentctx_hooks.__main__ import main; sys.exit(main(['SessionStart']))"
    return subprocess.run(
        [sys.executable, "-c", code], input=json.dumps(payload).encode(), capture_output=True, timeout=30, check=False
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_transcript_does_not_hang_session_start(project_dir: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "transcript.fifo"
    os.mkfifo(fifo)
    done = _session_start_process(project_dir, str(fifo))  # no writer ever comes: open() used to block
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_an_endless_device_transcript_does_not_hang_session_start(project_dir: Path, device: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    done = _session_start_process(project_dir, device)
    assert done.returncode == 0, done.stderr
    assert _replays_hook_context(device) is True  # not a regular file: treated as unreadable


def test_a_huge_transcript_is_read_only_at_its_head(tmp_path: Path) -> None:
    huge = tmp_path / "huge.jsonl"
    with open(huge, "wb") as handle:
        handle.truncate(2 << 30)  # 2 GB, sparse: reading it all took 6.8 s
        handle.seek((2 << 30) - 100)
        handle.write(b'{"type":"hook_additional_context"}\n')  # only past the bounded head
    started = time.perf_counter()
    assert _replays_hook_context(str(huge)) is False
    assert time.perf_counter() - started < 5  # a bounded read, not 2 GB (generous: shared CPUs)


# -- 9. phantom projects -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_session_start_in_a_cwd_that_is_not_a_directory_creates_nothing(
    hook: Hook, payload: Payload, tmp_path: Path, kind: str
) -> None:
    cwd = tmp_path / "gone"
    if kind == "file":
        cwd.write_text("not a directory", encoding="utf-8")
    assert hook("SessionStart", payload("SessionStart", cwd, "phantom", source="startup")) is None
    assert hook("CwdChanged", payload("CwdChanged", cwd, "phantom", old_cwd="/", new_cwd=str(cwd))) is None
    with Store.open() as store:
        assert store.list_projects() == []
    digests = Path(paths.home()) / "digests"
    assert not digests.exists() or not list(digests.iterdir())
    assert "no usable cwd" in (Path(paths.home()) / "logs" / "hooks.log").read_text(encoding="utf-8")


# -- 1. prompts: kept in the state only when they plainly hold no secret ------------------------


def test_a_prompt_with_a_secret_is_never_kept(hook: Hook, payload: Payload, project_dir: Path) -> None:
    import sys as _sys

    _sys.path.append(str(Path(__file__).resolve().parents[2] / "agentctx-store" / "tests"))
    from secrets_corpus import NEAR_MISSES, SECRETS

    for _label, text, _secret in SECRETS:
        assert not state.is_plain(text)
        hook("UserPromptSubmit", payload("UserPromptSubmit", project_dir, "prompts", prompt=text))
    hook(
        "UserPromptSubmit", payload("UserPromptSubmit", project_dir, "prompts", prompt="Look up the database decision")
    )
    kept = state.load("prompts").get("prompts")
    assert kept == ["Look up the database decision"]
    from agentctx_store.redact import redact_text

    for _label, text in NEAR_MISSES:  # what is kept is never something the redactor would change
        if state.is_plain(text):
            assert redact_text(text) == text


def test_state_keys_name_every_key_the_hooks_write() -> None:
    """`uninstall --purge` recognises our state files by these keys: a hook that keeps a new one
    must name it in `state.KEYS`, or purge would leave its files behind as foreign."""
    import ast

    from agentctx_hooks import state, warm

    source_dir = Path(state.__file__).parent
    written: set[str] = {warm.SERVED_KEY, warm.LOGGED_KEY}
    for module in source_dir.glob("*.py"):
        if module.name == "__main__.py":  # its `data` is the hook payload, not session state
            continue
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id == "data"
                and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, str)
            ):
                written.add(node.slice.value)
    assert written <= state.KEYS, sorted(written - state.KEYS)


# -- bounded transcript reads in Stop / PreCompact, and paths no file system call accepts -------


def _transcript_of(kind: str, tmp_path: Path) -> str:
    if kind == "fifo":
        fifo = tmp_path / "t.fifo"
        os.mkfifo(fifo)
        return str(fifo)
    if kind == "sparse":
        huge = tmp_path / "huge.jsonl"
        with open(huge, "wb") as handle:
            handle.truncate(2 << 30)
        return str(huge)
    return "/dev/zero"


@pytest.mark.parametrize("kind", ["fifo", "zero", "sparse"])
def test_the_stop_scan_reads_only_a_bounded_regular_file(kind: str, tmp_path: Path) -> None:
    from agentctx_hooks import unextracted

    data: dict[str, Any] = {}
    code = (
        "import sys; from agentctx_hooks.unextracted import scan; "
        "print(scan(sys.argv[1], {}))"
    )  # a process of its own: a FIFO used to block the open for good
    done = subprocess.run(
        [sys.executable, "-c", code, _transcript_of(kind, tmp_path)], capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == b"0", done.stderr
    assert unextracted.scan(_transcript_of("zero", tmp_path), data) == 0 and data["scan"]["offset"] == 0


@pytest.mark.parametrize("bad", ["\ud800/t.jsonl", "/tmp/a\x00b.jsonl"])
def test_a_stop_with_an_unusable_transcript_path_leaves_no_marker(
    bad: str, hook: Hook, payload: Payload, project_dir: Path
) -> None:
    from agentctx_hooks import extraction, log

    assert hook("Stop", payload("Stop", project_dir, "poison", transcript_path=bad)) is None
    assert not os.path.exists(extraction.marker_path("poison"))
    lines = Path(log.log_path()).read_text(encoding="utf-8")
    assert lines.count("transcript_path not usable") == 1 and "Error" not in lines


def test_an_unusable_marker_is_dropped_and_the_others_are_swept(
    hook: Hook, payload: Payload, project_dir: Path, tmp_path: Path
) -> None:
    from agentctx_store.projects import resolve_project

    from agentctx_hooks import extraction, log

    project_id = resolve_project(str(project_dir)).project_id
    transcript = tmp_path / "crashed.jsonl"
    transcript.write_text("{}\n", encoding="utf-8")
    folder = Path(extraction.open_dir())
    folder.mkdir(parents=True, exist_ok=True)
    good = {"session_id": "z-crashed", "project_id": project_id, "cwd": str(project_dir), "transcript": str(transcript)}
    bad_texts = {
        "a-surrogate.json": json.dumps({**good, "session_id": "a1", "transcript": "\ud800x"}),  # an older version's
        "a-nul.json": json.dumps({**good, "session_id": "a2", "transcript": "x\x00y"}),
        "a-not-json.json": '{"session_id": "a3"',
        "a-list.json": "[1, 2]",
        "a-types.json": json.dumps({**good, "session_id": 7}),
    }
    for name, text in bad_texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "z-crashed.json").write_text(json.dumps({**good, "pid": 2**22 + 12345}), encoding="utf-8")

    hook("SessionStart", payload("SessionStart", project_dir, "new", source="startup"))

    lines = Path(log.log_path()).read_text(encoding="utf-8")
    assert "agentctx extract --session-id z-crashed" in lines  # swept, after the bad ones
    assert sorted(path.name for path in folder.iterdir()) == ["new.json", "z-crashed.json"]
    assert lines.count("dropped the open-session marker") == len(bad_texts)
    assert "UnicodeEncodeError" not in lines and "ValueError" not in lines
