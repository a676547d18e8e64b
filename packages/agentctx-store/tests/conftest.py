"""Fixtures of the store tests: a real store in the test's temp data dir and two projects.

The root conftest already points `AGENTCTX_HOME` and `HOME` into the test's temp dir.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # secrets_corpus.py, shared with the extract and e2e tests

from agentctx_store import NewRecord, Project, Record, Store

AddRecord = Callable[..., Record]


@pytest.fixture
def store() -> Iterator[Store]:
    opened = Store.open()
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(project_id="p-alpha", root=str(tmp_path / "alpha"), name="alpha")


@pytest.fixture
def other_project(tmp_path: Path) -> Project:
    return Project(project_id="p-beta", root=str(tmp_path / "beta"), name="beta")


@pytest.fixture
def add(store: Store, project: Project) -> AddRecord:
    """`add(title, body, **fields)`: a record in `project` (or `in_project=`), explicit by default."""

    def _add(title: str, body: str | None = None, *, in_project: Project | None = None, **fields: object) -> Record:
        new = NewRecord(type=str(fields.pop("type", "decision")), title=title, body=body or title, **fields)  # type: ignore[arg-type]
        return store.add(in_project or project, new)

    return _add
