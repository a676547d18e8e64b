"""The warm search service: one process per data dir holds the embedding model, the vectors of
every current record and the hybrid ranking, and answers over a private Unix domain socket
(docs/adr/0008-warm-search-service.md).

* Hosted by the first `agentctx mcp` of a data dir (`host_in_background`), which Claude Code
  keeps running for the whole session; the other MCP servers of that data dir try again every
  few seconds and take over when the host exits. `agentctx serve` runs it in the foreground.
* One per data dir: an OS file lock (`flock`) on `service.lock`; the kernel drops it when the
  holder dies, so a killed service never blocks the next one. The socket is bound only by the
  lock holder, so a socket file left by a dead one is simply replaced.
* Private: the socket file is 0600, and on Linux the peer's uid (SO_PEERCRED) must be ours.
  A request names a working directory (for the project) and never a file: the service reads only
  the store of its own data dir.
* Requests (`agentctx_store.service_link` is the client): `ping`, `prompt` (the composed
  injection, exactly as the keyword path composes it), `search` (ranked ids), `written` (embed
  new records now). A prompt or a search is answered only when every record it may see has a
  vector here (else the caller takes the keyword path at once). A project with no calibration
  of this model is measured by the request that needs it, on a connection of its own; a stale
  one, and one whose records were just embedded, by the background thread
  (`calibrate_pending`); never on part of a project.

The store is read and written through the stdlib `sqlite3` (the same `Store`, search and
accounting as the keyword path); stored vectors come from a child process
(`agentctx_embed.dump_vectors`, apsw), and vectors of new records are computed here and held
in memory only: `pending_embedding` stays set, so consolidation still stores them.
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import logging
import os
import signal
import socket
import socketserver
import sqlite3
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Generator, Sequence
from typing import Any, cast

import numpy as np
from agentctx_store import paths
from agentctx_store.jsontext import strings
from agentctx_store.rows import visible_namespaces
from agentctx_store.service_link import PROTOCOL, lock_note, socket_path, socket_problem, try_lock

from agentctx_embed.hybrid import DEFAULT_FLOOR, Calibration, HybridFloor, calibrate, hybrid_search
from agentctx_embed.models import Embedder, ModelUnavailable, TokenStates, choose_model, load
from agentctx_embed.phase import TEXT_FORM, embedding_text
from agentctx_embed.vector_index import VectorIndex, quantize
from agentctx_embed.warm_query import Expired, QueryWorker, ScanAhead

logger = logging.getLogger("agentctx.service")

# The socket's limits (docs/adr/0008-warm-search-service.md, "The socket's limits")
MAX_REQUEST_BYTES = 256 * 1024
REQUEST_READ_S = 2.0  # a whole request must arrive within this, however slowly it trickles in
MAX_CONNECTIONS = 64  # handled at once; more wait in the listen queue
LISTEN_BACKLOG = 1024  # connections the kernel queues (capped by its somaxconn): a burst of prompts
HANDOVER_RETRY_S = 5.0  # how often a non-hosting MCP server tries to take over
MODEL_RETRY_S = 300.0  # after a failed model load
EMBED_CHUNK = 32
SYNC_INTERVAL_S = 30.0  # full pending scan (edits) even without a notification
INLINE_EMBED_MAX = 16
PROJECT_TTL_S = 10.0  # new records a query embeds itself before answering
# Of the prompt hook's budget, kept for what follows the floor (composing, accounting, the reply):
# the floor's token coverage is measured only if it fits before that (`tokens_within`)
ANSWER_RESERVE_S = 0.020


def version() -> str:
    try:
        from importlib.metadata import version as dist_version

        return dist_version("agentctx-embed")
    except Exception:
        return "0"


# -- election --------------------------------------------------------------------------------


class Election:
    """The service lock of a data dir (`service_link.try_lock`), held for the life of the service."""

    def __init__(self, home: str, fd: int | None = None) -> None:
        self.home = home
        self.fd = fd  # an inherited, already locked descriptor (hosted by `agentctx mcp`)

    def try_acquire(self) -> bool:
        if self.fd is None:
            self.fd = try_lock(self.home)
        return self.fd is not None

    def describe(self, info: dict[str, Any]) -> None:
        if self.fd is None:
            return
        data = json.dumps(info).encode("utf-8")
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, data, 0)

    def release(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, 0)
            with contextlib.suppress(OSError):
                os.close(self.fd)  # closing drops the flock
            self.fd = None


class SocketUnusable(Exception):
    """The service cannot listen on its socket; `str()` is the one line to show."""


def holder(home: str | None = None) -> dict[str, Any]:
    """What the lock file says about the running service ({} when none has written it)."""
    return lock_note(home)


# -- the service ---------------------------------------------------------------------------


class Service:
    def __init__(self, home: str, embedder: Embedder, *, db_path: str | None = None) -> None:
        self.home = home
        self.db_path = db_path or os.path.join(home, paths.DB_NAME)
        self.embedder = embedder
        self.index = VectorIndex(embedder.dims)
        self.embed_lock = threading.Lock()  # one inference at a time (and one sync)
        self.wake = threading.Event()
        self.stop = threading.Event()
        self.started = time.time()
        self.last_request = time.monotonic()
        self.requests = 0
        self.high_rowid = 0
        self.loaded_from_store = 0
        self.store_lock = threading.Lock()
        self._open: Any = None
        self._projects: dict[str, tuple[float, Any]] = {}
        self.abandoned = 0  # prompt requests dropped because their hook had given up
        # queries are embedded outside `embed_lock`: onnxruntime runs sessions concurrently, and a
        # query must not wait for a background batch of passages (seconds on one thread)
        self.queries = QueryWorker(embedder.query, self.index)
        self._calibrations: dict[str, Calibration] = {}
        self._pending: dict[str, Any] = {}  # projects whose calibration the background thread measures again
        self._asked: dict[str, Any] = {}  # every project asked here, by id (its calibration is kept current)
        self._embedded: set[str] = set()  # projects with records embedded since the last background pass
        self._counted: dict[tuple[Any, ...], tuple[int, int]] = {}  # `_unembedded`'s counts, by data_version
        self.calibration_lock = threading.Lock()
        self._reference_vectors: dict[str, np.ndarray] = {}
        self.piece_cost = PieceCost()  # token states' recent cost, for the prompt hook's deadline

    # the relevance floor, calibrated per project --------------------------------------------

    def floor_for(self, project: Any, visible: int | None = None) -> HybridFloor:
        """The hybrid floor for this project: its z thresholds from what the project's records
        give the reference texts with this model (`hybrid.calibrate`), kept in
        `paths.calibration_path`. Measured here only when there is nothing of this model's to
        answer with (once per project and model: seconds, on a connection of its own, so other
        requests are not held); when the project has changed by a tenth, and at its first
        prompt here (for the keyword floor, `calibration.refresh_prompt_floor`), the background
        thread measures it again (`calibrate_pending`) while prompts keep the last one. `visible`:
        the vectors of the project's prompt types held here, when the caller has counted them."""
        from agentctx_store.prompt_answer import PROMPT_TYPES

        if visible is None:  # on every prompt: a count of the rows' codes, no product
            visible = self.index.count(visible_namespaces(project), PROMPT_TYPES)
        self._asked[project.project_id] = project
        known = self._calibrations.get(project.project_id)
        first = known is None  # first prompt of this project here
        known = known or _read_calibration(project.project_id)
        if known is None or not known.fits(self.embedder.name):
            known = self._measure(project)
        else:
            self._calibrations[project.project_id] = known
            if first or known.stale(self.embedder.name, visible):
                self._queue(project)
        return known.floor(DEFAULT_FLOOR)

    def _queue(self, project: Any) -> None:
        """Have the background thread measure `project` after its next embedding pass."""
        self._asked[project.project_id] = project
        self._pending[project.project_id] = project
        self.wake.set()

    def _measure(self, project: Any) -> Calibration:
        """Both of the project's floors, measured where missing or stale, one project at a time
        (a request and the background thread never measure the same one twice over)."""
        from agentctx_store.calibration import refresh_prompt_floor
        from agentctx_store.prompt_answer import PROMPT_TYPES

        with self.calibration_lock, self.open_store() as store:
            self._pending.pop(project.project_id, None)
            # the keyword path's floor, by the same rule on the same texts, for the hook to read
            refresh_prompt_floor(store, project)
            known = self._calibrations.get(project.project_id) or _read_calibration(project.project_id)
            visible = self.index.count(visible_namespaces(project), PROMPT_TYPES)
            if known is None or known.stale(self.embedder.name, visible):
                known = calibrate(
                    store,
                    project,
                    index=self.index,
                    embed=self._reference_vector,
                    model=self.embedder.name,
                    types=PROMPT_TYPES,
                    tokens=self.embedder.tokens,
                )
                _write_calibration(project.project_id, known)
            self._calibrations[project.project_id] = known
            return known

    def expect(self, cwd: str) -> bool:
        """Queue the project of `cwd` (the directory the service was started in: the MCP server
        that hosts it runs in the project the client opened) for the background thread to
        measure after its first embedding pass, so the session's first prompt need not wait for
        it; only a project with current records of its own. Whether it was queued."""
        from agentctx_store.calibration import visible_count

        try:
            project = self._project(cwd)
            with self.open_store() as store:
                held = visible_count(store, (project.project_id,))
        except Exception as exc:  # a directory it cannot resolve: measured at its first prompt instead
            logger.info("not measuring the starting directory's project ahead: %s", exc)
            return False
        if not held:
            return False
        self._queue(project)
        return True

    def _unembedded(self, store: Any, namespaces: Sequence[str], types: Sequence[str] | None, embedded: int) -> int:
        """How many of the current records a query in `namespaces` may see have no vector here
        yet (a bulk write, or a service still embedding what `learn` or an import wrote: the
        background pass embeds them, newest first). A vector ranking of part of a project, and
        a floor that weighs its best cosine against part of the pool, answered worse than the
        keyword path on the dev sets (docs/retrieval.md, "The calibrated floor"), so a request
        then says so and the caller takes the keyword path. `embedded`: the vectors held here for
        them (`VectorIndex.count`)."""
        from agentctx_store.calibration import visible_count

        # the count changes only with a commit: the store's `data_version` changes with every one
        # another connection makes, and this one writes no records (2 ms at 100K records, saved)
        key = (id(store), tuple(namespaces), tuple(types or ()))
        version = store.conn.execute("PRAGMA data_version").fetchone()[0]
        counted = self._counted.get(key)
        if counted is None or counted[0] != version:
            if len(self._counted) > 256:
                self._counted.clear()
            counted = self._counted[key] = (version, visible_count(store, namespaces, types))
        return max(0, counted[1] - embedded)

    def calibrate_pending(self) -> int:
        """Measure the projects `floor_for` queued, every project asked here whose records have
        since changed by a tenth, and every project whose records were embedded here and that has
        no calibration of this model or a stale one (`learn` or an import wrote it while the
        service ran); the background thread, after its embedding pass, so the vectors it counts
        are current. How many it measured."""
        from agentctx_store.projects import GLOBAL_PROJECT_ID
        from agentctx_store.prompt_answer import PROMPT_TYPES

        with self.embed_lock:  # `_embed_rows` adds to the set under it, from requests too
            embedded, self._embedded = self._embedded, set()
        new = embedded - {GLOBAL_PROJECT_ID} - set(self._asked)
        if new:
            from agentctx_store.digest import project_for

            with self.open_store() as store:
                self._asked |= {project_id: project_for(store, project_id) for project_id in new}
        for project_id in embedded | set(self._calibrations):
            project = self._asked.get(project_id)
            known = self._calibrations.get(project_id) or _read_calibration(project_id)
            if project is not None and (
                known is None
                or known.stale(self.embedder.name, self.index.count(visible_namespaces(project), PROMPT_TYPES))
            ):
                self._pending[project_id] = project
        done = 0
        while self._pending and not self.stop.is_set():
            project_id = next(iter(self._pending))
            project = self._pending.pop(project_id, None)
            if project is not None:
                self._measure(project)
                done += 1
        return done

    def _reference_vector(self, prompt: str) -> np.ndarray:
        if prompt not in self._reference_vectors:
            self._reference_vectors[prompt] = self.embedder.query(prompt)
        return self._reference_vectors[prompt]

    # vectors ------------------------------------------------------------------------------

    def load_stored_vectors(self) -> int:
        """Vectors consolidation stored for this model (through a child process, see module doc)."""
        if not os.path.exists(self.db_path):
            return 0
        try:  # read a block of rows at a time and keep its int8 codes: no float32 copy of the store
            child = subprocess.Popen(
                [sys.executable, "-m", "agentctx_embed.dump_vectors", self.db_path],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            # stdout=PIPE with default buffering is a BufferedReader; typeshed says IO[bytes]
            stream = cast("io.BufferedReader[io.FileIO]", child.stdout)
            header = json.loads(stream.readline() or b"{}")
            ids = strings(header.get("ids"))
            dims = int(header.get("dims") or 0)
            codes, scales, complete = _read_quantized(stream, len(ids), dims)
            stream.close()
            child.wait(600)
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            logger.warning("could not read the stored vectors (%s); embedding what is needed instead", exc)
            return 0
        if not ids or not complete or header.get("model") != self.embedder.name or dims != self.embedder.dims:
            return 0
        if header.get("text") != TEXT_FORM:  # embedded from another text: the background pass redoes them
            return 0
        with self.open_store() as store:
            rows = {
                row[0]: row
                for row in store.conn.execute(
                    "SELECT id, project_id, type, coalesce(updated_at, recorded_at), pending_embedding FROM records "
                    "WHERE superseded_at IS NULL"
                )
            }
        keep = [i for i, rid in enumerate(ids) if rid in rows and not rows[rid][4]]
        if len(keep) != len(ids):
            codes, scales = _compact(codes, keep), _compact(scales, keep)
        self.index.put([(ids[i], rows[ids[i]][1], rows[ids[i]][2], rows[ids[i]][3]) for i in keep], codes, scales)
        self.loaded_from_store = len(keep)
        del rows, ids, header
        give_back_memory()
        return len(keep)

    @contextlib.contextmanager
    def _serving_store(self) -> Generator[Any]:
        """The service's one connection for requests, kept open between them (autocommit: it
        holds no snapshot while idle); requests take turns. After a write the digests are
        refreshed as every writer's are (`digest.refresh_changed`); a failed connection is reopened next time."""

        with self.store_lock:
            if self._open is None:
                self._open = self.open_store()
            store = self._open
            try:
                yield store
            except sqlite3.DatabaseError:
                self._open = None
                self._counted.clear()
                with contextlib.suppress(sqlite3.Error):
                    store.conn.close()
                raise
            finally:
                if store.dirty and self._open is not None:
                    from agentctx_store import digest

                    digest.refresh_changed(store)

    def _project(self, cwd: str) -> Any:
        """`resolve_project(cwd)`, remembered for a few seconds (it reads git's files)."""
        from agentctx_store import resolve_project

        now = time.monotonic()
        cached = self._projects.get(cwd)
        if cached is not None and now - cached[0] < PROJECT_TTL_S:
            return cached[1]
        project = resolve_project(cwd)
        if len(self._projects) > 256:
            self._projects.clear()
        self._projects[cwd] = (now, project)
        return project

    def open_store(self) -> Any:
        """A new connection to the data dir's store (the caller closes it)."""
        from agentctx_store.store import Store

        store = Store.open(self.db_path)
        store.conn.execute("PRAGMA busy_timeout = 1000")
        return store

    def close_store(self) -> None:
        """Close the connection requests share (`_serving_store`), when it is open."""
        with self.store_lock:
            if self._open is not None:
                with contextlib.suppress(Exception):
                    self._open.close()
                self._open = None
                self._counted.clear()

    def _embed_rows(self, rows: Sequence[Any]) -> int:
        if not rows:
            return 0
        with self.embed_lock:
            todo = [row for row in rows if not self.index.is_current(row["id"], row["version"])]
            for start in range(0, len(todo), EMBED_CHUNK):
                chunk = todo[start : start + EMBED_CHUNK]
                vectors = self.embedder.passages([embedding_text(dict(row)) for row in chunk])
                self.index.put([(row["id"], row["project_id"], row["type"], row["version"]) for row in chunk], vectors)
                self._embedded.update(row["project_id"] for row in chunk)  # measured after the pass
        return len(todo)

    _SELECT = (
        "SELECT rowid, id, project_id, type, title, body, valid_from, coalesce(updated_at, recorded_at) AS version "
        "FROM records WHERE superseded_at IS NULL"
    )

    def sync_new(self, store: Any, *, limit: int | None = INLINE_EMBED_MAX) -> int:
        """Embed records added since the last look (cheap: a rowid range); at most `limit`."""
        sql = self._SELECT + " AND rowid > ? ORDER BY rowid"
        rows = store.conn.execute(
            sql + (f" LIMIT {limit + 1}" if limit is not None else ""), (self.high_rowid,)
        ).fetchall()
        if limit is not None and len(rows) > limit:
            # too many for a query to wait on: the background pass embeds every record without
            # a vector; queries stop looking at them
            self.high_rowid = max(
                self.high_rowid, store.conn.execute("SELECT coalesce(max(rowid), 0) FROM records").fetchone()[0]
            )
            self.wake.set()
            return 0
        count = self._embed_rows(rows)
        if rows:
            self.high_rowid = max(self.high_rowid, max(row["rowid"] for row in rows))
            self.wake.set()  # the background pass then checks whether a project grew past its calibration
        return count

    def sync_all(self) -> int:
        """Every current record without an up-to-date vector (new, edited, never embedded),
        newest first; vectors of records no longer current are dropped."""
        with self.open_store() as store:
            top = store.conn.execute("SELECT coalesce(max(rowid), 0) FROM records").fetchone()[0]
            todo = self.index.reconcile(
                store.conn.execute(
                    "SELECT id, coalesce(updated_at, recorded_at) FROM records WHERE superseded_at IS NULL "
                    "ORDER BY rowid DESC"
                )
            )
        done = 0
        for start in range(0, len(todo), EMBED_CHUNK):
            if self.stop.is_set():
                break
            chunk = todo[start : start + EMBED_CHUNK]
            with self.open_store() as store:
                rows = store.conn.execute(self._SELECT + f" AND id IN ({','.join('?' * len(chunk))})", chunk).fetchall()
            done += self._embed_rows(rows)
            time.sleep(0.01)  # leave the cores to the requests
        self.high_rowid = max(self.high_rowid, top)
        if done:
            give_back_memory()
        return done

    def embed_loop(self) -> None:
        while not self.stop.is_set():
            try:
                self.sync_all()
            except Exception:
                logger.exception("background embedding failed; retrying later")
            try:
                self.calibrate_pending()
            except Exception:
                logger.exception("background calibration failed; retrying at the next prompt")
            self.wake.wait(SYNC_INTERVAL_S)
            self.wake.clear()

    # requests -------------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "protocol": PROTOCOL,
            "version": version(),
            "model": self.embedder.name,
            "dims": self.embedder.dims,
            "vectors": len(self.index),
            "vector_bytes": self.index.nbytes(),
            "socket": socket_path(self.home),
            "started": self.started,
            "requests": self.requests,
            "abandoned": self.abandoned,
            "rss_bytes": rss_bytes(),
            "rss_peak_bytes": rss_peak_bytes(),
        }

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests += 1
        self.last_request = time.monotonic()
        if request.get("v") != PROTOCOL:
            return {"error": "protocol", "protocol": PROTOCOL}
        op = request.get("op")
        if op == "ping":
            return {"ok": True, **self.info()}
        if op == "written":
            self.wake.set()
            return {"ok": True}
        if op == "prompt":
            return self.prompt(request)
        if op == "search":
            return self.search(request)
        return {"error": f"unknown op {op!r}"}

    def prompt(self, request: dict[str, Any]) -> dict[str, Any]:
        """The prompt hook's injection: ranked with vectors, then composed and accounted by the
        same functions as the keyword path (`agentctx_store.prompt_answer`)."""
        from agentctx_store import clients
        from agentctx_store.clock import utc_now
        from agentctx_store.digest_file import Pending
        from agentctx_store.prompt_answer import PROMPT_TYPES, Asked, account, compose, shortlist
        from agentctx_store.sessions import is_name

        started = time.monotonic()
        cwd = str(request.get("cwd") or "")
        budget_s = float(request.get("budget_ms") or 1000) / 1000.0
        client, hook = request.get("client"), request.get("hook")
        asked = Asked(
            prompt=str(request.get("prompt") or ""),
            session_id=str(request.get("session_id") or ""),
            client=client if isinstance(client, str) and client in clients.CLIENTS else "unknown",
            hook=hook if isinstance(hook, str) and is_name(hook) else "UserPromptSubmit",
            already=strings(request.get("exclude")),
            pending=Pending.from_json(request.get("pending")),
            gated=bool(request.get("gated")),
        )
        if not cwd or not asked.prompt:
            return {"error": "prompt and cwd are required"}

        def late() -> bool:  # the hook gave up waiting: it takes the keyword path, write nothing
            return time.monotonic() - started > budget_s

        project = self._project(cwd)
        job = self.queries.submit(asked.query, namespaces=visible_namespaces(project), types=PROMPT_TYPES, expired=late)
        recorded = True
        try:
            with self._serving_store() as store:
                if late():  # waited for the store behind other requests: no work for nobody
                    raise Expired
                self.sync_new(store)  # records written since the last look are embedded first
                namespaces = visible_namespaces(project)
                embedded = self.index.count(namespaces, PROMPT_TYPES)
                missing = self._unembedded(store, namespaces, PROMPT_TYPES, embedded)
            if missing:  # measured by the background thread once it has embedded them
                self._queue(project)
                return {"error": f"{missing} of this project's records are not embedded yet: keyword path"}
            floor = self.floor_for(project, embedded)
            with self._serving_store() as store:
                if late():
                    raise Expired
                result = hybrid_search(
                    store,
                    project,
                    asked.query,
                    index=ScanAhead(self.index, job),  # type: ignore[arg-type]
                    query_vector=job.vector,
                    limit=asked.wanted,
                    floor=floor,
                    tokens=tokens_within(self.embedder, started + budget_s - ANSWER_RESERVE_S, self.piece_cost),
                    types=PROMPT_TYPES,
                    exclude_ids=asked.already,
                )
                injection = compose(store, project, asked, shortlist(asked, result.hits, result.terms))
                if late():
                    raise Expired
                try:
                    account(store, project, asked, injection, path="warm", at=utc_now())
                except sqlite3.OperationalError as exc:  # locked by a long write: inject anyway
                    _log_error(asked.hook, exc, asked.session_id)
                    recorded = False
        except Expired:
            self.abandoned += 1
            return {"error": "late: the hook had stopped waiting; nothing was recorded"}
        return {"ok": True, "text": injection.text, "ids": injection.ids, "mode": "hybrid", "recorded": recorded}

    def search(self, request: dict[str, Any]) -> dict[str, Any]:

        text = str(request.get("query") or "")
        project = self._project(str(request.get("cwd") or "."))
        if request.get("project_id") and request.get("project_id") != project.project_id:
            return {"error": "the directory resolves to another project here"}
        types = request.get("types") or None
        scope = request.get("scope") or None
        job = self.queries.submit(text, namespaces=visible_namespaces(project, scope), types=types)
        with self._serving_store() as store:
            self.sync_new(store)
            namespaces = visible_namespaces(project, scope)
            missing = self._unembedded(store, namespaces, types, self.index.count(namespaces, types))
        if missing:
            self._queue(project)
            return {"error": f"{missing} of this project's records are not embedded yet: keyword search"}
        floor = self.floor_for(project) if request.get("floor", True) else None
        with self._serving_store() as store:
            result = hybrid_search(
                store,
                project,
                text,
                index=ScanAhead(self.index, job),  # type: ignore[arg-type]
                query_vector=job.vector,
                limit=int(request.get("limit") or 10),
                types=types,
                scope=scope,
                exclude_ids=strings(request.get("exclude")),
                floor=floor,
                tokens=self.embedder.tokens,
            )
        return {
            "ok": True,
            "project_id": project.project_id,
            "mode": result.mode,
            "degraded": result.degraded,
            "hits": [[hit.record.record_id, hit.score, hit.relevance] for hit in result.hits],
        }


