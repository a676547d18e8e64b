"""The vector half of a warm query, ahead of time: one long-lived thread of the search service
embeds the query and scans the vectors while the request's own thread runs the keyword search
(SQLite, onnxruntime and the numpy product all release the GIL, so the two halves overlap on two
cores). docs/adr/0008-warm-search-service.md, "Speed".

* `QueryWorker.submit` queues a query; `Job.vector()` waits for its vector.
* `ScanAhead` stands in for the `VectorIndex` during one request: the scan the worker made is
  used when the query, the namespaces, the types and the index are still the same (a record
  embedded in between changes the index's `generation`, and the scan runs again).
* A job whose request has already given up (`expired()`) is skipped: no CPU for an answer
  nobody waits for.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from agentctx_embed.vector_index import VectorIndex


class Expired(Exception):
    """The request gave up waiting before its query was embedded."""


class Job:
    def __init__(
        self,
        text: str,
        namespaces: Sequence[str] | None,
        types: Sequence[str] | None,
        expired: Callable[[], bool] | None,
    ) -> None:
        self.text = text
        self.namespaces = tuple(namespaces) if namespaces is not None else None
        self.types = tuple(types) if types is not None else None
        self.expired = expired
        self.done = threading.Event()
        self.result: np.ndarray | None = None
        self.error: BaseException | None = None
        self.scan: tuple[int, np.ndarray, np.ndarray] | None = None  # (generation, rows, cosines)

    def vector(self) -> np.ndarray:
        self.done.wait()
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


class QueryWorker:
    """One daemon thread: `embed(text)` for each job, then the scan of `index` when asked."""

    def __init__(self, embed: Callable[[str], np.ndarray], index: VectorIndex) -> None:
        self.embed = embed
        self.index = index
        self.jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self.skipped = 0
        self.thread = threading.Thread(target=self._run, daemon=True, name="agentctx-service-query")
        self.thread.start()

    def submit(
        self,
        text: str,
        *,
        namespaces: Sequence[str] | None = None,
        types: Sequence[str] | None = None,
        expired: Callable[[], bool] | None = None,
    ) -> Job:
        job = Job(text, namespaces, types, expired)
        self.jobs.put(job)
        return job

    def close(self) -> None:
        self.jobs.put(None)

    def _run(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            try:
                if job.expired is not None and job.expired():
                    self.skipped += 1
                    raise Expired("the request gave up before its query was embedded")
                job.result = self.embed(job.text)
                if job.namespaces is not None:
                    generation = self.index.generation
                    rows, cosines = self.index.similarities(job.result, job.namespaces, job.types)
                    job.scan = (generation, rows, cosines)
            except BaseException as exc:  # re-raised in the request's thread
                job.error = exc
            finally:
                job.done.set()


class ScanAhead:
    """A `VectorIndex` for one request: the worker's scan when it still holds, else a new one."""

    def __init__(self, index: VectorIndex, job: Job) -> None:
        self.index = index
        self.job = job

    def similarities(
        self, query: np.ndarray, namespaces: Sequence[str], types: Sequence[str] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        job = self.job
        scan = job.scan
        if (
            scan is not None
            and query is job.result
            and scan[0] == self.index.generation
            and job.namespaces == tuple(namespaces)
            and job.types == (tuple(types) if types is not None else None)
        ):
            return scan[1], scan[2]
        return self.index.similarities(query, namespaces, types)

    def __getattr__(self, name: str) -> Any:  # ids_of, dims, ...: the index's own
        return getattr(self.index, name)
