"""The seven tools' logic over a real store, in-process (the stdio path is in tests-e2e)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from agentctx_store import NewRecord, Project, Store, resolve_project
from agentctx_store.budget import SEARCH_RESULT_TOKENS, estimate_tokens
from agentctx_store.errors import NotHeadError, RecordNotFound, ValidationError

from agentctx_mcp import tools
from agentctx_mcp.index import parse_index


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return resolve_project(root)


@pytest.fixture
def other(tmp_path: Path) -> Project:
    root = tmp_path / "elsewhere"
    (root / ".git").mkdir(parents=True)
    return resolve_project(root)


@pytest.fixture
def store() -> Iterator[Store]:
    opened = Store.open()
    yield opened
    opened.close()


def add(store: Store, project: Project, title: str, body: str, **fields: object) -> str:
    new = NewRecord(type=str(fields.pop("type", "decision")), title=title, body=body, **fields)  # type: ignore[arg-type]
    return store.add(project, new).record_id


def ids_of(index: str) -> list[str]:
    rows, _ = parse_index(index)
    return [row["id"] for row in rows]


def test_search_returns_the_compact_index_without_bodies(store: Store, project: Project) -> None:
    record_id = add(store, project, "Use SQLite in WAL mode", "BODYMARKER the store is one SQLite file.")
    index = tools.search_index(store, project, "sqlite wal")
    rows, degraded = parse_index(index)
    assert [row["id"] for row in rows] == [record_id]
    assert rows[0] == {
        "id": record_id,
        "type": "decision",
        "title": "Use SQLite in WAL mode",
        "age": "now",
        "confidence": "explicit",
        "score": "1.00",
    }
    assert degraded is None
    assert "BODYMARKER" not in index


def test_search_never_returns_superseded_or_other_projects_records(
    store: Store, project: Project, other: Project
) -> None:
    old = add(store, project, "Use Postgres for storage", "Postgres storage was the first choice.")
    new = store.supersede(project, old, body="Use SQLite for storage, one file.", rationale="no server").__getitem__(1)
    foreign = add(store, other, "Use Postgres storage elsewhere", "Postgres storage in another project.")
    found = ids_of(tools.search_index(store, project, "postgres sqlite storage"))
    assert new.record_id in found
    assert old not in found
    assert foreign not in found


def test_search_scope_global_returns_only_global_records(store: Store, project: Project) -> None:
    mine = add(store, project, "Tabs for indentation here", "Tabs indentation in this project.")
    shared = add(
        store, project, "Prefer tabs indentation everywhere", "Tabs indentation.", type="preference", scope="global"
    )
    assert set(ids_of(tools.search_index(store, project, "tabs indentation"))) == {mine, shared}
    assert ids_of(tools.search_index(store, project, "tabs indentation", scope="global")) == [shared]


def test_search_filters_by_type(store: Store, project: Project) -> None:
    decision = add(store, project, "Retry uploads three times", "Retry uploads.")
    bugfix = add(store, project, "Upload retry loop never ended", "Retry uploads loop fixed.", type="bugfix")
    assert ids_of(tools.search_index(store, project, "retry uploads", type="bugfix")) == [bugfix]
    assert ids_of(tools.search_index(store, project, "retry uploads", type="decision")) == [decision]


def test_search_file_filter_keeps_records_linked_to_the_file(store: Store, project: Project) -> None:
    linked = add(store, project, "Parser caches tokens", "Parser token cache in parser.py.")
    unlinked = add(store, project, "Parser rejects tabs", "Parser rejects tab characters.")
    node = store.upsert_node(project, "file", "src/parser.py")
    store.link_entity(linked, node)
    found = ids_of(tools.search_index(store, project, "parser", file="src/parser.py"))
    assert found == [linked]
    absolute = str(Path(project.root) / "src" / "parser.py")
    assert ids_of(tools.search_index(store, project, "parser", file=absolute)) == [linked]
    assert unlinked in ids_of(tools.search_index(store, project, "parser"))


@pytest.mark.parametrize(
    ("query", "limit", "message"),
    [
        ("", 10, "query is empty"),
        ("   ", 10, "query is empty"),
        ("the of and", 10, "no searchable words"),
        ("sqlite", 16, "at most 15"),
        ("sqlite", 0, "1 to 15"),
    ],
)
def test_search_rejects_bad_input(store: Store, project: Project, query: str, limit: int, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        tools.search_index(store, project, query, limit=limit)


def test_search_rejects_an_unknown_type(store: Store, project: Project) -> None:
    with pytest.raises(ValidationError, match="Unknown record type 'nope'"):
        tools.search_index(store, project, "sqlite", type="nope")


@pytest.mark.parametrize(
    "query",
    ['"sqlite unterminated', "sqlite*", "NEAR(sqlite wal)", "title:sqlite", "sqlite AND OR NOT", "(sqlite", "^sqlite"],
)
def test_search_treats_fts_syntax_as_plain_words(store: Store, project: Project, query: str) -> None:
    record_id = add(store, project, "Use SQLite in WAL mode", "The store is SQLite.")
    assert ids_of(tools.search_index(store, project, query)) == [record_id]


def test_search_holds_every_line_to_fifty_tokens_and_fifteen_results(store: Store, project: Project) -> None:
    long_title = " ".join(["extraordinarily-lengthy-identifier_name"] * 3)[:110]
    for number in range(20):
        add(store, project, f"{long_title} {number}", f"Widget calibration entry {number}.")
    index = tools.search_index(store, project, "widget calibration extraordinarily", limit=15)
    lines = index.splitlines()[1:]
    assert len(lines) == 15
    assert all(estimate_tokens(line) <= SEARCH_RESULT_TOKENS for line in lines)
    assert all("…" in line for line in lines)


def test_search_marks_the_degraded_rung_without_fts5(
    tmp_path: Path, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCTX_SIMULATE_NO_FTS5", "1")
    with Store.open(tmp_path / "no-fts.db") as degraded_store:
        assert not degraded_store.has_fts
        record_id = add(degraded_store, project, "Use SQLite in WAL mode", "The store is SQLite.")
        rows, degraded = parse_index(tools.search_index(degraded_store, project, "sqlite wal"))
    assert degraded == "like-search"
    assert [row["id"] for row in rows] == [record_id]


def test_get_returns_full_records_counts_access_and_lists_missing(
    store: Store, project: Project, other: Project
) -> None:
    record_id = add(store, project, "Use SQLite in WAL mode", "The store is one SQLite file.")
    foreign = add(store, other, "Foreign record", "Not visible here.")
    payload = tools.get_records(store, project, [record_id, "01NOTAREALID00000000000000", foreign])
    (record,) = payload["records"]
    assert record["id"] == record_id
    assert record["body"] == "The store is one SQLite file."
    assert {"valid_from", "recorded_at", "superseded_at", "source", "session_id", "confidence"} <= record.keys()
    assert record["access_count"] == 1 and record["last_accessed"]
    assert "project_id" not in record and record["scope"] == "project"
    assert payload["missing"] == ["01NOTAREALID00000000000000", foreign]
    assert store.get(project, record_id).access_count == 1


def test_get_takes_a_unique_start_or_end_of_an_id(store: Store, project: Project, other: Project) -> None:
    first = add(store, project, "Use SQLite in WAL mode", "The store is one SQLite file.")
    second = add(store, project, "Hooks exit 0", "A hook never breaks the session.")
    foreign = add(store, other, "Foreign record", "Not visible here.")
    payload = tools.get_records(store, project, [first[-8:].lower(), second[:20], foreign[-8:]])
    assert [record["id"] for record in payload["records"]] == [first, second]
    assert payload["missing"] == [foreign[-8:]]  # another project's record is not found by a part either
    shared = first[:6] if first[:6] == second[:6] else first[:4]
    assert tools.get_records(store, project, [shared])["missing"] == [shared]  # ambiguous or too short


def test_get_never_returns_a_superseded_record_but_names_its_head(store: Store, project: Project) -> None:
    old = add(store, project, "Use Postgres", "Postgres is the database.")
    _, new = store.supersede(project, old, body="Use SQLite.", rationale="simpler")
    _, newest = store.supersede(project, new.record_id, body="Use SQLite with WAL.", rationale="hooks write")
    payload = tools.get_records(store, project, [old])
    assert payload["records"] == []
    assert payload["missing"] == [old]
    assert payload["superseded"] == {old: newest.record_id}
    assert store.get(project, old).access_count == 0


@pytest.mark.parametrize("count", [0, 11])
def test_get_takes_one_to_ten_ids(store: Store, project: Project, count: int) -> None:
    with pytest.raises(ValidationError, match="ids"):
        tools.get_records(store, project, [f"01ID{number:022d}" for number in range(count)])


def test_record_writes_an_explicit_mcp_record(store: Store, project: Project) -> None:
    payload = tools.record_new(
        store, project, type="convention", title="Snake case modules", body="Modules are snake_case."
    )
    record = store.get(project, payload["id"])
    assert (record.source, record.confidence, record.type, record.scope) == (
        "mcp_tool",
        "explicit",
        "convention",
        "project",
    )
    assert record.valid_from == record.recorded_at


def test_record_with_supersedes_retires_the_old_record_atomically(store: Store, project: Project) -> None:
    old = add(store, project, "Use Postgres", "Postgres is the database.")
    payload = tools.record_new(store, project, type="decision", title="Use SQLite", body="SQLite file.", supersedes=old)
    retired = store.get(project, old)
    assert retired.superseded_by == payload["id"] and payload["superseded"] == old


def test_record_refuses_to_supersede_a_non_head_and_writes_nothing(store: Store, project: Project) -> None:
    old = add(store, project, "Use Postgres", "Postgres is the database.")
    _, head = store.supersede(project, old, body="Use SQLite.", rationale="simpler")
    before = store.counts_by_type(project, include_superseded=True)
    with pytest.raises(NotHeadError) as caught:
        tools.record_new(store, project, type="decision", title="Use DuckDB", body="DuckDB.", supersedes=old)
    assert caught.value.head_id == head.record_id
    assert head.record_id in str(caught.value)
    assert store.counts_by_type(project, include_superseded=True) == before


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"type": "nope"}, "Unknown record type"),
        ({"title": "x" * 121}, "limit is 120"),
        ({"body": "x" * 2001}, "limit is 2000"),
        ({"body": "  "}, "body is empty"),
        ({"scope": "team"}, "Invalid scope"),
    ],
)
def test_record_validates_its_input(store: Store, project: Project, fields: dict[str, str], message: str) -> None:
    arguments = {"type": "decision", "title": "A title", "body": "A body.", **fields}
    with pytest.raises(ValidationError, match=message):
        tools.record_new(store, project, **arguments)
    assert store.counts_by_type(project, include_superseded=True) == {}


def test_record_cannot_supersede_another_projects_record(store: Store, project: Project, other: Project) -> None:
    foreign = add(store, other, "Foreign", "Elsewhere.")
    with pytest.raises(RecordNotFound):
        tools.record_new(store, project, type="decision", title="Mine", body="Mine.", supersedes=foreign)
    assert store.get(other, foreign).is_current


def test_supersede_replaces_the_head_and_returns_both_ids(store: Store, project: Project) -> None:
    old = add(store, project, "Use Postgres", "Postgres is the database.", type="convention", scope="global")
    payload = tools.supersede_record(
        store, project, old_id=old, new_body="Use SQLite for every store. One file, no server.", rationale="simpler"
    )
    new = store.get(project, payload["new_id"])
    assert payload["old_id"] == old
    assert (new.type, new.scope, new.confidence, new.source) == ("convention", "global", "explicit", "mcp_tool")
    assert new.title == "Use SQLite for every store"
    assert new.body.endswith("Why: simpler")
    assert store.get(project, old).superseded_by == new.record_id


def test_supersede_of_a_non_head_names_the_current_head(store: Store, project: Project) -> None:
    old = add(store, project, "Use Postgres", "Postgres.")
    _, head = store.supersede(project, old, body="Use SQLite.", rationale="simpler")
    with pytest.raises(NotHeadError, match=head.record_id):
        tools.supersede_record(store, project, old_id=old, new_body="Use DuckDB.", rationale="analytics")


@pytest.mark.parametrize(("body", "rationale"), [("", "why"), ("Use X.", " ")])
def test_supersede_needs_a_body_and_a_rationale(store: Store, project: Project, body: str, rationale: str) -> None:
    old = add(store, project, "Use Postgres", "Postgres.")
    with pytest.raises(ValidationError):
        tools.supersede_record(store, project, old_id=old, new_body=body, rationale=rationale)
    assert store.get(project, old).is_current


def test_title_from_body_is_the_first_sentence_within_the_limit() -> None:
    assert tools.title_from_body("Use SQLite. It is one file.") == "Use SQLite"
    long = tools.title_from_body("word " * 60)
    assert len(long) <= 120 and long.endswith("…")


def test_project_profile_reads_keyed_profile_records(store: Store, project: Project, other: Project) -> None:
    add(store, project, "Stack", '["python", "sqlite"]', type="profile", key="stack", confidence="inferred")
    add(store, project, "Commands", "test: uv run pytest; lint: uv run ruff check .", type="profile", key="commands")
    add(store, project, "License", "MIT", type="profile", key="license", confidence="inferred")
    add(store, other, "Stack", '["rust"]', type="profile", key="stack")
    add(store, project, "Use SQLite", "One file.")
    store.touch_session(project, "session-1")
    payload = tools.project_profile(store, project)
    assert payload["name"] == "repo" and payload["project_id"] == project.project_id
    assert payload["stack"] == ["python", "sqlite"]
    assert payload["commands"] == ["test: uv run pytest", "lint: uv run ruff check ."]
    assert payload["entry_points"] is None
    assert payload["other"] == {"license": "MIT"}
    assert payload["record_counts_by_type"] == {"decision": 1, "profile": 3}
    assert payload["last_session_at"]


def test_project_profile_shows_only_the_current_value_of_a_key(store: Store, project: Project) -> None:
    first = add(store, project, "Stack", '["python"]', type="profile", key="stack")
    store.supersede(project, first, body='["python", "typescript"]')
    assert tools.project_profile(store, project)["stack"] == ["python", "typescript"]


def test_related_lists_current_records_linked_to_a_file(store: Store, project: Project, other: Project) -> None:
    linked = add(store, project, "Parser caches tokens", "Cache.")
    retired = add(store, project, "Parser used regexes", "Regexes.")
    store.supersede(project, retired, body="Parser uses a hand-written lexer.")
    foreign = add(store, other, "Other parser", "Elsewhere.")
    node = store.upsert_node(project, "file", "src/parser.py")
    for record_id in (linked, retired):
        store.link_entity(record_id, node)
    store.link_entity(foreign, store.upsert_node(other, "file", "src/parser.py"))
    found = ids_of(tools.related_index(store, project, "src/parser.py"))
    assert found == [linked]
    assert tools.related_index(store, project, "src/none.py") == "No current records match."


def test_related_lists_records_linked_to_the_file_before_records_one_session_away(
    store: Store, project: Project
) -> None:
    direct = add(store, project, "Parser caches tokens", "Cache.")
    file_node = store.upsert_node(project, "file", "src/parser.py")
    store.link_entity(direct, file_node)
    session = store.upsert_node(project, "session", "s1")
    store.add_edge(file_node, session, "observed_in")
    nearby = []
    for number in range(16):  # newer than the direct link, and more than a page of them
        stub = add(store, project, f"Error number {number}", "Stub.", type="bugfix", confidence="inferred")
        store.add_edge(stub, session, "observed_in")
        nearby.append(stub)
    found = ids_of(tools.related_index(store, project, "src/parser.py"))
    assert found[0] == direct
    assert len(found) == 15 and set(found[1:]) <= set(nearby)


def test_related_rejects_an_empty_path(store: Store, project: Project) -> None:
    with pytest.raises(ValidationError, match="file path is empty"):
        tools.related_index(store, project, " ")


def test_sync_claudemd_compares_the_store_with_claude_md(store: Store, project: Project) -> None:
    stated = add(store, project, "Use pytest for tests", "Tests run with pytest.", type="convention")
    unstated = add(store, project, "Deploy with Fly.io machines", "Deploys go to Fly.io machines.")
    old = add(store, project, "Format with black", "Code is formatted with black.", type="convention")
    ruff = tools.supersede_record(store, project, old_id=old, new_body="Format with ruff format.", rationale="faster")
    (Path(project.root) / "CLAUDE.md").write_text(
        "# Notes\n\n- Use pytest for tests.\n- Format with black.\n", encoding="utf-8"
    )
    before = (Path(project.root) / "CLAUDE.md").read_text(encoding="utf-8")
    report = tools.sync_claudemd(store, project)
    assert {entry["id"] for entry in report["missing"]} == {unstated, ruff["new_id"]}
    assert stated not in {entry["id"] for entry in report["missing"]}
    assert [entry["id"] for entry in report["contradicted"]] == [old]
    assert "Fly.io" in report["proposed_diff"] and "~~Format with black.~~" in report["proposed_diff"]
    assert (Path(project.root) / "CLAUDE.md").read_text(encoding="utf-8") == before


def test_sync_claudemd_is_bounded_whatever_the_store_holds(store: Store, project: Project) -> None:
    for number in range(tools.DRIFT_ENTRIES + 15):
        add(
            store,
            project,
            f"Service {number} uses queue q{number}",
            f"Service {number} publishes to queue q{number} and " * 8,
        )
    (Path(project.root) / "CLAUDE.md").write_text("# Notes\n\n- Nothing yet.\n", encoding="utf-8")
    report = tools.sync_claudemd(store, project)
    assert len(report["missing"]) == tools.DRIFT_ENTRIES
    assert report["missing_total"] == tools.DRIFT_ENTRIES + 15 and report["contradicted_total"] == 0
    assert all("statement" not in entry for entry in report["missing"])
    assert len(report["proposed_diff"]) <= tools.DRIFT_DIFF_CHARS + 200
    assert report["proposed_diff"].rstrip().endswith("`agentctx sync` shows and applies all of it]")


def test_a_recorded_handover_replaces_the_current_one(store: Store, project: Project) -> None:
    first = tools.record_new(store, project, type="handover", title="Handover: parser", body="Next: cache.")
    second = tools.record_new(store, project, type="handover", title="Handover: lexer", body="Next: tokens.")
    assert second["superseded"] == first["id"]
    assert [record.record_id for record in store.list_records(project, types=["handover"])] == [second["id"]]
    assert first["id"] not in ids_of(tools.search_index(store, project, "handover next"))


def test_a_recorded_profile_entry_replaces_the_detected_one_of_its_key(store: Store, project: Project) -> None:
    detected = add(store, project, "Stack", "Python 3.11; SQLite", type="profile", key="stack")
    made = tools.record_new(store, project, type="profile", title="Stack", body="Python 3.12; SQLite; FastAPI")
    assert made["superseded"] == detected
    assert tools.project_profile(store, project)["stack"] == ["Python 3.12", "SQLite", "FastAPI"]


def test_record_with_anchors_stores_them_and_a_bad_anchor_stores_nothing(store: Store, project: Project) -> None:
    from agentctx_store.anchors import anchors_of
    from agentctx_store.freshness import check

    (Path(project.root) / "worker").mkdir()
    (Path(project.root) / "worker" / "retry.py").write_text("def retry():\n    return 3\n")
    payload = tools.record_new(
        store,
        project,
        type="convention",
        title="Retries",
        body="retry() tries 3 times.",
        anchors=["worker/retry.py:retry"],
    )
    assert payload["anchors"] == ["worker/retry.py:retry"]
    assert [anchor.symbol for anchor in anchors_of(store, project, payload["id"])] == ["retry"]
    assert check(store, project, [payload["id"]]) == {}
    before = store.counts_by_type(project)
    with pytest.raises(ValidationError, match="not defined"):
        tools.record_new(store, project, type="decision", title="T", body="B", anchors=["worker/retry.py:nope"])
    with pytest.raises(ValidationError, match="global"):
        tools.record_new(store, project, type="preference", title="T", body="B", scope="global", anchors=["x.py"])
    assert store.counts_by_type(project) == before
