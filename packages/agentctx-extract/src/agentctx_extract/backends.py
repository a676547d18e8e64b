"""Which backend makes agentctx's model calls, and the headless coding-agent backends.

`config llm = auto | api | client | off`. `auto` keeps the Anthropic API when `ANTHROPIC_API_KEY`
(or `ANTHROPIC_AUTH_TOKEN`) is set, with its prompt caching and exact prices; without a key it runs
the call through the coding agent that ran the session (`claude -p`, `codex exec`, `gemini -p`),
headless, with the user's own sign-in. Extraction, `learn --llm` and re-verification share it.

A headless run is one child process with everything of the user's that could react to it
switched off (docs/extraction.md, "Through your coding agent"): no hooks (ours or theirs), no MCP
servers, no tools, no instruction files or memory, no session left in the client's history, in a
fresh empty working directory, with `AGENTCTX_HEADLESS=1` and `AGENTCTX_HOOKS_NO_SPAWN=1` in its
environment. It is killed with its process group at the timeout.
`ClientCaller.call` has the signature of `llm.Caller.call`, so the pipeline is the same for both.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import tomllib
import uuid
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from agentctx_store import clients, paths
from agentctx_store.budget import estimate_tokens
from agentctx_store.config import llm_enabled
from agentctx_store.jsontext import is_object

from agentctx_extract.llm import CallFailed, Usage, json_in_text
from agentctx_extract.schema import MalformedOutput

log = logging.getLogger("agentctx.extract")

KEY_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
HEADLESS_ENV = "AGENTCTX_HEADLESS"  # set in a headless run's environment, so a child can tell
DEFAULT_CLIENT_TIMEOUT_S = 180.0
PROBLEM_RETRY_S = 3600.0  # a client found not signed in is not spawned again for an hour
OUTPUT_CAP = 4 * 1024 * 1024  # bytes of a client's stdout read (an answer is a few KB)
SIGN_IN = re.compile(
    r"(not (?:logged|signed) in|please (?:run )?/?login|log ?in required|sign ?in|invalid api key|"
    r"unauthori[sz]ed|\b401\b|auth(?:entication)? (?:method|required|failed)|api key (?:not|is not|missing))",
    re.IGNORECASE,
)


def has_api_key() -> bool:
    return any(os.environ.get(name) for name in KEY_VARIABLES)


@dataclass(frozen=True, kw_only=True)
class Choice:
    """The backend a run uses (`api`, a client name, or None: no call) and why, in one line."""

    backend: str | None
    status: str  # "ok", or why nothing is sent: "disabled", "no_key", "no_client"
    reason: str

    @property
    def is_client(self) -> bool:
        return self.backend in clients.CLIENTS


def client_binary(name: str) -> str | None:
    return shutil.which(clients.CLIENTS[name].binary)


def choose(settings: Mapping[str, Any], client: str | None = None) -> Choice:
    """The backend for a run of the session's `client` (else, and for learn and re-verification,
    the first installed client, in the registry's order, that has a headless mode)."""
    mode = str(settings.get("llm", "auto"))
    if not llm_enabled(dict(settings)):
        return Choice(backend=None, status="disabled", reason="llm = off: no model calls")
    if mode in ("auto", "api") and has_api_key():
        return Choice(backend="api", status="ok", reason="the Anthropic API (ANTHROPIC_API_KEY is set)")
    if mode == "api":
        return Choice(backend=None, status="no_key", reason="llm = api but ANTHROPIC_API_KEY is not set")
    why = "llm = client" if mode == "client" else "no ANTHROPIC_API_KEY"
    # the session's own client first; another installed one when it is not on PATH
    order = [name for name, entry in clients.CLIENTS.items() if entry.headless]
    candidates = [name for name in (client, *order) if name in order]
    candidates = list(dict.fromkeys(candidates))
    for name in candidates:
        if name and client_binary(name):
            problem = known_problem(name)
            if problem:
                return Choice(backend=None, status="no_client", reason=problem)
            return Choice(
                backend=name,
                status="ok",
                reason=f"{clients.CLIENTS[name].label} headless (`{clients.CLIENTS[name].headless}`) with its own sign-in ({why})",
            )
    wanted = ", ".join(f"`{clients.CLIENTS[name].binary}`" for name in candidates if name)
    return Choice(
        backend=None,
        status="no_client" if mode == "client" else "no_key",
        reason=f"{why} and no coding agent to run it through ({wanted} not on PATH)",
    )


# -- problems noted once ---------------------------------------------------------------------------


