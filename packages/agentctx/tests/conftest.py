"""Fixtures of the CLI tests: run `agentctx` in-process through its real entry point.

`main(argv)` is what the console script calls, so errors go through the same one-line
mapping a user sees. The root conftest already isolates `AGENTCTX_HOME` and `HOME`.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentctx.__main__ import main


@dataclass(frozen=True, kw_only=True)
class CliResult:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


Cli = Callable[..., CliResult]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """`cli("search", "redis", input="...")` → exit code, stdout, stderr."""

    def run(*args: str, input: str = "") -> CliResult:
        capsys.readouterr()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(input.encode("utf-8")), encoding="utf-8"))
        code = main(list(args))
        captured = capsys.readouterr()
        return CliResult(code=code, out=captured.out, err=captured.err)

    return run


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """A plain directory (no git): its project id is the hash of its path."""
    directory = tmp_path / "alpha"
    directory.mkdir()
    return directory


@pytest.fixture
def other_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "beta"
    directory.mkdir()
    return directory


@pytest.fixture
def record(cli: Cli, project_dir: Path) -> Callable[..., dict[str, Any]]:
    """`record(type, title, body, *extra_args, project=dir)` → the new record as JSON."""

    def add(record_type: str, title: str, body: str, *extra: str, project: Path | None = None) -> dict[str, Any]:
        result = cli(
            "record", "--type", record_type, "--title", title, "--body", body,
            "--project", str(project or project_dir), "--json", *extra,
        )  # fmt: skip
        assert result.code == 0, result.err
        return result.json()

    return add


@pytest.fixture
def tiny_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real, tiny embedding model built on the spot (consolidate, status, models download)."""
    tiny = pytest.importorskip("agentctx_embed.tiny")
    words = tiny.words_of(
        ["decision convention handover 2026 11 29 background jobs run on bullmq temporal workflows redis use pnpm"]
    )
    folder = tiny.build_tiny_model(tmp_path / "tiny", words)
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", tiny.TINY_MODEL_NAME)
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL_DIR", str(folder))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return folder
