"""Error signatures, test runs and git operations read from real-looking command output."""

from __future__ import annotations

import pytest

from agentctx_hooks.ondemand.signals import error_key, error_signature, observe_bash, run_outcome

PY_TRACEBACK = """Traceback (most recent call last):
  File "/home/dev/src/app/main.py", line 3, in <module>
    import redis
ModuleNotFoundError: No module named 'redis'
"""
PYTEST_FAIL = """============================= test session starts ==============================
tests/test_billing.py .F                                                 [100%]
=================================== FAILURES ===================================
E       AssertionError: assert 0.1 + 0.2 == 0.3
FAILED tests/test_billing.py::test_rounding - AssertionError: assert 0.1 + 0.2 == 0.3
========================= 1 failed, 1 passed in 0.03s ==========================
"""


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (PY_TRACEBACK, "ModuleNotFoundError: No module named 'redis'"),
        (PYTEST_FAIL, "AssertionError: assert 0.1 + 0.2 == 0.3"),
        ("error[E0308]: mismatched types\n --> src/main.rs:4:5", "error[E0308]: mismatched types"),
        (
            "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1",
            "panic: runtime error: index out of range [3] with length 3",
        ),
        (
            "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",
            "error TS2322: Type 'string' is not assignable to type 'number'.",
        ),
        ("main.c:4:5: error: expected ';' before 'return'", "error: expected ';' before 'return'"),
        ("Error: Cannot find module 'express'\nRequire stack:", "Error: Cannot find module 'express'"),
        ("Exit code 3\nfailing", ""),
        ("hi from bash", ""),
    ],
)
def test_error_signature(output: str, expected: str) -> None:
    assert error_signature(output) == expected


def test_the_same_error_elsewhere_has_the_same_key() -> None:
    one = "FileNotFoundError: [Errno 2] No such file: '/home/a/proj/data/input.csv' at 0x7f3a"
    two = "FileNotFoundError: [Errno 2] No such file: '/tmp/other/checkout/data/input.csv' at 0x55aa"
    assert error_key(one) == error_key(two)
    assert error_key(one) != error_key("FileNotFoundError: [Errno 2] No such file: 'output.csv'")


@pytest.mark.parametrize(
    "command",
    [
        "pytest -x",
        "uv run pytest tests/test_a.py",
        "python -m pytest",
        "cd api && npm test",
        "pnpm run test",
        "go test ./...",
        "cargo test",
        "make test",
        "npx vitest run",
    ],
)
def test_test_commands_are_recognised(command: str) -> None:
    assert run_outcome(command, "", failed=False) is not None


@pytest.mark.parametrize("command", ["ls tests", "git commit -m 'add tests'", "cat latest.log"])
def test_other_commands_are_not_test_runs(command: str) -> None:
    assert run_outcome(command, "", failed=False) is None


def test_test_outcome_and_files() -> None:
    assert run_outcome("pytest tests/test_billing.py", PYTEST_FAIL, failed=False) == (
        "failed",
        ["tests/test_billing.py"],
    )
    assert run_outcome("go test ./...", "ok  \tgithub.com/acme/widget\t0.01s", failed=False) == ("passed", [])
    assert run_outcome("npm test", "", failed=True) == ("failed", [])


def test_successful_commands_never_propose_a_bugfix_from_log_lines() -> None:
    observation = observe_bash("cat app.log", "Error: connection reset (retrying)\nok", failed=False)
    assert observation.error is None


def test_failed_command_with_a_traceback_proposes_one() -> None:
    observation = observe_bash("python main.py", PY_TRACEBACK, failed=True)
    assert observation.error is not None
    assert observation.error[0] == "ModuleNotFoundError: No module named 'redis'"


def test_git_commit_branch_and_pull_request() -> None:
    commit = observe_bash(
        'git commit -m "Fix rounding"', "[fix/rounding 1a2b3c4] Fix rounding\n 1 file changed", failed=False
    )
    assert commit.commit == {"branch": "fix/rounding", "sha": "1a2b3c4", "message": "Fix rounding"}
    switched = observe_bash("git switch -c feature/x", "Switched to a new branch 'feature/x'", failed=False)
    assert switched.branch == "feature/x"
    pr = observe_bash("gh pr create --fill", "https://github.com/acme/widget/pull/42\n", failed=False)
    assert pr.pull_request == "https://github.com/acme/widget/pull/42"
    assert observe_bash("git commit -m x", "nothing to commit", failed=True).commit is None
