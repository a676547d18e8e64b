"""The warm search service through real processes: `agentctx serve` on a private Unix socket,
`agentctx hook UserPromptSubmit` as Claude Code runs it, and the keyword path it falls back to.

The model is the tiny ONNX model of `agentctx_embed.tiny`, built here, with synonyms: words that
share a vector and no keyword, as a real model's paraphrases do.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentctx_store import NewRecord, Store, resolve_project
from agentctx_store.inject import HEADER
from agentctx_store.service_link import socket_path

AGENTCTX = Path(sys.executable).with_name("agentctx")
RunHook = Any
pytest.importorskip("agentctx_embed")
if not hasattr(socket, "AF_UNIX"):
    pytest.skip("Unix domain sockets only", allow_module_level=True)

from agentctx_embed.tiny import TINY_MODEL_NAME, build_tiny_model, words_of  # noqa: E402

RULES = [
    ("decision", "Use PostgreSQL as the main database", "All services store their data in PostgreSQL 16."),
    ("decision", "Deploy to Fly.io from GitHub Actions", "Every merge to main deploys through GitHub Actions."),
    ("convention", "Validate request bodies with zod", "Zod schemas check every body at the route boundary."),
    ("decision", "Sessions live in Redis", "Redis keeps sessions with a TTL of one day."),
] + [("convention", f"Widget rule {n}", f"Widget number {n} follows checklist item {n}.") for n in range(24)]
# paraphrases: no keyword in common with the PostgreSQL decision, the same vectors
SYNONYMS = {
    "relational": "postgresql",
    "datastore": "database",
    "persist": "store",
    "microservices": "services",
    "payments": "stripe",
    "charges": "invoices",  # not "bills": Porter stems it as "billing", a word the record holds
    "accounting": "billing",
    "statements": "export",
}
PARAPHRASE = "which relational datastore do the microservices persist into?"
VOCAB = [text for rule in RULES for text in rule[1:]] + [
    # (the paraphrase itself is not in the vocabulary: its other words are unknown to the model)
    "which database do all services store their data in postgresql",
    "banana stand kestrel weather lunch",
    "billing export uses stripe invoices",
]


@pytest.fixture
def tiny_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    # 128 dimensions: unrelated texts then sit near cosine 0 (noise ~ 1/√dims), as with a real model
    folder = build_tiny_model(tmp_path / "tiny", words_of(VOCAB), synonyms=SYNONYMS, dims=128)
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", TINY_MODEL_NAME)
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL_DIR", str(folder))
    env = dict(os.environ)
    env["AGENTCTX_HOOKS_NO_SPAWN"] = "1"
    env["AGENTCTX_WARM_DEADLINE_MS"] = "5000"  # a loaded CI machine: the deadline is tested on its own
    return env


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    project = resolve_project(root)
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    ids: dict[str, str] = {}
    with Store.open() as store:
        for record_type, title, body in RULES:
            ids[title] = store.add(project, NewRecord(type=record_type, title=title, body=body)).record_id
        foreign = store.add(
            resolve_project(other),
            NewRecord(type="decision", title="Use PostgreSQL for the relational datastore", body="Other project."),
        )
        ids["foreign"] = foreign.record_id
    return root, ids


def start_service(env: dict[str, str], *extra: str, cwd: Path | None = None) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [str(AGENTCTX), "serve", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd
    )
    line = _read_line(proc, 120)
    assert line.startswith("agentctx service ready"), (line, proc.stderr.read() if proc.poll() is not None else "")
    _wait_embedded(len(RULES) + 1)
    return proc


def _read_line(proc: subprocess.Popen[str], timeout: float) -> str:
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    return box[0].strip() if box else ""


def ping() -> dict[str, Any]:
    from agentctx_store.service_link import exchange

    return json.loads(exchange(b'{"v": 1, "op": "ping"}', timeout=5))


def _wait_embedded(count: int, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if ping().get("vectors", 0) >= count:
            return
        time.sleep(0.1)
    raise AssertionError(f"the service did not embed {count} records in {timeout} s: {ping()}")


def reap(proc: subprocess.Popen[Any], timeout: float = 30) -> int:
    """Close a child's stdin (an MCP server exits when its session ends), wait for it, close its
    other pipes (an unclosed pipe is a ResourceWarning, an error here)."""
    if proc.stdin is not None:
        proc.stdin.close()
    code = proc.wait(timeout)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
    return code


@pytest.fixture
def service(tiny_env: dict[str, str], project: Any) -> Iterator[subprocess.Popen[str]]:
    proc = start_service(tiny_env)
    yield proc
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGCONT)
        proc.terminate()
    reap(proc)


def prompt_payload(root: Path, session: str, prompt: str) -> dict[str, str]:
    return {"session_id": session, "cwd": str(root), "prompt": prompt, "hook_event_name": "UserPromptSubmit"}


def state_of(session: str) -> dict[str, Any]:
    from agentctx_hooks.state import state_path  # per-session state lives in the data dir

    return json.loads(Path(state_path(session)).read_text(encoding="utf-8"))


def hooks_log_text() -> str:
    path = Path(os.environ["AGENTCTX_HOME"]) / "logs" / "hooks.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def run(run_hook: RunHook, env: dict[str, str], root: Path, session: str, prompt: str, **extra: str) -> str:
    done = run_hook("UserPromptSubmit", prompt_payload(root, session, prompt), **{**env, **extra})
    assert done.code == 0 and not done.err.strip(), done
    return done.out


KEYWORD_PROMPT = "which database do all services store their data in postgresql"


def test_warm_and_keyword_paths_answer_in_the_same_format(
    service: Any, project: Any, tiny_env: dict[str, str], run_hook: RunHook
) -> None:
    root, ids = project
    warm = run(run_hook, tiny_env, root, "warm", KEYWORD_PROMPT)
    cold = run(run_hook, tiny_env, root, "cold", KEYWORD_PROMPT, AGENTCTX_NO_SERVICE="1")
    assert state_of("warm")["served"]["last"] == "warm"
    assert state_of("cold")["served"]["last"] == "keyword"
    assert warm == cold  # same records chosen here: byte-identical hook JSON
    assert ids["Use PostgreSQL as the main database"] in warm
    context = json.loads(warm)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith(HEADER)
    # dedup on the warm path: the same session never gets the record twice
    again = run(run_hook, tiny_env, root, "warm", KEYWORD_PROMPT)
    assert ids["Use PostgreSQL as the main database"] not in again
    # accounting: the service wrote it, as the keyword path does
    with Store.open() as store:
        tokens = dict(store.conn.execute("SELECT session_id, tokens_injected FROM sessions").fetchall())
    assert tokens["warm"] == tokens["cold"] > 0
    with Store.open() as store:  # the record of what was injected says which path served it
        metas = dict(store.conn.execute("SELECT session_id, meta FROM sessions").fetchall())
    assert json.loads(metas["warm"])["prompts_served_warm"] == 1  # the second prompt injected nothing new
    assert "prompts_served_warm" not in json.loads(metas["cold"] or "{}")


SESSION_COLUMNS = (
    "tokens_injected",
    "injections",
    "prompt_injections",
    "prompt_tokens",
    "records_full",
    "records_title",
)


def _recorded(session: str, path: str) -> dict[str, Any]:
    """Everything the store and the session state hold of one session's prompt, with the path's
    name (`prompts_served_<path>`) and the times taken out."""
    with Store.open() as store:
        row = store.conn.execute(
            f"SELECT {', '.join(SESSION_COLUMNS)}, meta FROM sessions WHERE session_id = ?", (session,)
        ).fetchone()
    assert row is not None, f"nothing recorded for {session}"
    meta = json.loads(row[-1] or "{}")
    served = meta.pop(f"prompts_served_{path}", None)
    assert served == 1, (path, meta)
    for entry in meta.get("injections", []):
        assert entry.pop("at")  # when it happened: different, and present on both
    state = state_of(session)
    return {
        "columns": dict(zip(SESSION_COLUMNS, row[:-1], strict=True)),
        "meta": meta,
        "dedup": state.get("injected"),
        "pending left": state.get("pending"),
    }


@pytest.mark.parametrize("client", ["claude", "gemini"])
def test_both_prompt_paths_record_the_same_apart_from_the_paths_name(
    service: Any, project: Any, tiny_env: dict[str, str], client: str
) -> None:
    """One prompt on each path, in the same store, each after a SessionStart that left its
    accounting pending: the session's accounting columns, its metadata (client, the injection
    log with client, hook, ids and tokens), the records' access counts and the hook's dedup
    state are identical, but for the name of the path that served it."""
    from agentctx_hooks import state

    root, ids = project
    chosen = ids["Use PostgreSQL as the main database"]
    event = "BeforeAgent" if client == "gemini" else "UserPromptSubmit"
    recorded: dict[str, dict[str, Any]] = {}
    for path, extra in (("keyword", {"AGENTCTX_NO_SERVICE": "1"}), ("warm", {})):
        session = f"{client}-{path}"
        state.save(session, {"pending": {"tokens": 120, "ids": [ids["Sessions live in Redis"]], "count": 2}})
        with Store.open() as store:
            before = dict(store.conn.execute("SELECT id, access_count FROM records").fetchall())
        done = subprocess.run(
            [str(AGENTCTX), "hook", "--client", client, event],
            input=json.dumps(prompt_payload(root, session, KEYWORD_PROMPT)).encode(),
            capture_output=True,
            env={**tiny_env, **extra},
            timeout=120,
            check=False,
        )
        assert done.returncode == 0 and not done.stderr.strip(), done
        assert chosen.encode() in done.stdout
        assert state_of(session)["served"]["last"] == path
        with Store.open() as store:
            after = dict(store.conn.execute("SELECT id, access_count FROM records").fetchall())
        recorded[path] = _recorded(session, path)
        recorded[path]["accessed"] = {key: after[key] - before[key] for key in after if after[key] != before[key]}
    keyword, warm = recorded["keyword"], recorded["warm"]
    assert warm == keyword
    assert keyword["meta"]["client"] == client
    assert [entry["hook"] for entry in keyword["meta"]["injections"]] == [event]
    assert keyword["meta"]["injections"][0]["ids"] == [chosen]
    assert keyword["columns"]["injections"] == 3  # two pending SessionStart injections and the prompt
    assert keyword["pending left"] is None and keyword["dedup"] == [chosen]


def test_paraphrase_found_only_by_meaning_never_superseded_or_foreign(
    service: Any, project: Any, tiny_env: dict[str, str], run_hook: RunHook
) -> None:
    root, ids = project
    cold = run(run_hook, tiny_env, root, "kw", PARAPHRASE, AGENTCTX_NO_SERVICE="1")
    assert cold == ""  # keyword path: no word in common
    warm = run(run_hook, tiny_env, root, "hy", PARAPHRASE)
    assert ids["Use PostgreSQL as the main database"] in warm
    assert ids["foreign"] not in warm
    # supersede it: the old record's vector is the nearest, but it never comes back
    subprocess.run(
        [
            str(AGENTCTX),
            "supersede",
            ids["Use PostgreSQL as the main database"],
            "--body",
            "All services store their data in SQLite now.",
            "--why",
            "simpler",
            "--project",
            str(root),
        ],
        capture_output=True,
        text=True,
        env=tiny_env,
        check=True,
    )
    out = run(run_hook, tiny_env, root, "hy2", PARAPHRASE)
    assert ids["Use PostgreSQL as the main database"] not in out
    assert ids["foreign"] not in out
    # nothing relevant: nothing injected, on the warm path too
    assert run(run_hook, tiny_env, root, "hy3", "banana stand kestrel weather lunch") == ""
    assert state_of("hy3")["served"]["last"] == "warm"


def test_record_written_by_the_cli_is_found_by_meaning_within_5_s(
    service: Any, project: Any, tiny_env: dict[str, str], run_hook: RunHook
) -> None:
    root, _ids = project
    # no word in common, stemmed or not: found by its vector alone
    prompt = "which payments provider makes the accounting charges in our statements"
    done = subprocess.run(
        [
            str(AGENTCTX),
            "record",
            "-t",
            "decision",
            "--title",
            "Billing export reads Stripe invoices",
            "-b",
            "The billing export uses stripe invoices.",
            "-p",
            str(root),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=tiny_env,
        check=True,
    )
    new_id = json.loads(done.stdout)["id"]
    end = time.monotonic() + 5
    found = False
    session = 0
    while time.monotonic() < end and not found:
        session += 1
        out = run(run_hook, tiny_env, root, f"fresh{session}", prompt)
        found = new_id in out and state_of(f"fresh{session}")["served"]["last"] == "warm"
    assert found
    with Store.open() as store:  # no consolidation ran: the vector lives in the service only
        pending = store.conn.execute("SELECT pending_embedding FROM records WHERE id = ?", (new_id,)).fetchone()[0]
    assert pending == 1


def test_fallback_when_absent_is_silent(project: Any, tiny_env: dict[str, str], run_hook: RunHook) -> None:
    root, ids = project
    out = run(run_hook, tiny_env, root, "absent", KEYWORD_PROMPT)
    assert ids["Use PostgreSQL as the main database"] in out
    assert state_of("absent")["served"]["last"] == "keyword"
    assert "search service" not in hooks_log_text()


def test_fallback_on_a_stale_socket_logs_once_per_session(
    project: Any, tiny_env: dict[str, str], run_hook: RunHook
) -> None:
    root, ids = project
    path = socket_path()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(path)
    dead.close()  # the file stays, nobody listens: what a killed service leaves behind
    expected = run(run_hook, tiny_env, root, "reference", KEYWORD_PROMPT, AGENTCTX_NO_SERVICE="1")
    assert run(run_hook, tiny_env, root, "stale", KEYWORD_PROMPT) == expected.replace("reference", "stale")
    run(run_hook, tiny_env, root, "stale", "how do we deploy with github actions to fly")
    assert hooks_log_text().count("search service did not answer") == 1
    assert ids["Use PostgreSQL as the main database"] in expected


def test_fallback_when_the_service_hangs_or_dies_mid_request(
    service: subprocess.Popen[str], project: Any, tiny_env: dict[str, str], run_hook: RunHook
) -> None:
    root, ids = project
    expected = run(run_hook, tiny_env, root, "ref", KEYWORD_PROMPT, AGENTCTX_NO_SERVICE="1")
    os.kill(service.pid, signal.SIGSTOP)  # hung: connects (kernel backlog), never answers
    started = time.monotonic()
    hung = run(run_hook, tiny_env, root, "hung", KEYWORD_PROMPT, AGENTCTX_WARM_DEADLINE_MS="150")
    assert hung == expected
    assert time.monotonic() - started < 30
    assert state_of("hung")["served"]["last"] == "keyword"
    # killed mid-request: the request is sent, the service dies before it answers
    proc = subprocess.Popen(
        [str(AGENTCTX), "hook", "UserPromptSubmit"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**tiny_env, "AGENTCTX_WARM_DEADLINE_MS": "20000"},
    )
    proc.stdin.write(json.dumps(prompt_payload(root, "killed", KEYWORD_PROMPT)).encode())  # type: ignore[union-attr]
    proc.stdin.close()  # type: ignore[union-attr]
    time.sleep(1.5)
    os.kill(service.pid, signal.SIGKILL)
    out = proc.stdout.read()  # type: ignore[union-attr]
    err = proc.stderr.read()  # type: ignore[union-attr]
    assert reap(proc, 60) == 0 and not err.strip()
    assert out.decode() == expected
    assert state_of("killed")["served"]["last"] == "keyword"
    assert ids["Use PostgreSQL as the main database"] in expected


def test_another_protocol_falls_back(project: Any, tiny_env: dict[str, str], run_hook: RunHook) -> None:
    root, _ids = project
    path = socket_path()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)

    def answer() -> None:
        conn, _ = server.accept()
        conn.recv(65536)
        conn.sendall(b'{"error": "protocol", "protocol": 99}')
        conn.close()

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    expected = run(run_hook, tiny_env, root, "ref2", KEYWORD_PROMPT, AGENTCTX_NO_SERVICE="1")
    assert run(run_hook, tiny_env, root, "ref2b", KEYWORD_PROMPT) == expected.replace("ref2", "ref2b")
    thread.join(10)
    server.close()
    assert "protocol" in hooks_log_text()


def test_one_service_per_data_dir_under_a_race_of_8(tiny_env: dict[str, str], project: Any) -> None:
    procs = [
        subprocess.Popen(
            [str(AGENTCTX), "serve", "--idle-exit", "30"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=tiny_env,
        )
        for _ in range(8)
    ]
    try:
        lines = [_read_line(proc, 120) for proc in procs]
        ready = [line for line in lines if line.startswith("agentctx service ready")]
        others = [line for line in lines if "already runs" in line]
        assert len(ready) == 1, lines
        assert len(others) == 7, lines
        pid = int(re.search(r"pid (\d+)", ready[0]).group(1))  # type: ignore[union-attr]
        assert ping()["pid"] == pid
        assert oct(os.stat(socket_path()).st_mode & 0o777) == "0o600"
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            reap(proc)
    assert not os.path.exists(socket_path())  # a clean stop removes its socket


def test_the_warm_hook_path_imports_no_sqlite3(
    service: Any, project: Any, tiny_env: dict[str, str], tmp_path: Path
) -> None:
    root, _ids = project
    report = tmp_path / "modules.json"
    probe = (
        "import json, os, sys\n"
        "report, real_exit = sys.argv[1], os._exit\n"
        "def exit_and_report(code):\n"
        "    with open(report, 'w', encoding='utf-8') as handle:\n"
        "        json.dump(sorted(sys.modules), handle)\n"
        "    real_exit(code)\n"
        "os._exit = exit_and_report\n"
        "sys.argv = ['agentctx', 'hook', 'UserPromptSubmit']\n"
        "from agentctx.__main__ import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(report)],
        input=json.dumps(prompt_payload(root, "imports", KEYWORD_PROMPT)).encode(),
        env=tiny_env,
        capture_output=True,
        check=True,
        timeout=60,
    )
    assert b"agentctx-record" in done.stdout
    modules = set(json.loads(report.read_text(encoding="utf-8")))
    assert state_of("imports")["served"]["last"] == "warm"
    for name in ("sqlite3", "_sqlite3", "socket", "numpy", "agentctx_store.retrieval", "agentctx_store.store"):
        assert name not in modules, name


def test_peer_of_another_uid_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentctx_embed import service as service_module

    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        assert service_module.peer_is_us(left)
        real = os.getuid()
        monkeypatch.setattr(service_module.os, "getuid", lambda: real + 1)
        assert not service_module.peer_is_us(left)
    finally:
        left.close()
        right.close()


def test_search_status_and_doctor_say_hybrid_and_the_model(
    service: Any, project: Any, tiny_env: dict[str, str]
) -> None:
    root, ids = project

    def cli(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(AGENTCTX), *args], capture_output=True, text=True, env={**tiny_env, **extra}, check=False
        )

    hybrid = json.loads(cli("search", PARAPHRASE, "-p", str(root), "--json").stdout)
    assert hybrid and {hit["mode"] for hit in hybrid} == {"hybrid"}
    assert hybrid[0]["id"] == ids["Use PostgreSQL as the main database"]
    assert ids["foreign"] not in {hit["id"] for hit in hybrid}
    keyword = json.loads(cli("search", KEYWORD_PROMPT, "-p", str(root), "--json", AGENTCTX_NO_SERVICE="1").stdout)
    assert keyword and {hit["mode"] for hit in keyword} == {"keyword"}
    status = json.loads(cli("status", "-p", str(root), "--json").stdout)
    assert status["search_service"]["up"] is True
    assert status["search_service"]["model"] == TINY_MODEL_NAME
    doctor = cli("doctor", "-p", str(root)).stdout
    assert "search service: up" in doctor and TINY_MODEL_NAME in doctor
    # ctx_search (in-process MCP tool logic, ranking through the service's socket)
    from agentctx_mcp import tools

    with Store.open() as store:
        index = tools.search_index(store, resolve_project(root), PARAPHRASE)
    assert index.splitlines()[0] == "mode: hybrid"
    assert ids["Use PostgreSQL as the main database"] in index


def test_status_says_when_the_service_is_down(project: Any, tiny_env: dict[str, str]) -> None:
    root, _ids = project
    done = subprocess.run(
        [str(AGENTCTX), "status", "-p", str(root), "--json"], capture_output=True, text=True, env=tiny_env, check=True
    )
    assert json.loads(done.stdout)["search_service"] == {"up": False}


def _wait_for(predicate: Any, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def _service_pid() -> int | None:
    try:
        return int(ping()["pid"])
    except Exception:
        return None


def test_the_mcp_server_hosts_the_service_and_the_next_one_takes_over(project: Any, tiny_env: dict[str, str]) -> None:
    root, _ids = project
    env = {**tiny_env, "CLAUDE_PROJECT_DIR": str(root)}
    first = subprocess.Popen(
        [str(AGENTCTX), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    second = None
    try:
        assert _wait_for(lambda: _service_pid() is not None, 120), "the first MCP server did not host the service"
        hosted = _service_pid()
        second = subprocess.Popen(
            [str(AGENTCTX), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        time.sleep(8)  # the second one tried and found the lock held
        assert _service_pid() == hosted
        reap(first)  # the session ends: the server exits, its service with it
        assert _wait_for(lambda: _service_pid() not in (None, hosted), 120), "the second MCP server did not take over"
        assert not os.path.exists(f"/proc/{hosted}") or _wait_for(lambda: not os.path.exists(f"/proc/{hosted}"), 30)
    finally:
        for proc in (first, second):
            if proc is not None:
                reap(proc)
    assert _wait_for(lambda: _service_pid() is None, 60), "the service outlived every MCP server"


def test_the_review_gate_holds_on_the_warm_path(
    service: Any, project: Any, tiny_env: dict[str, str], run_hook: RunHook
) -> None:
    root, _ids = project
    with Store.open() as store:
        pending = store.add(
            resolve_project(root),
            NewRecord(
                type="decision",
                title="Billing export reads Stripe invoices",
                body="The billing export uses stripe invoices.",
                source="llm_extraction",
                confidence="inferred",
            ),
        ).record_id
    prompt = "how does the billing export use stripe invoices"
    assert pending in run(run_hook, tiny_env, root, "gate-off", prompt)
    subprocess.run([str(AGENTCTX), "config", "review", "required"], env=tiny_env, check=True, capture_output=True)
    out = run(run_hook, tiny_env, root, "gate-on", prompt)
    assert pending not in out
    assert state_of("gate-on")["served"]["last"] == "warm"


def test_a_prompt_whose_hook_gave_up_is_not_answered_late(service: Any, project: Any) -> None:
    """The service checks the hook's deadline (`budget_ms`) before each heavy step and after
    composing: past it, it answers an error, records no injection and counts it `abandoned`."""
    from agentctx_store.service_link import exchange

    root, ids = project
    before = ping()["abandoned"]
    request = {
        "v": 1,
        "op": "prompt",
        "cwd": str(root),
        "prompt": KEYWORD_PROMPT,
        "session_id": "gave-up",
        "exclude": [],
        "pending": [0, [], 0],
        "budget_ms": 1,  # less than any answer takes: the hook has stopped waiting
    }
    reply = json.loads(exchange(json.dumps(request).encode("utf-8"), timeout=10))
    assert reply.get("error", "").startswith("late"), reply
    assert ping()["abandoned"] == before + 1
    with Store.open() as store:
        injected = _injections(store, "gave-up")
    assert injected == 0
    # the same request with time to spare is answered, and recorded
    reply = json.loads(exchange(json.dumps({**request, "budget_ms": 5000}).encode("utf-8"), timeout=10))
    assert reply.get("ok") and ids["Use PostgreSQL as the main database"] in reply["ids"], reply
    with Store.open() as store:
        injected = _injections(store, "gave-up")
    log = Path(os.environ["AGENTCTX_HOME"]) / "logs" / "service.log"
    assert injected == 1, log.read_text(encoding="utf-8") if log.exists() else "no service log"


def _injections(store: Store, session: str) -> int:
    row = store.conn.execute("SELECT coalesce(sum(injections), 0) FROM sessions WHERE session_id = ?", (session,))
    return int(row.fetchone()[0])


def test_a_grown_project_is_measured_again_in_the_background(
    service: Any, project: Any, tiny_env: dict[str, str], run_hook: RunHook
) -> None:
    """The real service: a project that grew by more than a tenth answers on its last calibration
    and is measured again by the service's own background thread, without a prompt waiting."""
    from agentctx_store import paths

    root, _ids = project
    run(run_hook, tiny_env, root, "first", KEYWORD_PROMPT)  # measured at the first prompt
    path = Path(paths.calibration_path(resolve_project(root).project_id))
    assert json.loads(path.read_text(encoding="utf-8"))["records"] == len(RULES)
    with Store.open() as store:
        for number in range(len(RULES) // 5 + 1):
            store.add(resolve_project(root), NewRecord(type="convention", title=f"Extra rule {number}", body="Extra."))
    run(run_hook, tiny_env, root, "second", KEYWORD_PROMPT)
    assert state_of("second")["served"]["last"] == "warm"
    grown = len(RULES) + len(RULES) // 5 + 1
    assert _wait_for(lambda: json.loads(path.read_text(encoding="utf-8"))["records"] == grown, 30)


def test_the_project_it_starts_in_is_measured_before_any_prompt(tiny_env: dict[str, str], project: Any) -> None:
    """`agentctx serve` (as the MCP server that hosts it) started in a project measures that
    project's floors in the background, so the session's first prompt is answered warm."""
    from agentctx_store import paths

    root, _ids = project
    path = Path(paths.calibration_path(resolve_project(root).project_id))
    assert not path.exists()
    proc = start_service(tiny_env, cwd=root)
    try:
        assert _wait_for(path.exists, 30)
        assert json.loads(path.read_text(encoding="utf-8"))["records"] == len(RULES)
    finally:
        proc.terminate()
        reap(proc)


def test_a_project_imported_while_it_runs_is_measured_without_a_prompt(
    service: Any, tiny_env: dict[str, str], tmp_path: Path
) -> None:
    """`agentctx import` into a new project while the service runs: the service embeds the
    records it is told about and then measures the project, before any prompt asks for it."""
    from agentctx_store import paths

    root = tmp_path / "imported"
    (root / ".git").mkdir(parents=True)
    lines = [
        {"type": "convention", "title": f"{word.capitalize()} rule", "body": f"We always {word} the payloads."}
        for word in ("validate", "compress", "sign", "encrypt", "log", "cache", "retry", "batch", "trace", "hash") * 2
    ]
    file = tmp_path / "records.jsonl"
    file.write_text(
        "".join(json.dumps({**line, "title": f"{line['title']} {n}"}) + "\n" for n, line in enumerate(lines))
    )
    done = subprocess.run(
        [str(AGENTCTX), "import", str(file), "-p", str(root)], capture_output=True, text=True, env=tiny_env, check=False
    )
    assert done.returncode == 0, done.stderr
    path = Path(paths.calibration_path(resolve_project(root).project_id))
    assert _wait_for(path.exists, 30)
    assert json.loads(path.read_text(encoding="utf-8"))["records"] == len(lines)