def _problems_path() -> Path:
    return Path(paths.home()) / "state" / "llm-client-problems.json"


def _read_problems() -> dict[str, Any]:
    try:
        data = json.loads(_problems_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if is_object(data) else {}


def known_problem(name: str, *, now: float | None = None) -> str:
    """The sign-in problem noted for this client within the last hour ("" if none)."""
    entry = _read_problems().get(name)
    if not is_object(entry):
        return ""
    if (now or time.time()) - float(entry.get("at", 0) or 0) > PROBLEM_RETRY_S:
        return ""
    return str(entry.get("message", ""))


def note_problem(name: str, message: str | None) -> bool:
    """Remember (or, with None, forget) a client's sign-in problem; True when it is news (the
    first time it is seen: that run logs it as a warning, later ones do not)."""
    problems = _read_problems()
    before = problems.get(name)
    if message is None:
        if before is None:
            return False
        problems.pop(name)
    else:
        problems[name] = {"message": message, "at": time.time()}
    path = _problems_path()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(problems), encoding="utf-8")
        os.replace(tmp, path)
    return message is not None and not (is_object(before) and before.get("message") == message)


# -- one headless run at a time per data dir -------------------------------------------------------


@contextlib.contextmanager
def client_slot(wait_s: float) -> Generator[bool]:
    """Yields True once this process holds the data dir's headless-run lock (waiting up to
    `wait_s`), False when another run kept it that long. An flock: a dead holder frees it."""
    path = Path(paths.home()) / "locks" / "extract-client.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(0.2)
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# -- the headless caller ---------------------------------------------------------------------------


def strict_schema(schema: Any) -> Any:
    """A JSON schema as OpenAI's strict structured output takes it: every object closed
    (`additionalProperties: false`) with all its properties required (an optional one may be
    null), and no length keywords (our own validation checks those)."""
    if isinstance(schema, list):
        return [strict_schema(item) for item in cast("list[Any]", schema)]
    if not is_object(schema):
        return schema
    out = {
        key: strict_schema(value)
        for key, value in schema.items()
        if key not in ("minLength", "maxLength", "maxItems", "minItems")
    }
    if out.get("type") == "object" and is_object(out.get("properties")):
        required = set(schema.get("required", []))
        properties = dict(out["properties"])
        for key, value in properties.items():
            if key not in required and is_object(value) and isinstance(value.get("type"), str):
                properties[key] = {**value, "type": [value["type"], "null"]}
        out.update(properties=properties, required=list(properties), additionalProperties=False)
    return out


def _system_text(system: Any) -> str:
    if isinstance(system, str):
        return system
    blocks: list[Any] = list(system or [])
    return "\n\n".join(str(block.get("text", "")) for block in blocks if is_object(block))


def _answer_note(tool: dict[str, Any], *, with_schema: bool) -> str:
    note = (
        f"\n\nIn this run there is no `{tool['name']}` tool: your whole answer is the tool's input, ONE JSON "
        "object, with no prose and no code fence."
    )
    if with_schema:
        note += f" Its JSON schema:\n{json.dumps(tool['input_schema'], separators=(',', ':'))}"
    return note


def parse_json_answer(text: str) -> Any:
    """A JSON object from a text answer (a code fence around it is tolerated).

    Raises:
        MalformedOutput: no JSON object in it.
    """
    return json_in_text(text, "no JSON object in the client's answer")


@dataclass(frozen=True, kw_only=True)
class RunResult:
    answer: Any
    usage: Usage


