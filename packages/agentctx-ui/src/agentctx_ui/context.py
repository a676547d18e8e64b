"""What every request needs: the store file, the default project, and turning a project id into a `Project`."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from agentctx_store import GLOBAL_PROJECT_ID, Project, RecordNotFound, Store, global_project


class ProjectNotFound(RecordNotFound):
    """A `project` parameter naming no project this store knows (answers 404 like a missing record)."""


@dataclass(frozen=True, kw_only=True)
class DashboardContext:
    default_project: Project
    db_path: Path | None = None  # None: the store's default location, read at each request

    @contextmanager
    def store(self) -> Generator[Store]:
        """One connection per request: cheap (three pragmas), and a write refreshes the digest when the request ends
        exactly as a CLI command does. Never creates the store file (that is `agentctx ui`'s start-up
        step), so not even a first GET writes."""
        from agentctx_store import digest

        with digest.refreshing(Store.open(self.db_path, create=False)) as store:
            yield store

    def project(self, store: Store, project_id: str | None) -> Project:
        """The project a request acts for: the default one, `_global`, or one the store has seen."""
        if not project_id or project_id == self.default_project.project_id:
            return self.default_project
        if project_id == GLOBAL_PROJECT_ID:
            return global_project()
        for row in store.list_projects():
            if row["project_id"] == project_id:
                return Project(
                    project_id=row["project_id"],
                    root=row["root"] or ".",
                    name=row["name"] or row["project_id"][:12],
                    remote=row["remote"],
                )
        raise ProjectNotFound(f"No project {project_id!r} in this store; GET /api/projects lists the known ones.")
