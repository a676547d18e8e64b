"""The hook path imports the standard library and agentctx-store only (docs/contracts.md: hooks
never load typer, a model, an SDK). Each event runs in a fresh interpreter through `agentctx.__main__`,
exactly as the console script does, and reports what ended up in `sys.modules`."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from agentctx_store import NewRecord, Store, resolve_project

HEAVY = [
    "typer",
    "click",
    "rich",
    "pydantic",
    "mcp",
    "anthropic",
    "fastembed",
    "numpy",
    "fastapi",
    "httpx",
    "onnxruntime",
    "sqlite_vec",
    "apsw",
    "uvicorn",
    "agentctx.cli",
]
PROBE = """
import os, sys
report, real_exit = sys.argv[2], os._exit
def exit_and_report(code):
    with open(report, "w", encoding="utf-8") as handle:  # repr, not json: the probe adds no module
        handle.write(repr(sorted(sys.modules)))
    real_exit(code)
os._exit = exit_and_report
sys.argv = ["agentctx", "hook", sys.argv[1]]  # as the console script runs it: the hook owns the process
from agentctx.__main__ import main
main()
"""


def _modules(event: str, payload: dict[str, object], tmp_path: Path) -> set[str]:
    report = tmp_path / f"modules-{event}.json"
    env = {**os.environ, "AGENTCTX_HOOKS_NO_SPAWN": "1"}
    subprocess.run(
        [sys.executable, "-c", PROBE, event, str(report)],
        input=json.dumps(payload).encode(),
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )
    return set(ast.literal_eval(report.read_text(encoding="utf-8")))


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "proj"\n', encoding="utf-8")
    project = resolve_project(root)
    with Store.open() as store:
        for index in range(30):
            store.add(project, NewRecord(type="convention", title=f"Rule {index}", body=f"Topic {index}."))
        store.add(
            project,
            NewRecord(type="decision", title="Redis for the job queue", body="Redis streams hold the job queue."),
        )
    return root


def _payloads(root: Path) -> list[tuple[str, dict[str, object]]]:
    common = {"session_id": "imports", "transcript_path": str(root / "t.jsonl"), "cwd": str(root)}
    return [
        ("SessionStart", {**common, "source": "startup"}),
        ("SessionStart", {**common, "source": "compact"}),
        ("UserPromptSubmit", {**common, "prompt": "how does the redis job queue work?"}),
        (
            "PostToolUse",
            {
                **common,
                "tool_name": "Edit",
                "tool_input": {"file_path": str(root / "q.py")},
                "tool_response": {"filePath": str(root / "q.py")},
            },
        ),
        (
            "PostToolUseFailure",
            {
                **common,
                "tool_name": "Bash",
                "tool_input": {"command": "pytest"},
                "error": "Exit code 1\nE   KeyError: 'job'\n1 failed",
            },
        ),
        ("CwdChanged", {**common, "old_cwd": "/", "new_cwd": str(root)}),
        ("SubagentStart", {**common, "agent_id": "a1b2c3", "agent_type": "general-purpose"}),
        ("PreCompact", {**common, "trigger": "manual"}),
        ("Stop", {**common, "stop_hook_active": False}),
        ("SessionEnd", {**common, "reason": "other"}),
    ]


def test_no_hook_imports_anything_heavy(project_dir: Path, tmp_path: Path) -> None:
    for event, payload in _payloads(project_dir):
        modules = _modules(event, payload, tmp_path)
        loaded = [name for name in HEAVY if name in modules or any(module.startswith(name + ".") for module in modules)]
        assert not loaded, f"{event} imported {loaded}"
        if event in ("Stop", "PostToolUse", "PostToolUseFailure"):  # they never open the store
            assert not opens_the_store(modules), event
            # a Bash capture is redacted before it is spooled (issue 13): the store's redactor
            assert ("agentctx_store.redact" in modules) == (event == "PostToolUseFailure"), event
        else:
            assert "agentctx_store" in modules
        if event != "SessionEnd":  # only the hooks that refresh a digest after a write load the offline half
            assert not offline_half(modules) or event in ("SessionStart", "CwdChanged", "PreCompact"), event
        foreign = (
            {module.split(".")[0] for module in modules}
            - set(sys.stdlib_module_names)
            - {
                "agentctx",
                "agentctx_hooks",
                "agentctx_store",
                "__main__",
                "_distutils_hack",
                "_editable_impl_agentctx",
                "__editable___agentctx",
            }
        )
        assert not {name for name in foreign if not name.startswith(("_editable", "__editable"))}, f"{event}: {foreign}"


def opens_the_store(modules: set[str]) -> bool:
    return bool(
        {"sqlite3", "_sqlite3", "agentctx_store.store", "agentctx_store.db", "agentctx_store.retrieval"} & modules
    )


def test_the_prompt_path_loads_sqlite_without_the_sqlite3_package_or_datetime(
    project_dir: Path, tmp_path: Path
) -> None:
    """The keyword path of UserPromptSubmit, a fresh process on every prompt: the C `_sqlite3`
    only (the `sqlite3` package on top imports `datetime`), stored timestamps read by arithmetic
    (`clock.epoch_seconds`), the warm service's `_socket` only when its socket exists."""
    common = {"session_id": "prompt-imports", "transcript_path": str(project_dir / "t.jsonl"), "cwd": str(project_dir)}
    modules = _modules("UserPromptSubmit", {**common, "prompt": "how does the redis job queue work?"}, tmp_path)
    assert {"_sqlite3", "agentctx_store.retrieval", "agentctx_store.inject"} <= modules  # it searched and injected
    for unwanted in ("sqlite3", "datetime", "_datetime", "_socket", "socket"):
        assert unwanted not in modules, unwanted


