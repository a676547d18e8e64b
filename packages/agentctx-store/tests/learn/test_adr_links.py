"""Every common way an ADR says it was replaced, in both directions: the learned records carry
exactly those supersession links, amendments leave both current and linked, deprecated and
rejected ADRs are never current, and a reference to an ADR that is not there stays a note."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctx_store import Project, Store, resolve_project
from agentctx_store.anchors import anchored_records
from agentctx_store.learn import learn

NYGARD = "# {n}. {title}\n\nDate: 2024-01-0{d}\n\n## Status\n\n{status}\n\n## Context\n\nWe needed {title}.\n\n## Decision\n\nWe will {title}.{extra}\n\n## Consequences\n\nFine.\n"
MADR = '---\nstatus: "{status}"\ndate: 2024-01-0{d}\n---\n# {title}\n\n## Context and Problem Statement\n\nWe needed {title}.\n\n## Decision Outcome\n\nChosen option: {title}.{extra}\n'


def _write(root: Path, folder: str, files: dict[str, str]) -> None:
    (root / folder).mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / folder / name).write_text(text, encoding="utf-8")


def _adr(template: str, n: int, title: str, status: str = "Accepted", extra: str = "") -> str:
    return template.format(n=n, title=title, status=status, d=min(n, 9), extra=extra)


def _links(store: Store, project: Project) -> tuple[set[tuple[str, str]], set[str]]:
    names = {
        record.record_id: anchors[0].path.rsplit("/", 1)[-1].split("-")[0].split(".")[0]
        for record, anchors in anchored_records(store, project, include_superseded=True)
    }
    records = store.list_records(project, include_superseded=True, limit=None)
    links = {(names[r.record_id], names[r.superseded_by]) for r in records if r.superseded_by}
    current = {names[r.record_id] for r in records if r.superseded_at is None}
    return links, current


CASES = {
    "nygard status, relative link, both directions": (
        "doc/adr",
        {
            "0001-use-mysql.md": _adr(NYGARD, 1, "Use MySQL", "Superseded by [2. Use Postgres](0002-use-postgres.md)"),
            "0002-use-postgres.md": _adr(
                NYGARD, 2, "Use Postgres", "Accepted\n\nSupersedes [1. Use MySQL](0001-use-mysql.md)"
            ),
        },
        {("0001", "0002")},
        {"0002"},
    ),
    "only the new one says it (prose, number without padding)": (
        "docs/decisions",
        {
            "0003-use-redis.md": _adr(NYGARD, 3, "Use Redis for caching"),
            "0004-use-memcached.md": _adr(
                NYGARD, 4, "Use Memcached", extra="\n\nThis decision replaces ADR 3, which we no longer follow."
            ),
        },
        {("0003", "0004")},
        {"0004"},
    ),
    "madr front matter, prefix and zero padding": (
        "architecture/records",
        {
            "0010-use-rest.md": _adr(MADR, 10, "Use REST", "superseded by ADR-0011"),
            "0011-use-grpc.md": _adr(MADR, 11, "Use gRPC", "accepted"),
        },
        {("0010", "0011")},
        {"0011"},
    ),
    "by url and by file name": (
        "adr",
        {
            "0001-use-travis.md": _adr(
                NYGARD, 1, "Use Travis", "Replaced by https://github.com/o/r/blob/main/adr/0002-use-actions.md"
            ),
            "0002-use-actions.md": _adr(NYGARD, 2, "Use Actions"),
            "0003-use-make.md": _adr(NYGARD, 3, "Use Make", "Superseded by 0004-use-just.md"),
            "0004-use-just.md": _adr(NYGARD, 4, "Use just"),
        },
        {("0001", "0002"), ("0003", "0004")},
        {"0002", "0004"},
    ),
    "by title, dated names (log4brains)": (
        "docs/adr",
        {
            "20200926-use-numbers-as-ids.md": "# Use numbers as ids\n\n- Status: superseded by Use slugs as ids\n- Date: 2020-09-26\n\n## Context and Problem Statement\n\nIds.\n\n## Decision Outcome\n\nNumbers.\n",
            "20201016-use-slugs-as-ids.md": "# Use slugs as ids\n\n- Status: accepted\n- Date: 2020-10-16\n\n## Context and Problem Statement\n\nIds.\n\n## Decision Outcome\n\nSlugs.\n",
        },
        {("20200926", "20201016")},
        {"20201016"},
    ),
    "amended and partly superseded: both current": (
        "docs/architecture/decisions",
        {
            "0005-help-comments.md": _adr(
                NYGARD, 5, "Help comments", "Accepted\n\nAmended by [9. Help scripts](0009-help-scripts.md)"
            ),
            "0009-help-scripts.md": _adr(
                NYGARD, 9, "Help scripts", "Accepted\n\nAmends [5. Help comments](0005-help-comments.md)"
            ),
            "0010-ranges.md": _adr(
                NYGARD,
                10,
                "IP ranges",
                "Partly superseded",
                extra="\n\n**Ranges superseded by [ADR #0011](0011-new-ranges.md).**",
            ),
            "0011-new-ranges.md": _adr(
                NYGARD, 11, "New ranges", extra="\n\nThis ADR in part supersedes [0010](0010-ranges.md)."
            ),
        },
        set(),
        {"0005", "0009", "0010", "0011"},
    ),
    "setext headings, a note in the body, a code-span reference, a scoped supersession": (
        "docs/architecture",
        {
            "0001-use-airflow.md": "Use Airflow\n===========\n\nContext\n-------\n\nThis ADR has been superseded by `ADR-0002`.\n\nWe need a scheduler.\n\nDecision\n--------\n\nWe use Airflow.\n",
            "0002-use-batch.md": "Use Batch\n=========\n\nContext\n-------\n\nThis ADR supersedes `ADR-01`.\n\nAirflow hurt.\n\nDecision\n--------\n\nWe use Batch.\n",
            "0003-polygons.md": "# Polygons\n\n## Observation\n\nPolygons are ambiguous.\n\n## Proposal\n\nUse the smallest area.\n",
            "0004-roles.md": _adr(
                NYGARD,
                4,
                "Roles and access",
                extra="\n\nThis ADR has been superseded by [ADR 5](0005-acl-arrays.md) concerning the storage of rules.",
            ),
            "0005-acl-arrays.md": _adr(NYGARD, 5, "ACL arrays"),
        },
        {("0001", "0002")},
        {"0002", "0003", "0004", "0005"},
    ),
    "deprecated and rejected are never current; deprecated in favour of links": (
        "adr",
        {
            "ADR-1.md": "# Old API\n\n| Metadata | Value |\n|---|---|\n| Status | Deprecated |\n\n## Context\n\nx\n\n## Decision\n\nDeprecate in favor of ADR-3.\n",
            "ADR-2.md": "# Rejected idea\n\n| Metadata | Value |\n|---|---|\n| Status | ❌ Rejected |\n\n## Context\n\nx\n\n## Decision\n\ny\n",
            "ADR-3.md": "# New API\n\n| Metadata | Value |\n|---|---|\n| Status | Implemented |\n\n## Context\n\nx\n\n## Decision\n\nz\n",
            "ADR-4.md": "# Gone\n\n| Metadata | Value |\n|---|---|\n| Status | Deprecated |\n\n## Context\n\nx\n\n## Decision\n\nw\n",
        },
        {("ADR", "ADR")},  # ADR-1 → ADR-3 (names reduce to their prefix here)
        {"ADR"},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_every_form_of_supersession_gives_exactly_its_links(store: Store, tmp_path: Path, case: str) -> None:
    folder, files, links, current = CASES[case]
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    _write(root, folder, files)
    project = resolve_project(root)
    learn(store, project, root)
    found, now = _links(store, project)
    assert found == links
    assert now == current


def test_deprecated_links_to_its_replacement_and_rejected_is_skipped(store: Store, tmp_path: Path) -> None:
    _folder, files, _links_, _current = CASES[
        "deprecated and rejected are never current; deprecated in favour of links"
    ]
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    _write(root, "adr", files)
    project = resolve_project(root)
    plan = learn(store, project, root)
    assert any("ADR-2.md: skipped, a rejected ADR" in line for line in plan.skipped)
    records = {r.title: r for r in store.list_records(project, include_superseded=True, limit=None)}
    assert set(records) == {"Old API", "New API", "Gone"}
    assert records["Old API"].superseded_by == records["New API"].record_id
    assert records["Gone"].superseded_at is not None and records["Gone"].superseded_by is None
    assert records["New API"].superseded_at is None


def test_an_amendment_is_a_link_and_a_note_not_a_supersession(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    _write(root, "doc/adr", dict(list(CASES["amended and partly superseded: both current"][1].items())[:2]))
    project = resolve_project(root)
    learn(store, project, root)
    records = {r.title: r for r in store.list_records(project, limit=None)}
    assert "Amended by Help scripts (doc/adr/0009-help-scripts.md)" in records["Help comments"].body
    edge = store.conn.execute(
        "SELECT count(*) FROM edges WHERE from_id = ? AND to_id = ? AND rel_type = 'amends'",
        (records["Help scripts"].record_id, records["Help comments"].record_id),
    ).fetchone()[0]
    assert edge == 1


def test_a_reference_to_a_missing_adr_is_a_note_never_a_guess(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    _write(
        root,
        "adr",
        {
            "0001-a.md": _adr(NYGARD, 1, "Use A", "Superseded by [ADR-0042](0042-gone.md)"),
            "0002-b.md": _adr(NYGARD, 2, "Use B"),
            "0003-c.md": _adr(NYGARD, 3, "Use C", extra="\n\nThe old CUID scheme was deprecated in favor of CUID2."),
        },
    )
    project = resolve_project(root)
    learn(store, project, root)
    records = {r.title: r for r in store.list_records(project, include_superseded=True, limit=None)}
    assert records["Use A"].superseded_at is not None and records["Use A"].superseded_by is None
    assert "(not among the learned ADRs)" in records["Use A"].body and "ADR-0042" in records["Use A"].body
    assert records["Use B"].superseded_at is None and records["Use C"].superseded_at is None
    assert "not among" not in records["Use C"].body


def _table_adr(title: str, status: str, supersedes: str = "N/A") -> str:
    return (
        f"# {title}\n\n|   |   |\n|---|---|\n| Date | 2024-03-07 |\n| Status | {status} |\n"
        f"| Supersedes | {supersedes} |\n| Superseded by: | N/A |\n\n## What\n\n{title}.\n\n## Why\n\nBecause.\n"
    )


def test_names_with_a_project_before_the_adr_number_and_status_in_a_table(store: Store, tmp_path: Path) -> None:
    """`ACME-ADR-0001-….md` and `ACME-ADR-Core-0002-….md` are numbered decision records even in
    a folder not named for decisions; a "Supersedes" that points at a pull request is no ADR."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    _write(
        root,
        "docs/design/platform",
        {
            "ACME-ADR-0001-use-rest.md": _table_adr(
                "Use REST", "Superseded by [ADR 2](ACME-ADR-Core-0002-use-grpc.md)"
            ),
            "ACME-ADR-Core-0002-use-grpc.md": _table_adr("Use gRPC", "Approved"),
            "ACME-ADR-Core-0003-use-buf.md": _table_adr("Use buf", "Draft", "https://github.com/o/r/pull/2"),
            "notes.md": "# Meeting notes\n\nNothing decided.\n",
        },
    )
    project = resolve_project(root)
    plan = learn(store, project, root)
    assert sorted(s.rel.rsplit("/", 1)[-1] for s in plan.sources if s.kind == "adr") == [
        "ACME-ADR-0001-use-rest.md",
        "ACME-ADR-Core-0002-use-grpc.md",
        "ACME-ADR-Core-0003-use-buf.md",
    ]
    records = {r.title: r for r in store.list_records(project, include_superseded=True, limit=None)}
    assert records["Use REST"].superseded_by == records["Use gRPC"].record_id
    assert records["Use gRPC"].superseded_at is None and records["Use buf"].superseded_at is None
