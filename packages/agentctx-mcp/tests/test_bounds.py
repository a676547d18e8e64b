"""Issue 13, item 6: every string argument is bounded, LIKE wildcards are literal, and bad input
is never echoed back whole."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from agentctx_store import NewRecord, Project, Store, resolve_project
from agentctx_store.errors import ValidationError

from agentctx_mcp import tools
from agentctx_mcp.server import argument_message

ECHO_LIMIT = 400  # an error message stays a sentence, whatever came in


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return resolve_project(root)


@pytest.fixture
def store() -> Iterator[Store]:
    opened = Store.open()
    yield opened
    opened.close()


def linked(store: Store, project: Project, file: str, title: str) -> str:
    record = store.add(project, NewRecord(type="decision", title=title, body=f"About {file}."))
    store.link_entity(record.record_id, store.upsert_node(project, "file", file))
    return record.record_id


def test_a_huge_file_argument_is_refused_in_one_short_sentence(store: Store, project: Project) -> None:
    huge = "a/" * 25_000  # 50 KB made SQLite fail with "LIKE or GLOB pattern too complex"
    for call in (
        lambda: tools.related_index(store, project, huge),
        lambda: tools.search_index(store, project, "parser", file=huge),
    ):
        with pytest.raises(ValidationError) as caught:
            call()
        message = str(caught.value)
        assert "`file` is 50,000 characters; the limit is 1,024" in message
        assert len(message) < ECHO_LIMIT


def test_like_wildcards_in_a_file_argument_match_only_themselves(store: Store, project: Project) -> None:
    parser = linked(store, project, "src/parser.py", "Parser uses a Pratt loop")
    odd = linked(store, project, "src/100%_done.py", "The odd file name")
    assert tools.related_index(store, project, "%") == "No current records match."
    assert tools.related_index(store, project, "_") == "No current records match."
    assert tools.related_index(store, project, "src/p_rser.py") == "No current records match."
    assert parser in tools.related_index(store, project, "parser.py")
    assert odd in tools.related_index(store, project, "100%_done.py")


def test_a_huge_id_is_never_echoed_back(store: Store, project: Project) -> None:
    with pytest.raises(ValidationError) as caught:
        tools.get_records(store, project, ["X" * 1_000_000])
    assert len(str(caught.value)) < ECHO_LIMIT
    with pytest.raises(ValidationError) as caught:
        tools.get_records(store, project, ["01JD3W4X5Y6Z7A8B9C0D1E2F3G"] * 5_000)
    assert len(str(caught.value)) < ECHO_LIMIT
    with pytest.raises(ValidationError) as caught:
        tools.supersede_record(store, project, old_id="Y" * 100_000, new_body="b", rationale="r")
    assert len(str(caught.value)) < ECHO_LIMIT
    answer = tools.get_records(store, project, ["01JD3W4X5Y6Z7A8B9C0D1E2F3G"])
    assert answer["missing"] == ["01JD3W4X5Y6Z7A8B9C0D1E2F3G"]  # short unknown ids still come back


@pytest.mark.parametrize(
    ("field", "call"),
    [
        ("query", lambda store, project, big: tools.search_index(store, project, big)),
        ("title", lambda store, project, big: tools.record_new(store, project, type="decision", title=big, body="b")),
        ("body", lambda store, project, big: tools.record_new(store, project, type="decision", title="t", body=big)),
        ("type", lambda store, project, big: tools.record_new(store, project, type=big, title="t", body="b")),
        (
            "scope",
            lambda store, project, big: tools.record_new(
                store, project, type="decision", title="t", body="b", scope=big
            ),
        ),
        (
            "rationale",
            lambda store, project, big: tools.supersede_record(store, project, old_id="x", new_body="b", rationale=big),
        ),
    ],
)
def test_every_string_argument_is_bounded(store: Store, project: Project, field: str, call) -> None:
    with pytest.raises(ValidationError) as caught:
        call(store, project, "Z" * 1_000_000)
    message = str(caught.value)
    assert f"`{field}`" in message and len(message) < ECHO_LIMIT


def test_argument_errors_quote_only_a_prefix() -> None:
    import pydantic

    class Scope(pydantic.BaseModel):
        scope: int

    try:
        Scope(scope="nope")  # type: ignore[arg-type]
    except pydantic.ValidationError as error:
        message = argument_message("ctx_search", error, {"scope": "Q" * 1_000_000})
    assert len(message) < ECHO_LIMIT and "QQQQ" in message
