"""One visibility rule on every search path: the keyword search, the hybrid search and the warm
service see the same records in every scope (`agentctx_store.rows.visible_namespaces`), and
none of them ever shows another project's record or a superseded one.

The world: in our project a current record and the one it superseded, the same in `_global`,
and in another project; all six say the same thing about Redis sessions. The hand-made vectors
put the four records no search may show closest to the query, so a path that trusted its
vectors over the store's rule would show them first.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from agentctx_store import Project, Record, Store, paths, search
from embed_testkit import add

from agentctx_embed import service
from agentctx_embed.hybrid import hybrid_search
from agentctx_embed.vector_index import VectorIndex

QUERY = "how long do sessions live in Redis, what TTL?"
SCOPES = [None, "project", "global"]
DIMS = 8


@dataclass(frozen=True, kw_only=True)
class World:
    own: Record
    own_old: Record
    shared: Record
    shared_old: Record
    foreign: Record
    foreign_old: Record

    def visible(self, scope: str | None) -> set[str]:
        """What the rule lets our project see: by scope, and never a superseded record."""
        mine = {self.own.record_id}
        shared = {self.shared.record_id}
        return {None: mine | shared, "project": mine, "global": shared}[scope]

    def forbidden(self) -> set[str]:
        return {record.record_id for record in (self.own_old, self.shared_old, self.foreign, self.foreign_old)}

    def everything(self) -> list[Record]:
        return [self.own, self.own_old, self.shared, self.shared_old, self.foreign, self.foreign_old]


def build(store: Store, project: Project, other: Project) -> World:
    def chain(owner: Project, scope: str) -> tuple[Record, Record]:
        old = add(store, owner, "decision", "Sessions live in Redis", "Sessions live in Redis.", scope=scope)
        _, new = store.supersede(owner, old.record_id, body="Sessions live in Redis with a TTL of one day.")
        return store.get(owner, old.record_id), new

    own_old, own = chain(project, "project")
    shared_old, shared = chain(project, "global")
    foreign_old, foreign = chain(other, "project")
    return World(
        own=own, own_old=own_old, shared=shared, shared_old=shared_old, foreign=foreign, foreign_old=foreign_old
    )


@pytest.fixture
def world(store: Store, project: Project, other_project: Project) -> World:
    return build(store, project, other_project)


def unit(*weights: float) -> np.ndarray:
    vector = np.zeros(DIMS, dtype=np.float32)
    vector[: len(weights)] = weights
    return vector / np.linalg.norm(vector)


def stale_index(world: World) -> VectorIndex:
    """Vectors for all six records, as a stale index might hold them: the forbidden four are
    the query's own direction, the visible two only near it."""
    index = VectorIndex(DIMS)
    records = world.everything()
    forbidden = world.forbidden()
    vectors = [unit(1.0) if record.record_id in forbidden else unit(1.0, 0.5) for record in records]
    index.put([(record.record_id, record.project_id, record.type, "") for record in records], np.vstack(vectors))
    return index


def keyword_ids(store: Store, project: Project, text: str, scope: str | None, floor: str) -> set[str]:
    result = search(store, project, text, scope=scope, **({} if floor == "production" else {"floor": None}))  # type: ignore[arg-type]
    return {hit.record.record_id for hit in result.hits}


def hybrid_ids(store: Store, project: Project, world: World, text: str, scope: str | None, floor: str) -> set[str]:
    result = hybrid_search(
        store,
        project,
        text,
        index=stale_index(world),
        query_vector=unit(1.0),
        scope=scope,
        **({} if floor == "production" else {"floor": None}),  # type: ignore[arg-type]
    )
    return {hit.record.record_id for hit in result.hits}


@pytest.mark.parametrize("floor", ["production", None])
@pytest.mark.parametrize("scope", SCOPES)
def test_keyword_and_hybrid_search_see_the_same_records_in_every_scope(
    store: Store, project: Project, world: World, scope: str | None, floor: str
) -> None:
    keyword = keyword_ids(store, project, QUERY, scope, floor)
    hybrid = hybrid_ids(store, project, world, QUERY, scope, floor)
    assert keyword == hybrid == world.visible(scope)
    assert not (keyword | hybrid) & world.forbidden()


@pytest.mark.parametrize("floor", ["production", None])
@pytest.mark.parametrize("scope", SCOPES)
def test_a_stale_vector_never_brings_back_a_superseded_or_foreign_record(
    store: Store, project: Project, world: World, scope: str | None, floor: str
) -> None:
    # no word of this query is in any record: whatever is found, the vectors found
    text = "which zebra quasar nebula"
    assert keyword_ids(store, project, text, scope, "none") == set()
    hybrid = hybrid_ids(store, project, world, text, scope, floor)
    assert not hybrid & world.forbidden()
    assert hybrid <= world.visible(scope)
    if floor is None:  # every visible record, fetched from the store by id
        assert hybrid == world.visible(scope)


def test_the_other_project_sees_only_its_own_current_record_on_both_paths(
    store: Store, other_project: Project, world: World
) -> None:
    visible = {world.foreign.record_id, world.shared.record_id}
    assert keyword_ids(store, other_project, QUERY, None, "none") == visible
    assert hybrid_ids(store, other_project, world, QUERY, None, "none") == visible


@pytest.fixture
def running(tiny_model: Path) -> Iterator[service.Running]:
    started = service.start(paths.home())
    assert started is not None
    try:
        yield started
    finally:
        started.close()


def test_the_warm_service_shows_what_the_keyword_search_shows_in_every_scope(
    running: service.Running, store: Store, project: Project, other_project: Project
) -> None:
    from agentctx_store.service_link import service_search

    world = build(store, project, other_project)  # after the start: the service embeds them on the query
    for scope in SCOPES:
        served = service_search(store, project, QUERY, limit=10, scope=scope, floor=False)
        assert served is not None
        result, mode = served
        assert mode == "hybrid"
        hybrid = {hit.record.record_id for hit in result.hits}
        assert hybrid == keyword_ids(store, project, QUERY, scope, "none") == world.visible(scope)
        assert not hybrid & world.forbidden()
