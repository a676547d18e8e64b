"""`agentctx learn` at the terminal: `--dry-run` says for every file why it was taken or not,
and Ctrl-C during the write leaves nothing partial and says what was kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentctx_store import Store
from agentctx_store.learn import apply as learn_apply

ADR = (
    "# {n}. Use tool {n}\n\n## Status\n\nAccepted\n\n## Context\n\nWe need a tool.\n\n## Decision\n\nWe use tool {n}.\n"
)


def _project(project_dir: Path) -> None:
    (project_dir / ".git").mkdir()
    (project_dir / "docs" / "adr").mkdir(parents=True)
    for n in (1, 2, 3):
        (project_dir / "docs" / "adr" / f"000{n}-use-tool-{n}.md").write_text(ADR.format(n=n), encoding="utf-8")
    (project_dir / "docs" / "adr" / "README.md").write_text("# Decisions\n\n- [1](0001-use-tool-1.md)\n")
    (project_dir / "AGENTS.md").write_text("# Guide\n\n- Run the unit tests before every commit.\n")
    (project_dir / "CLAUDE.md").symlink_to("AGENTS.md")


def test_dry_run_says_for_every_file_why(cli, project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _project(project_dir)
    monkeypatch.chdir(project_dir)
    result = cli("learn", "--dry-run")
    assert result.code == 0, result.err
    assert "  docs/adr/0001-use-tool-1.md: taken, a decision record" in result.out
    assert "  AGENTS.md: taken, instruction file of Codex and other agents" in result.out
    assert "  CLAUDE.md: read once, as AGENTS.md (it links there)" in result.out
    assert "  docs/adr/README.md: not taken, it does not read as a decision record" in result.out


def test_ctrl_c_while_writing_stores_nothing_and_says_what_was_kept(
    cli, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(project_dir)
    monkeypatch.chdir(project_dir)
    calls = {"n": 0, "at": 3}
    real_add = Store.add

    def add_then_interrupt(self: Store, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == calls["at"]:
            raise KeyboardInterrupt
        return real_add(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(learn_apply.Store, "add", add_then_interrupt)
    result = cli("learn")
    assert result.code == 130
    assert "Interrupted: learn wrote nothing (all or nothing); no learned records." in result.err
    monkeypatch.setattr(learn_apply.Store, "add", real_add)
    assert cli("search", "tool", "--json").code == 0
    with Store.open() as store:
        assert store.conn.execute("SELECT count(*) FROM records WHERE source = 'learn'").fetchone()[0] == 0
    assert cli("learn").code == 0
    calls.update(n=0, at=1)
    monkeypatch.setattr(learn_apply.Store, "add", add_then_interrupt)
    (project_dir / "AGENTS.md").write_text("# Guide\n\n- Run the linter before every push, always.\n")
    result = cli("learn")
    assert result.code == 130
    assert "the 4 records learned before are kept as they were" in result.err
    with Store.open() as store:  # the retirement planned with the interrupted add was rolled back too
        current = store.conn.execute(
            "SELECT count(*) FROM records WHERE source = 'learn' AND superseded_at IS NULL"
        ).fetchone()[0]
    assert current == 4
