"""`agentctx status` shows what prompt injections cost: tokens per injected prompt, full vs title-only."""

from __future__ import annotations

from pathlib import Path

from agentctx_store import Store, resolve_project


def test_status_shows_tokens_per_injected_prompt_and_full_vs_title_only(
    cli, project_dir: Path, other_dir: Path
) -> None:
    project = resolve_project(project_dir)
    with Store.open() as store:
        store.record_injection(project, "s1", [], 900)  # the session-start digest: not a prompt
        store.record_injection(project, "s1", ["a"], 300, title_ids=["b", "c"], prompt=True)
        store.record_injection(project, "s2", ["d", "e"], 500, prompt=True)
        store.record_injection(resolve_project(other_dir), "s3", ["f"], 5000, prompt=True)

    prompts = cli("status", "--project", str(project_dir), "--json").json()["sessions"]["prompt_injections"]

    assert prompts == {"prompts": 2, "tokens": 800, "full": 3, "title": 2, "tokens_per_prompt": 400.0}
    human = cli("status", "--project", str(project_dir)).out
    assert "prompt injections: 2, 400 tokens per injected prompt; records shown in full 3, by title only 2" in human


def test_status_before_any_prompt_injection(cli, project_dir: Path) -> None:
    with Store.open() as store:
        store.record_injection(resolve_project(project_dir), "s1", [], 900)
    assert "prompt injections: none yet in this project" in cli("status", "--project", str(project_dir)).out