class ClientCaller:
    """Makes model calls through one client's headless mode; `call` is `llm.Caller.call`'s twin.
    Safe to share between threads (usage is summed under a lock)."""

    def __init__(self, name: str, *, model: str = "", timeout_s: float | None = None) -> None:
        self.name = name
        self.model = model
        self.timeout_s = timeout_s if timeout_s is not None else client_timeout()
        self.usage = Usage()
        self._lock = threading.Lock()
        self.binary = client_binary(name) or clients.CLIENTS[name].binary

    def _count(self, usage: Usage) -> None:
        with self._lock:
            self.usage = self.usage + usage

    def call(self, user_text: str, *, label: str, system: Any = None, tool: dict[str, Any] | None = None) -> Any:
        """One headless run; returns the answer object (validated by the caller). A text answer
        that is not JSON (where the client has no structured output) is asked for once more.

        Raises:
            CallFailed: the client is missing, not signed in, timed out, failed, or answered no JSON.
        """
        from agentctx_extract.prompt import TOOL, system_blocks

        tool = tool or TOOL
        system_text = _system_text(system if system is not None else system_blocks(cache=False))
        attempts = 1 if clients.CLIENTS[self.name].structured_output else 2  # else strict parsing, one retry
        for attempt in range(1, attempts + 1):
            result = self._run_once(user_text, system_text, tool, label=label)
            if not isinstance(result, MalformedOutput):
                return _drop_nulls(result, tool["input_schema"])
            if attempt == attempts:
                raise CallFailed(f"{label}: malformed answer from {self.name}: {result}")
            log.info("%s: %s answered no JSON object; asking once more", label, self.name)
        raise CallFailed(f"{label}: no attempt made")  # attempts >= 1, so never reached

    def _run_once(self, user_text: str, system_text: str, tool: dict[str, Any], *, label: str) -> Any:
        with tempfile.TemporaryDirectory(prefix="agentctx-headless-") as scratch:
            workdir = Path(scratch) / f"agentctx-headless-{uuid.uuid4().hex[:12]}"
            workdir.mkdir()
            argv, stdin, env = self._command(workdir, Path(scratch), user_text, system_text, tool)
            try:
                stdout, stderr, code = run_bounded(argv, stdin=stdin, env=env, cwd=workdir, timeout_s=self.timeout_s)
            finally:
                self._forget_history(workdir)
            if code is None:
                raise CallFailed(f"{label}: {self.name} did not answer within {self.timeout_s:.0f}s; killed")
        return self._read(stdout, stderr, code, user_text, system_text, label=label)

    # each client: its command line, and how its output reads

    def _command(
        self, workdir: Path, scratch: Path, user_text: str, system_text: str, tool: dict[str, Any]
    ) -> tuple[list[str], str, dict[str, str]]:
        env = {**os.environ, HEADLESS_ENV: "1", "AGENTCTX_HOOKS_NO_SPAWN": "1"}
        for name in KEY_VARIABLES:  # `llm = client` with a key set: the client's own sign-in, not our key
            env.pop(name, None)
        if self.name == "claude":
            settings = {"disableAllHooks": True, "autoMemoryEnabled": False}
            argv = [
                self.binary,
                "-p",
                "--output-format",
                "json",
                "--json-schema",
                json.dumps(tool["input_schema"]),
                "--tools",
                "",
                "--no-session-persistence",
                "--strict-mcp-config",
                "--settings",
                json.dumps(settings),
                "--disable-slash-commands",
                "--system-prompt",
                system_text + _answer_note(tool, with_schema=False),
            ]
            if self.model:
                argv += ["--model", self.model]
            env.update(CLAUDE_CODE_DISABLE_CLAUDE_MDS="1", CLAUDE_CODE_DISABLE_AUTO_MEMORY="1", DISABLE_AUTOUPDATER="1")
            return argv, user_text, env
        if self.name == "codex":
            schema_file = scratch / "schema.json"
            schema_file.write_text(json.dumps(strict_schema(tool["input_schema"])), encoding="utf-8")
            system_file = scratch / "instructions.md"  # replaces Codex's own base instructions
            system_file.write_text(system_text + _answer_note(tool, with_schema=False), encoding="utf-8")
            argv = [
                self.binary,
                "exec",
                "--json",
                "--ephemeral",
                "--ignore-rules",
                "--skip-git-repo-check",
                "--sandbox",
                "read-only",
                "--cd",
                str(workdir),
                "--output-schema",
                str(schema_file),
                "--config",
                "project_doc_max_bytes=0",
                "--config",
                f"model_instructions_file={json.dumps(str(system_file))}",
            ]
            for feature in ("hooks", "plugins", "memories", "apps"):
                argv += ["--disable", feature]
            for server in codex_mcp_servers(env):  # a dotted path: bare names only (Codex splits on dots)
                argv += ["--config", f"mcp_servers.{server}.enabled=false"]
            argv.append("-")
            return argv, user_text, env
        # gemini: no schema option; our system prompt replaces its own, strict parsing and one retry
        system_file = scratch / "system.md"
        system_file.write_text(system_text + _answer_note(tool, with_schema=True), encoding="utf-8")
        gemini_settings = workdir / ".gemini" / "settings.json"
        gemini_settings.parent.mkdir()
        gemini_settings.write_text(
            json.dumps(
                {
                    "hooksConfig": {"enabled": False},
                    "experimental": {"autoMemory": False},
                    "general": {"checkpointing": {"enabled": False}},
                }
            ),
            encoding="utf-8",
        )
        env.update(GEMINI_SYSTEM_MD=str(system_file), GEMINI_CLI_TRUST_WORKSPACE="true")
        argv = [
            self.binary,
            "--output-format",
            "json",
            "--skip-trust",
            "--approval-mode",
            "plan",
            "--extensions",
            "none",
            "--allowed-mcp-server-names",
            "agentctx-headless-none",
            "--session-id",
            str(uuid.uuid4()),
            "--prompt",
            "",
        ]
        if self.model:
            argv += ["--model", self.model]
        return argv, user_text, env

    def _forget_history(self, workdir: Path) -> None:
        """Gemini records every chat under its project's temp dir, named after the working
        directory; ours is a fresh one, so that record and its history folder are ours to drop."""
        if self.name != "gemini":
            return
        home = Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()) / ".gemini"
        for folder in ("tmp", "history"):
            for target in (home / folder).glob(f"{workdir.name}*"):
                if not target.is_dir() or target.is_symlink():
                    continue
                try:
                    ours = (target / ".project_root").read_text(encoding="utf-8").strip() == str(workdir)
                except OSError:
                    ours = False
                if ours:
                    shutil.rmtree(target, ignore_errors=True)

    def _read(self, stdout: str, stderr: str, code: int, user_text: str, system_text: str, *, label: str) -> Any:
        """The answer (or a `MalformedOutput` to retry); counts usage (the client's figures, else
        our estimate of what was sent and received)."""
        text, usage, error = "", None, ""
        structured: Any = None
        if self.name == "claude":
            result = _last_json(stdout)
            if is_object(result):
                text = str(result.get("result") or "")
                structured = result.get("structured_output")
                raw = result.get("usage")
                if is_object(raw):
                    usage = Usage(
                        input_tokens=int(raw.get("input_tokens", 0) or 0),
                        output_tokens=int(raw.get("output_tokens", 0) or 0),
                        cache_write_tokens=int(raw.get("cache_creation_input_tokens", 0) or 0),
                        cache_read_tokens=int(raw.get("cache_read_input_tokens", 0) or 0),
                        calls=1,
                    )
                if result.get("is_error"):
                    error = text or str(result.get("subtype") or "error")
        elif self.name == "codex":
            for line in stdout.splitlines():
                with contextlib.suppress(ValueError):
                    event = json.loads(line)
                    if not is_object(event):
                        continue
                    item = event.get("item")
                    if (
                        event.get("type") == "item.completed"
                        and is_object(item)
                        and item.get("type") == "agent_message"
                    ):
                        text = str(item.get("text") or "")
                    if event.get("type") == "turn.completed" and is_object(event.get("usage")):
                        raw = event["usage"]
                        usage = Usage(
                            input_tokens=int(raw.get("input_tokens", 0) or 0)
                            - int(raw.get("cached_input_tokens", 0) or 0),
                            cache_read_tokens=int(raw.get("cached_input_tokens", 0) or 0),
                            output_tokens=int(raw.get("output_tokens", 0) or 0),
                            calls=1,
                        )
                    if event.get("type") in ("turn.failed", "error"):
                        failure: dict[str, Any] = event["error"] if is_object(event.get("error")) else event
                        error = str(failure.get("message") or "turn failed")
        else:
            result = _last_json(stdout)
            if is_object(result):
                text = str(result.get("response") or "")
                if is_object(result.get("error")):
                    error = str(result["error"].get("message") or "error")
                usage = _gemini_usage(result.get("stats"))
        if usage is None or not usage.calls:
            # no figures from the client: our (conservative) estimate of what went each way
            usage = Usage(
                input_tokens=estimate_tokens(system_text) + estimate_tokens(user_text),
                output_tokens=estimate_tokens(text),
                calls=1,
            )
        self._count(usage)
        log.info(
            "%s: via %s, %d input, %d cache read, %d output tokens",
            label,
            self.name,
            usage.input_tokens,
            usage.cache_read_tokens,
            usage.output_tokens,
        )
        if code != 0 or error:
            detail = error or stderr.strip().splitlines()[-1:] or [f"exit {code}"]
            message = detail if isinstance(detail, str) else detail[0]
            if SIGN_IN.search(f"{error}\n{stderr[-4000:]}"):
                problem = f"{clients.CLIENTS[self.name].label} is not signed in (run `{self.name}` and sign in)"
                if note_problem(self.name, problem):
                    log.warning("%s: %s; extraction waits for it", label, problem)
                raise CallFailed(f"{label}: {problem}")
            raise CallFailed(f"{label}: {self.name} failed: {message[:300]}")
        note_problem(self.name, None)
        if structured is not None:
            return structured
        try:
            return parse_json_answer(text)
        except MalformedOutput as exc:
            return exc


