"""`agentctx consolidate`, `sync`, `profile` and `models download` through the real entry point."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from agentctx_store import digest, resolve_project

WEB_CLAUDE_MD = """# CLAUDE.md

## Architecture

- Background jobs run on BullMQ with Redis.
- Use pnpm, never npm or yarn.
"""


@pytest.fixture
def tiny_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    tiny = pytest.importorskip("agentctx_embed.tiny")
    words = tiny.words_of(
        ["decision convention handover 2026 11 29 background jobs run on bullmq temporal workflows redis use pnpm"]
    )
    folder = tiny.build_tiny_model(tmp_path / "tiny", words)
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", tiny.TINY_MODEL_NAME)
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL_DIR", str(folder))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return folder


@pytest.fixture
def drifted(cli, record, project_dir: Path) -> dict[str, str]:
    (project_dir / "CLAUDE.md").write_text(WEB_CLAUDE_MD, encoding="utf-8")
    old = record("decision", "Background jobs on BullMQ", "Jobs run on BullMQ backed by Redis.")
    result = cli(
        "supersede", old["id"], "--body", "We moved background jobs from BullMQ to Temporal workflows.",
        "--project", str(project_dir), "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    new_id = result.json()["new"]["id"] if "new" in result.json() else result.json()[1]["id"]
    return {"old": old["id"], "new": new_id}


def test_sync_prints_the_diff_and_writes_nothing(cli, drifted, project_dir: Path) -> None:
    result = cli("sync", "--project", str(project_dir))
    assert result.code == 0, result.err
    assert "1 missing from CLAUDE.md, 1 superseded but still written." in result.out
    assert "-- Background jobs run on BullMQ with Redis." in result.out
    assert f"<!-- agentctx:{drifted['new']} -->" in result.out
    assert (project_dir / "CLAUDE.md").read_text(encoding="utf-8") == WEB_CLAUDE_MD


def test_sync_apply_asks_and_a_no_writes_nothing(cli, drifted, project_dir: Path) -> None:
    result = cli("sync", "--project", str(project_dir), "--apply", input="n\n")
    assert result.code == 1
    assert (project_dir / "CLAUDE.md").read_text(encoding="utf-8") == WEB_CLAUDE_MD


def test_sync_apply_yes_writes_and_then_nothing_drifts(cli, drifted, project_dir: Path) -> None:
    result = cli("sync", "--project", str(project_dir), "--apply", "--yes")
    assert result.code == 0, result.err
    text = (project_dir / "CLAUDE.md").read_text(encoding="utf-8")
    assert "~~Background jobs run on BullMQ with Redis.~~" in text and drifted["new"] in text
    assert "- Use pnpm, never npm or yarn." in text
    again = cli("sync", "--project", str(project_dir), "--json")
    assert again.json()["missing"] == [] and again.json()["contradicted"] == []


def test_sync_json_is_the_drift_report(cli, drifted, project_dir: Path) -> None:
    report = cli("sync", "--project", str(project_dir), "--json").json()
    assert [entry["id"] for entry in report["contradicted"]] == [drifted["old"]]
    assert [entry["id"] for entry in report["missing"]] == [drifted["new"]]
    assert report["proposed_diff"].startswith("--- a/CLAUDE.md")


def test_yes_without_apply_is_refused(cli, project_dir: Path) -> None:
    result = cli("sync", "--project", str(project_dir), "--yes")
    assert result.code == 1 and "--apply" in result.err


def test_consolidate_writes_the_full_digest_then_skips(cli, record, tiny_model: Path, project_dir: Path) -> None:
    decision = record("decision", "Use pnpm", "Use pnpm for packages.")
    result = cli("consolidate", "--project", str(project_dir), "--json")
    assert result.code == 0, result.err
    report = result.json()
    assert report["embedded"] == 1 and report["backend"] == "vec0"
    text, info = digest.read(resolve_project(project_dir).project_id)
    assert info.kind == "full" and decision["id"] in text
    again = cli("consolidate", "--project", str(project_dir))
    assert "Nothing changed" in again.out


def test_consolidate_without_the_embeddings_extra_still_writes_a_digest(
    cli, record, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "agentctx_embed", None)  # rung 1: the extra is not installed
    decision = record("decision", "Use pnpm", "Use pnpm for packages.")
    result = cli("consolidate", "--project", str(project_dir), "--json")
    assert result.code == 0, result.err
    report = result.json()
    assert report["backend"] is None
    assert any("no-embeddings" in note for note in report["degraded"])
    assert any("no-llm" in note for note in report["degraded"])
    assert decision["id"] in digest.read(resolve_project(project_dir).project_id)[0]


def test_consolidate_with_an_unavailable_model_degrades_to_keywords(
    cli, record, project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL_DIR", str(tmp_path / "no-model-here"))
    decision = record("decision", "Use pnpm", "Use pnpm for packages.")
    result = cli("consolidate", "--project", str(project_dir), "--json")
    assert result.code == 0, result.err
    assert any("no-embeddings" in note for note in result.json()["degraded"])
    assert decision["id"] in digest.read(resolve_project(project_dir).project_id)[0]


def test_status_shows_the_consolidation_section(cli, record, tiny_model: Path, project_dir: Path) -> None:
    record("decision", "Use pnpm", "Use pnpm for packages.")
    assert cli("consolidate", "--project", str(project_dir)).code == 0
    result = cli("status", "--project", str(project_dir))
    assert "Consolidation" in result.out and "vectors: vec0" in result.out
    data = cli("status", "--project", str(project_dir), "--json").json()
    assert data["consolidation"]["consolidation"]["embedded"] == 1


def test_profile_show_edit_clear_export(cli, record, project_dir: Path) -> None:
    pref = record("preference", "Prefers small commits", "Commits stay small.", "--scope", "global")
    local = record("decision", "Use pnpm", "Use pnpm for packages.")
    shown = cli("profile", "show")
    assert pref["id"] in shown.out and "Prefers small commits" in shown.out
    assert local["id"] not in shown.out
    edited = cli("profile", "edit", pref["id"], "--title", "Prefers small, focused commits")
    assert edited.code == 0, edited.err
    exported = cli("profile", "export")
    files = [Path(line.removeprefix("Wrote ")) for line in exported.out.splitlines()]
    assert "Prefers small, focused commits" in files[0].read_text(encoding="utf-8")
    refused = cli("profile", "clear", local["id"], "--yes")
    assert refused.code == 1 and "in your profile" in refused.err and "agentctx delete" in refused.err
    assert cli("profile", "clear", pref["id"], input="n\n").code == 1
    assert cli("profile", "clear", pref["id"], "--yes").code == 0
    assert pref["id"] not in cli("profile", "show").out


def test_models_download_loads_a_local_model(cli, tiny_model: Path) -> None:
    result = cli("models", "download")
    assert result.code == 0, result.err
    assert "Embedding model ready: agentctx/tiny-word-model (32 dimensions)" in result.out


def test_the_stdlib_half_and_the_cli_module_import_nothing_heavy() -> None:
    """Hooks import the store on every prompt, and `agentctx --help` loads every command module:
    neither may pull numpy, apsw, fastembed or anthropic in."""
    import subprocess

    code = (
        "import sys\n"
        "import agentctx_store.consolidate, agentctx_store.drift, agentctx_store.scoring\n"
        "import agentctx_store.ranking, agentctx_store.profile, agentctx_store.merges\n"
        "import agentctx.cli.app\n"
        "heavy = {'numpy', 'apsw', 'fastembed', 'onnxruntime', 'anthropic', 'agentctx_embed', 'sqlite_vec'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_consolidate_all_covers_every_project_and_exports_the_profile(
    cli, record, project_dir: Path, other_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "agentctx_embed", None)  # keyword-only is enough here
    first = record("decision", "Use pnpm", "Use pnpm for packages.")
    second = record("decision", "Use uv", "Use uv for Python.", project=other_dir)
    record("preference", "Prefers small commits", "Commits stay small.", "--scope", "global")
    result = cli("consolidate", "--all", "--json")
    assert result.code == 0, result.err
    assert len(result.json()["projects"]) == 2
    for directory, decision, foreign in ((project_dir, first, second), (other_dir, second, first)):
        text, info = digest.read(resolve_project(directory).project_id)
        assert info.kind == "full" and decision["id"] in text and foreign["id"] not in text
        assert "Prefers small commits" in text  # reinforced-or-explicit global preferences reach every digest
    exported = Path(digest.paths.home()) / "profile" / "preferences.md"
    assert "Prefers small commits" in exported.read_text(encoding="utf-8")
