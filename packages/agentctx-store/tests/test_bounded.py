"""Bounded reads of files agentctx did not write (`agentctx_store.bounded`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentctx_store.bounded import Refused, read_regular, read_repo_text, real_path, refuse_links, regular_lines


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "AGENTS.md").write_text("rules\n", encoding="utf-8")
    (tmp_path / "secret").write_text("outside\n", encoding="utf-8")
    return root


def test_a_regular_file_inside_is_read(repo: Path) -> None:
    assert read_repo_text(repo, "AGENTS.md") == "rules\n"
    assert read_repo_text(repo, repo / "AGENTS.md") == "rules\n"


def test_a_link_inside_the_tree_is_read_by_its_target(repo: Path) -> None:
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")
    assert real_path(repo, "CLAUDE.md") == real_path(repo, "AGENTS.md")
    assert read_repo_text(repo, "CLAUDE.md") == "rules\n"


@pytest.mark.parametrize("target", ["../secret", "/etc/passwd"])
def test_a_link_out_of_the_tree_is_refused(repo: Path, target: str) -> None:
    (repo / "CLAUDE.md").symlink_to(target)
    with pytest.raises(Refused, match="CLAUDE.md: skipped, it links outside the repository"):
        read_repo_text(repo, "CLAUDE.md")


def test_a_folder_linked_out_of_the_tree_is_refused(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "0001-a.md").write_text("# 1. A\n", encoding="utf-8")
    (repo / "docs" / "adr").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(Refused, match="outside the repository"):
        read_repo_text(repo, "docs/adr/0001-a.md")


def test_a_fifo_is_never_opened_for_reading(repo: Path) -> None:
    os.mkfifo(repo / "docs" / "0001.md")
    with pytest.raises(Refused, match="not a regular file"):
        read_repo_text(repo, "docs/0001.md")  # returns at once: opening a FIFO would block
    assert read_regular(str(repo / "docs" / "0001.md"), limit=10) is None


def test_devices_are_refused(repo: Path) -> None:
    assert read_regular("/dev/zero", limit=10) is None
    with pytest.raises(Refused):
        read_repo_text("/dev", "zero")


def test_an_oversize_file_is_refused_without_reading_it(repo: Path) -> None:
    (repo / "big.md").write_bytes(b"x" * 2_001)
    with pytest.raises(Refused, match="2,001 bytes is over the 2,000-byte limit"):
        read_repo_text(repo, "big.md", limit=2_000)


def test_a_bom_is_dropped_and_non_utf8_is_one_line(repo: Path) -> None:
    (repo / "bom.md").write_bytes(b"\xef\xbb\xbfhello")
    (repo / "latin.md").write_bytes("caf\xe9".encode("latin-1"))
    assert read_repo_text(repo, "bom.md") == "hello"
    with pytest.raises(
        Refused,
        match=r"latin.md: skipped, not UTF-8 text \(byte 3 is 0x[0-9A-F]{2}: Windows-1252 or Latin-1, it seems\); save it as UTF-8",
    ):
        read_repo_text(repo, "latin.md")


def test_paths_with_a_nul_are_not_read() -> None:
    assert read_regular("/tmp/\x00x", limit=10) is None


def test_writing_through_a_link_is_refused(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "target").mkdir()
    (repo / ".agentctx").symlink_to(tmp_path / "target")
    with pytest.raises(Refused, match=r"\.agentctx: refused, it is a symbolic link"):
        refuse_links(repo, ".agentctx/context.md")
    (repo / "file.md").symlink_to(tmp_path / "secret")
    with pytest.raises(Refused, match="file.md: refused"):
        refuse_links(repo, repo / "file.md")
    assert refuse_links(repo, "new/folder/file.md") == str(repo / "new" / "folder" / "file.md")
    with pytest.raises(Refused, match="outside the repository"):
        refuse_links(repo, "../escape.md")


# -- client-supplied paths: read_regular from an offset, regular_lines ---------------------------


def test_read_regular_reads_from_an_offset(tmp_path: Path) -> None:
    target = tmp_path / "t.jsonl"
    target.write_bytes(b"0123456789")
    assert read_regular(str(target), limit=3, offset=4) == b"456"
    assert read_regular(str(target), limit=3, offset=20) == b""


@pytest.mark.parametrize("path", ["\ud800x", "a\x00b", ""])
def test_a_path_no_file_system_call_accepts_is_not_read(path: str) -> None:
    assert read_regular(path, limit=10) is None
    with pytest.raises(Refused):
        next(regular_lines(path, limit=10, line_limit=10))


def test_regular_lines_refuses_a_fifo_and_a_device(tmp_path: Path) -> None:
    fifo = tmp_path / "t.fifo"
    os.mkfifo(fifo)  # no writer ever comes: a blocking open would wait for one
    for path in (str(fifo), "/dev/zero"):
        with pytest.raises(Refused, match="not a regular file"):
            next(regular_lines(path, limit=1 << 20, line_limit=1 << 10))


def test_regular_lines_skips_an_over_long_line_and_stops_at_the_limit(tmp_path: Path) -> None:
    target = tmp_path / "t.jsonl"
    target.write_bytes(b"short\n" + b"x" * 5000 + b"\nafter\n" + b"tail\n")
    lines = list(regular_lines(str(target), limit=1 << 20, line_limit=100))
    assert lines == [b"short\n", b"x" * 100, b"after\n", b"tail\n"]
    assert list(regular_lines(str(target), limit=8, line_limit=100)) == [b"short\n", b"xx"]


def test_regular_lines_of_a_sparse_2_gb_file_stop_at_the_limit(tmp_path: Path) -> None:
    huge = tmp_path / "huge.jsonl"
    with open(huge, "wb") as handle:
        handle.truncate(2 << 30)
    lines = list(regular_lines(str(huge), limit=4 << 20, line_limit=1 << 20))
    assert lines == [b"\x00" * (1 << 20)]  # one over-long line of NULs, cut; 4 MB read, not 2 GB


def test_read_file_says_why_it_refuses(repo: Path) -> None:
    from agentctx_store.bounded import Unreadable, read_file

    os.mkfifo(repo / "fifo")
    (repo / "big").write_bytes(b"x" * 11)
    (repo / "link").symlink_to("AGENTS.md")
    assert read_file(repo / "AGENTS.md", limit=100) == b"rules\n"
    assert read_file(repo / "link", limit=100) == b"rules\n"
    cases = {"missing": repo / "nope", "folder": repo / "docs", "special": repo / "fifo", "too large": repo / "big"}
    for why, path in cases.items():
        with pytest.raises(Unreadable) as refused:
            read_file(path, limit=10)
        assert refused.value.why == why
    with pytest.raises(Unreadable) as refused:
        read_file(repo / "big", limit=10)
    assert refused.value.size == 11
    with pytest.raises(Unreadable) as refused:
        read_file(repo / "link", limit=100, follow=False)
    assert refused.value.why == "unreadable"