def _gemini_usage(stats: Any) -> Usage | None:
    models = stats.get("models") if is_object(stats) else None
    if not is_object(models):
        return None
    total = Usage()
    for entry in models.values():
        tokens = entry.get("tokens") if is_object(entry) else None
        if not is_object(tokens):
            continue
        api: dict[str, Any] = entry["api"] if is_object(entry.get("api")) else {}
        cached = int(tokens.get("cached", 0) or 0)
        total = total + Usage(
            input_tokens=int(tokens.get("prompt", tokens.get("input", 0)) or 0) - cached,
            cache_read_tokens=cached,
            output_tokens=int(tokens.get("candidates", 0) or 0),
            calls=max(1, int(api.get("totalRequests", 1) or 1)),
        )
    return total if total.calls else None


def _last_json(stdout: str) -> Any:
    """The JSON object a client printed (after any warning lines before it)."""
    start = stdout.find("{")
    if start < 0:
        return None
    with contextlib.suppress(ValueError):
        return json.loads(stdout[start:])
    return None


def _drop_nulls(answer: Any, schema: Any) -> Any:
    """Strict schemas made optional properties nullable: a null one is as if absent."""
    if not is_object(answer) or not is_object(schema):
        return answer
    required = set(schema.get("required", []))
    return {key: value for key, value in answer.items() if value is not None or key in required}


