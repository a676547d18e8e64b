"""The installed `agentctx` script end to end, one process per command as a developer runs it:
record, supersede, search, history, export, import into another data dir, status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

AGENTCTX = Path(sys.executable).parent / "agentctx"


def agentctx(*args: str, home: Path, input: str | None = None) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"AGENTCTX_HOME": str(home)}
    return subprocess.run(
        [str(AGENTCTX), *args], capture_output=True, text=True, env=env, input=input, timeout=60, check=False
    )


def test_a_developer_session_through_the_installed_script(tmp_path: Path) -> None:
    project, home, other_home = tmp_path / "repo", tmp_path / "data", tmp_path / "data-2"
    project.mkdir()
    p = ("--project", str(project))

    first = agentctx("record", "-t", "decision", "--title", "Jobs run on Celery", "--body", "-", "--json", *p,
                     home=home, input="Celery workers run every background job.")  # fmt: skip
    assert first.returncode == 0, first.stderr
    old_id = json.loads(first.stdout)["id"]
    second = agentctx("supersede", old_id, "--body", "Background jobs run on RQ now.", "--why", "Celery was overkill",
                      "--json", *p, home=home)  # fmt: skip
    assert second.returncode == 0, second.stderr
    new_id = json.loads(second.stdout)["new"]["id"]

    found = json.loads(agentctx("search", "background jobs celery", "--json", *p, home=home).stdout)
    assert [hit["id"] for hit in found] == [new_id]
    chain = json.loads(agentctx("history", new_id, "--json", *p, home=home).stdout)
    assert [link["id"] for link in chain] == [old_id, new_id]

    exported = tmp_path / "context.md"
    assert agentctx("export", "--history", "-o", str(exported), *p, home=home).returncode == 0
    imported = agentctx("import", str(exported), "--json", *p, home=other_home)
    assert json.loads(imported.stdout)["created"] == 2
    again = agentctx("export", "--history", *p, home=other_home).stdout
    assert again == exported.read_text(encoding="utf-8")

    status = json.loads(agentctx("status", "--json", *p, home=other_home).stdout)
    assert status["records"]["current"] == 1 and status["records"]["superseded"] == 1

    missing = agentctx("show", "01JUNKNOWNUNKNOWNUNKNOWN00", *p, home=home)
    assert missing.returncode == 1 and missing.stderr.startswith("Error: No record") and missing.stdout == ""
