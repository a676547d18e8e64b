"""The modules the UserPromptSubmit hook imports stay light: a fresh process runs them on every
prompt (issue 3 targets, bench/test_bench_hooks.py). Each name below costs 1-6 ms to import."""

from __future__ import annotations

import subprocess
import sys
from typing import Literal, get_args

from agentctx_store import records
from agentctx_store.records import CONFIDENCES, RECORD_TYPES, SCOPES, SOURCES

HEAVY = (
    "dataclasses",
    "inspect",
    "typing",
    "json",
    "pathlib",
    "re",
    "contextlib",
    "tempfile",
    "configparser",
    "hashlib",
)


def test_the_prompt_path_modules_import_none_of_the_heavy_ones() -> None:
    code = (
        "import sys\n"
        "import agentctx_store.retrieval, agentctx_store.store, agentctx_store.budget, agentctx_store.inject\n"
        "import agentctx_store.freshness\n"
        f"print(' '.join(name for name in {HEAVY!r} if name in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == []


def test_record_choices_are_also_literal_types_made_on_first_use() -> None:
    assert records.RecordType == Literal[RECORD_TYPES]  # type: ignore[valid-type]
    for name, choices in (("RecordType", RECORD_TYPES), ("Confidence", CONFIDENCES), ("Scope", SCOPES)):
        assert get_args(getattr(records, name)) == choices
    assert get_args(records.Source) == SOURCES
    assert records.Scope is records.Scope
    try:
        records.NotAChoice  # noqa: B018
    except AttributeError as exc:
        assert "NotAChoice" in str(exc)
    else:
        raise AssertionError("an unknown name must raise AttributeError")
