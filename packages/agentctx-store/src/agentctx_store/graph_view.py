"""Read-only views of the record graph for people (the dashboard's Graph view).

The store keeps two kinds of relations: supersession (`records.superseded_by`, mirrored in `edges`
as `supersedes`) and entity links (`record_entities` → `nodes`, e.g. the files a record is about;
docs/adr/0013-graph-in-sqlite.md). `record_graph` collects both for one project in a single pass, so
a UI can draw decision chains and record–file links without knowing the schema.
"""

from __future__ import annotations

from agentctx_store._frozen import field, frozen
from agentctx_store.projects import Project
from agentctx_store.records import Record
from agentctx_store.rows import RECORD_COLUMNS, row_to_record, visible_namespaces
from agentctx_store.store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

DEFAULT_GRAPH_TYPES = ("decision",)


@frozen
class EntityLink:
    record_id: str
    entity_id: str
    kind: str  # "file", "symbol", ...
    name: str


@frozen
class AnchorLink:
    record_id: str
    path: str  # project-relative
    anchor: str  # PATH, PATH:START-END or PATH:SYMBOL
    state: str  # fresh, changed, missing, unchecked (`freshness.anchor_report`)


@frozen
class RecordGraph:
    """Records (chains included), the entities they are linked to, the files they are anchored
    to with each anchor's state, and the edges between them."""

    records: list[Record] = field(default_factory=list[Record])
    links: list[EntityLink] = field(default_factory=list[EntityLink])
    anchors: list[AnchorLink] = field(default_factory=list[AnchorLink])
    truncated: bool = False

    @property
    def supersessions(self) -> list[tuple[str, str]]:
        """(newer id, older id) for every supersession whose both ends are in the graph."""
        present = {record.record_id for record in self.records}
        return [
            (record.superseded_by, record.record_id)
            for record in self.records
            if record.superseded_by and record.superseded_by in present
        ]

    def to_dict(self) -> dict[str, Any]:
        entities: dict[str, dict[str, str]] = {}
        for link in self.links:
            entities.setdefault(link.entity_id, {"id": link.entity_id, "kind": link.kind, "name": link.name})
        return {
            "records": [record.to_dict() for record in self.records],
            "entities": list(entities.values()),
            "supersedes": [{"from": new, "to": old} for new, old in self.supersessions],
            "links": [{"record": link.record_id, "entity": link.entity_id} for link in self.links],
            "anchors": [
                {"record": link.record_id, "path": link.path, "anchor": link.anchor, "state": link.state}
                for link in self.anchors
            ],
            "truncated": self.truncated,
        }


def record_graph(
    store: Store,
    project: Project,
    *,
    types: Sequence[str] = DEFAULT_GRAPH_TYPES,
    include_superseded: bool = True,
    limit: int = 400,
) -> RecordGraph:
    """Records of `types` (whole chains when `include_superseded`) plus every current record
    linked to an entity or anchored to a file, newest first, at most `limit` records, with each
    anchor's state against the files now; read only."""
    namespaces = visible_namespaces(project)
    marks = ",".join("?" * len(types))
    type_clause = f"type IN ({marks})" if types else "0"
    type_params: list[str] = list(types)
    if types and include_superseded:  # a chain may change type (a convention replaced by a decision)
        type_clause = (
            f"({type_clause} OR superseded_by IN (SELECT id FROM records WHERE type IN ({marks})) "
            f"OR id IN (SELECT superseded_by FROM records WHERE type IN ({marks})))"
        )
        type_params *= 3
    linked_clause = (
        "((id IN (SELECT record_id FROM record_entities) AND (? OR superseded_at IS NULL)) "
        "OR (id IN (SELECT record_id FROM record_anchors) AND superseded_at IS NULL))"
    )
    sql = (
        f"SELECT {RECORD_COLUMNS} FROM records WHERE project_id IN (?, ?) "
        f"AND (({type_clause}{' AND superseded_at IS NULL' if not include_superseded else ''}) OR {linked_clause}) "
        "ORDER BY recorded_at DESC, id DESC LIMIT ?"
    )
    rows = store.conn.execute(sql, [*namespaces, *type_params, int(include_superseded), limit + 1]).fetchall()
    truncated = len(rows) > limit
    records = [row_to_record(row) for row in rows[:limit]]
    links: list[EntityLink] = []
    ids = [record.record_id for record in records]
    for start in range(0, len(ids), 500):  # stay under SQLite's bound-parameter limit
        chunk = ids[start : start + 500]
        for row in store.conn.execute(
            f"""SELECT re.record_id, n.id, n.kind, n.name FROM record_entities re JOIN nodes n ON n.id = re.entity_id
                WHERE re.record_id IN ({",".join("?" * len(chunk))}) ORDER BY n.kind, n.name""",
            chunk,
        ):
            links.append(EntityLink(record_id=row[0], entity_id=row[1], kind=row[2] or "entity", name=row[3] or ""))
    from agentctx_store.freshness import anchor_report

    current = [record.record_id for record in records if record.superseded_at is None]
    anchors = [
        AnchorLink(record_id=record_id, path=str(item["path"]), anchor=str(item["anchor"]), state=str(item["state"]))
        for record_id, items in anchor_report(store, project, current).items()
        for item in items
    ]
    return RecordGraph(records=records, links=links, anchors=anchors, truncated=truncated)