class PieceCost:
    """What a token-state inference costs on this machine now, per word piece: the median of
    the last `window` ones the floor's coverage ran (`tokens_within`), prompts' and records'
    alike. Per piece, not per text: a record's 400 characters are ~2-6 times a prompt's pieces,
    and the cost per piece moves much less than the length does (one thread here, English:
    40 pieces 13 ms, 116 pieces 44-50 ms, 154 pieces 53-84 ms; docs/retrieval.md, "Covered word
    by word")."""

    def __init__(self, window: int = 16) -> None:
        self._rates: collections.deque[float] = collections.deque(maxlen=window)
        self._lock = threading.Lock()

    def expect(self, pieces: int) -> float | None:
        """Seconds an inference of `pieces` word pieces is expected to take; None before any."""
        with self._lock:
            rates = sorted(self._rates)
        return rates[len(rates) // 2] * pieces if rates else None

    def add(self, seconds: float, pieces: int) -> None:
        with self._lock:
            self._rates.append(seconds / max(1, pieces))


def tokens_within(
    embedder: Embedder, deadline: float, cost: PieceCost | None = None
) -> Callable[[str], TokenStates | None]:
    """`embedder.tokens`, only while an inference is expected to end before `deadline` (a
    `time.monotonic()` value), else None, so the floor decides without the token coverage
    rather than the whole answer arriving after the hook stopped waiting for it
    (docs/retrieval.md, "Covered word by word"). What it is expected to take is `cost`'s recent
    cost per word piece (`Embedder.pieces`) times the text's pieces; every inference run adds
    its own. Nothing is started once the deadline has passed."""
    cost = cost or PieceCost()

    def tokens(text: str) -> TokenStates | None:
        now = time.monotonic()
        if now >= deadline:
            return None
        pieces = embedder.pieces(text)
        expected = cost.expect(pieces)
        if expected is not None and now + expected > deadline:
            return None
        states = embedder.tokens(text)
        cost.add(time.monotonic() - now, pieces)
        return states

    return tokens


def _read_calibration(project_id: str) -> Calibration | None:
    try:
        with open(paths.calibration_path(project_id), encoding="utf-8") as handle:
            return Calibration.from_json(json.load(handle))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_calibration(project_id: str, calibration: Calibration) -> None:
    from pathlib import Path

    from agentctx_store.files import atomic_write

    try:
        atomic_write(Path(paths.calibration_path(project_id)), json.dumps(calibration.as_json(), indent=1) + "\n")
    except OSError as exc:  # a read-only data dir: the floor still applies, it is only not shown
        logger.warning("could not write the calibration of %s (%s)", project_id, exc)


LOAD_BLOCK_ROWS = 4096  # float32 rows read from the pipe at a time at start-up


def _read_quantized(stream: io.BufferedReader[io.FileIO], count: int, dims: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """`count` float32 rows of `dims` from `stream`, as `quantize`d int8 codes and scales, and
    whether they were all there."""
    codes = np.empty((count, dims), dtype=np.int8)
    scales = np.empty(count, dtype=np.float32)
    block = np.empty((min(count, LOAD_BLOCK_ROWS), dims), dtype="<f4")
    done = 0
    while done < count:
        rows = min(LOAD_BLOCK_ROWS, count - done)
        # numpy's stubs declare ndarray.__buffer__ only for Python >= 3.12 (we check against 3.11)
        view = memoryview(block[:rows].reshape(-1).view(np.uint8))  # pyright: ignore[reportArgumentType]
        got = 0
        while got < len(view):
            read = stream.readinto(view[got:])
            if not read:
                return codes, scales, False
            got += read
        codes[done : done + rows], scales[done : done + rows] = quantize(block[:rows])
        done += rows
    return codes, scales, True


def _compact(matrix: np.ndarray, keep: list[int]) -> np.ndarray:
    """`matrix[keep]` (`keep` ascending) in place, a few thousand rows at a time: a plain
    `matrix[keep]` holds two copies of every vector for a moment."""
    for start in range(0, len(keep), 4096):
        # rows are read at or after the rows written (keep[i] >= i), never before
        chunk = keep[start : start + 4096]
        matrix[start : start + len(chunk)] = matrix[chunk]
    try:
        matrix.resize((len(keep), *matrix.shape[1:]), refcheck=False)  # a shrink: nothing is copied
    except ValueError:
        return matrix[: len(keep)]
    return matrix


def _log_error(event: str, exc: BaseException, session: str) -> None:
    logger.warning("%s (session %s): %s", event, session, exc)


def give_back_memory() -> None:
    """Return freed heap to the OS (glibc keeps it otherwise: after the start-up's transient rows
    and each batch of passages, tens of MB would stay resident). A no-op elsewhere."""
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


# glibc serves a request this large with an mmap of its own, unmapped again when freed (M_MMAP_THRESHOLD).
MMAP_THRESHOLD = 128 * 1024
_M_MMAP_THRESHOLD = -3


def bound_heap() -> None:
    """Hold glibc's mmap threshold at its initial 128 KB. Left alone, it rises to the size of
    each large block freed (up to 32 MB), so the tensors of the next inference come from the
    heap instead, where they fragment it: long passages then peak at more than twice the
    resident memory, for somewhat slower embedding of long passages (figures:
    bench/README.md#embedding-batches; docs/adr/0008-warm-search-service.md#memory). A no-op
    where there is no glibc."""
    try:
        import ctypes

        ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    except (OSError, AttributeError):
        pass


def rss_peak_bytes() -> int:
    """The most this process has had resident: `VmHWM`, its own memory's high-water mark.
    Not `getrusage`'s `ru_maxrss` where /proc is there: Linux carries that across `exec`, so a
    service started by a larger process (an MCP server, a benchmark holding a 100K-record store)
    reported its parent's peak as its own."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return _max_rss()


def rss_bytes() -> int:
    """What this process has resident now (where there is no /proc: its peak)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return _max_rss()


def _max_rss() -> int:
    import resource

    peak = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return peak * (1 if sys.platform == "darwin" else 1024)  # bytes on macOS, KiB elsewhere


# -- the socket server ---------------------------------------------------------------------


class _Handler(socketserver.BaseRequestHandler):
    server: _Server  # pyright: ignore[reportIncompatibleVariableOverride]  # the server class is ours: `_Server`

    def handle(self) -> None:
        sock: socket.socket = self.request
        end = time.monotonic() + REQUEST_READ_S
        chunks: list[bytes] = []
        size = 0
        try:
            while True:
                left = end - time.monotonic()
                if left <= 0:  # a client trickling bytes in keeps no thread beyond the deadline
                    self._reply({"error": f"the request did not arrive within {REQUEST_READ_S:g} s"})
                    return
                sock.settimeout(left)
                try:
                    chunk = sock.recv(65536)
                except TimeoutError:
                    continue
                if not chunk:
                    break
                size += len(chunk)
                if size > MAX_REQUEST_BYTES:
                    self._reply({"error": "request too large"})
                    return
                chunks.append(chunk)
            try:
                request = json.loads(b"".join(chunks) or b"{}")
            except ValueError:
                self._reply({"error": "not JSON"})
                return
            except RecursionError:  # the decoder recurses once per level: a deep frame is refused
                logger.warning("refused a request nested too deeply to decode (%d bytes)", size)
                self._reply({"error": "the request is nested too deeply"})
                return
            if not isinstance(request, dict):
                self._reply({"error": "not a JSON object"})
                return
            try:
                reply = self.server.service.handle(cast("dict[str, Any]", request))
            except Exception as exc:
                logger.exception("request failed")
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            self._reply(reply)
        except OSError:
            return

    def _reply(self, reply: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):
            self.request.sendall(json.dumps(reply, ensure_ascii=False).encode("utf-8"))


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """One thread per connection, at most `MAX_CONNECTIONS` at once: while all are busy the
    accepting thread waits and new connections wait in the listen queue (`LISTEN_BACKLOG`), so
    slow clients hold a thread for `REQUEST_READ_S` at most and never all of them for long."""

    daemon_threads = True
    allow_reuse_address = False
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, path: str, service: Service) -> None:
        self.service = service
        self.final_path = path
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(path, _Handler, bind_and_activate=False)

    def server_bind(self) -> None:
        """Bind under a temporary name, make it private, then move it into place: the socket
        is never reachable with wider permissions. The temporary name is no longer than the
        final one (`.<pid>.tmp` beside it), so it fits wherever the final path does.

        Raises:
            SocketUnusable: the socket cannot be bound (the line says which path and why).
        """
        directory = os.path.dirname(self.final_path)
        temp = os.path.join(directory, f".{os.getpid()}.tmp")
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
            self.socket.bind(temp)
            os.chmod(temp, 0o600)
            os.replace(temp, self.final_path)  # we hold the lock: an existing socket file is stale
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            reason = socket_problem(self.service.home) or f"cannot listen on {self.final_path} ({exc})"
            raise SocketUnusable(reason) from None
        self.server_address = self.final_path

    def verify_request(self, request: Any, client_address: Any) -> bool:
        return peer_is_us(request)

    def process_request(self, request: Any, client_address: Any) -> None:
        while not self.slots.acquire(timeout=0.25):
            if self.service.stop.is_set():
                self.shutdown_request(request)
                return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One log line, not socketserver's traceback on stderr."""
        exc = sys.exc_info()[1]
        logger.warning("a connection failed: %s: %s", type(exc).__name__, exc)


def peer_is_us(sock: socket.socket) -> bool:
    """The connecting process runs as our user (SO_PEERCRED on Linux; the 0600 file elsewhere)."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
    except OSError:
        return False
    if uid != os.getuid():
        logger.warning("refused a connection from uid %d", uid)
        return False
    return True


class Running:
    """A started service: its socket server thread and background embedding thread."""

    def __init__(self, service: Service, election: Election) -> None:
        self.service = service
        self.election = election
        self.path = socket_path(service.home)
        self.server = _Server(self.path, service)
        try:
            self.server.server_bind()
        except SocketUnusable:
            self.server.server_close()
            raise
        self.server.server_activate()
        self.threads = [
            threading.Thread(
                target=self.server.serve_forever, kwargs={"poll_interval": 0.25}, daemon=True, name="agentctx-service"
            ),
            threading.Thread(target=service.embed_loop, daemon=True, name="agentctx-service-embed"),
        ]
        for thread in self.threads:
            thread.start()
        election.describe({**service.info(), "rss_bytes": None, "rss_peak_bytes": None})

    def close(self) -> None:
        self.service.stop.set()
        self.service.wake.set()
        self.service.queries.close()
        self.server.shutdown()
        self.server.server_close()
        self.service.close_store()
        with contextlib.suppress(OSError):  # ours: only the lock holder binds it
            os.unlink(self.path)
        self.election.release()


def start(home: str, *, loader: Callable[[], Embedder] | None = None, lock_fd: int | None = None) -> Running | None:
    """Win the election and start serving; None when another process already serves `home`.

    Raises:
        ModelUnavailable: the model cannot be loaded (the lock is released first).
        SocketUnusable: the socket cannot be bound (checked before the model loads; the lock is
            released first).
    """
    election = Election(home, lock_fd)
    if not election.try_acquire():
        return None
    try:
        problem = socket_problem(home)
        if problem is not None:
            raise SocketUnusable(problem)
        embedder = loader() if loader else load_model()
        service = Service(home, embedder)
        service.load_stored_vectors()
        with service.open_store() as store:
            service.high_rowid = 0
            service.sync_new(store, limit=0)  # only notes where new records start
        service.expect(os.getcwd())
        return Running(service, election)
    except BaseException:
        election.release()
        raise


def load_model() -> Embedder:
    from agentctx_store import config

    settings = config.load()
    if not settings.get("embeddings", True):
        raise ModelUnavailable("Embeddings are off (`agentctx config --embeddings` turns them on).")
    # one onnxruntime thread: a short query is faster and steadier than on two threads that
    # compete with SQLite for the cores, and no memory arena, so the RSS stays bounded after a
    # batch of long passages (docs/adr/0008-warm-search-service.md#memory)
    bound_heap()  # before the model's first allocations
    # without the arena each passage's activations are freed after it (every passage is its own
    # inference: `Embedder`)
    return load(choose_model(settings), allow_download=False, threads=1, lean=True)


# -- hosting -------------------------------------------------------------------------------


def serve_hosted(lock_fd: int) -> int:
    """`python -m agentctx_embed.service --hosted FD`: the service `agentctx mcp` starts for its
    data dir, holding the lock it inherited; it ends when the MCP server does (its stdin, a pipe
    from the server, closes) or on SIGTERM. Exit 3: the model cannot be loaded, or the socket
    cannot be bound (noted in the lock file, so MCP servers do not retry for `MODEL_RETRY_S`)."""
    configure_logging()
    home = paths.home()
    try:
        running = start(home, lock_fd=lock_fd)
    except (ModelUnavailable, SocketUnusable) as exc:
        logger.info("warm search service not started: %s", exc)
        fd = try_lock(home)  # the inherited lock was released by start(); note why for the others
        if fd is not None:
            note = Election(home, fd)
            note.describe({"unavailable": str(exc), "at": time.time()})
            os.close(fd)
        return 3
    if running is None:
        return 0
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())

    def parent_gone() -> None:
        with contextlib.suppress(OSError):
            while sys.stdin.buffer.read(4096):
                pass
        stop.set()

    threading.Thread(target=parent_gone, daemon=True).start()
    logger.info("warm search service up (hosted, parent pid %d): %s", os.getppid(), running.path)
    try:
        while not stop.wait(0.5):
            pass
    finally:
        running.close()
    return 0


def serve_foreground(*, idle_exit: float | None = None, say: Callable[[str], None] = print) -> int:
    """`agentctx serve`: run until SIGINT/SIGTERM (or `idle_exit` seconds without a request)."""
    configure_logging()
    home = paths.home()
    try:
        running = start(home)
    except ModelUnavailable as exc:
        say(f"agentctx serve: {exc}")
        return 1
    except SocketUnusable as exc:
        say(f"agentctx serve: not started: {exc}")
        return 1
    if running is None:
        other = holder(home)
        say(f"agentctx serve: a service already runs for {home} (pid {other.get('pid', '?')}); not starting another.")
        return 0
    stop = threading.Event()

    def on_signal(_signum: int, _frame: object) -> None:
        stop.set()

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, on_signal)
    info = running.service.info()
    say(
        f"agentctx service ready: socket {info['socket']}, model {info['model']}, "
        f"{info['vectors']} vectors, pid {info['pid']}"
    )
    sys.stdout.flush()
    try:
        while not stop.wait(0.5):
            if idle_exit is not None and time.monotonic() - running.service.last_request > idle_exit:
                break
    finally:
        running.close()
    return 0


def configure_logging() -> None:
    """Log to `$AGENTCTX_HOME/logs/service.log`, redacted (once per process)."""
    from agentctx_store.logs import log_to_file

    if logging.getLogger().handlers:
        return
    log_to_file("service.log")
    logger.setLevel(logging.INFO)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 2 and args[0] == "--hosted":
        return serve_hosted(int(args[1]))
    print("usage: python -m agentctx_embed.service --hosted LOCK_FD (use `agentctx serve`)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())

__all__ = ["Election", "Running", "Service", "SocketUnusable", "holder", "serve_foreground", "start"]
