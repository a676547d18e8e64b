"""`agentctx profile` (global preferences) through the real entry point."""

from __future__ import annotations

from pathlib import Path


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
