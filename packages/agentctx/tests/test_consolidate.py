"""`agentctx consolidate` and its `status` section through the real entry point."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from agentctx_store import digest, resolve_project


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
    assert not any("no-llm" in note for note in report["degraded"])  # no vectors, no near-duplicates to merge
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


def test_the_stdlib_half_and_the_cli_module_import_nothing_heavy() -> None:
    """Hooks import the store on every prompt, and `agentctx --help` loads every command module:
    neither may pull numpy, apsw, fastembed or anthropic in."""
    import subprocess

    code = (
        "import sys\n"
        "import agentctx_store.consolidate, agentctx_store.drift, agentctx_store.consolidate.scoring\n"
        "import agentctx_store.digest.ranking, agentctx_store.consolidate.profile, agentctx_store.consolidate.merges\n"
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
