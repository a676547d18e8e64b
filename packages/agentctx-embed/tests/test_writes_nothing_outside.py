"""Issue 13, item 8: a full consolidation with the embedding model writes nothing outside the
data dir and the temp dir it was given, and leaves nothing in the temp dir either.

onnxruntime used to create `~/.cache/Microsoft/DeveloperTools/.onnxruntime/{deviceid,
onnxruntime.db}` and `$TMPDIR/.ses` (its telemetry). The run here is the real background
process (`agentctx consolidate`, as SessionEnd starts it) in a fresh HOME, with the tiny model,
duplicates to merge through the local Messages API, and XDG_CACHE_HOME unset.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from agentctx_store import Store
from embed_testkit import MessagesServer, make_project, seed

pytestmark = pytest.mark.embed

AGENTCTX = Path(sys.executable).with_name("agentctx")


def tree(root: Path) -> dict[str, int]:
    return {str(path): path.stat().st_mtime_ns for path in root.rglob("*")}


def test_a_full_consolidation_writes_only_inside_the_data_dir(
    tiny_model: Path, messages_server: MessagesServer, tmp_path: Path
) -> None:
    project = make_project(tmp_path, "alpha")
    with Store.open() as store:
        records = seed(store, project)  # a near-duplicate pair among them: the judge is asked
    home = Path(os.environ["HOME"])
    data = Path(os.environ["AGENTCTX_HOME"])
    temp = Path(os.environ["TMPDIR"])
    assert data.parent == home and not (home / ".cache").exists()
    before = tree(tmp_path)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("XDG_", "ORT_"))}
    done = subprocess.run(
        [str(AGENTCTX), "consolidate", "--project", str(project.root)],
        cwd=project.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"{sum(1 for record in records.values() if record.is_current)} embedded" in done.stdout, done.stdout
    assert "1 merged" in done.stdout, done.stdout  # the model and the judge both ran
    after = tree(tmp_path)
    changed = sorted(path for path, mtime in after.items() if before.get(path) != mtime)
    outside = [path for path in changed if not Path(path).is_relative_to(data)]
    assert outside == [], outside
    assert list(temp.iterdir()) == []  # no `.ses`, nothing else left in the temp dir
    assert sorted(path.name for path in home.iterdir()) == [".agentctx"]
    assert messages_server.requests  # the merge judge was asked, through the loopback server