def test_a_prompt_that_finds_nothing_loads_nothing_of_the_composition(project_dir: Path, tmp_path: Path) -> None:
    """Most prompts find nothing worth injecting: they rank and stop, without loading the
    composition (`inject`, budgets, passages) or the anchor check."""
    common = {"session_id": "finds-nothing", "transcript_path": "", "cwd": str(project_dir)}
    modules = _modules("UserPromptSubmit", {**common, "prompt": "what is the weather on mars today?"}, tmp_path)
    assert "agentctx_store.retrieval" in modules  # it did search
    composition = ("inject", "budget", "passages", "freshness")
    assert not [name for name in composition if f"agentctx_store.{name}" in modules]


NOT_ON_THE_PROMPT_PATH = (
    "re",
    "enum",
    "json",
    "dataclasses",
    "typing",
    "agentctx_store.redact",
    "agentctx_store._secret_rules",
)


@pytest.mark.parametrize(
    "client, event",
    [("claude", "UserPromptSubmit"), ("codex", "UserPromptSubmit"), ("gemini", "BeforeAgent")],
)
def test_a_prompt_that_injects_loads_no_regular_expressions_or_redactor(
    project_dir: Path, tmp_path: Path, client: str, event: str
) -> None:
    """A prompt that finds a record, injects it and records the injection (session accounting,
    the injection log, the client) — the whole keyword path, first prompt and a later one of the
    same session — loads neither `re` nor the redactor: what it writes are ids, counts and names,
    and the records it shows were redacted when they were stored."""
    common = {"session_id": f"injecting-{client}", "transcript_path": "", "cwd": str(project_dir)}
    with Store.open() as store:
        title, body = "Deploys run on GitHub Actions", "Every merge to main deploys through GitHub Actions."
        store.add(resolve_project(project_dir), NewRecord(type="decision", title=title, body=body))
    for prompt in ("how does the redis job queue work?", "and how do deploys run on github actions?"):
        report = tmp_path / f"modules-{client}.json"
        done = subprocess.run(
            [sys.executable, "-c", CLIENT_PROBE, event, str(report), client],
            input=json.dumps({**common, "prompt": prompt}).encode(),
            env={**os.environ, "AGENTCTX_HOOKS_NO_SPAWN": "1", "AGENTCTX_NO_SERVICE": "1"},
            check=True,
            capture_output=True,
            timeout=60,
        )
        assert b"agentctx-record" in done.stdout, (prompt, done)  # it did inject
        modules = set(ast.literal_eval(report.read_text(encoding="utf-8")))
        loaded = [name for name in NOT_ON_THE_PROMPT_PATH if name in modules]
        assert not loaded, f"{client} {event} ({prompt!r}) loaded {loaded}"
    with Store.open() as store:
        session = store.get_session(common["session_id"])
    assert session is not None and session["prompt_injections"] == 2  # and it was recorded
    assert [entry["hook"] for entry in session["meta"]["injections"]] == [event, event]


