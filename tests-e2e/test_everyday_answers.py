"""The everyday loop through the installed `agentctx` script (issue 33): search, then read the
answer with a few typed characters of its id; why a search found nothing; where a fact came
from and whether its evidence still holds; supersede keeps that evidence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

AGENTCTX = Path(sys.executable).parent / "agentctx"

RULES = """# Project rules

## Testing
- Run the whole suite with `pytest -q` before every push; the CI runs the same command.

## Formatting
- Format Python with ruff format; line length is 110.

## Commits
- Commit messages are imperative and under 72 characters.

## Dependencies
- Add dependencies with `uv add`, never by editing pyproject.toml by hand.

## Releases
- Releases are tagged vX.Y.Z from main by the release workflow only.
"""

LONG_BODY = (
    "The payment service talks to the gateway over HTTPS with a client certificate. "
    "Every call carries an idempotency key made from the order id and the attempt number. "
    "Timeouts are 5 seconds for connect and 30 seconds for read, set in settings.py. "
    "When the gateway answers 429, the client backs off exponentially with full jitter, "
    "at most six attempts, and then parks the order in the retry queue for the night batch. "
    "The night batch runs at 02:00 UTC and replays parked orders oldest first."
)


def agentctx(*args: str, cwd: Path, input: str | None = None) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"AGENTCTX_NO_SERVICE": "1"}
    return subprocess.run(
        [str(AGENTCTX), *args], capture_output=True, text=True, env=env, cwd=cwd, input=input, timeout=60, check=False
    )


def a_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def test_a_search_shows_the_matching_passage_and_json_the_body(tmp_path: Path) -> None:
    repo = a_repo(tmp_path)
    made = agentctx("record", "-t", "discovery", "--title", "How the payment client calls the gateway",
                    "--body", LONG_BODY, cwd=repo)  # fmt: skip
    assert made.returncode == 0, made.stderr

    found = agentctx("search", "night", "batch", "parked", "orders", cwd=repo)
    assert found.returncode == 0, found.stderr
    passage = found.stdout.splitlines()[1]
    assert "parks the order in the retry queue for the night batch" in passage, found.stdout
    assert "idempotency key" not in passage  # the passage that matches, not the opening
    assert len(passage) < 300

    hits = json.loads(agentctx("search", "night", "batch", "parked", "--json", cwd=repo).stdout)
    assert hits[0]["body"] == LONG_BODY
    assert "night batch" in hits[0]["snippet"]


def test_every_search_result_is_readable_with_at_most_8_typed_characters(tmp_path: Path) -> None:
    repo = a_repo(tmp_path)
    (repo / "CLAUDE.md").write_text(RULES, encoding="utf-8")
    learned = agentctx("learn", cwd=repo)
    assert learned.returncode == 0, learned.stderr
    hits = json.loads(agentctx("search", "--all", "pytest ruff commit uv releases", "--json", cwd=repo).stdout)
    assert len(hits) >= 4, hits
    ids = [hit["id"] for hit in hits]
    # made together: a ULID starts with its time, so records made within ~256 ms share 8 characters
    shared, holders = Counter(record_id[:8] for record_id in ids).most_common(1)[0]
    assert holders > 1, ids

    for hit in hits:
        shown = agentctx("show", hit["id"][-8:].lower(), cwd=repo)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.startswith(f"id:            {hit['id']}\n") and hit["title"] in shown.stdout

    unique_start = agentctx("history", ids[0][:24], cwd=repo)
    assert unique_start.returncode == 0 and ids[0] in unique_start.stdout, unique_start.stderr

    ambiguous = agentctx("show", shared, cwd=repo)
    assert ambiguous.returncode == 1 and ambiguous.stdout == ""
    assert "several records" in ambiguous.stderr
    listed = [record_id for record_id in ids if record_id.startswith(shared)]
    assert all(record_id in ambiguous.stderr for record_id in listed) and len(listed) > 1

    too_short = agentctx("show", ids[0][-5:], cwd=repo)
    assert too_short.returncode == 1 and "at least 6 characters" in too_short.stderr

    pinned = agentctx("pin", ids[1][-7:], cwd=repo)
    assert pinned.returncode == 0 and pinned.stdout.startswith(f"Pinned {ids[1]}"), pinned.stderr

    other = a_repo(tmp_path / "other")
    theirs = json.loads(agentctx("record", "-t", "decision", "--title", "Theirs", "--body", "Another project's.",
                                 "--json", cwd=other).stdout)["id"]  # fmt: skip
    for part in (theirs[-8:], theirs[:24]):  # another project's records are not reachable by a part either
        hidden = agentctx("show", part, cwd=repo)
        assert hidden.returncode == 1 and hidden.stderr.startswith("Error: No record"), hidden.stderr


def test_no_matching_records_says_why_and_what_to_try(tmp_path: Path) -> None:
    repo = a_repo(tmp_path)
    for number in range(25):  # past the tiny-store size, where the relevance floor applies
        made = agentctx("record", "-t", "convention", "--title", f"Logging rule {number}",
                        "--body", f"Module {number} logs with structlog, never with print.", cwd=repo)  # fmt: skip
        assert made.returncode == 0, made.stderr

    unknown = agentctx("search", "kubernetes", "helm", "chart", cwd=repo)
    assert unknown.returncode == 0, unknown.stderr
    assert "No matching records: no record contains any of the words searched (kubernetes, helm, chart)" in (
        unknown.stdout
    )
    assert "Try other words" in unknown.stdout

    weak = agentctx("search", "how", "do", "zebras", "handle", "logging", "of", "unicorn", "llamas", cwd=repo)
    lines = weak.stdout.splitlines()
    assert lines[0].startswith("No matching records: some share a word with"), weak.stdout
    assert "relevance floor" in lines[0]
    assert lines[1] == "Closest weak matches:"
    assert len([line for line in lines if "Logging rule" in line]) == 3
    assert "agentctx search --all how do zebras handle logging of unicorn llamas" in lines[-1]
    assert weak.stderr == ""


def test_show_names_the_source_and_each_anchor_state_and_supersede_keeps_them(tmp_path: Path) -> None:
    repo = a_repo(tmp_path)
    (repo / "CLAUDE.md").write_text(RULES, encoding="utf-8")
    (repo / "retry.py").write_text("def retry():\n    return 6\n\n\ndef park():\n    return 'queue'\n")
    (repo / "settings.py").write_text("TIMEOUT = 30\n")
    assert agentctx("learn", cwd=repo).returncode == 0
    learned = json.loads(agentctx("search", "--all", "uv", "add", "dependencies", "--json", cwd=repo).stdout)[0]
    shown = agentctx("show", learned["id"], cwd=repo).stdout
    source = next(line for line in shown.splitlines() if line.startswith("source:"))
    assert source.startswith("source:        learn, from CLAUDE.md:") and "-" in source.split(":")[-1]
    detail = json.loads(agentctx("show", learned["id"], "--json", cwd=repo).stdout)
    assert detail["source_file"]["path"] == "CLAUDE.md" and detail["source_file"]["line_start"] >= 1
    assert [anchor["state"] for anchor in detail["anchors"]] == ["fresh"]

    made = agentctx("record", "-t", "decision", "--title", "At most six attempts", "--body", "Six, then park.",
                    "--anchor", "retry.py:retry", "--anchor", "retry.py:park", "--anchor", "settings.py",
                    "--json", cwd=repo)  # fmt: skip
    record_id = json.loads(made.stdout)["id"]
    (repo / "retry.py").write_text("def retry():\n    return 8\n\n\ndef park():\n    return 'queue'\n")
    (repo / "settings.py").unlink()
    states = {
        anchor["anchor"]: anchor["state"]
        for anchor in json.loads(agentctx("show", record_id, "--json", cwd=repo).stdout)["anchors"]
    }
    assert states == {"retry.py:retry": "changed", "retry.py:park": "fresh", "settings.py": "missing"}
    text = agentctx("show", record_id, cwd=repo).stdout
    assert "anchors:       retry.py:retry  changed" in text
    assert "               settings.py     missing" in text

    replaced = agentctx("supersede", record_id[-8:], "--body", "Eight attempts now, then park.", cwd=repo)
    assert replaced.returncode == 0, replaced.stderr
    assert "Anchored to retry.py:retry, retry.py:park (as the old record was)." in replaced.stdout
    assert "Left out the old record's anchors that are gone: settings.py." in replaced.stdout
    new_id = replaced.stdout.split()[2].rstrip(":")
    kept = json.loads(agentctx("show", new_id, "--json", cwd=repo).stdout)["anchors"]
    assert [(anchor["anchor"], anchor["state"]) for anchor in kept] == [
        ("retry.py:retry", "fresh"),
        ("retry.py:park", "fresh"),
    ]
    (repo / "retry.py").write_text("def retry():\n    return 9\n\n\ndef park():\n    return 'queue'\n")
    stale = json.loads(agentctx("stale", "--json", cwd=repo).stdout)
    assert [item["id"] for item in stale] == [new_id]  # the edit after the supersede is noticed

    bare = agentctx("supersede", new_id, "--body", "Nine attempts.", "--no-anchor", "--json", cwd=repo)
    assert json.loads(bare.stdout)["anchors"] == []
    elsewhere = agentctx("supersede", json.loads(bare.stdout)["new"]["id"], "--body", "Back to six.",
                         "--anchor", "retry.py:park", "--json", cwd=repo)  # fmt: skip
    assert json.loads(elsewhere.stdout)["anchors"] == ["retry.py:park"]


def _run(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(AGENTCTX), *args], capture_output=True, text=True, cwd=cwd, timeout=120, check=False,
        env=os.environ | {"AGENTCTX_NO_SERVICE": "1"} | env,
    )  # fmt: skip


def _backdate_supersession(record_id: str, days: int) -> None:
    """Make a supersession old enough for the cold archive (what a clock 90 days on would see)."""
    import sqlite3

    conn = sqlite3.connect(Path(os.environ["AGENTCTX_HOME"]) / "agentctx.db")
    with conn:
        conn.execute(
            "UPDATE records SET superseded_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?) WHERE id = ?",
            (f"-{days} days", record_id),
        )
    conn.close()


def test_offline_consolidate_says_each_problem_once_and_agrees_with_status(tmp_path: Path) -> None:
    """A chosen model that is not on the machine and no way to download it (HF_HUB_OFFLINE, as
    every test runs). The bundled default loads offline, so the user's choice of a hub model is
    what leaves consolidation without one."""
    pytest.importorskip("fastembed")
    assert agentctx("config", "embed_model", "BAAI/bge-small-en-v1.5", cwd=tmp_path).returncode == 0
    mine, theirs = a_repo(tmp_path / "mine"), a_repo(tmp_path / "theirs")
    old = json.loads(agentctx("record", "-t", "decision", "--title", "Celery for jobs", "--body", "Celery.",
                              "--json", cwd=theirs).stdout)["id"]  # fmt: skip
    assert agentctx("supersede", old, "--body", "RQ for jobs.", cwd=theirs).returncode == 0
    _backdate_supersession(old, 120)
    assert agentctx("record", "-t", "decision", "--title", "Use pnpm", "--body", "pnpm only.", cwd=mine).returncode == 0

    run = _run("consolidate", cwd=mine, HF_HUB_OFFLINE="1")
    assert run.returncode == 0, run.stderr
    output = run.stdout + run.stderr
    assert "ERROR" not in output and "fastembed" not in output and "Traceback" not in output, output
    assert "Downloading" not in output, output
    problems = [line for line in output.splitlines() if "no-embeddings" in line]
    assert len(problems) == 1 and "HF_HUB_OFFLINE" in problems[0], output
    assert "listed in `agentctx status`" not in output  # status lists no near-duplicates: none is claimed
    assert ", 0 archived," in run.stdout  # the record archived is another project's

    status = _run("status", cwd=mine).stdout
    assert "last run " in status and ", 0 archived," in status and "0 superseded records archived" in status
    assert "Near-duplicate" not in status
    assert len([line for line in status.splitlines() if "no-embeddings" in line]) == 1

    theirs_run = _run("consolidate", "--force", cwd=theirs, HF_HUB_OFFLINE="1").stdout
    theirs_status = _run("status", cwd=theirs).stdout
    assert "1 superseded records archived" in theirs_status, theirs_status
    said = theirs_run.split(" archived,")[0].rsplit(", ", 1)[1]
    assert f", {said} archived," in theirs_status  # the run's figure is what status says of it


def test_consolidate_lists_in_status_the_near_duplicates_it_reports(tmp_path: Path) -> None:
    tiny = pytest.importorskip("agentctx_embed.tiny")
    repo = a_repo(tmp_path)
    texts = ["Background jobs run on RQ workers", "Background jobs: run on RQ workers", "Use pnpm for packages"]
    folder = tiny.build_tiny_model(tmp_path / "tiny", tiny.words_of(texts))
    model = {"AGENTCTX_EMBED_MODEL": tiny.TINY_MODEL_NAME, "AGENTCTX_EMBED_MODEL_DIR": str(folder)}
    for text in texts:
        made = _run("record", "-t", "decision", "--title", text, "--body", text + ".", cwd=repo, **model)
        assert made.returncode == 0, made.stderr
    run = _run("consolidate", cwd=repo, **model)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert "1 near-duplicate pair(s) to merge by hand: `agentctx status` lists them." in run.stdout, run.stdout
    status = _run("status", cwd=repo, **model).stdout
    listed = status.split("Near-duplicate candidates", 1)[1].splitlines()
    assert "≈" in listed[1] and "Background jobs run on RQ workers" in listed[1], status
