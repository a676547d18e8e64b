"""Pulled texts checked in worker processes (`texts.Checker`): the same answers as the record
contract's check here, a worker that dies is not trusted further, none is left behind."""

from __future__ import annotations

import subprocess

import pytest
from agentctx_store.records import MAX_BODY_CHARS

from agentctx_remote import texts

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
ITEMS = [
    ("Use uv", "We use uv for every package."),
    ("  CI token  ", f"The CI reads GITHUB_TOKEN={TOKEN} from the vault."),
    ("Too long", "x" * (MAX_BODY_CHARS + 1)),
    ("", "A body without a title."),
    ("Unicode", "Ünïcödé and an emoji \N{SNAKE} survive the trip."),
] * 40


def test_workers_answer_as_the_check_here_does() -> None:
    here = [texts.check(title, body) for title, body in ITEMS]
    assert here[1] is not None and TOKEN not in here[1][1] and "[REDACTED:" in here[1][1]
    assert here[2] is None and here[3] is None  # over the limit, no title: refused
    with texts.Checker(workers=2, parallel_min=1) as checker:
        assert checker.check(ITEMS) == here
        assert len(checker.workers) == 2 and not checker.failed
        assert checker.check(ITEMS[:7]) == here[:7]  # a batch smaller than the workers' shares
        workers = list(checker.workers)
    assert all(worker.poll() is not None for worker in workers)  # closed: none left running


def test_a_batch_below_the_threshold_starts_no_worker() -> None:
    with texts.Checker(workers=2, parallel_min=len(ITEMS) + 1) as checker:
        assert checker.check(ITEMS) == [texts.check(title, body) for title, body in ITEMS]
        assert checker.workers == []


def test_a_worker_that_dies_mid_batch_leaves_the_batch_to_this_process() -> None:
    here = [texts.check(title, body) for title, body in ITEMS]
    with texts.Checker(workers=1, parallel_min=1) as checker:
        job = checker.start(ITEMS)
        assert job.sent
        checker.workers[0].kill()
        assert checker.finish(job) == here
        assert checker.failed
        assert checker.check(ITEMS) == here  # and every later batch is checked here


def test_a_worker_answers_nothing_but_a_checked_pair_per_item() -> None:
    assert texts.answer_of([["a", "b"], None], 2) == [("a", "b"), None]
    assert texts.answer_of([["a", "b"]], 2) is None  # another count
    assert texts.answer_of([["a", 1]], 1) is None  # not a pair of strings
    assert texts.answer_of({"a": "b"}, 1) is None


def test_workers_that_cannot_start_leave_every_batch_to_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("no more processes")

    monkeypatch.setattr(subprocess, "Popen", refuse)  # the workers are started through it
    with texts.Checker(workers=2, parallel_min=1) as checker:
        assert checker.check(ITEMS) == [texts.check(title, body) for title, body in ITEMS]
        assert checker.failed and checker.workers == []
