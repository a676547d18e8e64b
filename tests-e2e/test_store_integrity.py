"""The store stays whole while long-lived processes share it with short ones.

The warm service (`agentctx serve`, the same one `agentctx mcp` hosts) and the MCP server keep
SQLite connections open for hours while every hook and CLI call opens and closes its own. SQLite
coordinates them with POSIX advisory locks, and those belong to the process: closing *any*
descriptor of the database file drops all of that process's locks on it. A long-lived process
that once opened the file with a plain `open()` (to read its header, say) loses its locks; the
next short process to close its connection believes it is the last one, checkpoints, and
deletes the `-wal` and `-shm` files under the live connection, whose later commits then go to a
deleted file: indexes and table disagree, records vanish.

These tests drive every kind of writer at once, through real processes, for several rounds, and
then check that every record written is there, that `PRAGMA integrity_check` says `ok`, and that
no process ever held a deleted `-wal` or `-shm`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from agentctx_store import NewRecord, Store, resolve_project

pytest.importorskip("agentctx_embed")
if not hasattr(socket, "AF_UNIX") or not Path("/proc/self/fd").is_dir():
    pytest.skip("Unix sockets and /proc only", allow_module_level=True)

from agentctx_embed.tiny import TINY_MODEL_NAME, build_tiny_model, words_of
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

AGENTCTX = Path(sys.executable).with_name("agentctx")
ROUNDS = 6
PROMPT = "which database do the services use, and how is the cache configured"
VOCAB = ["which database do the services use postgresql cache redis configured round decision record"]


@pytest.fixture
def env(tmp_path: Path, isolated_home: Path) -> dict[str, str]:
    folder = build_tiny_model(tmp_path / "tiny", words_of(VOCAB), dims=64)
    values = dict(os.environ)
    values |= {
        "AGENTCTX_EMBED_MODEL": TINY_MODEL_NAME,
        "AGENTCTX_EMBED_MODEL_DIR": str(folder),
        "AGENTCTX_HOOKS_NO_SPAWN": "1",
        "AGENTCTX_WARM_DEADLINE_MS": "5000",
    }
    values.pop("CLAUDE_PROJECT_DIR", None)
    return values


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    with Store.open() as store:  # the store exists before the service starts
        store.add(resolve_project(folder), NewRecord(type="decision", title="Use PostgreSQL", body="The database."))
    return folder


def _read_line(proc: subprocess.Popen[str], timeout: float) -> str:
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    return box[0].strip() if box else ""


@pytest.fixture
def service(env: dict[str, str], root: Path) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [str(AGENTCTX), "serve"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    line = _read_line(proc, 120)
    assert line.startswith("agentctx service ready"), line
    yield proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


def _db_files() -> tuple[str, ...]:
    db = os.path.realpath(os.path.join(os.environ["AGENTCTX_HOME"], "agentctx.db"))
    return db, db + "-wal", db + "-shm"


def deleted_store_files() -> list[str]:
    """Every descriptor, in any process of this machine we may inspect, that points at one of
    the store's files after it was deleted (the kernel shows such a link as `… (deleted)`)."""
    names = _db_files()
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            descriptors = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in descriptors:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.endswith(" (deleted)") and target.removesuffix(" (deleted)") in names:
                found.append(f"pid {pid}: {target}")
    return found


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(AGENTCTX), *args], capture_output=True, text=True, env=env, timeout=120, check=False)


