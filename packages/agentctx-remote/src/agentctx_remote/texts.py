"""Pulled titles and bodies through the record contract's text check, on every core.

Every pulled title and body passes `records.check_text` (the limits, then the redactor), as every
record written here does; on a first pull of a large remote that is most of the time
(bench/README.md, "Remote sync"). A large batch is split between this process and worker
processes (`python -m agentctx_remote.texts_worker`, one per further core), each running that same
function. A worker reads one request from its stdin and writes one answer to its stdout, both
length-prefixed JSON, so it handles nothing but strings; it exits when its stdin closes, so a
sync killed with `kill -9` leaves none behind. A worker that fails is not trusted further: the
batch is checked here instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO

from agentctx_store.errors import ValidationError
from agentctx_store.jsontext import is_array
from agentctx_store.records import check_text

Texts = tuple[str, str]
PARALLEL_MIN = 2_000  # fewer texts than this are checked here: starting a worker costs more
MAX_WORKERS = 3
_HEADER = struct.Struct(">Q")


def check(title: str, body: str) -> Texts | None:
    """The title and body as a record keeps them (trimmed, redacted), or None: over the limits."""
    try:
        return check_text(title, body)
    except ValidationError:
        return None


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@dataclass(kw_only=True)
class Job:
    items: Sequence[Texts]
    sent: list[tuple[subprocess.Popen[bytes], int, int]] = field(
        default_factory=list[tuple[subprocess.Popen[bytes], int, int]]
    )


class Checker:
    """Checks batches of (title, body); workers start on the first batch of `parallel_min` or
    more and stay until `close`."""

    def __init__(self, *, workers: int | None = None, parallel_min: int = PARALLEL_MIN) -> None:
        self.wanted = min(usable_cores() - 1, MAX_WORKERS) if workers is None else workers
        self.parallel_min = parallel_min
        self.workers: list[subprocess.Popen[bytes]] = []
        self.failed = False

    def __enter__(self) -> Checker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def check(self, items: Sequence[Texts]) -> list[Texts | None]:
        return self.finish(self.start(items))

    def start(self, items: Sequence[Texts]) -> Job:
        """Hand the workers their shares of `items` (they start at once); `finish` checks the
        rest here and collects the answers. In between, this process is free (a sync writes
        the previous batch meanwhile), so it keeps the smallest share."""
        job = Job(items=items)
        if len(items) < self.parallel_min or self.wanted < 1 or self.failed:
            return job
        if not self.workers:
            self._start()
            if not self.workers:
                return job
        here = len(items) // (len(self.workers) + 2)
        share = -(-(len(items) - here) // len(self.workers))
        for start in range(here, len(items), share):
            worker = self.workers[len(job.sent)]
            end = min(start + share, len(items))
            if not self._send(worker, items[start:end]):
                break
            job.sent.append((worker, start, end))
        return job

    def finish(self, job: Job) -> list[Texts | None]:
        items = job.items
        done = job.sent[0][1] if job.sent else len(items)
        checked: list[Texts | None] = [check(title, body) for title, body in items[:done]]
        for worker, start, end in job.sent:
            answer = self._receive(worker, end - start)
            checked += answer if answer is not None else [check(title, body) for title, body in items[start:end]]
            done = end
        checked += [check(title, body) for title, body in items[done:]]
        return checked

    def _start(self) -> None:
        for _ in range(self.wanted):
            try:
                worker = subprocess.Popen(
                    [sys.executable, "-m", "agentctx_remote.texts_worker"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                )
            except OSError:
                break
            self.workers.append(worker)
        if not self.workers:
            self.failed = True

    def _send(self, worker: subprocess.Popen[bytes], items: Sequence[Texts]) -> bool:
        assert worker.stdin is not None
        try:
            _write(worker.stdin, [list(pair) for pair in items])
        except OSError:
            self._fail()
            return False
        return True

    def _receive(self, worker: subprocess.Popen[bytes], count: int) -> list[Texts | None] | None:
        """The worker's answer, or None (it failed, or said something that is not one)."""
        assert worker.stdout is not None
        try:
            value = _read(worker.stdout)
        except (OSError, ValueError):
            value = None
        answer = answer_of(value, count)
        if answer is None:
            self._fail()
        return answer

    def _fail(self) -> None:
        self.failed = True

    def close(self) -> None:
        """Stop the workers: nothing they could still be doing is wanted (a sync that ends
        early, on an error, leaves a batch it will fetch again)."""
        for worker in self.workers:
            for pipe in (worker.stdin, worker.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
            worker.kill()
            worker.wait()
        self.workers = []


def answer_of(value: object, count: int) -> list[Texts | None] | None:
    if not is_array(value) or len(value) != count:
        return None
    answer: list[Texts | None] = []
    for item in value:
        if item is None:
            answer.append(None)
        elif is_array(item) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], str):
            answer.append((item[0], item[1]))
        else:
            return None
    return answer


def _write(pipe: IO[bytes], value: object) -> None:
    data = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    pipe.write(_HEADER.pack(len(data)) + data)
    pipe.flush()


def _read(pipe: IO[bytes]) -> object | None:
    """One message, or None at the end of the stream."""
    header = pipe.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    data = pipe.read(size)
    if len(data) < size:
        return None
    return json.loads(data.decode("utf-8", "surrogatepass"))


def main() -> None:
    """The worker: answer each request until stdin closes (or the sync stops it)."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        while True:
            request = _read(stdin)
            if not is_array(request):
                return
            answer: list[list[str] | None] = []
            for item in request:
                pair = (
                    check(item[0], item[1])
                    if is_array(item) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], str)
                    else None
                )
                answer.append(list(pair) if pair is not None else None)
            _write(stdout, answer)
