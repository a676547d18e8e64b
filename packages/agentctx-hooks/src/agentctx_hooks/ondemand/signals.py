"""What a Bash command and its output tell us, read with regular expressions only.

Pure functions (no store, no I/O) so every pattern is unit-tested on real output shapes.
A bugfix stub is only proposed for a failed command (Claude Code fires PostToolUseFailure on a
non-zero exit), a Python traceback, or a failed test run: error-looking lines in the output
of a successful command are usually logs, not bugs.
"""

from __future__ import annotations

import re

_TRACEBACK = "Traceback (most recent call last)"
_PYTHON_ERROR = re.compile(r"^(?:E\s+)?((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit))(?::\s*(.*))?$")
_OTHER_ERRORS = (
    re.compile(r"^(error(?:\[E\d{4}\])?): (.+)$"),  # rustc / cargo
    re.compile(r"^(panic): (.+)$"),  # go
    re.compile(r"^\S+?:\d+(?::\d+)?: ((?:fatal )?error): (.+)$"),  # gcc, clang, go vet
    re.compile(r"^.*?(error TS\d+): (.+)$"),  # tsc
    re.compile(r"^(npm ERR!) (.+)$"),
    re.compile(r"^(Uncaught \w+|\w*Error)(?: \[\w+\])?: (.+)$"),  # node
)
_TEST_COMMAND = re.compile(
    r"(?:^|[\s;&|(])(?:"
    r"(?:(?:uv|poetry|pdm|hatch|pipenv)\s+run\s+)?(?:python3?\s+-m\s+)?(?:pytest|py\.test|tox|nox)\b"
    r"|python3?\s+-m\s+unittest\b"
    r"|(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test\b"
    r"|(?:npx\s+|pnpm\s+exec\s+)?(?:jest|vitest|mocha)\b"
    r"|go\s+test\b|cargo\s+(?:test|nextest)\b|make\s+(?:test|check)\b"
    r"|(?:bundle\s+exec\s+)?rspec\b|(?:mvn|gradle|\./gradlew)\s+test\b|deno\s+test\b|phpunit\b|mix\s+test\b|ctest\b"
    r")"
)
_TEST_FAILED = re.compile(
    r"\b\d+ (?:failed|failing)\b|^FAILED\b|^FAIL\b|--- FAIL|test result: FAILED|^Tests?:.*\bfailed\b",
    re.MULTILINE,
)
_TEST_FILE = re.compile(
    r"(?:^|[\s/=])((?:[\w.-]+/)*[\w.-]*test[\w.-]*\.(?:py|js|jsx|ts|tsx|mjs|go|rs|rb|java|kt|php|exs?))\b"
)
_PYTEST_LINE = re.compile(r"^(?:FAILED |ERROR )?((?:[\w.-]+/)*[\w.-]+\.py)(?:::|\s+[.FEsxX]+)", re.MULTILINE)
_COMMIT = re.compile(
    r"^\[(?P<branch>[^\s\]]+)(?: \(root-commit\))? (?P<sha>[0-9a-f]{7,40})\] (?P<message>.+)$", re.MULTILINE
)
_SWITCHED = re.compile(r"Switched to (?:a new )?branch '([^']+)'")
_SWITCH_COMMAND = re.compile(r"\bgit\s+(?:switch|checkout)\s+(?:-[bcBC]\s+)?([\w./-]+)\s*$")
_PR_URL = re.compile(r"https://\S+/pull/\d+")


class BashObservation:
    """What one command showed. A slotted class rather than a dataclass: this runs on every
    Bash PostToolUse, and `dataclasses` alone costs more import time than the whole capture."""

    __slots__ = ("branch", "commit", "error", "pull_request", "test")

    def __init__(
        self,
        *,
        error: tuple[str, str] | None = None,  # (signature, dedup key)
        test: tuple[str, list[str]] | None = None,  # ("passed" | "failed", test files)
        branch: str = "",
        commit: dict[str, str] | None = None,
        pull_request: str = "",
    ) -> None:
        self.error, self.test, self.branch, self.commit, self.pull_request = error, test, branch, commit, pull_request

    def is_empty(self) -> bool:
        return not (self.error or self.test or self.branch or self.commit or self.pull_request)


def observe_bash(command: str, output: str, *, failed: bool) -> BashObservation:
    test = run_outcome(command, output, failed=failed)
    error = None
    if failed or _TRACEBACK in output or (test is not None and test[0] == "failed"):
        signature = error_signature(output)
        if signature:
            error = (signature, error_key(signature))
    commit = None
    branch = ""
    pull_request = ""
    if not failed:
        if re.search(r"\bgit\b[^|;&]*\bcommit\b", command) and (match := _COMMIT.search(output)):
            commit = {key: value.strip() for key, value in match.groupdict().items()}
        switched = _SWITCHED.search(output)
        if switched:
            branch = switched.group(1)
        elif (switch := _SWITCH_COMMAND.search(command.strip())) and "git" in command:
            branch = switch.group(1)
        if "gh pr create" in command and (url := _PR_URL.search(output)):
            pull_request = url.group(0)
    return BashObservation(error=error, test=test, branch=branch, commit=commit, pull_request=pull_request)


def error_signature(output: str) -> str:
    """The line that names the error: the last exception line of a Python traceback, else
    the first line matching a known compiler / runtime error shape; "" when there is none."""
    lines = [line.strip() for line in output.splitlines()[-400:] if line.strip()]
    if any(_TRACEBACK in line for line in lines):
        for line in reversed(lines):
            match = _PYTHON_ERROR.match(line)
            if match:
                return f"{match.group(1)}: {match.group(2)}" if match.group(2) else match.group(1)
    for line in lines:
        match = _PYTHON_ERROR.match(line)
        if match and match.group(2):
            return f"{match.group(1)}: {match.group(2)}"
        for pattern in _OTHER_ERRORS:
            other = pattern.match(line)
            if other:
                return f"{other.group(1)}: {other.group(2)}"
    return ""


def normalize_signature(signature: str) -> str:
    """What stays the same when the same error recurs: no addresses, numbers or directories."""
    text = re.sub(r"0x[0-9a-fA-F]+", "0x_", signature)
    text = re.sub(r"(?:[A-Za-z]:)?(?:[\\/][\w.-]+)+[\\/]([\w.-]+)", r"\1", text)  # keep base names
    text = re.sub(r"\d+", "N", text)
    return " ".join(text.split()).lower()


def error_key(signature: str) -> str:
    from agentctx_store.projects import hash_id  # only a command that failed gets this far

    return "error:" + hash_id(normalize_signature(signature))[:20]


def run_outcome(command: str, output: str, *, failed: bool) -> tuple[str, list[str]] | None:
    if not _TEST_COMMAND.search(command):
        return None
    outcome = "failed" if failed or _TEST_FAILED.search(output) else "passed"
    files = [match.group(1) for match in _TEST_FILE.finditer(command)]
    files += [match.group(1) for match in _PYTEST_LINE.finditer(output)]
    return outcome, list(dict.fromkeys(files))[:5]