def prompt(env: dict[str, str], root: Path, session: str) -> None:
    payload = {"session_id": session, "cwd": str(root), "prompt": PROMPT, "hook_event_name": "UserPromptSubmit"}
    done = subprocess.run(
        [str(AGENTCTX), "hook", "UserPromptSubmit"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and not done.stderr.strip(), done


def check_whole(expected: dict[str, str]) -> None:
    """Every written record is there under its title; the file is consistent."""
    conn = sqlite3.connect(_db_files()[0])
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        by_index = conn.execute("SELECT count(*) FROM records INDEXED BY records_key").fetchone()[0]
        by_scan = conn.execute("SELECT count(*) FROM records NOT INDEXED").fetchone()[0]
        assert by_index == by_scan
        titles = dict(conn.execute("SELECT id, title FROM records").fetchall())
    finally:
        conn.close()
    missing = {record_id: title for record_id, title in expected.items() if titles.get(record_id) != title}
    assert not missing, f"{len(missing)} of {len(expected)} records lost: {missing}"


def test_cli_writes_and_hooks_beside_the_service_lose_nothing(
    service: subprocess.Popen[str], env: dict[str, str], root: Path
) -> None:
    written: dict[str, str] = {}
    for round_ in range(ROUNDS):
        for n in range(2):
            title = f"Round {round_} decision {n}: use Redis for the cache"
            done = cli(
                env, "record", "-t", "decision", "--title", title, "-b", "Cache config.", "-p", str(root), "--json"
            )
            assert done.returncode == 0, done.stderr
            written[json.loads(done.stdout)["id"]] = title
            prompt(env, root, f"s{round_}-{n}")
        assert not deleted_store_files(), f"round {round_}"
    assert service.poll() is None  # it served every round
    assert not deleted_store_files()
    service.send_signal(signal.SIGTERM)
    service.wait(30)
    check_whole(written)


def test_mcp_cli_and_hook_writers_interleaved_with_the_service_lose_nothing(
    service: subprocess.Popen[str], env: dict[str, str], root: Path
) -> None:
    """The MCP server is a long-lived writer too: its tool calls, the CLI's records, the hooks'
    prompts and the service's own reads, interleaved round after round."""
    written: dict[str, str] = {}

    async def scenario() -> None:
        parameters = StdioServerParameters(
            command=str(AGENTCTX), args=["mcp"], env={**env, "AGENTCTX_NO_SERVICE": "1"}, cwd=str(root)
        )
        with anyio.fail_after(300):
            async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                for round_ in range(ROUNDS):
                    title = f"Round {round_}: the MCP server records the database choice"
                    result = await session.call_tool(
                        "ctx_record", {"type": "decision", "title": title, "body": "Recorded through MCP."}
                    )
                    assert not result.is_error, result
                    text = result.content[0].text  # type: ignore[union-attr]
                    written[json.loads(text)["id"]] = title
                    title = f"Round {round_}: the CLI records the cache choice"
                    done = cli(
                        env,
                        "record",
                        "-t",
                        "convention",
                        "--title",
                        title,
                        "-b",
                        "Via the CLI.",
                        "-p",
                        str(root),
                        "--json",
                    )
                    assert done.returncode == 0, done.stderr
                    written[json.loads(done.stdout)["id"]] = title
                    prompt(env, root, f"m{round_}")
                    found = await session.call_tool("ctx_search", {"query": "database cache"})
                    assert not found.is_error, found
                    assert not deleted_store_files(), f"round {round_}"

    anyio.run(scenario)
    assert service.poll() is None
    assert not deleted_store_files()
    service.send_signal(signal.SIGTERM)
    service.wait(30)
    check_whole(written)


def test_the_service_keeps_its_locks_while_a_store_opens_beside_it(
    service: subprocess.Popen[str], env: dict[str, str], root: Path
) -> None:
    """The mechanism itself: while the service holds its connection, another process's
    connection closing never finds itself alone (the WAL file survives it)."""
    wal = _db_files()[1]
    prompt(env, root, "warm-up")  # the service has opened its connection (and any others)
    time.sleep(0.5)
    for n in range(4):
        done = cli(env, "record", "-t", "decision", "--title", f"Lock check {n}", "-b", "x", "-p", str(root))
        assert done.returncode == 0, done.stderr
        assert os.path.exists(wal), "the last-connection cleanup ran although the service is connected"
        prompt(env, root, f"lock{n}")
    assert not deleted_store_files()


# -- only SQLite opens the store's files -----------------------------------------------------

AUDIT = r"""
import os, sys, traceback
db = os.path.realpath(os.path.join(os.environ["AGENTCTX_HOME"], "agentctx.db"))
names = {db, db + "-wal", db + "-shm", db + "-journal"}
hits = []

def audit(event, args):
    if event != "open" or not args or not isinstance(args[0], (str, bytes)):
        return
    flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
    if flags & os.O_CREAT and flags & os.O_EXCL:
        return  # creating a file that did not exist: nobody can have it open (private.create_file)
    try:
        path = os.path.realpath(os.fsdecode(args[0]))
    except (TypeError, ValueError):
        return
    if path in names:
        hits.append(path + "\n" + "".join(traceback.format_stack(limit=8)[:-1]))

sys.addaudithook(audit)
from typer.testing import CliRunner
from agentctx.cli.app import app
from agentctx_store import NewRecord, Store, resolve_project

root = sys.argv[1]
live = Store.open()  # a connection that stays open, as the service's and the MCP server's do
live.add(resolve_project(root), NewRecord(type="decision", title="Use PostgreSQL", body="The database."))
runner = CliRunner()
commands = [
    ["record", "-t", "convention", "--title", "Use Redis for caching", "-b", "Sessions too.", "-p", root],
    ["search", "database", "-p", root],
    ["status", "-p", root],
    ["status", "--json", "-p", root],
    ["doctor"],
    ["export", "-p", root],
    ["team", "export", "-p", root],
    ["stale", "-p", root],
    ["sync", "-p", root],
    ["review", "--json", "-p", root],
    ["consolidate", "-p", root],
]
for args in commands:
    result = runner.invoke(app, args, catch_exceptions=True)
    print(args[0], result.exit_code, file=sys.stderr)
# the MCP server's tools, in the process (the server is one of the long-lived ones)
os.chdir(root)
from agentctx_mcp import server
print("mcp", int(server.ctx_record("decision", "Use Kafka for events", "Events go to Kafka.").is_error), file=sys.stderr)
print("mcp", int(server.ctx_search("events kafka").is_error), file=sys.stderr)
# the dashboard's API, in the process
from fastapi.testclient import TestClient
from agentctx_ui.app import create_app
with TestClient(create_app(project=resolve_project(root)), base_url="http://127.0.0.1:7327") as client:
    for url in ("/api/records", "/api/meta", "/api/graph", "/api/sessions", "/api/sync", "/api/inbox"):
        print("ui", client.get(url).status_code // 100 * 100, file=sys.stderr)
second = Store.open()
second.close()
live.close()
print("\n\n".join(hits))
"""


def test_only_sqlite_opens_the_store_files_while_a_connection_is_live(root: Path, env: dict[str, str]) -> None:
    """An audit hook sees every Python-level `open()` / `os.open()`; with a connection live in
    the process, every command of the CLI runs in it (as the long-lived processes run the same
    code) and none of them may open the database, its WAL or its shared-memory file."""
    env = {**env, "AGENTCTX_NO_SERVICE": "1", "AGENTCTX_HOOKS_NO_SPAWN": "1"}
    done = subprocess.run(
        [sys.executable, "-c", AUDIT, str(root)], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "", f"the store's files were opened outside SQLite:\n{done.stdout}"
    ran = [line.split(" ") for line in done.stderr.splitlines() if line.count(" ") == 1]
    assert ["record", "0"] in ran and ["search", "0"] in ran and ["status", "0"] in ran, done.stderr[-2000:]
    assert ["mcp", "0"] in ran and ran.count(["ui", "200"]) >= 5, done.stderr[-2000:]


def test_the_audit_catches_a_plain_open_of_the_store(root: Path, env: dict[str, str]) -> None:
    """The audit test above can fail: a plain read of the header beside the live connection is seen."""
    script = AUDIT.replace("for args in commands:", "open(db, 'rb').close()\nfor args in []:")
    done = subprocess.run(
        [sys.executable, "-c", script, str(root)], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "agentctx.db" in done.stdout


def _plain_opens(path: Path) -> list[str]:
    """`open(…)`, `os.open(…)`, `io.open(…)` calls and `Path(…).open/read_bytes/read_text/write_*`
    whose arguments name the store's file (`db_path`, `DB_NAME`, `agentctx.db`, `-wal`, `-shm`)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    store_words = ("db_path", "DB_NAME", "agentctx.db", "-wal", "-shm", "-journal")
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name not in {
            "open",
            "fdopen",
            "read_bytes",
            "read_text",
            "write_bytes",
            "write_text",
            "copy",
            "copy2",
            "copyfile",
        }:
            continue
        if (
            isinstance(func, ast.Attribute)
            and name == "open"
            and ast.unparse(func.value) in {"Store", "cls", "VectorStore", "webbrowser"}
        ):
            continue  # Store.open connects through SQLite
        text = ast.unparse(node)
        if any(word in text for word in store_words):
            found.append(f"{path.name}:{node.lineno}: {text}")
    return found


ALLOWED = {  # the one place, and why it is safe
    "db.py: os.open(path + '-shm', os.O_RDWR)",  # in_use_elsewhere: only in a process with no connection (purge)
}


def test_no_source_module_opens_the_store_with_a_plain_file_open() -> None:
    """Statically, beside the audit: no module of any package opens the store's files by name
    but `db.in_use_elsewhere`, which runs only where the process has no connection of its own.
    (`private.create_file` creates the empty file before any connection to it can exist; it is
    given a plain path, so it is not seen here, and the audit lets exclusive creation pass.)"""
    sources = sorted((Path(__file__).resolve().parents[1] / "packages").glob("*/src/**/*.py"))
    assert len(sources) > 100
    found = [hit for path in sources for hit in _plain_opens(path)]
    offenders = [hit for hit in found if f"{hit.split(':')[0]}: {hit.split(': ', 1)[1]}" not in ALLOWED]
    assert offenders == []
    assert len(found) == len(ALLOWED)  # the allowed place is still seen: the scan works


def test_purge_refuses_while_the_service_holds_the_store(
    service: subprocess.Popen[str], env: dict[str, str], root: Path
) -> None:
    """`uninstall --purge` deletes the database and its WAL by name: beside a live connection
    that would lose what the WAL holds. It refuses in one line, deletes nothing, and purges once
    the service is gone."""
    db = Path(_db_files()[0])
    prompt(env, root, "before-purge")  # the service answers it on its connection, which stays open
    done = cli(env, "uninstall", "--purge", "--yes", "--client", "claude")
    assert done.returncode != 0
    assert "open in another process" in done.stderr and "Nothing was deleted" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert db.exists()
    service.send_signal(signal.SIGTERM)
    service.wait(30)
    done = cli(env, "uninstall", "--purge", "--yes", "--client", "claude")
    assert done.returncode == 0, done.stderr
    assert not db.exists()


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs (root only, as on CI), unmounted after the test."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.decode().strip()})")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_is_one_line_that_says_so_and_loses_nothing(small_disk: Path, env: dict[str, str]) -> None:
    home = small_disk / "home"
    project = small_disk / "proj"
    project.mkdir()
    env = {**env, "AGENTCTX_HOME": str(home), "AGENTCTX_NO_SERVICE": "1"}
    kept = {}
    for n in range(3):
        done = cli(env, "record", "-t", "decision", "--title", f"Kept {n}", "-b", "x", "-p", str(project), "--json")
        assert done.returncode == 0, done.stderr
        kept[json.loads(done.stdout)["id"]] = f"Kept {n}"
    filler = small_disk / "filler"
    with open(filler, "wb", buffering=0) as handle:  # fill the disk to the last byte
        try:
            while True:
                handle.write(b"\0" * 65536)
        except OSError:
            pass
    failed = 0
    for n in range(5):
        body = "y" * 1900
        done = cli(env, "record", "-t", "decision", "--title", f"Lost {n}", "-b", body, "-p", str(project))
        if done.returncode != 0:
            failed += 1
            assert "the disk is full" in done.stderr or "free space" in done.stderr, done.stderr
            assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert failed >= 1
    filler.unlink()
    done = cli(env, "record", "-t", "decision", "--title", "After", "-b", "room again", "-p", str(project), "--json")
    assert done.returncode == 0, done.stderr
    kept[json.loads(done.stdout)["id"]] = "After"
    conn = sqlite3.connect(home / "agentctx.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        titles = dict(conn.execute("SELECT id, title FROM records").fetchall())
    finally:
        conn.close()
    assert all(titles.get(record_id) == title for record_id, title in kept.items())


def _hook(env: dict[str, str], event: str, payload: dict[str, object]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(AGENTCTX), "hook", event],
        input=json.dumps({**payload, "hook_event_name": event}),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and not done.stderr.strip(), done
    return done


def _captures(home: Path) -> list[str]:
    folder = home / "spool"
    return sorted(path.name for path in folder.glob("*.json*")) if folder.exists() else []


def test_a_capture_made_on_a_disk_with_no_byte_left_waits_in_the_spool(small_disk: Path, env: dict[str, str]) -> None:
    """The spool keeps a reserve: on a disk filled to the last byte, a PostToolUse capture gives
    back a slice of it, waits, and reaches the store once there is room; the reserve is refilled."""
    home = small_disk / "home"
    project = small_disk / "proj"
    (project / "src").mkdir(parents=True)
    env = {**env, "AGENTCTX_HOME": str(home), "AGENTCTX_NO_SERVICE": "1"}
    base = {"session_id": "full", "cwd": str(project), "transcript_path": ""}
    edit = {
        **base,
        "tool_name": "Write",
        "tool_input": {"file_path": str(project / "src" / "a.py"), "content": "x = 1\n"},
        "tool_response": {},
    }
    prompt = {**base, "prompt": "how is the cache configured"}
    _hook(env, "SessionStart", {**base, "source": "startup"})
    _hook(env, "PostToolUse", {**edit, "tool_input": {**edit["tool_input"], "file_path": str(project / "b.py")}})
    _hook(env, "UserPromptSubmit", prompt)  # flushes: the store takes it, and the reserve is made
    reserve = home / "spool" / ".reserve"
    assert reserve.stat().st_size > 0 and _captures(home) == []
    filler = small_disk / "filler"
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError:
            pass
    _hook(env, "PostToolUse", edit)
    assert len(_captures(home)) == 1  # written into the room the reserve gave back
    assert "used the spool's reserve" in (home / "logs" / "hooks.log").read_text(encoding="utf-8", errors="replace")
    filler.unlink()
    _hook(env, "UserPromptSubmit", prompt)
    assert _captures(home) == []
    conn = sqlite3.connect(home / "agentctx.db")
    try:
        meta = json.loads(conn.execute("SELECT meta FROM sessions WHERE session_id = 'full'").fetchone()[0])
    finally:
        conn.close()
    assert "src/a.py" in meta.get("files", [])
    assert reserve.stat().st_size == 256 * 1024  # refilled