def codex_mcp_servers(env: Mapping[str, str]) -> list[str]:
    """The MCP servers in the user's Codex config (each is switched off for a headless run)."""
    home = Path(env.get("CODEX_HOME") or Path(env.get("HOME") or Path.home()) / ".codex")
    try:
        with open(home / "config.toml", "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return []
    servers = data.get("mcp_servers")
    if not isinstance(servers, dict):
        return []
    return [name for name in cast("dict[str, Any]", servers) if re.fullmatch(r"[A-Za-z0-9_-]+", name)]


def client_timeout() -> float:
    try:
        return max(1.0, float(os.environ.get("AGENTCTX_CLIENT_TIMEOUT", DEFAULT_CLIENT_TIMEOUT_S)))
    except ValueError:
        return DEFAULT_CLIENT_TIMEOUT_S


def run_bounded(
    argv: list[str], *, stdin: str, env: dict[str, str], cwd: Path, timeout_s: float
) -> tuple[str, str, int | None]:
    """Run a child in its own process group; at `timeout_s` the whole group is killed and the
    exit code is None. Output beyond `OUTPUT_CAP` is cut."""
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        raise CallFailed(f"cannot start {argv[0]}: {exc.strerror}") from None
    try:
        out, err = process.communicate(stdin.encode("utf-8"), timeout=timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.kill()
        process.communicate()
        return "", "", None
    except BaseException:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        raise
    with contextlib.suppress(ProcessLookupError, PermissionError):  # nothing of the run outlives it
        os.killpg(process.pid, signal.SIGKILL)
    return (
        out[:OUTPUT_CAP].decode("utf-8", errors="replace"),
        err[-OUTPUT_CAP:].decode("utf-8", errors="replace"),
        process.returncode,
    )


def signed_in(name: str, *, timeout_s: float = 20.0) -> bool | None:
    """Whether the client says it is signed in (`claude auth status`, `codex login status`);
    None when it cannot say (Gemini CLI, or the command failed to run)."""
    entry = clients.CLIENTS.get(name)
    command = list(entry.sign_in_check) if entry else []
    binary = client_binary(name)
    if not command or binary is None:
        return None
    env = {**os.environ, HEADLESS_ENV: "1"}
    try:
        done = subprocess.run(
            [binary, *command], capture_output=True, text=True, timeout=timeout_s, env=env, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    said = f"{done.stdout}\n{done.stderr}"
    return done.returncode == 0 and "not logged in" not in said.lower() and '"loggedIn": false' not in said


def describe(settings: Mapping[str, Any], client: str | None = None, *, probe: bool = False) -> str:
    """One line for status, doctor and init: the active backend and why. With `probe` (init and
    doctor, not the status fast path) the client is asked whether it is signed in."""
    choice = choose(settings, client)
    if choice.backend == "api":
        return f"extraction: {choice.reason}"
    if choice.backend:
        if probe and signed_in(choice.backend) is False:
            label = clients.CLIENTS[choice.backend].label
            return f"extraction: none ({label} is installed but not signed in: run `{choice.backend}` and sign in)"
        return f"extraction: through {choice.reason}"
    return f"extraction: none ({choice.reason})"
