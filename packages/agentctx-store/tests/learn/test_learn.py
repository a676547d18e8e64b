"""`learn` on real project documents (tests/learn/fixtures/project-docs, see its README for sources and
licences): ADRs become decisions with exactly the hand-checked supersession links, instruction
files become one record per rule, and re-runs change only what the files changed."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from agentctx_store import NewRecord, Project, Store, resolve_project, search
from agentctx_store.anchors import anchored_records, anchors_of, content_hash
from agentctx_store.learn import discover, learn, memory_dir
from agentctx_store.learn.adr import parse_adr
from agentctx_store.learn.discover import sanitize
from agentctx_store.learn.rules import rule_title, rule_type, split_rules

FIXTURES = Path(__file__).parent / "fixtures" / "project-docs"
FORMS_LINKS = {(2, 19), (3, 15), (4, 45), (7, 44), (13, 25), (43, 46)}  # the README's hand-checked links
JABREF_LINKS = {(45, 57)}


def _copy(name: str, tmp_path: Path) -> Path:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    for folder, _, files in os.walk(root):
        os.chmod(folder, 0o755)
        for file in files:
            os.chmod(Path(folder) / file, 0o644)
    (root / ".git").mkdir()  # a repository without a remote: its own project
    return root


def _number(path: str) -> int:
    found = re.search(r"(\d{2,4})-", path.rsplit("/", 1)[-1])
    assert found is not None, path
    return int(found.group(1))


def _links(store: Store, project: Project) -> set[tuple[int, int]]:
    paths = {
        record.record_id: anchors[0].path
        for record, anchors in anchored_records(store, project, include_superseded=True)
    }
    links = set()
    for record in store.list_records(project, include_superseded=True, limit=None):
        if record.superseded_by is not None:
            links.add((_number(paths[record.record_id]), _number(paths[record.superseded_by])))
    return links


@pytest.mark.parametrize(
    ("name", "adrs", "links"),
    [("alphagov-forms", 50, FORMS_LINKS), ("jabref", 70, JABREF_LINKS)],
)
def test_adr_folders_give_one_decision_per_adr_and_exactly_the_hand_checked_links(
    store: Store, tmp_path: Path, name: str, adrs: int, links: set[tuple[int, int]]
) -> None:
    root = _copy(name, tmp_path)
    if name == "jabref":
        (root / "AGENTS.md").unlink()  # the ADRs only
    project = resolve_project(root)
    plan = learn(store, project, root)
    records = store.list_records(project, include_superseded=True, limit=None)
    assert {record.type for record in records} == {"decision"}
    assert {record.source for record in records} == {"learn"}
    assert len(records) >= 0.9 * adrs
    assert _links(store, project) == links
    current = [record for record in records if record.superseded_at is None]
    assert len(current) == len(records) - len(links)
    names = {source.rel.rsplit("/", 1)[-1] for source in plan.sources}
    assert not names & {"README.md", "index.md", "adr-template.md", "ADRXXX-architecture-decision-record-template.md"}
    assert len(names) == adrs


def test_rejected_and_superseded_adrs_are_never_current(store: Store, tmp_path: Path) -> None:
    root = _copy("alphagov-forms", tmp_path)
    project = resolve_project(root)
    learn(store, project, root)
    titles = {record.title for record in store.list_records(project, limit=None)}
    assert "Use Rust for the API" not in titles and not any("Rust" in title for title in titles)  # ADR006, rejected
    assert "Use GOV.UK Notify" not in titles  # ADR002, superseded by ADR019
    assert "Use Amazon SES" in titles
    hits = search(store, project, "which email service sends form submissions GOV.UK Notify", floor=None).hits
    assert hits and all(hit.record.title != "Use GOV.UK Notify" for hit in hits)
    notify = next(
        r for r in store.list_records(project, include_superseded=True, limit=None) if r.title == "Use GOV.UK Notify"
    )
    assert store.get(project, notify.superseded_by or "").title == "Use Amazon SES"


def test_an_adr_rejected_later_is_retired(store: Store, tmp_path: Path) -> None:
    root = _copy("alphagov-forms", tmp_path)
    project = resolve_project(root)
    learn(store, project, root)
    path = root / "ADR" / "ADR019-use-amazon-ses.md"
    path.write_text(path.read_text(encoding="utf-8").replace("Accepted", "Rejected", 1), encoding="utf-8")
    plan = learn(store, project, root)
    assert (plan.count("retire"), plan.count("add"), plan.count("supersede")) == (1, 0, 0)
    assert "Use Amazon SES" not in {record.title for record in store.list_records(project, limit=None)}


def test_an_adr_keeps_title_date_and_its_decision_within_the_limit(tmp_path: Path) -> None:
    path = FIXTURES / "alphagov-forms" / "ADR" / "ADR019-use-amazon-ses.md"
    adr = parse_adr(path, path.read_text(encoding="utf-8"))
    assert adr is not None
    assert adr.title == "Use Amazon SES" and adr.valid_from == "2023-03-27" and adr.state == "current"
    assert "Decision:" in adr.body and len(adr.body) <= 2000
    madr = FIXTURES / "jabref" / "docs" / "decisions" / "0045-use-input-flag-always-for-input-files.md"
    parsed = parse_adr(madr, madr.read_text(encoding="utf-8"))
    assert parsed is not None and parsed.state == "superseded" and parsed.title.startswith("Use --input Flag")


def test_running_learn_twice_changes_nothing(store: Store, tmp_path: Path) -> None:
    root = _copy("trigger.dev", tmp_path)
    project = resolve_project(root)
    first = learn(store, project, root)
    before = [record.to_dict() for record in store.list_records(project, include_superseded=True, limit=None)]
    again = learn(store, project, root)
    after = [record.to_dict() for record in store.list_records(project, include_superseded=True, limit=None)]
    assert first.count("add") == len(before) > 50
    assert again.summary() | {"keep": 0} == {"add": 0, "supersede": 0, "retire": 0, "keep": 0, "move": 0,
                                            "duplicate": 0, "link": 0, "files": 5}  # fmt: skip
    assert before == after


def test_editing_one_rule_supersedes_one_record_and_deleting_one_retires_one(store: Store, tmp_path: Path) -> None:
    root = _copy("mcp-python-sdk", tmp_path)
    project = resolve_project(root)
    hand = store.add(project, NewRecord(type="preference", title="Mine", body="Reply in short sentences."))
    learn(store, project, root)
    agents = root / "AGENTS.md"
    text = agents.read_text(encoding="utf-8")
    edited = text.replace("- Type hints required for all code", "- Type hints required for all code, tests included")
    assert edited != text
    agents.write_text(edited, encoding="utf-8")
    plan = learn(store, project, root)
    assert (plan.count("supersede"), plan.count("add"), plan.count("retire")) == (1, 0, 0)
    (old,) = [a.record for a in plan.actions if a.action == "supersede"]
    assert old is not None and store.get(project, old.record_id).superseded_by is not None
    assert store.get(project, old.record_id).superseded_by in {
        r.record_id for r in store.list_records(project, limit=None)
    }
    new = store.get(project, store.get(project, old.record_id).superseded_by or "")
    assert "tests included" in new.body and anchors_of(store, project, new.record_id)[0].path == "AGENTS.md"

    removed = edited.replace("- ONLY use uv, NEVER pip\n", "")
    assert removed != edited
    agents.write_text(removed, encoding="utf-8")
    plan = learn(store, project, root)
    assert (plan.count("supersede"), plan.count("add"), plan.count("retire")) == (0, 0, 1)
    (gone,) = [a.record for a in plan.actions if a.action == "retire"]
    assert gone is not None and "NEVER pip" in gone.body
    assert store.get(project, gone.record_id).superseded_at is not None
    assert store.get(project, hand.record_id) == hand  # a hand-made record is never touched

    agents.unlink()
    plan = learn(store, project, root)
    assert plan.count("retire") > 30  # every rule of the deleted file
    assert [r.record_id for r in store.list_records(project, limit=None)] == [hand.record_id]


def test_a_rule_already_recorded_by_hand_is_not_learned_again(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "CLAUDE.md").write_text(
        "# Rules\n\n## Requests\n\n- Never use request.signal to detect client disconnects; use getRequestAbortSignal().\n\n"
        "## Migrations\n\n- Keep every database migration small enough to review in one sitting, one table change per file.\n",
        encoding="utf-8",
    )
    project = resolve_project(root)
    store.add(
        project,
        NewRecord(
            type="discovery",
            title="request.signal is broken",
            body="Never use request.signal to detect client disconnects; use getRequestAbortSignal()",
            source="llm_extraction",
            confidence="inferred",
        ),
    )
    plan = learn(store, project, root)
    assert (plan.count("duplicate"), plan.count("add")) == (1, 1)
    assert len(store.list_records(project, limit=None)) == 2


def test_dry_run_writes_nothing(store: Store, tmp_path: Path) -> None:
    root = _copy("prefect", tmp_path)
    project = resolve_project(root)
    plan = learn(store, project, root, dry_run=True)
    assert plan.count("add") > 30
    assert store.list_records(project, limit=None) == []
    assert store.conn.execute("SELECT count(*) FROM record_anchors").fetchone()[0] == 0


def test_discovery_finds_every_kind_of_instruction_file_and_skips_vendored_ones(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    for rel in (
        "CLAUDE.md", "AGENTS.md", "GEMINI.md", ".cursorrules", "pkg/api/CLAUDE.md", "pkg/AGENTS.md",
        ".github/copilot-instructions.md", ".cursor/rules/python.mdc", "node_modules/x/CLAUDE.md",
        "docs/decisions/0001-use-x.md", "docs/decisions/0002-use-y.md", "docs/decisions/adr-template.md",
    ):  # fmt: skip
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# Title\n\n- A rule worth keeping in mind.\n", encoding="utf-8")
    found = {(source.rel, source.kind) for source in discover(root)}
    assert found == {
        ("CLAUDE.md", "rules"), ("AGENTS.md", "rules"), ("GEMINI.md", "rules"), (".cursorrules", "rules"),
        ("pkg/api/CLAUDE.md", "rules"), ("pkg/AGENTS.md", "rules"), (".github/copilot-instructions.md", "rules"),
        (".cursor/rules/python.mdc", "rules"), ("docs/decisions/0001-use-x.md", "adr"),
        ("docs/decisions/0002-use-y.md", "adr"),
    }  # fmt: skip


def test_claude_code_auto_memory_is_read_and_never_written(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "work" / "my.repo"
    root.mkdir(parents=True)
    (root / ".git").mkdir()
    home = Path(os.environ["HOME"])
    folder = home / ".claude" / "projects" / sanitize(str(root.resolve())) / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("- [Deploys](deploys.md) — how we deploy\n", encoding="utf-8")
    memory = folder / "deploys.md"
    memory.write_text(
        "---\nname: deploys\ndescription: Deploys go through the staging cluster first\ntype: project\n---\n\n"
        "Every deploy goes to staging-eu first; production only after the smoke tests pass.\n",
        encoding="utf-8",
    )
    before = (memory.stat().st_mtime_ns, content_hash(memory.read_text(encoding="utf-8")))
    assert memory_dir(root.resolve()) == folder
    project = resolve_project(root)
    learn(store, project, root)
    (record,) = store.list_records(project, limit=None)
    assert record.title == "Deploys go through the staging cluster first" and "staging-eu" in record.body
    assert anchors_of(store, project, record.record_id)[0].path == "claude-memory:deploys.md"
    assert (memory.stat().st_mtime_ns, content_hash(memory.read_text(encoding="utf-8"))) == before
    assert sorted(path.name for path in folder.iterdir()) == ["MEMORY.md", "deploys.md"]
    memory.unlink()
    assert learn(store, project, root).count("retire") == 1


def test_learn_never_touches_another_projects_records(store: Store, tmp_path: Path) -> None:
    root = _copy("mcp-python-sdk", tmp_path)
    other = _copy("prefect", tmp_path)
    project, other_project = resolve_project(root), resolve_project(other)
    learn(store, other_project, other)
    theirs = [r.to_dict() for r in store.list_records(other_project, include_superseded=True, limit=None)]
    learn(store, project, root)
    (root / "AGENTS.md").unlink()
    learn(store, project, root)
    assert [r.to_dict() for r in store.list_records(other_project, include_superseded=True, limit=None)] == theirs
    assert not any(r.project_id == other_project.project_id for r in store.list_records(project, limit=None))


LONG = (
    "The integration suite starts a real server on a free port and talks to it over HTTP; it needs Docker for the database an"
    "d takes about four minutes, so run it before you push rather than on every change, and read its log under build/integration when it fails."
)


def test_rules_split_one_per_bullet_with_lead_ins_and_skip_navigation() -> None:
    text = (
        "# Guide\n\nThis file provides guidance to Claude Code when working with this repository.\n\n"
        "@AGENTS.md\n\n## Links\n\n- [Contributing](CONTRIBUTING.md)\n- [Docs](https://example.org/docs)\n\n"
        "## Testing\n\nOnly use dynamic import() when:\n- cycles cannot be broken\n- the module is optional\n\n"
        "- Tests must be deterministic and never sleep for a fixed time; wait on an event instead, with a timeout.\n"
        "- Use anyio, not asyncio, for every async test in this repository, including the integration ones.\n\n"
        f"{LONG}\n\n"
        "Run the suite with:\n\n```bash\nuv run --frozen pytest\n```\n"
        "\n## Style\n\nWe use ruff.\n\nRun it with:\n\n```bash\nuv run ruff check\n```\n"
    )
    rules = split_rules(text)
    bodies = [rule.body for rule in rules]
    assert bodies == [
        "Only use dynamic import() when:\ncycles cannot be broken\nthe module is optional",
        "Tests must be deterministic and never sleep for a fixed time; wait on an event instead, with a timeout.",
        "Use anyio, not asyncio, for every async test in this repository, including the integration ones.",
        LONG,
        "Run the suite with:\nuv run --frozen pytest",
        "We use ruff.\nRun it with:\nuv run ruff check",  # a small section is one rule
    ]
    assert [(rule.line_start, rule.line_end) for rule in rules] == [
        (14, 16),
        (18, 18),
        (19, 19),
        (21, 21),
        (23, 27),
        (31, 37),
    ]
    assert rule_title(rules[-1].body, rules[-1].headings) == "Style: We use ruff"
    assert rule_type(bodies[1]) == "convention"
    assert rule_type("We use vitest exclusively.") == "decision"
    assert rule_type("Open PRs against main and ask a maintainer before merging.") == "preference"
    assert rule_type("The request.signal is broken due to a Node.js bug.") == "discovery"
    assert rule_title(bodies[0]) == "Only use dynamic import() when: cycles cannot be broken"
    assert len(rule_title("word " * 60)) <= 91