STORE_SRC = Path(__file__).resolve().parents[1] / "packages" / "agentctx-store" / "src" / "agentctx_store"


def offline_half(modules: set[str]) -> set[str]:
    """The modules of the store's feature subpackages (every subfolder of `agentctx_store`)."""
    return {
        name for name in modules if name.startswith("agentctx_store.") and (STORE_SRC / name.split(".")[1]).is_dir()
    }


def test_session_start_fast_path_reads_the_digest_file_without_opening_the_store(
    project_dir: Path, tmp_path: Path
) -> None:
    common = {"session_id": "fast", "transcript_path": "", "cwd": str(project_dir), "source": "startup"}
    _modules("SessionStart", common, tmp_path)  # composes and writes the digest
    modules = _modules("SessionStart", {**common, "source": "resume"}, tmp_path)
    assert not opens_the_store(modules) and not offline_half(modules)
    assert {"agentctx_store.digest_file", "agentctx_store.tokens"} <= modules  # what it does use
    for stdlib in ("json", "re", "pathlib", "dataclasses", "typing", "hashlib", "configparser"):
        assert stdlib not in modules, stdlib


CLIENT_PROBE = PROBE.replace(
    'sys.argv = ["agentctx", "hook", sys.argv[1]]',
    'sys.argv = ["agentctx", "hook", "--client", sys.argv[3], sys.argv[1]]',
)


def test_codex_and_gemini_hooks_import_as_little(project_dir: Path, tmp_path: Path) -> None:
    """`agentctx hook --client codex|gemini <their event>`: the same discipline as Claude Code's
    hooks — nothing heavy, captures and Stop never open the store, SessionStart's fast path
    imports neither the store nor sqlite3."""
    common = {"session_id": "client-imports", "transcript_path": str(project_dir / "t.jsonl"), "cwd": str(project_dir)}
    shell = {"command": "pytest"}
    runs = [
        ("codex", "SessionStart", {**common, "source": "startup"}),
        ("codex", "SessionStart", {**common, "source": "resume"}),
        ("codex", "UserPromptSubmit", {**common, "prompt": "how does the redis job queue work?", "turn_id": "t"}),
        ("codex", "PostToolUse", {**common, "tool_name": "Bash", "tool_input": shell, "tool_response": "1 failed"}),
        ("codex", "Stop", {**common, "stop_hook_active": False}),
        ("gemini", "BeforeAgent", {**common, "prompt": "<hook_context>x</hook_context>\n\nthe redis job queue?"}),
        ("gemini", "AfterTool", {**common, "tool_name": "run_shell_command", "tool_input": shell,
                                 "tool_response": {"llmContent": "Output: 1 failed\nExit Code: 1"}}),
        ("gemini", "AfterAgent", {**common, "prompt": "x", "prompt_response": "y", "stop_hook_active": False}),
    ]  # fmt: skip
    for client, event, payload in runs:
        report = tmp_path / f"modules-{client}-{event}.json"
        subprocess.run(
            [sys.executable, "-c", CLIENT_PROBE, event, str(report), client],
            input=json.dumps(payload).encode(),
            env={**os.environ, "AGENTCTX_HOOKS_NO_SPAWN": "1"},
            check=True,
            capture_output=True,
            timeout=60,
        )
        modules = set(ast.literal_eval(report.read_text(encoding="utf-8")))
        loaded = [name for name in HEAVY if name in modules or any(module.startswith(name + ".") for module in modules)]
        assert not loaded, f"{client} {event} imported {loaded}"
        if event in ("PostToolUse", "AfterTool", "Stop", "AfterAgent"):
            assert not opens_the_store(modules) and not offline_half(modules), (client, event)
        if event == "SessionStart" and payload.get("source") == "resume":
            assert not opens_the_store(modules) and not offline_half(modules), (client, event)
        if event in ("UserPromptSubmit", "BeforeAgent"):
            assert "agentctx_store" in modules  # it did search
