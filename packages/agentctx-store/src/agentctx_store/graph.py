"""Entities and edges (docs/adr/0013-graph-in-sqlite.md): file, test and session nodes, the
records linked to them, and what a file reaches through the graph. A part of `Store`."""

from __future__ import annotations

from agentctx_store.db import Connected
from agentctx_store.rows import RECORD_COLUMNS, like_literal, row_to_record, visible_namespaces
from agentctx_store.ulid import new_ulid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentctx_store.projects import Project
    from agentctx_store.records import Record


class Graph(Connected):
    def upsert_node(self, project: Project, kind: str, name: str) -> str:
        from agentctx_store.redact import redact_text  # a test node is named by its command line

        name = redact_text(name)
        with self.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO nodes(id, project_id, kind, name) VALUES (?, ?, ?, ?)",
                (new_ulid(), project.project_id, kind, name),
            )
            row = conn.execute(
                "SELECT id FROM nodes WHERE project_id = ? AND kind = ? AND name = ?", (project.project_id, kind, name)
            ).fetchone()
        return str(row[0])

    def link_entity(self, record_id: str, entity_id: str) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO record_entities(record_id, entity_id) VALUES (?, ?)", (record_id, entity_id)
            )

    def add_edge(self, from_id: str, to_id: str, rel_type: str, weight: float = 1.0) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO edges(id, from_id, to_id, rel_type, weight) VALUES (?, ?, ?, ?, ?)",
                (new_ulid(), from_id, to_id, rel_type, weight),
            )

    def related_to_file(self, project: Project, file_path: str, *, max_depth: int = 5, limit: int = 15) -> list[Record]:
        """Current records linked to a file node, directly or through edges (cycle-safe, depth-guarded)."""
        rows = self.conn.execute(
            f"""WITH RECURSIVE reach(node_id, depth) AS (
                    SELECT id, 0 FROM nodes WHERE project_id = ? AND kind = 'file' AND (name = ? OR name LIKE ? ESCAPE '\\')
                    UNION
                    SELECT CASE WHEN e.from_id = reach.node_id THEN e.to_id ELSE e.from_id END, reach.depth + 1
                    FROM edges e JOIN reach ON (e.from_id = reach.node_id OR e.to_id = reach.node_id)
                    WHERE reach.depth < ? AND e.rel_type != 'supersedes'
                )
                SELECT DISTINCT {", ".join("r." + c.strip() for c in RECORD_COLUMNS.split(","))}
                FROM records r
                WHERE r.project_id IN (?, ?) AND r.superseded_at IS NULL AND (
                    r.id IN (SELECT re.record_id FROM record_entities re JOIN reach ON re.entity_id = reach.node_id)
                    OR r.id IN (SELECT node_id FROM reach))
                ORDER BY r.recorded_at DESC LIMIT ?""",
            (
                project.project_id,
                file_path,
                "%/" + like_literal(file_path.lstrip("/")),
                max_depth,
                *visible_namespaces(project),
                limit,
            ),
        ).fetchall()
        return [row_to_record(row) for row in rows]
