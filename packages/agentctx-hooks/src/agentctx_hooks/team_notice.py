"""SessionStart's team line: one digest line when `.agentctx/context.md` differs from what this
store last imported or exported (docs/team.md).

Cheap by construction: a stat of the team file decides for every project that has none (no
store import); with one, `agentctx_store.sharing.team_state` compares size and mtime with the saved
state and hashes the bytes only when they differ. Nothing is parsed here. With
`team_autoimport` on, a detached `agentctx team import` takes the edits instead.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentctx_store.projects import Project

IMPORT_TIMEOUT_SECONDS = 120


def line(project: Project) -> str:
    """The line to add to the digest, or "". The team file sits at the project's root (the
    repository, as `projects.repo_root` finds it)."""
    root, project_id = project.root, project.project_id
    if not os.path.exists(os.path.join(root, ".agentctx", "context.md")):
        return ""
    from agentctx_store import config
    from agentctx_store.sharing import team_state

    autoimport = bool(config.load().get("team_autoimport"))
    text = team_state.notice(root, project_id, autoimport=autoimport)
    if text and autoimport:
        from agentctx_hooks.spawn import spawn_agentctx

        spawn_agentctx(
            ["team", "import", "--project", root],
            lock_name=f"team-import-{project_id}",
            timeout_seconds=IMPORT_TIMEOUT_SECONDS,
            cwd=root,
        )
    return text
