"""Freshness: anchors captured from files, checked against them, marked at injection."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from agentctx_store import Project, SearchHit, Store, ValidationError
from agentctx_store.anchors import anchors_of, content_hash
from agentctx_store.freshness import (
    MISSING,
    STALE_FACTOR,
    Checker,
    anchor_record,
    anchored_text,
    capture,
    check,
    parse_spec,
    symbol_block,
)
from agentctx_store.inject import compose_injection
from agentctx_store.migrations import MIGRATIONS
from agentctx_store.stale import anchor_from_mentions, confirm, counts, find_symbol, scan

from .conftest import AddRecord

RETRY = '''"""Retries."""

import time


def retry(call, attempts=3):
    for attempt in range(attempts):
        try:
            return call()
        except OSError:
            time.sleep(2**attempt)
    raise RuntimeError("gave up")


def other():
    return 1
'''


@pytest.fixture
def root(project: Project) -> Path:
    folder = Path(project.root)
    (folder / "worker").mkdir(parents=True)
    (folder / "worker" / "retry.py").write_text(RETRY)
    (folder / "Makefile").write_text("test:\n\tpytest -q\n")
    return folder


def _touch_later(path: Path) -> None:
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 5_000_000_000))


def test_specs_are_a_path_a_range_or_a_symbol() -> None:
    assert parse_spec("worker/retry.py") == ("worker/retry.py", None, None, None)
    assert parse_spec("worker/retry.py:6-12") == ("worker/retry.py", 6, 12, None)
    assert parse_spec("worker/retry.py:7") == ("worker/retry.py", 7, 7, None)
    assert parse_spec("worker/retry.py:retry") == ("worker/retry.py", None, None, "retry")
    assert parse_spec("api.ts:Client.send") == ("api.ts", None, None, "Client.send")
    for bad in ("", "a.py:12-3", "a.py:0-2", "a.py:no way"):
        with pytest.raises(ValidationError):
            parse_spec(bad)


def test_a_symbol_block_is_its_definition_dedented_and_ends_where_the_indent_does() -> None:
    block = symbol_block(RETRY, "retry")
    assert block is not None and block.startswith("def retry(") and block.endswith('raise RuntimeError("gave up")')
    assert "def other" not in block
    nested = "class A:\n    def retry(call, attempts=3):\n        return 1\n"
    assert symbol_block(nested, "A.retry") == "def retry(call, attempts=3):\n    return 1"
    assert symbol_block("function send(x) {\n  return x;\n}\nconst y = 1;\n", "send") == (
        "function send(x) {\n  return x;\n}"
    )
    assert symbol_block("def retrying():\n    pass\n", "retry") is None
    assert anchored_text("a\nb\nc\n", 2, 3, None) == "b\nc"
    assert anchored_text("a\n", 5, 6, None) is None


def test_capture_hashes_what_the_anchor_covers(root: Path) -> None:
    anchor, size, mtime = capture(str(root), "worker/retry.py:retry")
    assert anchor.symbol == "retry" and anchor.content_hash == content_hash(symbol_block(RETRY, "retry") or "")
    assert size == len(RETRY.encode()) and mtime == (root / "worker" / "retry.py").stat().st_mtime_ns
    whole, _, _ = capture(str(root), str(root / "Makefile"))  # absolute inside the project: made relative
    assert whole.path == "Makefile" and whole.content_hash == content_hash("test:\n\tpytest -q\n")
    for bad in ("worker/nope.py", "worker/retry.py:absent", "worker/retry.py:90-99", "../x.py", "/etc/passwd"):
        with pytest.raises(ValidationError):
            capture(str(root), bad)


def test_check_marks_a_changed_symbol_and_a_missing_file_and_leaves_the_rest(
    store: Store, project: Project, add: AddRecord, root: Path
) -> None:
    edited = add("Retries live in worker/retry.py")
    gone = add("Tests run with make test")
    kept = add("other() returns one")
    anchor_record(store, project, edited.record_id, ["worker/retry.py:retry"])
    anchor_record(store, project, gone.record_id, ["Makefile"])
    anchor_record(store, project, kept.record_id, ["worker/retry.py:other"])
    ids = [edited.record_id, gone.record_id, kept.record_id]
    assert check(store, project, ids) == {}

    path = root / "worker" / "retry.py"
    path.write_text(RETRY.replace("attempts=3", "attempts=5"))
    _touch_later(path)
    (root / "Makefile").unlink()
    found = check(store, project, ids)
    assert set(found) == {edited.record_id, gone.record_id}
    assert found[edited.record_id].changed == ["worker/retry.py"] and not found[edited.record_id].all_missing
    assert found[gone.record_id].missing == ["Makefile"] and found[gone.record_id].all_missing
    assert found[edited.record_id].attributes == ' anchor-changed="worker/retry.py"'
    assert found[gone.record_id].attributes == ' anchor-missing="Makefile"'


def test_a_touched_file_with_the_same_text_is_not_stale_and_an_unchanged_stat_is_not_even_read(
    store: Store, project: Project, add: AddRecord, root: Path
) -> None:
    fact = add("Retries live in worker/retry.py")
    anchor_record(store, project, fact.record_id, ["worker/retry.py:retry"])
    path = root / "worker" / "retry.py"
    path.write_text(RETRY.replace("def other():\n    return 1", "def other():\n    return 2"))
    _touch_later(path)
    assert check(store, project, [fact.record_id]) == {}  # the anchored symbol is the same text
    # same size and mtime as stored: no read at all (a different text behind an old stat is not seen)
    path.write_text(RETRY)
    info = path.stat()
    store.conn.execute(
        "UPDATE record_anchors SET size = ?, mtime_ns = ?, content_hash = 'sha256:x'",
        (info.st_size, info.st_mtime_ns),
    )
    assert check(store, project, [fact.record_id]) == {}


def test_check_stats_at_most_max_files_and_never_calls_a_half_checked_record_gone(
    store: Store, project: Project, add: AddRecord, root: Path
) -> None:
    fact = add("Spread over files")
    for index in range(5):
        (root / f"f{index}.txt").write_text(f"file {index}\n")
    anchor_record(store, project, fact.record_id, [f"f{index}.txt" for index in range(5)])
    for index in range(5):
        (root / f"f{index}.txt").unlink()
    assert check(store, project, [fact.record_id])[fact.record_id].all_missing
    limited = check(store, project, [fact.record_id], max_files=2)[fact.record_id]
    assert limited.missing == ["f0.txt", "f1.txt"] and not limited.all_missing


def test_injection_marks_stale_records_ranks_them_lower_and_drops_those_all_gone(
    store: Store, project: Project, add: AddRecord, root: Path
) -> None:
    edited = add("Retries live in worker/retry.py", "retry() sleeps 2**attempt seconds.")
    gone = add("Tests run with make test", "make test runs pytest -q.")
    fresh = add("other() returns one", "It does.")
    anchor_record(store, project, edited.record_id, ["worker/retry.py:retry"])
    anchor_record(store, project, gone.record_id, ["Makefile"])
    path = root / "worker" / "retry.py"
    path.write_text(RETRY.replace("2**attempt", "attempt"))
    _touch_later(path)
    (root / "Makefile").unlink()
    hits = [SearchHit(record=record, score=10.0, relevance=10.0) for record in (edited, gone, fresh)]
    injection = compose_injection(hits, "retry", freshness=Checker(store, project))
    assert injection.ids == [fresh.record_id, edited.record_id]  # the fresh one wins the tie
    assert gone.record_id not in injection.text
    edited_block = next(part for part in injection.text.split("\n\n") if edited.record_id in part)
    assert 'anchor-changed="worker/retry.py"' in edited_block
    fresh_block = next(part for part in injection.text.split("\n\n") if fresh.record_id in part)
    assert "anchor-" not in fresh_block
    # a clear best keeps its place, marked, with STALE_FACTOR of its score
    alone = compose_injection(
        [
            SearchHit(record=edited, score=10.0, relevance=10.0),
            SearchHit(record=fresh, score=10 * STALE_FACTOR * 0.5, relevance=1.0),
        ],
        "retry",
        freshness=Checker(store, project),
    )
    assert alone.full_ids == [edited.record_id] and alone.title_ids == [fresh.record_id]
    # without a checker nothing is marked or dropped (the old behaviour)
    plain = compose_injection(hits, "retry")
    assert plain.ids == [edited.record_id, gone.record_id, fresh.record_id] and "anchor-" not in plain.text


def test_scan_stores_states_counts_them_and_confirm_clears_one(
    store: Store, project: Project, add: AddRecord, root: Path
) -> None:
    edited = add("Retries live in worker/retry.py")
    gone = add("Tests run with make test")
    anchor_record(store, project, edited.record_id, ["worker/retry.py:retry"])
    anchor_record(store, project, gone.record_id, ["Makefile"])
    assert scan(store, project) == [] and counts(store, project) == (0, 0)
    path = root / "worker" / "retry.py"
    path.write_text(RETRY.replace("attempts=3", "attempts=4"))
    _touch_later(path)
    (root / "Makefile").unlink()
    stale = scan(store, project)
    # both were recorded within the same instant, so oldest-first does not order them: compare as sets
    assert {item.record.record_id for item in stale} == {edited.record_id, gone.record_id} and len(stale) == 2
    assert counts(store, project) == (2, 1)
    confirm(store, project, edited.record_id)
    assert [item.record.record_id for item in scan(store, project)] == [gone.record_id]
    assert anchors_of(store, project, edited.record_id)[0].content_hash == content_hash(
        symbol_block(path.read_text(), "retry") or ""
    )
    confirm(store, project, gone.record_id)  # its file is gone: the anchor goes, the record stays
    assert anchors_of(store, project, gone.record_id) == [] and scan(store, project) == []
    assert counts(store, project) == (0, 0)


def test_scan_reads_the_anchors_of_many_records_in_a_few_queries(
    store: Store, project: Project, add: AddRecord, root: Path
) -> None:
    facts = [add(f"Fact {number} is in the Makefile") for number in range(60)]
    for fact in facts:
        anchor_record(store, project, fact.record_id, ["Makefile"])
    (root / "Makefile").unlink()
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    try:
        stale = scan(store, project, write=False)
    finally:
        store.conn.set_trace_callback(None)
    assert {item.record.record_id for item in stale} == {fact.record_id for fact in facts}
    assert all(item.staleness.all_missing for item in stale)
    assert len(statements) < 10, statements  # not one query per record


def test_a_symbol_that_moved_is_found_and_offered(store: Store, project: Project, add: AddRecord, root: Path) -> None:
    fact = add("other() returns one")
    anchor_record(store, project, fact.record_id, ["worker/retry.py:other"])
    path = root / "worker" / "retry.py"
    path.write_text(RETRY.replace("\n\ndef other():\n    return 1\n", "\n"))
    _touch_later(path)
    (root / "worker" / "helpers.py").write_text("def other():\n    return 1\n")
    assert find_symbol(str(root), "other") == ["worker/helpers.py"]
    [item] = scan(store, project, follow=True)
    assert item.moved == {"worker/retry.py:other": ["worker/helpers.py:other"]}
    confirm(store, project, fact.record_id, ["worker/helpers.py:other"])
    assert scan(store, project) == []
    assert [anchor.path for anchor in anchors_of(store, project, fact.record_id)] == ["worker/helpers.py"]


def test_other_projects_and_superseded_records_are_not_scanned(
    store: Store, project: Project, other_project: Project, add: AddRecord, root: Path
) -> None:
    old = add("Tests run with make test")
    anchor_record(store, project, old.record_id, ["Makefile"])
    store.supersede(project, old.record_id, body="Tests run with just test")
    (root / "Makefile").unlink()
    assert scan(store, project) == [] and scan(store, other_project) == []
    assert counts(store, other_project) == (0, 0)


def test_a_store_of_version_7_gets_the_freshness_columns(store: Store) -> None:
    columns = {row[1] for row in store.conn.execute("PRAGMA table_info(record_anchors)")}
    assert {"size", "mtime_ns", "state", "checked_at"} <= columns
    conn = sqlite3.connect(":memory:")
    for migrate in MIGRATIONS[:7]:
        migrate(conn, True)
    conn.execute(
        "INSERT INTO record_anchors (record_id, project_id, path, content_hash, created_at) VALUES ('r','p','a','h','t')"
    )
    MIGRATIONS[7](conn, True)
    assert conn.execute("SELECT size, state FROM record_anchors").fetchone() == (None, None)


def test_freshness_is_light_enough_for_the_prompt_path() -> None:
    import subprocess
    import sys

    code = "import sys, agentctx_store.freshness\nprint(' '.join(n for n in ('re','hashlib','pathlib','json') if n in sys.modules))"
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == []
    assert MISSING == "missing"


def test_the_digest_marks_changed_records_leaves_out_gone_ones_and_says_so_in_one_line(
    store: Store, project: Project, add: AddRecord, root: Path
) -> None:
    from agentctx_store import digest

    edited = add("Retries live in worker/retry.py", "retry() backs off.", type="convention")
    gone = add("Tests run with make test", "make test runs pytest.", type="convention")
    fresh = add("Other returns one", "other() returns 1.", type="convention")
    anchor_record(store, project, edited.record_id, ["worker/retry.py:retry"])
    anchor_record(store, project, gone.record_id, ["Makefile"])
    anchor_record(store, project, fresh.record_id, ["worker/retry.py:other"])
    clean = digest.compose(store, project)
    assert "anchor-" not in clean and "agentctx stale" not in clean
    path = root / "worker" / "retry.py"
    path.write_text(RETRY.replace("attempts=3", "attempts=9"))
    _touch_later(path)
    (root / "Makefile").unlink()
    text = digest.compose(store, project)
    line = next(line for line in text.splitlines() if edited.record_id in line)
    assert "Retries live in worker/retry.py (anchor-changed: worker/retry.py): retry() backs off." in line
    assert gone.record_id not in text
    assert "anchor-" not in next(line for line in text.splitlines() if fresh.record_id in line)
    assert "2 records rest on code that changed since they were recorded: `agentctx stale`" in text


def test_records_naming_an_edited_file_are_anchored_to_the_symbol_they_name_or_the_file(
    store: Store, project: Project, add: AddRecord, root: Path
) -> None:

    named = add("Backoff lives in worker/retry.py", "`retry()` sleeps 2**attempt seconds.")
    whole = add("Tests use the Makefile", "Makefile runs pytest -q.")
    silent = add("Nothing about files", "No path here.")
    already = add("worker/retry.py other", "other() returns one.")
    anchor_record(store, project, already.record_id, ["worker/retry.py:other"])
    ids = [named.record_id, whole.record_id, silent.record_id, already.record_id]
    assert anchor_from_mentions(store, project, ids, ["worker/retry.py", "Makefile", "/abs/elsewhere.py"]) == 2
    assert [(a.path, a.symbol) for a in anchors_of(store, project, named.record_id)] == [("worker/retry.py", "retry")]
    assert [(a.path, a.symbol) for a in anchors_of(store, project, whole.record_id)] == [("Makefile", None)]
    assert anchors_of(store, project, silent.record_id) == []
    assert len(anchors_of(store, project, already.record_id)) == 1


def test_a_root_that_is_not_a_folder_checks_nothing(store: Store, project: Project, add: AddRecord, root: Path) -> None:
    fact = add("Tests run with make test")
    anchor_record(store, project, fact.record_id, ["Makefile"])
    for elsewhere in (Project(project_id=project.project_id, root=".", name="x"),
                      Project(project_id=project.project_id, root=str(root / "gone"), name="x")):  # fmt: skip
        assert check(store, elsewhere, [fact.record_id]) == {} and scan(store, elsewhere) == []


def test_an_anchored_file_swapped_for_a_fifo_or_a_link_out_is_never_read(
    store: Store, project: Project, add: AddRecord, root: Path, tmp_path: Path
) -> None:
    """A checkout is anyone's: the file an anchor points at may become a FIFO (reading it would
    hang the prompt hook) or a link to a file outside the repository (its text would be hashed,
    and re-verification would send it to a model). Neither is opened; neither counts as fresh."""
    from agentctx_store.stale import scan
    from agentctx_store.stale.reverify import evidence

    fifo = add("Retries live in worker/retry.py")
    linked = add("Tests run with make test")
    anchor_record(store, project, fifo.record_id, ["worker/retry.py:retry"])
    anchor_record(store, project, linked.record_id, ["Makefile"])
    secret = tmp_path / "outside-secret"
    secret.write_text("AWS_SECRET=outside the repository\n")
    (root / "worker" / "retry.py").unlink()
    os.mkfifo(root / "worker" / "retry.py")
    (root / "Makefile").unlink()
    (root / "Makefile").symlink_to(secret)
    found = check(store, project, [fifo.record_id, linked.record_id])  # returns: the FIFO is not opened
    assert linked.record_id in found and found[linked.record_id].changed == ["Makefile"]
    for item in scan(store, project):
        for shown in evidence(project, item):
            assert shown.text is None or "outside the repository" not in shown.text
